"""SR-IOV VFs on AMD Instinct and Intel Data Center GPUs: the new hardware profiles discovered, VFs made
through sriov_vfs's real main() on simulated roots whose sysfs answers writes, and kept across a reboot.

Intel's i915 makes VFs through sriov_numvfs like a NIC; AMD's GIM makes them itself from its vf_num
setting, so the module changes nothing there and names that setting."""

import json
import os
import shutil

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from tests.support.ansible_runner import run_module
from tests.support.fake_kernel import FakeKernel
from tests.support.fake_sysfs import build_root, load_profile

FLEX_EMPTY = "0000:cb:00.0"
MI300X_GIM = "0000:05:00.0"
MI300X_AMDGPU = "0000:85:00.0"


def _tree(root: str) -> dict:
    out = {}
    for base, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(base, d))]:
            path = os.path.join(base, name)
            if os.path.islink(path):
                out[os.path.relpath(path, root)] = os.readlink(path)
            else:
                with open(path, "rb") as handle:
                    out[os.path.relpath(path, root)] = handle.read()
    return out


@pytest.fixture
def flex(tmp_path, monkeypatch):
    root = build_root("intel-flex170", str(tmp_path / "root"))
    kernel = FakeKernel(root, "intel-flex170", delay=0.1)
    kernel.answer_writes(monkeypatch)
    with kernel:
        yield root


@pytest.fixture
def mi300x(tmp_path, monkeypatch):
    root = build_root("amd-mi300x", str(tmp_path / "root"))
    kernel = FakeKernel(root, "amd-mi300x", delay=0.1)
    kernel.answer_writes(monkeypatch)
    with kernel:
        yield root, kernel


@pytest.mark.parametrize("name", ["amd-mi300x", "intel-flex170"])
def test_the_profiles_are_discovered_as_the_kernel_shows_them(name, tmp_path):
    profile = load_profile(name)
    root = build_root(name, str(tmp_path / "root"))
    pf_path = os.path.realpath(os.path.join(root, "sys/bus/pci/devices", profile["devices"][4]["address"]))
    for attr in ("sriov_totalvfs", "sriov_numvfs", "sriov_drivers_autoprobe", "sriov_vf_device", "sriov_offset"):
        assert os.path.isfile(os.path.join(pf_path, attr)), attr
    first_vf = os.path.join(pf_path, "virtfn0")
    assert os.path.islink(first_vf) and os.path.realpath(os.path.join(first_vf, "physfn")) == pf_path
    facts, warnings = discover(root)
    assert warnings == []
    module = run_module("pci_facts", {"root": root})  # the module's real main() on the simulated root
    assert module["changed"] is False and module.get("warnings") is None
    assert module["ansible_facts"]["accel_pci_devices"] == facts["accel_pci_devices"]
    assert module["ansible_facts"]["accel_unknown_accelerators"] == []
    by_address = {d["address"]: d for d in facts["accel_pci_devices"]}
    vfs = [d for d in facts["accel_pci_devices"] if d["physfn"]]
    pfs = [d for d in facts["accel_pci_devices"] if d["sriov_totalvfs"]]
    assert [d["accelerator"]["role"] for d in vfs] == ["vf"] * len(vfs) and {d["driver"] for d in vfs} == {"vfio-pci"}
    assert facts["accel_unknown_accelerators"] == []
    if name == "amd-mi300x":
        assert [(d["address"], d["driver"], d["sriov_numvfs"]) for d in pfs] == [
            (MI300X_GIM, "gim", 8),
            (MI300X_AMDGPU, "amdgpu", 0),
        ]
        assert {(d["product_id"], d["class_code"]) for d in vfs} == {("74b5", "120000")} and len(vfs) == 8
        gim = by_address[MI300X_GIM]["accelerator"]
        assert (gim["vf_creation"], gim["partition"]["compute"], gim["partition"]["memory"]) == (
            "driver_parameter",
            "CPX",
            "NPS4",
        )
        assert vfs[0]["accelerator"]["vf_memory_mb"] == 24576
        amdgpu = by_address[MI300X_AMDGPU]["accelerator"]["partition"]
        assert (amdgpu["compute"], amdgpu["memory"], amdgpu["source"]) == ("SPX", "NPS1", "driver")
        assert amdgpu["available_compute"] == ["SPX", "DPX", "QPX", "CPX"]
    else:
        assert [(d["address"], d["driver"], d["sriov_numvfs"]) for d in pfs] == [
            ("0000:4d:00.0", "i915", 4),
            (FLEX_EMPTY, "i915", 0),
        ]
        assert {(d["product_id"], d["class_code"]) for d in vfs} == {("56c0", "038000")} and len(vfs) == 4
        assert by_address["0000:4d:00.0"]["accelerator"]["partition"]["profile"] == "flex170_m4"
        assert vfs[0]["accelerator"]["vf_memory_mb"] == 3840


def test_flex_vfs_check_apply_check_apply_then_a_reboot_brings_them_back(flex, tmp_path, monkeypatch):
    args = {"root": flex, "devices": [FLEX_EMPTY], "numvfs": 4, "timeout": 10}
    before = _tree(flex)
    checked = run_module("sriov_vfs", args, check=True, diff=True)
    assert checked["changed"] is True and checked["diff"][0]["after"].startswith("sriov_numvfs=4\n")
    assert checked["diff"][0]["before"] == "sriov_numvfs=0\n"
    assert _tree(flex) == before
    applied = run_module("sriov_vfs", args)
    assert applied["changed"] is True, applied
    assert applied["devices"] == [{"address": FLEX_EMPTY, "numvfs_before": 0, "numvfs": 4, "totalvfs": 31}]
    assert gpu_restore.Sysfs(flex).vfs(FLEX_EMPTY) == ["0000:cb:00.1", "0000:cb:00.2", "0000:cb:00.3", "0000:cb:00.4"]
    with open(os.path.join(flex, "etc/accel-openstack/sriov", f"{FLEX_EMPTY}.json")) as handle:
        assert json.load(handle) == {"address": FLEX_EMPTY, "numvfs": 4}
    assert run_module("sriov_vfs", args, check=True)["changed"] is False
    assert run_module("sriov_vfs", args)["changed"] is False
    facts, _unused = discover(flex)
    made = [d for d in facts["accel_pci_devices"] if d["physfn"] == FLEX_EMPTY]
    assert [d["accelerator"]["vf_memory_mb"] for d in made] == [3840] * 4  # flex170_m4, by the VF count

    fresh = build_root("intel-flex170", str(tmp_path / "after"))  # the boot: VFs back to none
    shutil.copytree(os.path.join(flex, "etc/accel-openstack"), os.path.join(fresh, "etc/accel-openstack"))
    assert gpu_restore.Sysfs(fresh).vfs(FLEX_EMPTY) == []
    kernel = FakeKernel(fresh, "intel-flex170", delay=0.1)
    kernel.answer_writes(monkeypatch)
    with kernel:
        lines = gpu_restore.restore(fresh, timeout=5)
    assert f"{FLEX_EMPTY}: 4 VFs" in lines
    assert len(gpu_restore.Sysfs(fresh).vfs(FLEX_EMPTY)) == 4


def test_flex_vfs_by_vendor_and_product_take_the_pfs_and_never_a_vf(flex):
    applied = run_module("sriov_vfs", {"root": flex, "devices": ["8086:56c0"], "numvfs": 4, "timeout": 10})
    assert [d["address"] for d in applied["devices"]] == ["0000:4d:00.0", FLEX_EMPTY]
    assert [d["numvfs_before"] for d in applied["devices"]] == [4, 0]


def test_gim_keeps_its_own_count_the_module_writes_nothing(mi300x):
    root, kernel = mi300x
    args = {"root": root, "devices": [MI300X_GIM], "numvfs": 8}
    before = _tree(root)
    for check in (True, False):
        result = run_module("sriov_vfs", args, check=check, diff=True)
        assert result["changed"] is False, result
        assert result["devices"] == [
            {"address": MI300X_GIM, "numvfs_before": 8, "numvfs": 8, "totalvfs": 8, "persisted_by": "gim"}
        ]
        assert result["state_files"] == [] and result.get("diff", []) == []
    assert _tree(root) == before
    assert kernel.events == []


@pytest.mark.parametrize(
    ("address", "numvfs", "words"),
    [
        (MI300X_GIM, 1, ["from 8 to 1", "its vf_num setting", "'options gim vf_num=<N>' in /etc/modprobe.d/gim.conf",
                         "1 VF(s) = SPX/NPS1, 8 VF(s) = CPX/NPS4", "reload gim with no VF in use"]),
        (MI300X_AMDGPU, 8, ["from 0 to 8", "gets VFs only from the gim host driver", "this PF is on amdgpu",
                            "bind it to gim"]),
    ],
)  # fmt: skip
def test_a_gim_count_change_is_refused_in_check_mode_too_naming_the_setting(mi300x, address, numvfs, words):
    root, kernel = mi300x
    before = _tree(root)
    for check in (True, False):
        result = run_module("sriov_vfs", {"root": root, "devices": [address], "numvfs": numvfs}, check=check)
        assert result["failed"] is True
        for word in words:
            assert word in result["msg"], (word, result["msg"])
    assert _tree(root) == before
    assert kernel.events == []


def test_the_simulated_kernel_refuses_sriov_numvfs_on_gim_as_the_real_one_does(mi300x):
    root, kernel = mi300x
    sysfs = gpu_restore.Sysfs(root)
    with pytest.raises(gpu_restore.RestoreError):
        gpu_restore.set_numvfs(sysfs, MI300X_GIM, 1, timeout=0.5)
    assert kernel.events and all(
        e.startswith("refused sriov_numvfs=") and e.endswith(f"on {MI300X_GIM} (its driver makes the VFs itself)")
        for e in kernel.events
    )
    assert len(sysfs.vfs(MI300X_GIM)) == 8


def test_a_hostile_driver_link_name_never_reaches_the_message(tmp_path):
    root = build_root("amd-mi300x", str(tmp_path / "root"))
    link = os.path.join(os.path.realpath(os.path.join(root, "sys/bus/pci/devices", MI300X_AMDGPU)), "driver")
    os.unlink(link)
    os.symlink("../../../bus/pci/drivers/amd gpu; rm -rf $HOME", link)
    result = run_module("sriov_vfs", {"root": root, "devices": [MI300X_AMDGPU], "numvfs": 8})
    assert result["failed"] is True
    assert "this PF is on no driver: bind it to gim" in result["msg"] and "rm -rf" not in result["msg"]
