"""gpu_boot_unit: the restore unit, the ready target, the drop-ins and the enable links, through HostRoot;
check -> apply -> check -> apply, and what the files say."""

import configparser
import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import boot_unit, gpu_restore
from tests.support.ansible_runner import run_module

CLI = os.path.join(os.path.dirname(__file__), "../../../../roles/host_gpu_sharing/files/gpu_restore_cli.py")
SYSTEMD = "etc/systemd/system"


def _cli() -> str:
    with open(CLI) as handle:
        return handle.read()


def _unit(path: str) -> dict[str, list[str]]:
    """A unit file's settings as {key: [values]} (repeated keys kept, as systemd keeps them)."""
    parser = configparser.ConfigParser(strict=False, interpolation=None, dict_type=dict)
    parser.optionxform = str
    values: dict[str, list[str]] = {}
    with open(path) as handle:
        for line in handle:
            if "=" in line and not line.startswith(("#", "[")):
                key, value = line.rstrip("\n").split("=", 1)
                values.setdefault(key, []).append(value)
    return values


def test_check_apply_check_apply_and_what_the_files_say(tmp_path):
    root = str(tmp_path)
    args = {"root": root, "command": _cli(), "timeout": 30, "deadline": 300}
    first = run_module("gpu_boot_unit", args, check=True, diff=True)
    assert first["changed"] and not os.path.exists(os.path.join(root, SYSTEMD))
    applied = run_module("gpu_boot_unit", args, diff=True)
    assert applied["changed"] and sorted(applied["files"]) == sorted(first["files"])
    assert not run_module("gpu_boot_unit", args, check=True)["changed"]
    assert not run_module("gpu_boot_unit", args)["changed"]

    service = _unit(os.path.join(root, SYSTEMD, boot_unit.UNIT))
    assert service["Before"] == ["accel-openstack-ready.target"]
    assert service["Type"] == ["oneshot"] and service["RemainAfterExit"] == ["yes"]
    assert service["ExecStart"] == [
        "/usr/bin/python3 /usr/local/libexec/accel-openstack/gpu-restore --timeout 30 --deadline 300"
    ]
    assert service["ExecStop"] == ["/usr/bin/python3 /usr/local/libexec/accel-openstack/gpu-restore --record-mdevs"]
    assert service["TimeoutStartSec"] == ["330"]
    target = _unit(os.path.join(root, SYSTEMD, boot_unit.TARGET))
    assert target["Requires"] == [boot_unit.UNIT] and target["After"] == [boot_unit.UNIT]
    for unit in boot_unit.DEFAULT_REQUIRED_BY:
        drop_in = _unit(os.path.join(root, SYSTEMD, f"{unit}.d", "accel-openstack-ready.conf"))
        assert drop_in == {"Requires": [boot_unit.TARGET], "After": [boot_unit.TARGET]}
    for name in (boot_unit.UNIT, boot_unit.TARGET):
        link = os.path.join(root, SYSTEMD, "multi-user.target.wants", name)
        assert os.readlink(link) == f"/etc/systemd/system/{name}"
    libexec = os.path.join(root, "usr/local/libexec/accel-openstack")
    with open(os.path.join(libexec, "gpu_restore.py")) as installed, open(gpu_restore.__file__) as source:
        assert installed.read() == source.read()
    with open(os.path.join(libexec, "gpu-restore")) as installed:
        assert installed.read() == _cli()


def test_absent_removes_what_present_installed(tmp_path):
    root = str(tmp_path)
    run_module("gpu_boot_unit", {"root": root, "command": _cli()})
    gone = run_module("gpu_boot_unit", {"root": root, "state": "absent"})
    assert gone["changed"]
    left = [os.path.join(b, f) for b, _d, files in os.walk(root) for f in files]
    left += [os.path.join(b, d) for b, dirs, _f in os.walk(root) for d in dirs if os.path.islink(os.path.join(b, d))]
    assert left == []
    assert not run_module("gpu_boot_unit", {"root": root, "state": "absent"})["changed"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"python": "/usr/bin/python3\nExecStartPre=/bin/sh -c id"}, ["python", "absolute path"]),
        ({"python": "/usr/bin/python3 -c x"}, ["python"]),
        ({"python": "python3"}, ["python"]),
        ({"python": "/usr/../bin/python3"}, ["python"]),
        ({"required_by": ["nova-compute.service\nExecStartPre=/bin/sh"]}, ["required_by[0]", "unit name"]),
        ({"required_by": ["nova-compute.service ExecStartPre=/bin/sh"]}, ["required_by[0]"]),
        ({"required_by": ["-nova.service"]}, ["required_by[0]"]),
        ({"required_by": ["nova-compute"]}, ["required_by[0]"]),
        ({"required_by": ["accel-openstack-ready.target"]}, ["own unit"]),
        ({"after": ["x.service\n[Service]"]}, ["after[0]"]),
        ({"after": ["nova-compute.service"]}, ["both"]),
        ({"after": ["a.service"] * 100}, ["at most 64"]),
        ({"timeout": 0}, ["timeout"]),
        ({"timeout": 10**9}, ["timeout"]),
        ({"deadline": 10}, ["deadline"]),
        ({"command": ""}, ["command"]),
    ],
)
def test_values_that_would_reach_a_unit_file_are_checked_first(tmp_path, args, words):
    result = run_module("gpu_boot_unit", dict({"root": str(tmp_path), "command": _cli()}, **args))
    assert result.get("failed"), result
    for word in words:
        assert word in result["msg"], result["msg"]
    assert os.listdir(tmp_path) == []
