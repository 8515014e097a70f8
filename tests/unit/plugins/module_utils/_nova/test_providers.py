"""The providers nova-compute will report, predicted from discovery facts of real hardware profiles."""

import pytest

from ansible_collections.accel.openstack.plugins.filter.nova import FilterModule
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import (
    UNKNOWN_DISK_GB,
    PredictionError,
    nova_providers,
)
from tests.support.fake_sysfs import build_root

H100 = {"name": "h100", "vendor_id": "10de", "product_id": "2330", "mode": "passthrough"}
CX6_VF = {"name": "cx6-vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough"}
T4 = {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough", "traits": ["CUSTOM_T4"]}
A16 = {"name": "a16", "vendor_id": "10de", "product_id": "25b6", "mode": "vgpu", "mdev_type": "nvidia-735"}


@pytest.fixture(scope="module")
def facts_of(tmp_path_factory):
    cache = {}

    def load(profile):
        if profile not in cache:
            facts, _unused = discover(build_root(profile, str(tmp_path_factory.mktemp(profile))))
            cache[profile] = facts
        return cache[profile]

    return load


def test_compute_node_counts_every_cpu_and_all_numa_memory(facts_of):
    facts = facts_of("vgpu-l40s")
    root = nova_providers(facts, [], "cn1", disk_gb=900)[0]
    assert root["name"] == "cn1" and root["parent_name"] is None
    assert root["inventories"]["VCPU"]["total"] == 128
    assert root["inventories"]["VCPU"]["allocation_ratio"] == 4.0
    assert root["inventories"]["MEMORY_MB"]["total"] == 386000 + 387000
    assert root["inventories"]["MEMORY_MB"]["reserved"] == 512
    assert root["inventories"]["DISK_GB"]["total"] == 900
    assert root["traits"] == ["COMPUTE_NODE", "OWNER_NOVA"]


def test_an_unknown_disk_never_limits_and_zero_leaves_disk_gb_out(facts_of):
    facts = facts_of("iommu-off")
    unknown = nova_providers(facts, [], "cn1")[0]["inventories"]["DISK_GB"]
    assert unknown["total"] == unknown["max_unit"] == UNKNOWN_DISK_GB == 2**31 - 1  # Placement's largest total
    assert "DISK_GB" not in nova_providers(facts, [], "cn1", disk_gb=0)[0]["inventories"]


@pytest.mark.parametrize("bad", [-1, 2**31, True, "100", 1.5])
def test_a_disk_size_placement_cannot_hold_is_refused(facts_of, bad):
    with pytest.raises(PredictionError, match="disk_gb is .*instance store's size"):
        nova_providers(facts_of("iommu-off"), [], "cn1", disk_gb=bad)


def test_pci_providers_exist_only_with_report_in_placement(facts_of):
    facts = facts_of("hgx-h100")
    assert [p["name"] for p in nova_providers(facts, [H100], "cn1")] == ["cn1"]
    providers = nova_providers(facts, [H100], "cn1", report_in_placement=True)
    pci = providers[1:]
    assert len(pci) == 8
    assert pci[0]["name"] == "cn1_0000:18:00.0"
    assert all(p["parent_name"] == "cn1" for p in pci)
    assert all(list(p["inventories"]) == ["CUSTOM_PCI_10DE_2330"] for p in pci)
    assert {p["inventories"]["CUSTOM_PCI_10DE_2330"]["total"] for p in pci} == {1}
    assert all(p["traits"] == ["COMPUTE_MANAGED_PCI_DEVICE", "OWNER_NOVA"] for p in pci)


def test_vfs_are_counted_on_their_pf_provider(facts_of):
    providers = nova_providers(facts_of("sriov-nic"), [CX6_VF, T4], "cn1", report_in_placement=True)
    by_name = {p["name"]: p for p in providers}
    pf = by_name["cn1_0000:3B:00.0"]
    assert pf["inventories"]["CUSTOM_PCI_15B3_101E"]["total"] == 8
    assert pf["inventories"]["CUSTOM_PCI_15B3_101E"]["max_unit"] == 8
    # The PF without VFs enabled gets no provider; the T4 gets its custom trait.
    assert "cn1_0000:3B:00.1" not in by_name
    assert by_name["cn1_0000:B0:00.0"]["traits"] == ["COMPUTE_MANAGED_PCI_DEVICE", "CUSTOM_T4", "OWNER_NOVA"]


def test_vgpu_children_hold_available_instances_of_the_enabled_type(facts_of):
    providers = nova_providers(facts_of("vgpu-a16"), [A16], "cn1")
    vgpu = providers[1:]
    assert len(vgpu) == 16
    assert vgpu[0]["name"] == "cn1_pci_0000_84_00_4"
    assert all(p["inventories"]["VGPU"]["total"] == 1 for p in vgpu)


def test_max_instances_drops_devices_past_the_limit(facts_of):
    entry = dict(A16, max_instances=3)
    assert len(nova_providers(facts_of("vgpu-a16"), [entry], "cn1")) == 1 + 3


def test_pf_and_vf_together_is_refused_with_report_in_placement(facts_of):
    pf = {"name": "cx6", "vendor_id": "15b3", "product_id": "101d", "mode": "passthrough"}
    with pytest.raises(PredictionError, match="PF 0000:3b:00.0 .* and its VF"):
        nova_providers(facts_of("sriov-nic"), [pf, CX6_VF], "cn1", report_in_placement=True)


def test_bad_policy_is_refused_naming_the_field(facts_of):
    with pytest.raises(PolicyError, match="entry 1 .*product_id"):
        nova_providers(facts_of("iommu-off"), [dict(T4, product_id="1eb")], "cn1")


def test_filter_is_exposed_and_wraps_errors(facts_of):
    from ansible.errors import AnsibleFilterError

    nova_filter = FilterModule().filters()["nova_providers"]
    assert nova_filter(facts_of("configured-t4"), [T4], "cn1", True)[1]["name"] == "cn1_0000:B0:00.0"
    # the same T4 on a host whose IOMMU is off is not predicted: nova-compute is not given it
    assert [p["name"] for p in nova_filter(facts_of("iommu-off"), [T4], "cn1", True)] == ["cn1"]
    with pytest.raises(AnsibleFilterError, match="nova_providers: .*mode"):
        nova_filter(facts_of("iommu-off"), [dict(T4, mode="bogus")], "cn1")
