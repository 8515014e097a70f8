"""Shared GPUs under attack: sriov_vfs, nvidia_vgpu, mdev and nvidia_mig, and the boot restore that reads
their state files. Links out of the root, hostile state files, bad addresses, huge counts, wrong types:
each gives a clear error (or changes nothing), and nothing outside the root is read, written or deleted
(the ``outside`` sentinel checks that after every case)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore
from tests.hostile.conftest import assert_secret_absent, no_traceback, regular_files
from tests.support.ansible_runner import run_module
from tests.support.fake_kernel import FakeKernel
from tests.support.fake_sysfs import build_root

CLI = os.path.join(os.path.dirname(__file__), "../../roles/host_gpu_sharing/files/gpu_restore_cli.py")
L40S = "0000:81:00.0"
A16_VF = "0000:84:00.4"
MIG = "0000:3b:00.0"


def _escape(kind: str, outside, link: str) -> str:
    """A link target that leaves the root: absolute, or relative with more ``..`` than the root is deep."""
    if kind == "absolute":
        return str(outside)
    return "../" * (link.count("/") + 10) + str(outside).lstrip("/")


def _refused(result: dict, *words: str) -> None:
    assert result.get("failed"), result
    no_traceback(result)
    for word in words:
        assert word in result["msg"], result["msg"]


# -- bad input to the modules: a clear message, nothing changed ------------------------------------------
BAD_INPUT = [
    ("sriov_vfs", "vgpu-l40s", {"devices": ["../../../outside"], "numvfs": 2}, "../../../outside"),
    ("sriov_vfs", "vgpu-l40s", {"devices": [L40S + "/../../x"], "numvfs": 2}, "/../../x"),
    ("sriov_vfs", "vgpu-l40s", {"devices": [L40S + "\n"], "numvfs": 2}, "\\n"),
    ("sriov_vfs", "vgpu-l40s", {"devices": [L40S], "numvfs": 10**12}, "numvfs"),
    ("sriov_vfs", "vgpu-l40s", {"devices": [L40S], "numvfs": -1}, "numvfs"),
    ("sriov_vfs", "vgpu-l40s", {"devices": [L40S], "numvfs": "many"}, "numvfs"),
    ("sriov_vfs", "vgpu-l40s", {"devices": {"address": L40S}, "numvfs": 2}, "devices"),
    ("nvidia_vgpu", "vgpu-l40s", {"devices": ["../x"], "type": "NVIDIA L40S-4Q"}, "../x"),
    ("nvidia_vgpu", "vgpu-l40s", {"devices": [L40S], "type": "../../../etc/passwd"}, "../../../etc/passwd"),
    ("nvidia_vgpu", "vgpu-l40s", {"devices": [L40S], "type": "1155\n"}, "1155"),
    ("nvidia_vgpu", "vgpu-l40s", {"devices": [L40S], "type": "NVIDIA L40S-4Q", "vfs": 10**9}, "vfs"),
    ("nvidia_vgpu", "vgpu-l40s", {"devices": [L40S], "type": "NVIDIA L40S-4Q", "vfs": -3}, "vfs"),
    ("nvidia_vgpu", "vgpu-l40s", {"devices": [L40S], "type": ["NVIDIA L40S-4Q"]}, "type"),
    ("mdev", "vgpu-a16", {"parent": "../../../outside", "type": "nvidia-735", "count": 1}, "../../../outside"),
    ("mdev", "vgpu-a16", {"parent": A16_VF + "/..", "type": "nvidia-735", "count": 1}, "/.."),
    ("mdev", "vgpu-a16", {"parent": A16_VF, "type": "nvidia-735/../../..", "count": 1}, "nvidia-735/../../.."),
    ("mdev", "vgpu-a16", {"parent": A16_VF, "type": "nvidia-735", "count": 10**9}, "count"),
    ("mdev", "vgpu-a16", {"parent": A16_VF, "type": "nvidia-735", "count": -1}, "count"),
    ("nvidia_mig", "mig-a100", {"address": "../../outside", "layout": []}, "../../outside"),
    ("nvidia_mig", "mig-a100", {"address": MIG + "\n", "layout": []}, "\\n"),
    ("nvidia_mig", "mig-a100", {"address": MIG, "layout": [{"profile": "1g.5gb", "count": 10**9}]}, "1g.5gb"),
    ("nvidia_mig", "mig-a100", {"address": MIG, "layout": [42]}, "layout"),
    ("nvidia_mig", "mig-a100", {"address": MIG, "layout": [{"profile": "../../x", "count": 1}]}, "../../x"),
    ("nvidia_mig", "mig-a100", {"address": MIG, "layout": [{"profile": "1g.5gb", "placement": "x"}]}, "placement"),
]


@pytest.mark.parametrize(("module", "profile", "args", "named"), BAD_INPUT, ids=[str(i) for i in range(len(BAD_INPUT))])
def test_bad_input_is_refused_with_a_message_and_changes_nothing(tmp_path, module, profile, args, named):
    root = build_root(profile, str(tmp_path / "root"))
    before = regular_files(root)
    result = run_module(module, dict(args, root=root, **({} if module == "nvidia_mig" else {"timeout": 2})))
    _refused(result, named)
    assert regular_files(root) == before


# -- links out of the root: followed as if the root were /, never out of it -----------------------------
@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_sriov_state_directory_linked_out_of_the_root(tmp_path, monkeypatch, outside, kind):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "etc"), exist_ok=True)
    os.symlink(_escape(kind, outside, "/etc/accel-openstack"), os.path.join(root, "etc/accel-openstack"))
    kernel = FakeKernel(root, "vgpu-l40s")
    kernel.answer_writes(monkeypatch)
    with kernel:
        result = run_module("sriov_vfs", {"root": root, "devices": [L40S], "numvfs": 6, "timeout": 10})
    if result.get("failed"):
        no_traceback(result)
    else:  # the link was followed inside the root: the state file is under the root's copy of the target
        assert os.path.isfile(root + str(outside) + f"/sriov/{L40S}.json"), result


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_nvidia_vgpu_state_file_linked_to_a_secret_outside(tmp_path, monkeypatch, outside, kind):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "etc/accel-openstack/vgpu"))
    link = f"/etc/accel-openstack/vgpu/{L40S}.json"
    os.symlink(_escape(kind, outside, link) + "/secret.txt", root + link)
    kernel = FakeKernel(root, "vgpu-l40s")
    kernel.answer_writes(monkeypatch)
    with kernel:
        result = run_module(
            "nvidia_vgpu", {"root": root, "devices": [L40S], "type": "NVIDIA L40S-4Q", "vfs": 2}, check=True, diff=True
        )
    if result.get("failed"):
        no_traceback(result)
    assert_secret_absent(result)


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_mdev_bus_parent_linked_out_of_the_root(tmp_path, outside, kind):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    link = f"{root}/sys/class/mdev_bus/{A16_VF}"
    os.unlink(link)
    os.symlink(_escape(kind, outside, f"/sys/class/mdev_bus/{A16_VF}"), link)
    result = run_module("mdev", {"root": root, "parent": A16_VF, "type": "nvidia-735", "count": 1})
    _refused(result, A16_VF)
    assert_secret_absent(result)


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_nvidia_mig_state_directory_linked_out_of_the_root(tmp_path, outside, kind):
    root = build_root("mig-a100", str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "etc/accel-openstack"))
    os.symlink(_escape(kind, outside, "/etc/accel-openstack/mig"), os.path.join(root, "etc/accel-openstack/mig"))
    result = run_module("nvidia_mig", {"root": root, "address": MIG, "layout": [{"profile": "3g.20gb", "count": 1}]})
    if result.get("failed"):
        no_traceback(result)
    else:
        assert os.path.isfile(root + str(outside) + f"/{MIG}.json"), result


def test_a_fifo_as_the_state_file_is_never_opened(tmp_path):
    root = build_root("mig-a100", str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "etc/accel-openstack/mig"))
    os.mkfifo(os.path.join(root, f"etc/accel-openstack/mig/{MIG}.json"))
    result = run_module("nvidia_mig", {"root": root, "address": MIG, "layout": []}, check=True, diff=True)
    if result.get("failed"):
        no_traceback(result)


# -- hostile state files at boot: refused before any write ------------------------------------------------
def _sriov(address=L40S, numvfs=6):
    return {"address": address, "numvfs": numvfs}


def _vgpu(vfs, type_id=1155):
    return {"address": L40S, "type_id": type_id, "type_name": "NVIDIA L40S-4Q", "vfs": vfs}


def _mig(instances, address=MIG):
    return {"address": address, "mode": "enabled", "instances": instances}


HOSTILE_STATES = [
    ("sriov", "../../../../outside.json", _sriov("../../../../outside"), "not a full PCI address"),
    ("sriov", f"{L40S}.json", _sriov(L40S + "/../../../x"), "not a full PCI address"),
    ("sriov", f"{L40S}.json", _sriov(L40S + "\n"), "not a full PCI address"),
    ("sriov", f"{L40S}.json", _sriov(L40S + "\x1b[2J"), "not a full PCI address"),
    ("sriov", f"{L40S}.json", _sriov("0000:81:00.0\x00"), "not a full PCI address"),
    ("sriov", f"{L40S}.json", _sriov("00000000:81:00.0"), "not a full PCI address"),
    ("sriov", f"{L40S}.json", _sriov("0000:٨1:00.0"), "not a full PCI address"),
    ("sriov", "0000:01:00.0.json", _sriov(), "does not match the file name"),
    ("sriov", f"{L40S}.json", _sriov(numvfs=10**12), "numvfs"),
    ("sriov", f"{L40S}.json", _sriov(numvfs=-1), "numvfs"),
    ("sriov", f"{L40S}.json", _sriov(numvfs="6"), "numvfs"),
    ("sriov", f"{L40S}.json", _sriov(numvfs=True), "numvfs"),
    ("sriov", f"{L40S}.json", _sriov(numvfs=6.5), "numvfs"),
    ("sriov", f"{L40S}.json", [L40S, 6], "expected an object"),
    ("vgpu", f"{L40S}.json", _vgpu(["../../../../outside"]), "not a full PCI address"),
    ("vgpu", f"{L40S}.json", _vgpu("0000:81:00.4"), "vfs is not a list"),
    ("vgpu", f"{L40S}.json", _vgpu(["0000:81:00.4"] * 70000), "vfs is not a list"),
    ("vgpu", f"{L40S}.json", _vgpu(["0000:81:00.4"], type_id=2**40), "type_id"),
    ("vgpu", f"{L40S}.json", _vgpu(["0000:81:00.4"], type_id="1155; reboot"), "type_id"),
    ("mig", f"{MIG}.json", _mig([{"profile_id": "9:0 -C; rm -rf /", "start": 0}]), "profile_id"),
    ("mig", f"{MIG}.json", _mig([{"profile_id": 9, "start": -1}]), "start"),
    ("mig", f"{MIG}.json", _mig([{"profile_id": 19, "start": 0}] * 1000), "instances"),
    ("mig", f"{MIG}.json", _mig("9:0"), "instances"),
    ("mig", f"{MIG}.json", _mig([], address="../" + MIG), "not a full PCI address"),
]


def _reboot(tmp_path, profile: str) -> tuple[str, dict[str, bytes]]:
    root = build_root(profile, str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "etc/accel-openstack"))
    return root, regular_files(os.path.join(root, "sys"))


def _state(root: str, kind: str, name: str, content) -> None:
    directory = os.path.join(root, "etc/accel-openstack", kind)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, os.path.basename(name)), "w") as handle:
        json.dump(content, handle)


@pytest.mark.parametrize(
    ("kind", "name", "content", "fault"), HOSTILE_STATES, ids=[str(i) for i in range(len(HOSTILE_STATES))]
)
def test_a_hostile_state_file_stops_the_restore_before_any_write(tmp_path, kind, name, content, fault):
    root, sysfs = _reboot(tmp_path, "mig-a100" if kind == "mig" else "vgpu-l40s")
    _state(root, "sriov", f"{L40S}.json", _sriov())  # a good file first: it must not be applied either
    _state(root, kind, name, content)
    ran = []
    with pytest.raises(gpu_restore.RestoreError, match="state file") as caught:
        gpu_restore.restore(root, run=lambda argv: ran.append(argv) or (0, "", ""), timeout=1)
    assert fault in str(caught.value)
    assert ran == [] and regular_files(os.path.join(root, "sys")) == sysfs


@pytest.mark.parametrize(
    "damage",
    ["not json", "non-utf8", "fifo", "directory", "huge", "link-absolute", "link-relative", "dir-link-absolute"],
)
def test_an_unreadable_or_escaping_state_file_is_refused(tmp_path, outside, damage):
    root, sysfs = _reboot(tmp_path, "vgpu-l40s")
    directory = os.path.join(root, "etc/accel-openstack/sriov")
    os.makedirs(directory)
    path = os.path.join(directory, f"{L40S}.json")
    if damage == "not json":
        with open(path, "w") as handle:
            handle.write("{address: 0000:81:00.0")
    elif damage == "non-utf8":
        with open(path, "wb") as handle:
            handle.write(b'{"address": "\xff\xfe"}')
    elif damage == "fifo":
        os.mkfifo(path)
    elif damage == "directory":
        os.mkdir(path)
    elif damage == "huge":
        with open(path, "w") as handle:
            handle.write('{"address": "' + "0" * (8 << 20) + '"}')
    elif damage.startswith("link-"):
        target = _escape(damage.split("-")[1], outside, f"/etc/accel-openstack/sriov/{L40S}.json")
        os.symlink(target + "/secret.txt", path)
    else:
        shutil.rmtree(directory)
        os.symlink(str(outside), directory)
    with pytest.raises(gpu_restore.RestoreError) as caught:
        gpu_restore.restore(root, timeout=1)
    assert "state file" in str(caught.value) or "out of the root" in str(caught.value), caught.value
    assert_secret_absent(str(caught.value))
    assert regular_files(os.path.join(root, "sys")) == sysfs


def test_the_boot_command_reports_a_hostile_state_file_and_exits_1(tmp_path):
    """The unit's own command, run as on a host without the collection: its directory holds only the two
    files the role installs, and Python's environment and user site are ignored."""
    root, sysfs = _reboot(tmp_path, "vgpu-l40s")
    _state(root, "sriov", f"{L40S}.json", _sriov(L40S + "/../../../../../tmp"))
    libexec = tmp_path / "libexec"
    libexec.mkdir()
    shutil.copy(CLI, libexec / "gpu-restore")
    shutil.copy(gpu_restore.__file__, libexec / "gpu_restore.py")
    proc = subprocess.run(
        [sys.executable, "-E", "-s", str(libexec / "gpu-restore"), "--root", root, "--timeout", "1"],
        capture_output=True,
        text=True,
        check=False,
        cwd=str(tmp_path),
        timeout=30,
    )
    assert proc.returncode == 1, proc
    assert proc.stderr.startswith("accel-openstack gpu restore: state file /etc/accel-openstack/sriov/"), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert regular_files(os.path.join(root, "sys")) == sysfs
