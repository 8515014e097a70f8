"""gpu_boot_unit: the restore unit, the ready target, the drop-ins and the enable links, through HostRoot;
check -> apply -> check -> apply, and what the files say."""

import os
import shutil
import subprocess

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


# -- the boot order the units make, under the systemd double and checked by systemd itself --------------
def _host_with_nova(tmp_path, restore_exit: int) -> str:
    """The units installed by the module, a nova-compute and a libvirtd that only note that they ran, and the
    restore command replaced through a drop-in by one that exits with ``restore_exit``."""
    root = str(tmp_path / "root")
    os.makedirs(root)
    assert run_module("gpu_boot_unit", {"root": root, "command": _cli()})["changed"]
    lib = os.path.join(root, "lib/systemd/system")
    os.makedirs(lib)
    wants = os.path.join(root, SYSTEMD, "multi-user.target.wants")
    marker = os.path.join(root, "started")
    for name, after in (("libvirtd.service", ""), ("nova-compute.service", "After=libvirtd.service\n")):
        with open(os.path.join(lib, name), "w") as handle:
            handle.write(
                f"[Unit]\nDescription={name}\n{after}[Service]\nExecStart=/bin/sh -c 'echo {name} >> {marker}'\n"
                "[Install]\nWantedBy=multi-user.target\n"
            )
        os.symlink(f"/lib/systemd/system/{name}", os.path.join(wants, name))
    # a unit that only wants the target: it starts whatever the restore did
    with open(os.path.join(lib, "monitoring.service"), "w") as handle:
        handle.write(f"[Unit]\nWants={boot_unit.TARGET}\nAfter={boot_unit.TARGET}\n[Service]\nExecStart=/bin/true\n")
    os.symlink("/lib/systemd/system/monitoring.service", os.path.join(wants, "monitoring.service"))
    override = os.path.join(root, SYSTEMD, f"{boot_unit.UNIT}.d")
    os.makedirs(override)
    with open(os.path.join(override, "test.conf"), "w") as handle:
        handle.write(f"[Service]\nExecStart=\nExecStart=/bin/sh -c 'echo restoring; exit {restore_exit}'\nExecStop=\n")
    return root


def test_nova_compute_and_libvirt_start_after_the_ready_target(tmp_path):
    from tests.support.fake_systemd import Manager

    root = _host_with_nova(tmp_path, 0)
    journal = Manager(root).boot()
    order = [u["unit"] for u in journal["units"] if u["result"] == "active"]
    assert order.index(boot_unit.UNIT) < order.index(boot_unit.TARGET) < order.index("libvirtd.service")
    assert order.index("libvirtd.service") < order.index("nova-compute.service")
    with open(os.path.join(root, "started")) as handle:
        assert handle.read().split() == ["libvirtd.service", "nova-compute.service"]


def test_a_failed_restore_keeps_libvirt_and_nova_compute_stopped_and_says_why(tmp_path):
    from tests.support.fake_systemd import Manager

    root = _host_with_nova(tmp_path, 1)
    results = {u["unit"]: u for u in Manager(root).boot()["units"]}
    assert results[boot_unit.UNIT]["result"] == "failed" and "restoring" in results[boot_unit.UNIT]["output"]
    assert results[boot_unit.TARGET]["result"] == "dependency"
    for name in ("libvirtd.service", "nova-compute.service"):
        assert results[name]["result"] == "dependency"
        assert boot_unit.TARGET in results[name]["reason"]
    assert results["monitoring.service"]["result"] == "active"  # Wants= alone does not hold a unit back
    assert not os.path.exists(os.path.join(root, "started"))


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_itself_accepts_the_units_and_the_drop_in(tmp_path):
    """systemd's own parser (systemd-analyze verify) loads the units and a drop-in with no warning."""
    run_module("gpu_boot_unit", {"root": str(tmp_path), "command": _cli(), "required_by": ["nova-compute.service"]})
    directory = os.path.join(str(tmp_path), SYSTEMD)
    with open(os.path.join(directory, "nova-compute.service"), "w") as handle:
        handle.write(
            "[Unit]\nDescription=nova\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
        )
    names = [boot_unit.UNIT, boot_unit.TARGET, "nova-compute.service"]
    proc = subprocess.run(
        ["systemd-analyze", "verify", *[f"./{n}" for n in names]],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stderr.strip() == "", proc.stderr
    # the check can fail: a key in the wrong section is reported
    with open(os.path.join(directory, "nova-compute.service.d", "bad.conf"), "w") as handle:
        handle.write("[Unit]\nExecStartPre=/bin/sh\n")
    proc = subprocess.run(
        ["systemd-analyze", "verify", "./nova-compute.service"],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Unknown key" in proc.stderr
