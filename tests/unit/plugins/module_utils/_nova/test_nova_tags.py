"""Nova's device_spec tags, address patterns and standard traits in the device policy."""

import json

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._nova import address_pattern
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import HostInput, Options, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy, policy_errors
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import predict_providers

T4 = {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough"}
VF = {"name": "vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough"}
PF = {"address": "0000:3b:00.0", "vendor_id": "15b3", "product_id": "101d", "sriov_totalvfs": 8, "physfn": None}
FACTS = {
    "accel_pci_devices": [
        PF,
        *(
            {"address": f"0000:3b:00.{f}", "vendor_id": "15b3", "product_id": "101e", "physfn": PF["address"]}
            for f in range(2, 6)
        ),
        {"address": "0000:b0:00.0", "vendor_id": "10de", "product_id": "1eb8", "driver": "vfio-pci"},
    ],
    "accel_numa_nodes": [{"id": 0, "cpus": [0, 1], "memory_mb": 4096}],
}


def specs(policy, **options):
    rendering = render_fleet([HostInput(name="cn1", facts=FACTS)], policy, Options(**options))
    return [json.loads(v) for v in rendering.compute["cn1"].get("pci", {}).get("device_spec", [])], rendering


@pytest.mark.parametrize(
    "raw,field,fix",
    [
        ({**VF, "device_type": "type-VF", "one_time_use": True}, "one_time_use with device_type type-VF", "type-PF"),
        ({**T4, "device_type": "type-PCI", "remote_managed": True}, "remote_managed with device_type type-PCI", "VF"),
        ({**VF, "one_time_use": True, "remote_managed": True}, "exclude each other", "remove one"),
        ({**T4, "one_time_use": True, "physical_network": "p1"}, "one_time_use with physical_network", "remove one"),
        ({**T4, "one_time_use": "sometimes"}, "one_time_use 'sometimes' is not a boolean", "true or false"),
        ({**VF, "physical_network": " p1"}, "physical_network ' p1'", "physnet1"),
        ({**T4, "mode": "none", "trusted": True}, "trusted is a [pci] device_spec tag", "remove it"),
        ({**T4, "traits": ["HW_PCI_ONE_TIME_USE"]}, "is set by Nova", "one_time_use: true"),
        ({**T4, "traits": ["NVLINK"]}, "standard trait of os-traits", "'CUSTOM_NVLINK'"),
        ({**T4, "traits": ["HW_GPU_API_VULKAN2"]}, "did you mean HW_GPU_API_VULKAN", "'CUSTOM_HW_GPU_API_VULKAN2'"),
        ({**T4, "addresses": ["3b:00.0"]}, "not a full PCI address", "'*:41:00.*'"),
        ({**T4, "addresses": ["0000:3b:20.*"]}, "above the largest PCI slot", "slot"),
        ({**T4, "addresses": ["10000:41:00.0"]}, "in PCI domain 10000, above ffff", "device_spec"),
        ({**T4, "addresses": [{"bus": "3b", "device": "00"}]}, "unknown field(s) device", "domain, bus, slot"),
        ({**T4, "addresses": [{"bus": 3}]}, "is not a non-empty string", "quote it"),
    ],
)
def test_each_refusal_names_the_entry_the_tag_and_the_fix(raw, field, fix):
    errors = policy_errors([raw])
    assert any(field in e and fix in e and e.startswith("device policy entry 1") for e in errors), errors


def test_standard_and_custom_traits_are_both_kept():
    (entry,) = parse_policy([{**T4, "traits": ["HW_GPU_API_VULKAN", "CUSTOM_T4"]}])
    assert entry.traits == ("HW_GPU_API_VULKAN", "CUSTOM_T4")
    # Provider config (vGPU traits) only takes custom traits: standard names stay refused there.
    assert policy_errors([{**T4, "mode": "vgpu", "mdev_type": "nvidia-1", "traits": ["HW_GPU_API_VULKAN"]}])


@pytest.mark.parametrize(
    "item,kind,value",
    [
        ("0000:3B:00.1", "exact", "0000:3b:00.1"),
        ("0000:3b:00.*", "glob", "0000:3b:00.*"),
        ("3B:*.*", "glob", "*:3b:*.*"),
        ("*:3b:00.", "glob", "*:3b:00.*"),
        ({"bus": "3b", "function": "[2-4]"}, "regex", {"bus": "3b", "function": "[2-4]"}),
    ],
)
def test_address_items_parse_as_nova_reads_them(item, kind, value):
    pattern = address_pattern.parse(item)
    assert pattern.kind == kind and pattern.device_spec_value() == value


def test_regexes_match_from_the_start_of_each_field_as_nova_does():
    pattern = address_pattern.parse({"slot": "0"})
    assert pattern.matches("0000:3b:01.0") and not pattern.matches("0000:3b:10.0")


def test_a_pf_address_claims_its_vfs_with_the_same_ids():
    policy = [{**VF, "addresses": ["0000:3b:00.0"]}]
    found, rendering = specs(policy)
    (item,) = rendering.selections["cn1"].passthrough
    assert [d["address"] for d in item.devices] == [f"0000:3b:00.{f}" for f in range(2, 6)]
    # It takes every VF of the model on this host, so device_spec names the model, not the addresses.
    assert found == [{"vendor_id": "15b3", "product_id": "101e"}]


def test_glob_and_regex_are_written_as_patterns_and_other_devices_by_address():
    policy = [{**VF, "addresses": ["*:3b:00.*"], "physical_network": "physnet1"}]
    found, _unused = specs(policy)
    assert found == [
        {"address": "*:3b:00.*", "vendor_id": "15b3", "product_id": "101e", "physical_network": "physnet1"}
    ]


def test_neutron_tags_are_rendered_and_get_no_alias():
    policy = [{**VF, "physical_network": "physnet1", "trusted": True, "remote_managed": False}, T4]
    found, rendering = specs(policy)
    assert found[0] == {
        "vendor_id": "15b3",
        "product_id": "101e",
        "physical_network": "physnet1",
        "trusted": "true",
        "remote_managed": "false",
    }
    assert [json.loads(a)["name"] for a in rendering.api["pci"]["alias"]] == ["t4"]


def test_physical_network_devices_stay_out_of_placement_and_clash_with_nothing():
    # The PF passed through whole beside its VFs for Neutron: Nova skips the VFs, so both may be configured.
    policy = [
        {**VF, "physical_network": "physnet1"},
        {"name": "pf", "vendor_id": "15b3", "product_id": "101d", "mode": "passthrough"},
    ]
    providers = predict_providers(FACTS, parse_policy(policy), "cn1", report_in_placement=True)
    assert [p["name"] for p in providers[1:]] == ["cn1_0000:3B:00.0"]
    assert set(providers[1]["inventories"]) == {"CUSTOM_PCI_15B3_101D"}


def test_one_time_use_provider_gets_the_trait_and_nothing_reserved_before_first_use():
    policy = [{**T4, "one_time_use": True}]
    found, _unused = specs(policy, report_in_placement=True)
    assert found == [{"vendor_id": "10de", "product_id": "1eb8", "one_time_use": "true"}]
    (t4,) = predict_providers(FACTS, parse_policy(policy), "cn1", report_in_placement=True)[1:]
    assert "HW_PCI_ONE_TIME_USE" in t4["traits"] and t4["inventories"]["CUSTOM_PCI_10DE_1EB8"]["reserved"] == 0


@pytest.mark.parametrize(
    "policy,placement,message",
    [
        ([{**T4, "one_time_use": True}], False, "without [pci] report_in_placement"),
        ([{**VF, "one_time_use": True}], True, "one_time_use on VF(s) 0000:3b:00.2"),
        ([{**VF, "product_id": "101d", "remote_managed": True}], False, "0000:3b:00.0, which are not VFs"),
    ],
)
def test_host_level_refusals_write_nothing(policy, placement, message):
    with pytest.raises(Exception, match=r"device policy entry 1") as refused:
        specs(policy, report_in_placement=placement)
    assert message in str(refused.value)


def test_neutron_vfs_on_their_nics_driver_are_not_told_to_move_to_vfio_pci():
    from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import select

    facts = json.loads(json.dumps(FACTS))
    for device in facts["accel_pci_devices"][1:5]:
        device["driver"] = "mlx5_core"
    neutron = select("cn1", facts, parse_policy([{**VF, "physical_network": "physnet1"}]), True)
    assert not [w for w in neutron.warnings if "vfio-pci" in w]
    nova = select("cn1", facts, parse_policy([VF]), True)
    assert [w for w in nova.warnings if "not vfio-pci" in w]  # Nova's own passthrough still needs it
