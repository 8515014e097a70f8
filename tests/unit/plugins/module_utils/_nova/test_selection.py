"""What a host offers Nova: nothing where the IOMMU is off, whatever the policy selects there.

The selection is the one place the Nova config, the predicted providers, the PCI pools and the facts-based
fleet read, so each of them is checked here on the hardware profiles: the demo's iommu-off host (a T4),
the vGPU hosts with their IOMMU switched off, and the same hosts with it on.
"""

import copy

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import HostInput, Options, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import predict_providers
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import select
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import nova_fleet, pci_pools
from tests.support.fake_sysfs import build_root

with open("inventories/demo/group_vars/all/device_policy.yml") as handle:
    DEMO = yaml.safe_load(handle)["accel_device_policy"]
POLICY = parse_policy(DEMO)
PLACEMENT = Options(report_in_placement=True, pci_in_placement=True)


@pytest.fixture(scope="module")
def facts_of(tmp_path_factory):
    cache = {}

    def load(profile, iommu=True):
        if profile not in cache:
            cache[profile] = discover(build_root(profile, str(tmp_path_factory.mktemp(profile))))[0]
        facts = copy.deepcopy(cache[profile])
        if iommu is not True:  # the profile's facts with the IOMMU reported off (False) or not reported (None)
            facts["accel_iommu_enabled"] = iommu
        return facts

    return load


def offered(selection) -> list[str]:
    return sorted(d["address"] for item in selection.passthrough for d in item.devices) + sorted(
        d["address"] for item in selection.vgpu for d in item.parents
    )


def test_the_t4_of_the_iommu_off_host_is_withheld_with_a_warning_naming_host_device_and_fix(facts_of):
    facts = facts_of("iommu-off")
    assert facts["accel_iommu_enabled"] is False  # as discovery reads the profile
    selection = select("legacy-01", facts, POLICY, True)
    assert offered(selection) == [] and selection.errors == []
    assert selection.withheld_addresses() == ["0000:04:00.0"]
    (warning,) = selection.warnings
    assert warning.startswith(
        "legacy-01: device policy entry 3 (name: t4) selects 0000:04:00.0 (10de:1eb8), but the IOMMU is off"
    )
    for words in ("not offered for passthrough", "no provider in Placement", "enable VT-d in the firmware",
                  "playbooks/prepare_hosts.yml) set intel_iommu=on iommu=pt", "accel_reboot: allowed"):  # fmt: skip
        assert words in warning, words
    # not the pending-binding warning of a host that only waits for vfio-pci: binding cannot help here
    assert "binds them to vfio-pci" not in warning


def test_the_same_host_with_its_iommu_on_offers_the_t4(facts_of):
    facts = facts_of("iommu-off")
    facts["accel_iommu_enabled"] = True
    selection = select("legacy-01", facts, POLICY, True)
    assert offered(selection) == ["0000:04:00.0"] and selection.withheld == []
    assert "binds them to vfio-pci" in selection.warnings[0]  # it still waits for the prepare stage's binding


def test_an_iommu_state_the_facts_do_not_give_is_not_read_as_off(facts_of):
    facts = facts_of("iommu-off", iommu=None)
    assert offered(select("legacy-01", facts, POLICY, True)) == ["0000:04:00.0"]
    del facts["accel_iommu_enabled"]
    assert offered(select("legacy-01", facts, POLICY, True)) == ["0000:04:00.0"]


def test_nothing_downstream_counts_a_withheld_device(facts_of):
    legacy, net = facts_of("iommu-off"), facts_of("sriov-nic")
    rendering = render_fleet([HostInput("legacy-01", legacy), HostInput("net-01", net)], DEMO, PLACEMENT)
    # Nova's config: no device_spec names the T4 on legacy-01; net-01's T4 is offered as before
    assert "device_spec" not in rendering.compute["legacy-01"]["pci"]
    assert any('"product_id": "1eb8"' in v for v in rendering.compute["net-01"]["pci"]["device_spec"])
    assert any(w.startswith("legacy-01: device policy entry 3 (name: t4)") for w in rendering.warnings)
    assert rendering.selections["legacy-01"].withheld_addresses() == ["0000:04:00.0"]
    # the alias stays: flavors ask for t4 and net-01 has one
    assert any('"name": "t4"' in a for a in rendering.api["pci"]["alias"])
    # Placement: the predicted tree is the compute node alone; the scheduler's PCI pools are empty
    assert [p["name"] for p in predict_providers(legacy, POLICY, "legacy-01", True)] == ["legacy-01"]
    assert pci_pools("legacy-01", legacy, POLICY) == []
    # the validate stage's fleet from facts: a T4 provider on net-01 only
    fleet = nova_fleet({"legacy-01": legacy, "net-01": net}, DEMO, report_in_placement=True)
    t4 = [p["name"] for p in fleet["resource_providers"] if "CUSTOM_NVIDIA_T4" in p["inventories"]]
    assert t4 == ["net-01_0000:B0:00.0"]


def test_nova_as_deployed_is_modelled_without_the_gate(facts_of):
    """The audit predicts what nova-compute reports from a deployed config: it lists the devices anyway."""
    legacy = facts_of("iommu-off")
    tree = predict_providers(legacy, POLICY, "legacy-01", True, withhold_without_iommu=False)
    assert [p["name"] for p in tree] == ["legacy-01", "legacy-01_0000:04:00.0"]
    assert pci_pools("legacy-01", legacy, POLICY, withhold_without_iommu=False)[0]["count"] == 1


def test_vgpus_need_the_iommu_too(facts_of):
    on = render_fleet([HostInput("a16", facts_of("vgpu-a16"))], DEMO, Options())
    off = render_fleet([HostInput("a16", facts_of("vgpu-a16", iommu=False))], DEMO, Options())
    assert "mdev_nvidia-735" in on.compute["a16"] and "devices" in on.compute["a16"]
    assert "mdev_nvidia-735" not in off.compute["a16"] and "devices" not in off.compute["a16"]
    assert off.provider_configs == {}  # no vGPU provider to put the entry's trait on
    (warning,) = [w for w in off.warnings if w.startswith("a16: ")]
    assert "not offered as vGPUs" in warning and "0000:84:00.4" in warning and "and 12 more" in warning
    assert [p["name"] for p in predict_providers(facts_of("vgpu-a16", iommu=False), POLICY, "a16")] == ["a16"]


def test_vgpu_vfs_are_withheld_and_their_alias_does_not_change(facts_of):
    """vGPU 17+ hands Nova the VFs that carry the type through device_spec; the alias is the fleet's."""
    on = render_fleet([HostInput("l40s", facts_of("vgpu-l40s"))], DEMO, PLACEMENT)
    off = render_fleet([HostInput("l40s", facts_of("vgpu-l40s", iommu=False))], DEMO, PLACEMENT)
    assert len(on.compute["l40s"]["pci"]["device_spec"]) == 8
    assert "device_spec" not in off.compute["l40s"]["pci"]
    assert off.api == on.api  # l40s-4q stays a type-VF alias with its class: nova-api is not reconfigured
    assert [p["name"] for p in predict_providers(facts_of("vgpu-l40s", iommu=False), POLICY, "l40s", True)] == ["l40s"]


def test_a_vf_alias_keeps_its_device_type_while_its_only_host_has_the_iommu_off(facts_of):
    on = render_fleet([HostInput("net-01", facts_of("sriov-nic"))], DEMO, PLACEMENT)
    off = render_fleet([HostInput("net-01", facts_of("sriov-nic", iommu=False))], DEMO, PLACEMENT)
    assert off.api == on.api and any('"name": "cx6-vf"' in a and "type-VF" in a for a in off.api["pci"]["alias"])


def test_a_policy_error_on_an_iommu_off_host_is_still_an_error(facts_of):
    """The checks run on what the policy selects, so a wrong policy shows before the IOMMU is turned on."""
    pf = {"name": "cx6", "vendor_id": "15b3", "product_id": "101d", "mode": "passthrough"}
    vf = {"name": "cx6-vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough"}
    selection = select("net-01", facts_of("sriov-nic", iommu=False), parse_policy([pf, vf]), True)
    assert any("PF 0000:3b:00.0" in e and "its VF" in e for e in selection.errors)
