"""The boot side of shared GPUs under attack: the files the role installs, the unit's values, and the boot
command itself (the host it acts on, the state it trusts, the files it opens, the numbers it waits on).
Every case has the ``outside`` sentinel (tests/hostile/conftest.py): nothing outside the root is read
into a result, written or deleted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore
from ansible_collections.accel.openstack.plugins.module_utils._host.boot_state import read_boot_state
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from tests.hostile.conftest import SECRET, assert_secret_absent, no_traceback, run_play
from tests.support.ansible_runner import run_module
from tests.support.fake_sysfs import build_root

CASE_SECONDS = 120
CLI = os.path.join(os.path.dirname(__file__), "../../roles/host_gpu_sharing/files/gpu_restore_cli.py")
L40S, L40S_B = "0000:01:00.0", "0000:81:00.0"
A100 = "0000:41:00.0"
UUID = "5a1d8d4e-7c2b-4f0e-9f5d-0123456789ab"


def _cli_text() -> str:
    with open(CLI) as handle:
        return handle.read()


def _escape(kind: str, outside, depth: int = 3) -> str:
    return str(outside) if kind == "absolute" else "../" * (depth + 10) + str(outside).lstrip("/")


def _state(root: str, kind: str, address: str, content) -> None:
    directory = os.path.join(root, "etc/accel-openstack", kind)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{address}.json"), "w") as handle:
        json.dump(content, handle)


def _sys_files(root: str) -> dict[str, bytes]:
    out = {}
    for base, _dirs, files in os.walk(os.path.join(root, "sys")):
        for name in files:
            path = os.path.join(base, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    out[path] = handle.read()
    return out


# -- 1. the files the role installs: links on the way are followed inside the root, never out of it ------
LINKS = [
    ("/etc/systemd/system", "absolute"),
    ("/etc/systemd/system", "relative"),
    ("/usr/local", "absolute"),
    ("/usr/local", "relative"),
    ("/etc/systemd/system/multi-user.target.wants", "absolute"),
    ("/etc/systemd/system/nova-compute.service.d", "absolute"),
    ("/usr/local/libexec/accel-openstack/gpu-restore", "absolute"),
    ("/etc/systemd/system/accel-openstack-ready.target", "relative"),
]


@pytest.mark.parametrize(("link", "kind"), LINKS, ids=[f"{p}-{k}" for p, k in LINKS])
def test_a_link_on_the_way_never_leads_a_write_outside_the_root(tmp_path, outside, link, kind):
    root = tmp_path / "root"
    os.makedirs(root / os.path.dirname(link).lstrip("/"), exist_ok=True)
    os.symlink(_escape(kind, outside, link.count("/")), root / link.lstrip("/"))
    result = run_module("gpu_boot_unit", {"root": str(root), "command": _cli_text()})
    if result.get("failed"):
        no_traceback(result)
    else:  # the link was followed as the host follows it: inside the root
        assert result["changed"]
        inside = [os.path.join(b, f) for b, _d, files in os.walk(root) for f in files]
        assert any(path.startswith(str(root) + str(outside)) for path in inside), inside
    assert_secret_absent(result)


@pytest.mark.parametrize("kind", ["absolute"])  # the relative link: the module cases above
def test_the_role_installs_through_the_confined_layer(tmp_path, outside, kind):
    """The role itself (not only the module): a link at <root>/etc/systemd/system."""
    root = tmp_path / "root"
    (root / "etc/systemd").mkdir(parents=True)
    os.symlink(_escape(kind, outside, 3), root / "etc/systemd/system")
    play_vars = {
        "accel_root": str(root),
        "accel_pci_devices": [{"address": "0000:84:00.0", "vendor_id": "10de", "product_id": "25b6"}],
        "accel_device_policy": [
            {"name": "a16", "vendor_id": "10de", "product_id": "25b6", "mode": "vgpu", "mdev_type": "nvidia-735"}
        ],
    }
    tasks = [{"name": "share", "ansible.builtin.include_role": {"name": "accel.openstack.host_gpu_sharing"}}]
    rc, output = run_play(tmp_path, tasks, play_vars)
    assert rc == 0, output[-3000:]
    assert (root / str(outside).lstrip("/") / "accel-openstack-ready.target").is_file()
    assert SECRET not in output


@pytest.mark.parametrize(
    "variable",
    [
        {
            "host_gpu_sharing_before": ["nova-compute.service\nExecStartPre=/bin/sh -c 'touch /pwned'"],
            "host_gpu_sharing_python": "/usr/bin/python3\nExecStartPre=/bin/sh -c id",
        },
    ],
    ids=["before-and-python"],  # each variable alone: the module cases below
)
def test_a_newline_in_a_role_variable_adds_no_line_to_a_unit(tmp_path, variable):
    root = tmp_path / "root"
    root.mkdir()
    play_vars = {
        "accel_root": str(root),
        "accel_pci_devices": [{"address": "0000:84:00.0", "vendor_id": "10de", "product_id": "25b6"}],
        "accel_device_policy": [
            {"name": "a16", "vendor_id": "10de", "product_id": "25b6", "mode": "vgpu", "mdev_type": "nvidia-735"}
        ],
        **variable,
    }
    tasks = [{"name": "share", "ansible.builtin.include_role": {"name": "accel.openstack.host_gpu_sharing"}}]
    rc, output = run_play(tmp_path, tasks, play_vars)
    assert rc != 0 and ("python" in output or "unit name" in output), output[-3000:]
    assert "Traceback" not in output
    assert list(root.iterdir()) == []  # refused before anything was written


@pytest.mark.parametrize(
    "args",
    [
        {"after": ["nvidia-vgpud.service\n[Service]\nExecStartPre=/bin/sh"]},
        {"after": ["nvidia-vgpud.service ExecStartPre=/bin/sh"]},
        {"required_by": ["nova-compute.service\r\nExecStartPre=/bin/sh"]},
        {"python": "/usr/bin/python3 -c 'import os'"},
        {"python": "/usr/bin/python3\x00"},
        {"python": "/usr/bin/python3\u2028ExecStartPre=/bin/sh"},
    ],
)
def test_a_value_that_would_add_a_line_or_an_argument_is_refused(tmp_path, args):
    result = run_module("gpu_boot_unit", dict({"root": str(tmp_path), "command": _cli_text()}, **args))
    assert result.get("failed"), result
    no_traceback(result)
    assert os.listdir(tmp_path) == [] or os.listdir(tmp_path) == ["outside"]


# -- 2. the boot command acts only on its root -------------------------------------------------------
def _libexec(tmp_path) -> str:
    libexec = tmp_path / "libexec"
    libexec.mkdir(exist_ok=True)
    shutil.copy(CLI, libexec / "gpu-restore")
    shutil.copy(gpu_restore.__file__, libexec / "gpu_restore.py")
    return str(libexec / "gpu-restore")


def _boot_command(tmp_path, root: str, *extra: str, path_dir=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if path_dir:
        env["PATH"] = f"{path_dir}:{env['PATH']}"
    return subprocess.run(
        [sys.executable, "-E", "-s", _libexec(tmp_path), "--root", root, *extra],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=str(tmp_path),
        timeout=60,
    )


def _spy_nvidia_smi(tmp_path) -> tuple[str, str]:
    """A ``nvidia-smi`` first on PATH that only notes it was run."""
    bin_dir, marker = tmp_path / "bin", tmp_path / "nvidia-smi-ran"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 0\n')
    (bin_dir / "nvidia-smi").chmod(0o755)
    return str(bin_dir), str(marker)


@pytest.mark.parametrize("layout", [[], [{"profile": "3g.20gb", "profile_id": 9, "start": 0}]])
def test_another_roots_mig_state_never_runs_this_hosts_nvidia_smi(tmp_path, layout):
    root = build_root("mig-vgpu-a100", str(tmp_path / "root"))
    _state(root, "mig", A100, {"address": A100, "mode": "enabled", "instances": layout})
    bin_dir, marker = _spy_nvidia_smi(tmp_path)
    before = _sys_files(root)
    proc = _boot_command(tmp_path, root, "--timeout", "1", path_dir=bin_dir)
    assert proc.returncode == 1 and "runs only for the live host" in proc.stderr, proc.stderr
    assert not os.path.exists(marker) and "Traceback" not in proc.stderr
    assert _sys_files(root) == before


@pytest.mark.parametrize(
    ("gpu", "vfs", "words"),
    [
        (L40S_B, ["0000:01:00.4"], "not a VF of that GPU"),  # the other GPU's VF
        (L40S_B, ["0000:81:00.4", "0000:01:00.5"], "not a VF of that GPU"),
        (L40S_B, [L40S], "not a VF of that GPU"),  # a PF named as a VF
        (L40S_B, ["0000:81:00.4", "0000:81:00.4"], "more than once"),
        (L40S_B, [L40S_B], "the GPU 0000:81:00.0 itself"),
    ],
)
def test_a_vgpu_state_naming_vfs_of_another_gpu_is_refused_before_any_write(tmp_path, gpu, vfs, words):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    _state(root, "vgpu", gpu, {"address": gpu, "type_id": 1155, "type_name": "NVIDIA L40S-4Q", "vfs": vfs})
    before = _sys_files(root)
    with pytest.raises(gpu_restore.RestoreError, match=words):
        gpu_restore.restore(root, timeout=1)
    assert _sys_files(root) == before


@pytest.mark.parametrize(
    ("kind", "address", "content", "words"),
    [
        ("sriov", "0000:77:00.0", {"address": "0000:77:00.0", "numvfs": 2}, "not on this host"),
        ("sriov", "0000:00:01.0", {"address": "0000:00:01.0", "numvfs": 2}, "not on this host"),
        ("mig", "0000:00:00.0", {"address": "0000:00:00.0", "mode": "enabled", "instances": []}, "not an NVIDIA"),
        ("vgpu", "0000:55:00.0", {"address": "0000:55:00.0", "type_id": 1, "type_name": "x", "vfs": []}, "not on"),
    ],
)
def test_a_state_for_a_device_this_host_lacks_is_refused(tmp_path, kind, address, content, words):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    _state(root, kind, address, content)
    before = _sys_files(root)
    with pytest.raises(gpu_restore.RestoreError, match=words):
        gpu_restore.restore(root, run=lambda argv: (0, "", ""), timeout=1)
    assert _sys_files(root) == before


# -- 3. what the modules store is what the boot accepts: refused at store time and at boot ---------------
@pytest.mark.parametrize("numvfs", [True, False])
def test_sriov_vfs_never_stores_a_boolean_count(tmp_path, numvfs):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    result = run_module("sriov_vfs", {"root": root, "devices": [L40S], "numvfs": numvfs, "timeout": 2})
    assert result.get("failed") and "numvfs" in result["msg"], result
    no_traceback(result)
    assert not os.path.exists(os.path.join(root, "etc/accel-openstack"))


def _offer_type(root: str, ident: int, name: str) -> None:
    for base, _dirs, files in os.walk(os.path.join(root, "sys/devices")):
        if "creatable_vgpu_types" in files:
            with open(os.path.join(base, "creatable_vgpu_types"), "a") as handle:
                handle.write(f"{ident} : {name}\n")


@pytest.mark.parametrize(
    ("ident", "selector"),
    [(2147483648, "2147483648"), (2147483648, "NVIDIA L40S-HUGE"), (10**15, "NVIDIA L40S-BIGGER")],
)
def test_nvidia_vgpu_never_stores_a_type_id_the_boot_refuses(tmp_path, ident, selector):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    _offer_type(root, ident, "NVIDIA L40S-HUGE" if ident == 2147483648 else "NVIDIA L40S-BIGGER")
    before = _sys_files(root)
    result = run_module("nvidia_vgpu", {"root": root, "devices": [L40S], "type": selector, "vfs": 1, "timeout": 2})
    assert result.get("failed"), result
    no_traceback(result)
    assert "type_id" in result["msg"] or "not in its VFs" in result["msg"], result["msg"]
    assert _sys_files(root) == before and not os.path.exists(os.path.join(root, "etc/accel-openstack"))


@pytest.mark.parametrize("type_id", [2147483648, -1, True, 1155.0])
def test_the_boot_refuses_a_type_id_out_of_range(tmp_path, type_id):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    _state(root, "vgpu", L40S, {"address": L40S, "type_id": type_id, "type_name": "x", "vfs": ["0000:01:00.4"]})
    with pytest.raises(gpu_restore.RestoreError, match="type_id"):
        gpu_restore.restore(root, timeout=1)


# -- 4. opens that never block, waits and numbers that are bounded -------------------------------------
@pytest.mark.parametrize(
    "attribute", [f"{L40S}/sriov_numvfs", f"{L40S}/sriov_totalvfs", "0000:01:00.4/nvidia/current_vgpu_type"]
)
def test_a_fifo_in_sysfs_never_blocks_the_boot(tmp_path, attribute):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    _state(root, "sriov", L40S, {"address": L40S, "numvfs": 4})
    _state(root, "vgpu", L40S, {"address": L40S, "type_id": 1155, "type_name": "x", "vfs": ["0000:01:00.4"]})
    path = os.path.realpath(os.path.join(root, "sys/bus/pci/devices", os.path.dirname(attribute)))
    os.unlink(os.path.join(path, os.path.basename(attribute)))
    os.mkfifo(os.path.join(path, os.path.basename(attribute)))
    with pytest.raises(gpu_restore.RestoreError):  # the alarm of conftest fails the case if this blocks
        gpu_restore.restore(root, timeout=1)


@pytest.mark.parametrize("name", ["instance-1.xml", "../mdevs.json"])
def test_a_fifo_as_a_domain_or_the_mdev_record_never_blocks(tmp_path, name):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    directory = os.path.join(root, "etc/libvirt/qemu")
    os.makedirs(directory)
    os.makedirs(os.path.join(root, "var/lib/accel-openstack"), exist_ok=True)
    target = os.path.join(root, "var/lib/accel-openstack/mdevs.json") if name.startswith("..") else None
    os.mkfifo(target or os.path.join(directory, name))
    gpu_restore.restore(root, timeout=1)  # nothing held that it could read: the boot is fine
    assert read_boot_state(HostRoot(root))["status"] == "ok"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e308", "3601", "abc", "0x10", ""])
@pytest.mark.parametrize("option", ["--timeout", "--deadline"])
def test_every_number_of_the_boot_command_is_bounded(tmp_path, option, value):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    if option == "--deadline" and value == "3601":
        value = "86401"
    proc = _boot_command(tmp_path, root, f"{option}={value}")
    assert proc.returncode == 2 and "give a number of seconds" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 0, 10**9, True, "60"])
def test_the_library_refuses_an_unbounded_wait(tmp_path, value):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    with pytest.raises(gpu_restore.RestoreError, match="seconds"):
        gpu_restore.restore(root, timeout=value)
    with pytest.raises(gpu_restore.RestoreError, match="seconds"):
        gpu_restore.wait_for(lambda: False, value, "nothing")


@pytest.mark.parametrize("text", ["9" * 5000, "1" * 13, "٣", "-4", " 4\n4"])
def test_numbers_in_sysfs_of_any_length_are_read_without_a_traceback(tmp_path, text):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    vf = os.path.realpath(os.path.join(root, "sys/bus/pci/devices/0000:01:00.4"))
    with open(os.path.join(vf, "nvidia/current_vgpu_type"), "w") as handle:
        handle.write(text)
    with open(os.path.join(vf, "nvidia/creatable_vgpu_types"), "a") as handle:
        handle.write(f"{text} : NVIDIA L40S-X\n")
    sysfs = gpu_restore.Sysfs(root)
    assert gpu_restore.current_type(sysfs, "0000:01:00.4") == 0
    assert all(isinstance(i, int) and i < 10**12 for i in gpu_restore.creatable_types(sysfs, "0000:01:00.4"))


# -- 5. the domain XML and the mdev record are untrusted input -----------------------------------------
BILLION_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(f'<!ENTITY lol{i} "{("&lol%s;" % (i - 1 if i > 1 else "")) * 10}">' for i in range(1, 10))
    + "]><domain><devices><hostdev type='mdev'><source><address uuid='&lol9;'/></source></hostdev></devices></domain>"
)


@pytest.mark.parametrize(
    "content",
    [
        BILLION_LAUGHS,
        "<domain>" * 100000,
        "<domain><devices><hostdev type='mdev'><source><address uuid='../../../x'/></source></hostdev></devices>"
        "</domain>",
        "<domain><devices><hostdev type='mdev'><source><address uuid='" + "a" * 100000 + "'/></source></hostdev>",
        "x" * (5 << 20),
        '<!DOCTYPE d SYSTEM "file:///etc/passwd"><domain/>',
    ],
    ids=["entities", "deep", "path-uuid", "long-uuid", "huge", "external-dtd"],
)
def test_a_hostile_domain_xml_holds_no_mdev_and_stops_nothing(tmp_path, content):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "etc/libvirt/qemu"))
    with open(os.path.join(root, "etc/libvirt/qemu/instance-1.xml"), "w") as handle:
        handle.write(content)
    held, warnings = gpu_restore.held_mdevs(gpu_restore.Sysfs(root))
    assert held == {}
    assert all(len(w) < 1000 for w in warnings)


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_a_domain_directory_linked_out_of_the_root_is_not_read(tmp_path, outside, kind):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "etc/libvirt"))
    (outside / "instance-9.xml").write_text(
        f"<domain><devices><hostdev type='mdev'><source><address uuid='{UUID}'/></source></hostdev>"
        f"</devices><!-- {SECRET} --></domain>"
    )
    os.symlink(_escape(kind, outside), os.path.join(root, "etc/libvirt/qemu"))
    held, warnings = gpu_restore.held_mdevs(gpu_restore.Sysfs(root))
    assert held == {} and SECRET not in repr(warnings)
    (outside / "instance-9.xml").unlink()  # the sentinel holds only its own files


@pytest.mark.parametrize(
    "record",
    [
        {UUID: {"parent": "../../../../outside", "type": "nvidia-735"}},
        {UUID: {"parent": "0000:84:00.4", "type": "../../../../outside"}},
        {UUID: {"parent": "0000:84:00.4", "type": "nvidia-735\n"}},
        {UUID: "0000:84:00.4"},
        [UUID],
    ],
)
def test_a_hostile_mdev_record_names_no_path(tmp_path, record):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "etc/libvirt/qemu"))
    with open(os.path.join(root, "etc/libvirt/qemu/instance-1.xml"), "w") as handle:
        handle.write(_domain(UUID))
    os.makedirs(os.path.join(root, "var/lib/accel-openstack"), exist_ok=True)
    with open(os.path.join(root, "var/lib/accel-openstack/mdevs.json"), "w") as handle:
        json.dump(record, handle)
    before = _sys_files(root)
    with pytest.raises(gpu_restore.RestoreError, match="not recorded"):
        gpu_restore.restore(root, timeout=1)
    assert _sys_files(root) == before


def _domain(uuid: str) -> str:
    return (
        f"<domain><devices><hostdev type='mdev'><source><address uuid='{uuid}'/></source></hostdev></devices></domain>"
    )


# -- 6. the boot state pci_facts reports is untrusted too ---------------------------------------------
@pytest.mark.parametrize(
    "damage", ["deep", "huge", "wrong-types", "fifo", "link-absolute", "link-relative", "not-json", "list"]
)
def test_a_damaged_boot_state_is_reported_as_unknown(tmp_path, outside, damage):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    path = os.path.join(root, "var/lib/accel-openstack/boot-state.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    texts = {
        "deep": "[" * 200000,
        "huge": '{"status": "ok", "missing": ["' + "x" * (2 << 20) + '"]}',
        "wrong-types": json.dumps({"status": ["ok"], "missing": "everything"}),
        "not-json": "{status: ok",
        "list": json.dumps(["ok"]),
    }
    if damage == "fifo":
        os.mkfifo(path)
    elif damage.startswith("link"):
        os.symlink(_escape(damage.split("-")[1], outside, 4) + "/secret.txt", path)
    else:
        with open(path, "w") as handle:
            handle.write(texts[damage])
    result = run_module("pci_facts", {"root": root})
    assert not result.get("failed"), result
    state = result["ansible_facts"]["accel_boot_state"]
    assert state is None or state["status"] == "unknown", state
    assert_secret_absent(result)


@pytest.mark.parametrize("text", ["[" * 100000, '{"address": ' * 50000, "1" * 5000])
def test_a_state_file_nested_without_end_or_of_huge_numbers_is_refused_by_name(tmp_path, text):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    directory = os.path.join(root, "etc/accel-openstack/sriov")
    os.makedirs(directory)
    with open(os.path.join(directory, f"{L40S}.json"), "w") as handle:
        handle.write(text)
    with pytest.raises(gpu_restore.RestoreError, match=f"state file /etc/accel-openstack/sriov/{L40S}.json"):
        gpu_restore.restore(root, timeout=1)
