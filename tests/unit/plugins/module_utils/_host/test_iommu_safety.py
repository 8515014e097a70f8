"""IOMMU group safety on fake roots built from the hardware profiles (the same files a live host has)."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import iommu_safety as safety
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._host.sysfs import read_host
from tests.support.fake_sysfs import build_root, load_profile


def _host(profile, tmp_path):
    host = HostRoot(build_root(profile, str(tmp_path / "root")))
    return host, read_host(host)


def test_mounted_nvme_and_addressed_nic_are_needed_by_the_host(tmp_path):
    host, hardware = _host("gpu-shared-group", tmp_path)
    needs = safety.host_needs(host, hardware)
    assert needs["0000:65:00.0"] == ["holds mounted filesystems (/dev/nvme0n1p2 on /, /dev/nvme0n1p1 on /boot/efi)"]
    assert "the address 2001:db8::20/64" in needs["0000:66:00.0"][0]
    assert "a route to 198.51.100.0/24" in needs["0000:66:00.0"][0]
    assert needs["0000:03:00.0"] == ["is the boot VGA (the host's console)"]
    assert not any(a.startswith("0000:18:00") for a in needs)


def test_shared_gpu_group_is_bound_whole_and_bridges_are_left(tmp_path):
    host, hardware = _host("gpu-shared-group", tmp_path)
    plans = safety.plan_groups(hardware, ["0000:18:00.0"], safety.host_needs(host, hardware), [])
    assert [m.address for m in plans[0].members] == ["0000:18:00.0", "0000:18:00.1", "0000:18:00.2", "0000:18:00.3"]
    assert safety.refusals(plans) == []


def test_boot_vga_group_is_refused(tmp_path):
    host, hardware = _host("gpu-shared-group", tmp_path)
    refused = safety.refusals(safety.plan_groups(hardware, ["0000:03:00.0"], safety.host_needs(host, hardware), []))
    message = refused[0].explain()
    assert "0000:03:00.0" in message and "boot VGA" in message and "force: true" in message


def test_nic_with_default_route_in_the_group_is_refused_by_name(tmp_path):
    host, hardware = _host("gpu-nic-shared-group", tmp_path)
    refused = safety.refusals(safety.plan_groups(hardware, ["0000:05:00.0"], safety.host_needs(host, hardware), []))
    message = refused[0].explain()
    assert "IOMMU group 40" in message
    assert "0000:05:00.1" in message and "NIC eno2" in message and "the default route" in message
    assert "igb driver" in message


def test_driver_not_on_the_allow_list_is_refused_unless_allowed(tmp_path):
    profile = load_profile("gpu-shared-group")
    for device in profile["devices"]:
        if device["address"] == "0000:18:00.2":
            device["driver"] = "some_usb_driver"
    host = HostRoot(build_root(profile, str(tmp_path / "root")))
    hardware = read_host(host)
    needs = safety.host_needs(host, hardware)
    refused = safety.refusals(safety.plan_groups(hardware, ["0000:18:00.0"], needs, []))
    assert "some_usb_driver driver" in refused[0].explain()
    assert safety.refusals(safety.plan_groups(hardware, ["0000:18:00.0"], needs, ["some_usb_driver"])) == []


@pytest.mark.parametrize("profile", ["sriov-nic", "configured-t4"])
def test_device_already_on_vfio_pci_is_not_questioned(profile, tmp_path):
    host, hardware = _host(profile, tmp_path)
    gpu = next(a for a, d in hardware.devices.items() if d.driver == "vfio-pci")
    assert safety.refusals(safety.plan_groups(hardware, [gpu], safety.host_needs(host, hardware), [])) == []
