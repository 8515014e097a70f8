"""Groups and host variables of the fleet inventory, from discovery on fake roots and from snapshots."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet_inventory import (
    InventoryError,
    Settings,
    build,
    discovery_facts,
    group_name,
    host_view,
    load_policy,
    placement_trees,
)
from tests.support.fake_sysfs import build_root

H100 = {"name": "h100", "vendor_id": "10de", "product_id": "2330", "mode": "passthrough"}


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    base = tmp_path_factory.mktemp("roots")
    return {
        name: discover(build_root(name, str(base / name)))[0]
        for name in ("hgx-h100", "mig-a100", "vgpu-l40s", "sriov-nic", "configured-t4")
    }


def view(facts, policy=(), **settings):
    return host_view("h", facts, None, load_policy(list(policy)), Settings(**settings))


def test_group_names_are_lower_case_with_underscores():
    assert (
        group_name("accel_", "model", "NVIDIA", "GH100 [H100 SXM5 80GB]") == "accel_model_nvidia_gh100_h100_sxm5_80gb"
    )
    assert group_name("accel_", "rc", "CUSTOM_NVIDIA_H100") == "accel_rc_custom_nvidia_h100"
    assert group_name("", "numa", 0) == "numa_0"


def test_modes_come_from_the_facts_without_a_policy(facts):
    assert "accel_mode_mig" in view(facts["mig-a100"]).groups
    l40s = view(facts["vgpu-l40s"])
    assert "accel_mode_vgpu" in l40s.groups
    # the L40S PFs offer no type themselves; their VFs do, so the PFs count as vGPU too
    (bucket,) = l40s.hostvars["accel_fleet_devices"]
    assert (bucket["mode"], bucket["count"], bucket["virtual_functions"]) == ("vgpu", 10, 8)
    hgx = view(facts["hgx-h100"])
    assert not {"accel_mode_passthrough", "accel_mode_vgpu", "accel_mode_mig"} & set(hgx.groups)
    assert set(hgx.hostvars["accel_fleet_modes"]) == {"none"}


def test_the_policy_decides_the_mode_of_what_it_selects_and_the_boot_vga_is_left_out(facts):
    hgx = view(facts["hgx-h100"], [H100])
    assert {"accel_mode_passthrough", "accel_model_10de_2330"} <= set(hgx.groups)
    assert "accel_model_1a03_2000" not in hgx.groups  # the BMC's boot VGA
    (h100,) = [b for b in hgx.hostvars["accel_fleet_devices"] if b["policy_entry"] == "h100"]
    assert (h100["count"], h100["mode_from"], h100["numa_nodes"]) == (8, "policy", [0, 1])


def test_a_vgpu_entry_takes_the_vfs_of_the_pf_it_selects(facts):
    policy = [{"name": "l40s", "vendor_id": "10de", "product_id": "26b9", "mode": "vgpu", "mdev_type": "1155"}]
    devices = view(facts["vgpu-l40s"], policy).hostvars["accel_fleet_devices"]
    assert {(b["mode"], b["policy_entry"]) for b in devices} == {("vgpu", "l40s")}
    assert sum(b["virtual_functions"] for b in devices) == 8


def test_reboot_waits_on_the_kernel_command_line_the_policy_needs(facts):
    hgx = view(facts["hgx-h100"], [H100])
    assert "accel_reboot_pending" in hgx.groups
    (reason,) = hgx.hostvars["accel_fleet_reboot_reasons"]
    assert "iommu=pt" in reason and "intel_iommu=on" not in reason and "vfio-pci.ids with 10de:2330" in reason
    relaxed = view(facts["hgx-h100"], [H100], kernel_args={"intel": ["intel_iommu=on"]}, vfio_ids_on_cmdline=False)
    assert relaxed.hostvars["accel_fleet_reboot_reasons"] == []
    assert "accel_reboot_pending" not in relaxed.groups


def test_a_host_already_booted_for_passthrough_does_not_wait(facts):
    # configured-t4 runs with intel_iommu=on iommu=pt vfio-pci.ids=10de:1eb8 and the T4 on vfio-pci
    t4 = view(
        facts["configured-t4"], [{"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough"}]
    )
    assert t4.hostvars["accel_fleet_reboot_pending"] is False, t4.hostvars["accel_fleet_reboot_reasons"]
    assert "accel_mode_passthrough" in t4.groups


def test_pending_mig_mode_waits_for_a_reboot_without_any_policy(facts):
    mig = view(facts["mig-a100"])
    (reason,) = mig.hostvars["accel_fleet_reboot_reasons"]
    assert reason.startswith("MIG mode of 0000:d8:00.0 is disabled and becomes enabled")


SNAPSHOT = {
    "resource_providers": [
        {"uuid": "cn1", "name": "gpu-1", "parent_provider_uuid": None, "traits": ["COMPUTE_NODE"],
         "inventories": {"VCPU": {"total": 64}}, "usages": {"VCPU": 8}},
        {"uuid": "p1", "name": "gpu-1_0000:18:00.0", "parent_provider_uuid": "cn1",
         "traits": ["CUSTOM_GPU_NVLINK", "COMPUTE_MANAGED_PCI_DEVICE"],
         "inventories": {"CUSTOM_NVIDIA_H100": {"total": 1, "reserved": 0}}, "usages": {"CUSTOM_NVIDIA_H100": 1}},
        {"uuid": "p2", "name": "gpu-1_0000:2a:00.0", "parent_provider_uuid": "cn1", "traits": ["CUSTOM_GPU_NVLINK"],
         "inventories": {"CUSTOM_NVIDIA_H100": {"total": 1, "reserved": 1}}},
        {"uuid": "sh", "name": "nfs", "parent_provider_uuid": None, "traits": ["MISC_SHARES_VIA_AGGREGATE"],
         "inventories": {"DISK_GB": {"total": 1000}}},
    ]
}  # fmt: skip


def test_placement_trees_are_hosts_and_sharing_providers_are_not():
    trees = placement_trees(SNAPSHOT)
    assert list(trees) == ["gpu-1"]
    assert [p["name"] for p in trees["gpu-1"]][0] == "gpu-1"


def test_resource_classes_are_summed_over_the_tree_and_traits_filtered():
    (host,) = build(None, SNAPSHOT, [], Settings())
    assert host.hostvars["accel_fleet_resource_classes"] == {
        "CUSTOM_NVIDIA_H100": {"total": 2, "reserved": 1, "used": 1, "providers": 2}
    }
    assert host.hostvars["accel_fleet_traits"] == ["CUSTOM_GPU_NVLINK"]
    assert host.groups == ["accel_rc_custom_nvidia_h100", "accel_trait_custom_gpu_nvlink"]
    (wider,) = build(None, SNAPSHOT, [], Settings(trait_patterns=("*",), skip_resource_classes=()))
    assert "accel_rc_vcpu" in wider.groups and "accel_trait_compute_node" in wider.groups


def test_both_sources_meet_on_the_host_name_and_patterns_filter_hosts(facts):
    both = build({"gpu-1": facts["hgx-h100"], "other": facts["mig-a100"]}, SNAPSHOT, [], Settings())
    assert [(h.name, h.hostvars["accel_fleet_sources"]) for h in both] == [
        ("gpu-1", ["facts", "placement"]),
        ("other", ["facts"]),
    ]
    only = build({"gpu-1": facts["hgx-h100"], "other": facts["mig-a100"]}, SNAPSHOT, [], Settings(), ["oth*"])
    assert [h.name for h in only] == ["other"]


def test_cache_entries_without_discovery_facts_are_not_hosts(facts):
    assert discovery_facts({"ansible_hostname": "x"}) is None
    kept = discovery_facts({**facts["mig-a100"], "ansible_hostname": "x"})
    assert "ansible_hostname" not in kept and kept["accel_pci_devices"]


def test_bad_options_and_policies_say_what_to_give():
    with pytest.raises(InventoryError, match="model_group_names is 'serial'"):
        Settings(model_names="serial")
    with pytest.raises(InventoryError, match="reboot_kernel_args must map a CPU vendor"):
        Settings(kernel_args={"intel": "intel_iommu=on"})
    with pytest.raises(InventoryError, match="device_policy: .*mode 'shared'"):
        load_policy([{"name": "x", "vendor_id": "10de", "product_id": "2330", "mode": "shared"}])
