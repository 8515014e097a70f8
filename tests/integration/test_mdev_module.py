"""mdev through its real main() on an A16 root whose sysfs answers create/remove: check -> apply -> check ->
apply, stable UUIDs, mdevctl definitions, bad input."""

import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.mdev import mdev_uuid
from tests.support.ansible_runner import run_module
from tests.support.fake_kernel import FakeKernel
from tests.support.fake_sysfs import build_root

VF = "0000:84:00.4"


@pytest.fixture
def a16(tmp_path, monkeypatch):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "usr/bin"), exist_ok=True)
    with open(os.path.join(root, "usr/bin/mdevctl"), "w") as handle:
        handle.write("#!/bin/sh\n")
    os.chmod(os.path.join(root, "usr/bin/mdevctl"), 0o755)
    kernel = FakeKernel(root, "vgpu-a16")
    kernel.answer_writes(monkeypatch)
    with kernel:
        yield root


def _available(root):
    path = os.path.join(root, f"sys/bus/pci/devices/{VF}/mdev_supported_types/nvidia-735/available_instances")
    with open(path) as handle:
        return int(handle.read())


def test_check_apply_check_apply_then_remove(a16):
    args = {"root": a16, "parent": VF, "type": "nvidia-735", "count": 1}
    wanted = mdev_uuid(VF, "nvidia-735", 0)
    checked = run_module("mdev", args, check=True)
    assert checked["changed"] is True and checked["created"] == [wanted] and _available(a16) == 1
    applied = run_module("mdev", args)
    assert applied["changed"] is True and os.path.islink(os.path.join(a16, f"sys/bus/mdev/devices/{wanted}"))
    assert _available(a16) == 0
    define = next(c for c in applied["commands"] if "define" in c["command"])
    assert "--auto" in define["command"] and define["status"] == "pending"  # the fixture is not a full system
    assert run_module("mdev", args, check=True)["changed"] is False
    assert run_module("mdev", args)["changed"] is False
    removed = run_module("mdev", dict(args, count=0))
    assert removed["removed"] == [wanted] and _available(a16) == 1
    assert not os.path.lexists(os.path.join(a16, f"sys/bus/mdev/devices/{wanted}"))


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"parent": "0000:99:00.0", "type": "nvidia-735", "count": 1}, ["not an mdev parent", VF]),
        ({"parent": VF, "type": "NVIDIA A16-4Q", "count": 1}, ["is the name of nvidia-735"]),
        ({"parent": VF, "type": "nvidia-735", "count": 2}, ["can take 1 more", "lower count"]),
    ],
)
def test_bad_input_names_the_fix(a16, args, words):
    result = run_module("mdev", dict(args, root=a16))
    assert result["failed"] is True
    for word in words:
        assert word in result["msg"]
    assert _available(a16) == 1
