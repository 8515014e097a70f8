"""The pre-check of the move to PCI-in-Placement: each of Nova's rules planted once, with the exact answer."""

from __future__ import annotations

import json

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import pci_in_placement as migration

INSTANCE = "3f2a9c1e-7b4d-4e8a-9c0f-1d2e3f4a5b6c"
OTHER = "8d0e6b1a-2c3d-4e5f-8a9b-0c1d2e3f4a5b"


def device(address, product="25b6", physfn=None):
    return {"address": address, "vendor_id": "10de", "product_id": product, "physfn": physfn}


def host(specs, devices, name="gpu-01", allocated=None, aliases=()):
    return {
        "name": name,
        "devices": devices,
        "config": {"pci": {"device_spec": [json.dumps(s) for s in specs], "alias": [json.dumps(a) for a in aliases]}},
        "allocated": allocated or {},
    }


A16 = {"name": "a16", "vendor_id": "10de", "product_id": "25b6", "device_type": "type-PCI"}
GPUS = [device("0000:41:00.0"), device("0000:42:00.0")]


def fleet(instance_roots=None, providers=()):
    roots = [{"uuid": "11111111-1111-4111-8111-111111111111", "name": "gpu-01", "parent_provider_uuid": None}]
    allocations = {
        consumer: {"allocations": {uuid: {"resources": {"VCPU": 4}}}}
        for consumer, uuid in (instance_roots or {}).items()
    }
    return {"resource_providers": roots + list(providers), "allocations": allocations}


def codes(result):
    return [(p["host"], p["code"], p["entry"]) for p in result["problems"]]


def test_a_clean_fleet_has_no_problem_and_lists_providers_and_healing():
    hosts = [
        host([{"vendor_id": "10de", "product_id": "25b6"}], GPUS, allocated={"0000:41:00.0": INSTANCE}, aliases=[A16])
    ]
    result = migration.precheck(hosts, fleet=fleet({INSTANCE: "11111111-1111-4111-8111-111111111111"}))
    assert result["problems"] == []
    assert result["providers"]["gpu-01"] == {
        "gpu-01_0000:41:00.0": {
            "resource_class": "CUSTOM_PCI_10DE_25B6",
            "traits": ["COMPUTE_MANAGED_PCI_DEVICE"],
            "addresses": ["0000:41:00.0"],
        },
        "gpu-01_0000:42:00.0": {
            "resource_class": "CUSTOM_PCI_10DE_25B6",
            "traits": ["COMPUTE_MANAGED_PCI_DEVICE"],
            "addresses": ["0000:42:00.0"],
        },
    }
    assert result["healing"] == [
        {
            "host": "gpu-01",
            "instance": INSTANCE,
            "provider": "gpu-01_0000:41:00.0",
            "resource_class": "CUSTOM_PCI_10DE_25B6",
            "amount": 1,
        }
    ]


def test_an_alias_defined_twice_is_refused():
    second = dict(A16, product_id="25b7")
    result = migration.precheck([host([{"vendor_id": "10de", "product_id": "25b6"}], GPUS, aliases=[A16, second])])
    assert codes(result) == [(None, "alias_not_unique", "a16")]
    assert "defined 2 times" in result["problems"][0]["message"]
    assert result["problems"][0]["fix"].startswith("keep one [pci] alias named a16")


def test_an_alias_without_ids_or_resource_class_is_refused():
    result = migration.precheck([host([{"vendor_id": "10de", "product_id": "25b6"}], GPUS, aliases=[{"name": "gpu"}])])
    assert codes(result) == [(None, "alias_without_resource_class", "gpu")]


def test_an_alias_whose_resource_class_no_device_spec_gives_is_refused():
    alias = {"name": "a16", "resource_class": "a16-gpu"}
    result = migration.precheck([host([{"vendor_id": "10de", "product_id": "25b6"}], GPUS, aliases=[alias])])
    assert codes(result) == [(None, "alias_unmatched", "a16")]
    assert "resource class CUSTOM_A16_GPU, which no device_spec" in result["problems"][0]["message"]
    assert "(they give CUSTOM_PCI_10DE_25B6)" in result["problems"][0]["message"]


def test_the_same_resource_class_normalised_as_nova_does_matches():
    alias = {"name": "a16", "resource_class": "a16-gpu"}
    spec = {"vendor_id": "10de", "product_id": "25b6", "resource_class": "CUSTOM_A16_GPU"}
    assert migration.precheck([host([spec], GPUS, aliases=[alias])])["problems"] == []


def test_an_alias_asking_traits_the_devices_lack_is_refused():
    alias = dict(A16, traits="gold")
    result = migration.precheck(
        [host([{"vendor_id": "10de", "product_id": "25b6", "traits": "silver"}], GPUS, aliases=[alias])]
    )
    assert codes(result) == [(None, "alias_unmatched", "a16")]
    assert "asks for traits CUSTOM_GOLD" in result["problems"][0]["message"]
    alias_ok = dict(A16, traits="silver")
    ok = migration.precheck(
        [host([{"vendor_id": "10de", "product_id": "25b6", "traits": "silver"}], GPUS, aliases=[alias_ok])]
    )
    assert ok["problems"] == []


def test_a_pf_and_its_vf_both_claimed_is_refused():
    devices = [device("0000:41:00.0", "2236"), device("0000:41:00.4", "2236", physfn="0000:41:00.0")]
    result = migration.precheck([host([{"vendor_id": "10de", "product_id": "2236"}], devices)])
    assert codes(result) == [("gpu-01", "pf_and_vfs", "0000:41:00.4")]
    assert result["problems"][0]["fix"] == "claim either the PF 0000:41:00.0 or its VFs in the device policy, not both"


def test_vfs_of_one_pf_with_different_resource_classes_are_refused():
    devices = [
        device("0000:41:00.4", "2237", physfn="0000:41:00.0"),
        device("0000:41:00.5", "2237", physfn="0000:41:00.0"),
    ]
    specs = [
        {"address": "0000:41:00.4", "resource_class": "CUSTOM_A"},
        {"address": "0000:41:00.5", "resource_class": "CUSTOM_B"},
    ]
    result = migration.precheck([host(specs, devices)])
    assert codes(result) == [("gpu-01", "vfs_mixed_resource_class", "0000:41:00.5")]


def test_vfs_of_one_pf_with_different_traits_are_refused():
    devices = [
        device("0000:41:00.4", "2237", physfn="0000:41:00.0"),
        device("0000:41:00.5", "2237", physfn="0000:41:00.0"),
    ]
    specs = [{"address": "0000:41:00.4", "traits": "a"}, {"address": "0000:41:00.5", "traits": "b"}]
    result = migration.precheck([host(specs, devices)])
    assert codes(result) == [("gpu-01", "vfs_mixed_traits", "0000:41:00.5")]


def test_a_vf_tagged_one_time_use_is_refused():
    devices = [device("0000:41:00.4", "2237", physfn="0000:41:00.0")]
    result = migration.precheck([host([{"address": "0000:41:00.4", "one_time_use": "true"}], devices)])
    assert codes(result) == [("gpu-01", "vf_one_time_use", "0000:41:00.4")]


def test_a_devname_entry_and_an_unreadable_entry_are_refused():
    config = {"pci": {"device_spec": ['{"devname": "ens1f0"}', "not json"]}}
    result = migration.precheck([{"name": "gpu-01", "devices": GPUS, "config": config}])
    assert codes(result) == [
        ("gpu-01", "device_spec_invalid", "not json"),
        ("gpu-01", "device_spec_devname", '{"devname": "ens1f0"}'),
    ]


def test_a_neutron_device_stays_out_of_placement():
    result = migration.precheck(
        [host([{"vendor_id": "10de", "product_id": "25b6", "physical_network": "physnet1"}], GPUS)]
    )
    assert result == {"problems": [], "healing": [], "providers": {"gpu-01": {}}}


def test_an_instance_without_an_allocation_cannot_be_healed():
    hosts = [host([{"vendor_id": "10de", "product_id": "25b6"}], GPUS, allocated={"0000:41:00.0": INSTANCE})]
    result = migration.precheck(hosts, fleet=fleet({OTHER: "11111111-1111-4111-8111-111111111111"}))
    assert codes(result) == [("gpu-01", "allocation_missing", INSTANCE)]
    assert (
        result["problems"][0]["fix"]
        == f"heal the instance's allocation first: nova-manage placement heal_allocations --instance {INSTANCE}"
    )
    assert result["healing"] == []


def test_an_instance_on_an_unclaimed_device_and_a_bad_uuid_are_named():
    hosts = [
        host([{"address": "0000:41:00.0"}], GPUS, allocated={"0000:42:00.0": INSTANCE, "0000:41:00.0": "x; rm -rf /"})
    ]
    result = migration.precheck(hosts)
    assert codes(result) == [
        ("gpu-01", "allocated_invalid", "0000:41:00.0"),
        ("gpu-01", "allocated_unclaimed", "0000:42:00.0"),
    ]
    assert 'given as "x; rm -rf /", which is not a UUID' in result["problems"][0]["message"]


def test_progress_counts_providers_and_healed_allocations():
    hosts = [host([{"vendor_id": "10de", "product_id": "25b6"}], GPUS, allocated={"0000:41:00.0": INSTANCE})]
    root = "11111111-1111-4111-8111-111111111111"
    before = fleet({INSTANCE: root})
    check = migration.precheck(hosts, fleet=before)
    assert migration.progress("gpu-01", check["providers"]["gpu-01"], check["healing"], before) == {
        "host": "gpu-01",
        "done": False,
        "providers_expected": 2,
        "providers_found": 0,
        "missing": ["gpu-01_0000:41:00.0", "gpu-01_0000:42:00.0"],
        "healed": [],
        "unhealed": [INSTANCE],
    }
    pci = [
        {
            "uuid": f"2222222{i}-2222-4222-8222-222222222222",
            "name": f"gpu-01_0000:4{i}:00.0",
            "parent_provider_uuid": root,
            "inventories": {"CUSTOM_PCI_10DE_25B6": {"total": 1}},
            "traits": ["COMPUTE_MANAGED_PCI_DEVICE"],
        }
        for i in (1, 2)
    ]
    after = fleet({INSTANCE: root}, pci)
    assert migration.progress("gpu-01", check["providers"]["gpu-01"], check["healing"], after)["unhealed"] == [INSTANCE]
    after["allocations"][INSTANCE]["allocations"][pci[0]["uuid"]] = {"resources": {"CUSTOM_PCI_10DE_25B6": 1}}
    done = migration.progress("gpu-01", check["providers"]["gpu-01"], check["healing"], after)
    assert done["done"] and done["healed"] == [INSTANCE] and done["providers_found"] == 2
    reporting = migration.reporting(hosts, after)
    assert reporting["not_reporting"] == [
        {"host": "gpu-01", "why": "its deployed nova-compute config does not set [pci] report_in_placement = true"}
    ]
    hosts[0]["config"]["pci"]["report_in_placement"] = ["true"]
    assert migration.reporting(hosts, after) == {"reporting": ["gpu-01"], "not_reporting": []}
    assert migration.reporting(hosts, before)["not_reporting"][0]["why"].startswith(
        "Placement shows no PCI provider under gpu-01"
    )


def test_input_that_is_not_a_host_names_the_fix():
    with pytest.raises(
        migration.MigrationInputError, match="host gpu-01: devices is not a list of accel_pci_devices facts"
    ):
        migration.precheck([{"name": "gpu-01", "devices": "x", "config": {}}])


# (tag value, what Nova 34's pci_placement_translator.get_resource_class / get_traits answer), read from Nova.
RESOURCE_CLASSES = [
    ("a16-gpu", "CUSTOM_A16_GPU"),
    ("custom_t4", "CUSTOM_T4"),
    ("pci_device", "PCI_DEVICE"),
    ("a__b--c", "CUSTOM_A_B_C"),
    ("gpü t4", "CUSTOM_GP_T4"),
]
TRAITS = [
    ("gold,silver", {"CUSTOM_GOLD", "CUSTOM_SILVER"}),
    ("HW_CPU_X86_AVX", {"HW_CPU_X86_AVX"}),
    ("HW_GPU_API_CUDA", {"CUSTOM_HW_GPU_API_CUDA"}),
    ("hw_gpu_api_cuda", {"CUSTOM_HW_GPU_API_CUDA"}),
    ("gold, silver", {"CUSTOM_GOLD", "CUSTOM__SILVER"}),
    ("CUSTOM_x-y", {"CUSTOM_X-Y"}),
]


@pytest.mark.parametrize(("tag", "expected"), RESOURCE_CLASSES)
def test_resource_class_names_are_nova_s(tag, expected):
    assert migration.resource_class(tag, "10de", "25b6") == expected


@pytest.mark.parametrize(("tag", "expected"), TRAITS)
def test_trait_names_are_nova_s(tag, expected):
    assert migration.traits(tag) == expected
