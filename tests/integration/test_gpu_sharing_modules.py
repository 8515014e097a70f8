"""sriov_vfs and nvidia_vgpu through their real main() on fake roots whose sysfs answers writes."""

import json
import os

import pytest

from tests.support.ansible_runner import run_module
from tests.support.fake_kernel import FakeKernel
from tests.support.fake_sysfs import build_root


def _tree(root: str) -> dict:
    out = {}
    for base, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(base, d))]:
            path = os.path.join(base, name)
            if os.path.islink(path):
                out[os.path.relpath(path, root)] = os.readlink(path)
            else:
                with open(path, "rb") as handle:
                    out[os.path.relpath(path, root)] = handle.read().strip()  # sysfs reads end in a newline
    return out


@pytest.fixture
def l40s(tmp_path, monkeypatch):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    kernel = FakeKernel(root, "vgpu-l40s", delay=0.1)
    kernel.answer_writes(monkeypatch)
    with kernel:
        yield root


def test_sriov_vfs_check_apply_check_apply(l40s):
    args = {"root": l40s, "devices": ["0000:81:00.0"], "numvfs": 8, "timeout": 10}
    before = _tree(l40s)
    checked = run_module("sriov_vfs", args, check=True, diff=True)
    assert checked["changed"] is True and "sriov_numvfs=8" in checked["diff"][0]["after"]
    assert _tree(l40s) == before
    applied = run_module("sriov_vfs", args)
    assert applied["changed"] is True, applied
    assert applied["devices"] == [{"address": "0000:81:00.0", "numvfs_before": 4, "numvfs": 8, "totalvfs": 32}]
    links = [n for n in os.listdir(os.path.join(l40s, "sys/bus/pci/devices/0000:81:00.0")) if n.startswith("virtfn")]
    assert len(links) == 8
    with open(os.path.join(l40s, "etc/accel-openstack/sriov/0000:81:00.0.json")) as handle:
        assert json.load(handle)["numvfs"] == 8
    assert run_module("sriov_vfs", args, check=True)["changed"] is False
    assert run_module("sriov_vfs", args)["changed"] is False


def test_nvidia_vgpu_check_apply_check_apply(l40s):
    args = {"root": l40s, "devices": ["0000:01:00.0"], "type": "NVIDIA L40S-12Q", "vfs": 2}
    before = _tree(l40s)
    checked = run_module("nvidia_vgpu", args, check=True, diff=True)
    assert checked["changed"] is True and len(checked["gpus"][0]["writes"]) == 2
    assert _tree(l40s) == before
    applied = run_module("nvidia_vgpu", args)
    assert applied["changed"] is True, applied
    current = os.path.join(l40s, "sys/bus/pci/devices/0000:01:00.4/nvidia/current_vgpu_type")
    with open(current) as handle:
        assert handle.read().strip() == "1160"
    assert run_module("nvidia_vgpu", args, check=True)["changed"] is False
    assert run_module("nvidia_vgpu", args)["changed"] is False


@pytest.mark.parametrize(
    ("module", "args", "words"),
    [
        ("sriov_vfs", {"devices": ["0000:01:00.0"], "numvfs": 33}, ["at most 32"]),
        ("sriov_vfs", {"devices": ["0000:42:00.0"], "numvfs": 2}, ["no PCI device 0000:42:00.0", "0000:01:00.0"]),
        ("nvidia_vgpu", {"devices": ["0000:01:00.0"], "type": "NVIDIA A16-4Q"}, ["not in its VFs", "1155"]),
        ("nvidia_vgpu", {"devices": ["0000:01:00.0"], "type": "NVIDIA L40S-24C", "vfs": 3}, ["set back"]),
    ],
)
def test_bad_input_names_the_fix_and_changes_nothing(l40s, module, args, words):
    before = _tree(l40s)
    result = run_module(module, dict(args, root=l40s))
    assert result["failed"] is True
    for word in words:
        assert word in result["msg"]
    assert _tree(l40s) == before
