"""sriov_vfs / nvidia_vgpu logic and the boot restore, against the fake kernel's answers to sysfs writes."""

import json
import os
import shutil

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore, mig, sriov, vgpu
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from tests.support.fake_kernel import FakeKernel
from tests.support.fake_nvidia_smi import FakeNvidiaSmi
from tests.support.fake_sysfs import build_root

L40S = "0000:01:00.0"


def _kernel(root, profile, monkeypatch, delay=0.05):
    kernel = FakeKernel(root, profile, delay=delay)
    kernel.answer_writes(monkeypatch)
    return kernel


def _types(host, pf):
    sysfs = gpu_restore.Sysfs(host.root)
    return [gpu_restore.current_type(sysfs, vf) for vf in sysfs.vfs(pf)]


# -- SR-IOV ----------------------------------------------------------------------------------------------
def test_vfs_appear_late_and_the_module_waits_for_them(tmp_path, monkeypatch):
    root = build_root("sriov-nic", str(tmp_path / "root"))
    host = HostRoot(root)
    changes = sriov.plan(host, ["0000:3b:00.1"], 4)
    assert [c.as_dict() for c in changes] == [
        {"address": "0000:3b:00.1", "numvfs_before": 0, "numvfs": 4, "totalvfs": 64}
    ]
    with _kernel(root, "sriov-nic", monkeypatch, delay=0.3):
        sriov.apply(host, changes, timeout=10)
    vfs = gpu_restore.Sysfs(root).vfs("0000:3b:00.1")
    assert vfs == ["0000:3b:01.2", "0000:3b:01.3", "0000:3b:01.4", "0000:3b:01.5"]  # offset 9
    assert os.path.exists(os.path.join(root, "sys/bus/pci/devices/0000:3b:01.2/physfn"))
    assert json.loads(host.read_text(sriov.state_path("0000:3b:00.1"))) == {"address": "0000:3b:00.1", "numvfs": 4}
    assert not any(c.changed for c in sriov.plan(host, ["15b3:101d"], 4)[1:])


def test_a_count_change_goes_through_zero(tmp_path, monkeypatch):
    root = build_root("sriov-nic", str(tmp_path / "root"))
    host = HostRoot(root)
    with _kernel(root, "sriov-nic", monkeypatch) as kernel:
        sriov.apply(host, sriov.plan(host, ["0000:3b:00.0"], 2), timeout=10)
    assert len(gpu_restore.Sysfs(root).vfs("0000:3b:00.0")) == 2
    assert not [e for e in kernel.events if e.startswith("refused")]


def test_the_wait_gives_up_with_a_clear_message(tmp_path):
    root = build_root("sriov-nic", str(tmp_path / "root"))
    host = HostRoot(root)
    with pytest.raises(sriov.SriovError, match="timed out.*4 VFs on 0000:3b:00.1.*dmesg"):
        sriov.apply(host, sriov.plan(host, ["0000:3b:00.1"], 4), timeout=0.2)  # no kernel answers


def _hold_vf(root, vf, group="77"):
    """VF bound to vfio-pci with its group open by qemu (pid 4242)."""
    dev = os.path.join(root, "sys/bus/pci/devices", vf)
    os.unlink(os.path.join(dev, "driver"))
    os.makedirs(os.path.join(root, "sys/bus/pci/drivers/vfio-pci"), exist_ok=True)
    os.symlink("../../../bus/pci/drivers/vfio-pci", os.path.join(dev, "driver"))
    os.unlink(os.path.join(dev, "iommu_group"))
    os.makedirs(os.path.join(root, "sys/kernel/iommu_groups", group), exist_ok=True)
    os.symlink(f"../../../kernel/iommu_groups/{group}", os.path.join(dev, "iommu_group"))
    os.makedirs(os.path.join(root, "proc/4242/fd"))
    with open(os.path.join(root, "proc/4242/comm"), "w") as handle:
        handle.write("qemu-kvm\n")
    os.symlink(f"/dev/vfio/{group}", os.path.join(root, "proc/4242/fd/23"))


def test_removing_a_vf_in_use_is_refused_naming_it_and_its_user(tmp_path):
    root = build_root("sriov-nic", str(tmp_path / "root"))
    vf = gpu_restore.Sysfs(root).vfs("0000:3b:00.0")[3]
    _hold_vf(root, vf)
    with pytest.raises(sriov.SriovError) as caught:
        sriov.plan(HostRoot(root), ["0000:3b:00.0"], 2)
    assert vf in str(caught.value) and "qemu-kvm (pid 4242)" in str(caught.value)


@pytest.mark.parametrize(
    ("devices", "numvfs", "words"),
    [
        (["0000:3b:00.0"], 65, ["at most 64", "give 64 or fewer"]),
        (["0000:77:00.0"], 2, ["devices[0]", "no PCI device 0000:77:00.0", "0000:3b:00.0"]),
        (["0000:b0:00.0"], 2, ["no SR-IOV capability"]),
        (["eth0"], 2, ["neither a PCI address"]),
    ],
)
def test_bad_sriov_input_names_the_fix(tmp_path, devices, numvfs, words):
    root = build_root("sriov-nic", str(tmp_path / "root"))
    with pytest.raises(sriov.SriovError) as caught:
        sriov.plan(HostRoot(root), devices, numvfs)
    for word in words:
        assert word in str(caught.value)


# -- vGPU --------------------------------------------------------------------------------------------------
def test_vf_types_by_name_then_nothing_to_do(tmp_path, monkeypatch):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    host = HostRoot(root)
    with _kernel(root, "vgpu-l40s", monkeypatch):
        plans = vgpu.plan(host, [L40S], "NVIDIA L40S-12Q", 3)
        assert plans[0].mechanism == "vf" and len(plans[0].writes) == 3
        vgpu.apply(host, plans, timeout=5)
        assert _types(host, L40S) == [1160, 1160, 1160, 0]
        assert not vgpu.plan(host, [L40S], "1160", 3)[0].changed
        # the fourth VF can still take 12Q (4 x 12 GB fit 48 GB), and nothing else
        assert gpu_restore.creatable_types(gpu_restore.Sysfs(root), "0000:01:00.7") == {1160: "NVIDIA L40S-12Q"}
        # another type is offered only once the GPU's VFs are cleared
        with pytest.raises(vgpu.VgpuError, match="hold type 1160.*vfs: 0"):
            vgpu.plan(host, [L40S], "NVIDIA L40S-4Q", 2)
        vgpu.apply(host, vgpu.plan(host, [L40S], "NVIDIA L40S-4Q", 0), timeout=5)
        assert _types(host, L40S) == [0, 0, 0, 0]
        vgpu.apply(host, vgpu.plan(host, [L40S], "NVIDIA L40S-4Q", 2), timeout=5)
        assert _types(host, L40S) == [1155, 1155, 0, 0]
    saved = json.loads(host.read_text(vgpu.state_path(L40S)))
    assert saved == {
        "address": L40S,
        "type_id": 1155,
        "type_name": "NVIDIA L40S-4Q",
        "vfs": ["0000:01:00.4", "0000:01:00.5"],
    }


def test_more_vgpus_than_the_framebuffer_holds_are_rolled_back(tmp_path, monkeypatch):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    host = HostRoot(root)
    with _kernel(root, "vgpu-l40s", monkeypatch):
        with pytest.raises(vgpu.VgpuError, match="set back.*lower vfs"):
            vgpu.apply(host, vgpu.plan(host, [L40S], "NVIDIA L40S-24C", 3), timeout=5)
        assert _types(host, L40S) == [0, 0, 0, 0]
        assert not host.exists(vgpu.state_path(L40S))


def test_a_vf_in_use_keeps_its_type(tmp_path, monkeypatch):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    host = HostRoot(root)
    with _kernel(root, "vgpu-l40s", monkeypatch):
        vgpu.apply(host, vgpu.plan(host, [L40S], "NVIDIA L40S-12Q", 4), timeout=5)
    _hold_vf(root, "0000:01:00.7")
    with pytest.raises(vgpu.VgpuError, match="0000:01:00.7 holds vGPU type 1160.*qemu-kvm"):
        vgpu.plan(host, [L40S], "NVIDIA L40S-12Q", 2)


def test_mdev_bus_gpus_are_checked_not_written(tmp_path):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    host = HostRoot(root)
    plans = vgpu.plan(host, ["10de:25b6"], "NVIDIA A16-4Q", None)
    assert {p.mechanism for p in plans} == {"mdev"} and {p.type_id for p in plans} == {"nvidia-735"}
    assert not any(p.changed for p in plans)
    with pytest.raises(vgpu.VgpuError, match="nvidia-999.*nvidia-732 \\(NVIDIA A16-1Q\\)"):
        vgpu.plan(host, ["0000:84:00.0"], "nvidia-999", None)


def test_unknown_vf_type_lists_what_the_gpu_offers(tmp_path):
    host = HostRoot(build_root("vgpu-l40s", str(tmp_path / "root")))
    with pytest.raises(vgpu.VgpuError, match="NVIDIA L40S-48Q.*1155 \\(NVIDIA L40S-4Q\\)"):
        vgpu.plan(host, [L40S], "NVIDIA L40S-48Q", 1)
    with pytest.raises(vgpu.VgpuError, match="vfs 9 but the GPU has 4 VFs"):
        vgpu.plan(host, [L40S], "1155", 9)


# -- the boot restore: a fresh copy of the fake sysfs comes back to the same state ----------------------
def test_a_simulated_reboot_restores_vfs_types_and_mig(tmp_path, monkeypatch):
    root = build_root("vgpu-l40s", str(tmp_path / "before"))
    host = HostRoot(root)
    with _kernel(root, "vgpu-l40s", monkeypatch):
        sriov.apply(host, sriov.plan(host, ["0000:81:00.0"], 6), timeout=5)
        vgpu.apply(host, vgpu.plan(host, ["0000:81:00.0"], "NVIDIA L40S-4Q", 5), timeout=5)
    expected = _types(host, "0000:81:00.0")
    assert expected == [1155] * 5 + [0]

    fresh = build_root("vgpu-l40s", str(tmp_path / "after"))  # the boot: VFs back to firmware default
    shutil.copytree(os.path.join(root, "etc/accel-openstack"), os.path.join(fresh, "etc/accel-openstack"))
    assert _types(HostRoot(fresh), "0000:81:00.0") == [0, 0, 0, 0]
    with _kernel(fresh, "vgpu-l40s", monkeypatch, delay=0.2):
        lines = gpu_restore.restore(fresh, timeout=5)
    assert _types(HostRoot(fresh), "0000:81:00.0") == expected
    assert "0000:81:00.0: 6 VFs" in lines


def test_a_simulated_reboot_recreates_the_mig_layout(tmp_path):
    root = build_root("mig-hopper", str(tmp_path / "before"))
    host = HostRoot(root)
    smi = FakeNvidiaSmi(root)
    layout = [{"profile": "4g.71gb", "count": 1}, {"profile": "1g.18gb", "count": 3}]
    mig.apply(host, mig.plan(host, "0000:19:00.0", layout, smi), smi)
    fresh = build_root("mig-hopper", str(tmp_path / "after"))
    shutil.copytree(os.path.join(root, "etc/accel-openstack"), os.path.join(fresh, "etc/accel-openstack"))
    fresh_smi = FakeNvidiaSmi(fresh)
    assert mig.plan(HostRoot(fresh), "0000:19:00.0", layout, fresh_smi).instances_change
    gpu_restore.restore(fresh, run=fresh_smi, timeout=2)
    assert not mig.plan(HostRoot(fresh), "0000:19:00.0", layout, fresh_smi).changed
    assert gpu_restore.restore(fresh, run=fresh_smi, timeout=2) == [
        "0000:19:00.0: MIG mode on",
        "0000:19:00.0: GPU instances exist, left as they are",
    ]


# -- boot readiness: MIG mode lost, VFs gone, an instance's mdev missing ------------------------------
A100 = "0000:41:00.0"
A100_VF = "0000:41:00.4"
INSTANCE_MDEV = "5a1d8d4e-7c2b-4f0e-9f5d-0123456789ab"
DOMAIN = f"""<domain type='kvm'>
  <name>instance-00000001</name>
  <devices>
    <hostdev mode='subsystem' type='mdev' managed='no' model='vfio-pci' display='off'>
      <source><address uuid='{INSTANCE_MDEV}'/></source>
    </hostdev>
  </devices>
</domain>
"""
KOLLA_DOMAINS = "var/lib/docker/volumes/nova_libvirt_qemu/_data"


def _a100_running(tmp_path, monkeypatch):
    """An A100 host after the prepare stage and an instance whose MIG-backed vGPU is an mdev."""
    root = build_root("mig-vgpu-a100", str(tmp_path / "a100"))
    host = HostRoot(root)
    smi = FakeNvidiaSmi(root)
    with _kernel(root, "mig-vgpu-a100", monkeypatch):
        sriov.apply(host, sriov.plan(host, [A100], 4), timeout=5)
        mig.apply(host, mig.plan(host, A100, [{"profile": "3g.20gb", "count": 2}], smi), smi)
        sysfs = gpu_restore.Sysfs(root)
        base = f"/sys/class/mdev_bus/{A100_VF}/mdev_supported_types/nvidia-476"
        gpu_restore.wait_for(lambda: sysfs.read(f"{base}/available_instances") == "1", 5, "the type")
        sysfs.write(f"{base}/create", INSTANCE_MDEV)  # what Nova does for the instance
        gpu_restore.wait_for(lambda: sysfs.exists(f"/sys/bus/mdev/devices/{INSTANCE_MDEV}"), 5, "the mdev")
    os.makedirs(os.path.join(root, KOLLA_DOMAINS))
    with open(os.path.join(root, KOLLA_DOMAINS, "instance-00000001.xml"), "w") as handle:
        handle.write(DOMAIN)
    assert gpu_restore.record_mdevs(gpu_restore.Sysfs(root)) == 1  # the unit's ExecStop at shutdown
    return root


def test_a_reboot_with_mig_mode_lost_vfs_gone_and_the_mdev_missing_is_restored_in_order(tmp_path, monkeypatch):
    from tests.support.debian_root import reboot

    root = _a100_running(tmp_path, monkeypatch)
    reboot(root, "mig-vgpu-a100", vfs_gone=True, mig_lost=True)
    smi = FakeNvidiaSmi(root)
    assert smi(["-q", "-x"])[1].count("<current_mig>Disabled</current_mig>") == 1
    assert gpu_restore.Sysfs(root).vfs(A100) == []
    with _kernel(root, "mig-vgpu-a100", monkeypatch, delay=0.1):
        lines = gpu_restore.restore(root, run=smi, timeout=5)
    assert lines == [
        f"{A100}: MIG mode turned back on (GPU reset)",
        f"{A100}: 4 VFs",
        f"{A100}: created 9:0,9:4",
        f"mdev {INSTANCE_MDEV}: recreated (nvidia-476 on {A100_VF})",
    ]
    sysfs = gpu_restore.Sysfs(root)
    assert sysfs.link_name(f"/sys/bus/mdev/devices/{INSTANCE_MDEV}/mdev_type") == "nvidia-476"
    with open(os.path.join(root, "var/lib/accel-openstack/boot-state.json")) as handle:
        state = json.load(handle)
    assert state["status"] == "ok" and state["missing"] == [] and state["actions"] == lines


def test_a_gpu_that_cannot_be_reset_leaves_mig_mode_pending_and_says_reboot(tmp_path, monkeypatch):
    from tests.support.debian_root import reboot

    root = _a100_running(tmp_path, monkeypatch)
    reboot(root, "mig-vgpu-a100", vfs_gone=True, mig_lost=True, no_reset=True)
    smi = FakeNvidiaSmi(root)
    with _kernel(root, "mig-vgpu-a100", monkeypatch), pytest.raises(gpu_restore.RestoreError, match="reboot the host"):
        gpu_restore.restore(root, run=smi, timeout=2)
    assert gpu_restore.Sysfs(root).vfs(A100) == []  # nothing after the MIG step was attempted
    with open(os.path.join(root, "var/lib/accel-openstack/boot-state.json")) as handle:
        state = json.load(handle)
    assert state["status"] == "failed" and "cannot be reset" in state["message"]
    # the next boot applies the pending mode, as a real reboot does, and the restore completes
    reboot(root, "mig-vgpu-a100", vfs_gone=True)
    with _kernel(root, "mig-vgpu-a100", monkeypatch, delay=0.1):
        lines = gpu_restore.restore(root, run=FakeNvidiaSmi(root), timeout=5)
    assert lines[0] == f"{A100}: MIG mode on" and lines[-1].startswith(f"mdev {INSTANCE_MDEV}: recreated")


def test_an_mdev_whose_parent_is_unknown_is_reported_missing(tmp_path, monkeypatch):
    from tests.support.debian_root import reboot

    root = _a100_running(tmp_path, monkeypatch)
    os.unlink(os.path.join(root, "var/lib/accel-openstack/mdevs.json"))
    reboot(root, "mig-vgpu-a100", vfs_gone=True)
    with _kernel(root, "mig-vgpu-a100", monkeypatch), pytest.raises(gpu_restore.RestoreError) as caught:
        gpu_restore.restore(root, run=FakeNvidiaSmi(root), timeout=5)
    assert f"mdev {INSTANCE_MDEV} held by /{KOLLA_DOMAINS}/instance-00000001.xml" in str(caught.value)
    with open(os.path.join(root, "var/lib/accel-openstack/boot-state.json")) as handle:
        state = json.load(handle)
    assert state["status"] == "failed" and INSTANCE_MDEV in state["missing"][0]
