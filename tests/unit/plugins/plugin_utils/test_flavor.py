"""Nova 34's flavor translation, rule by rule (tests/integration/test_flavor_differential.py proves it
against Nova's own code on generated flavors)."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter.flavors import nova_request
from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor import (
    FlavorError,
    NovaRequest,
    merge_answers,
    parse_aliases,
    translate,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request

A16 = {"name": "a16", "vendor_id": "10de", "product_id": "25b6"}
A100 = {
    "name": "a100",
    "vendor_id": "10de",
    "product_id": "20b5",
    "resource_class": "nvidia a100",
    "traits": "gold,HW_GPU_API_VULKAN",
}


def flavor(**specs):
    extra = {key.replace("__", ":"): value for key, value in specs.items()}
    return {"name": "gpu.large", "vcpus": 4, "ram": 8192, "disk": 20, "extra_specs": extra}


def params(query: str) -> dict:
    return dict(parse_qsl(query))


def only(request: NovaRequest) -> dict:
    assert request.refusal is None, request.refusal
    assert len(request.queries) == 1
    return params(request.queries[0])


def test_plain_flavor_asks_vcpu_memory_disk_and_the_root_traits():
    query = only(translate({**flavor(), "ephemeral": 5, "swap": 1500}))
    assert query == {
        "limit": "1000",
        "resources": "DISK_GB:27,MEMORY_MB:8192,VCPU:4",
        "root_required": "OWNER_NOVA,!COMPUTE_STATUS_DISABLED",
    }


def test_boot_from_volume_drops_the_root_disk_and_a_zero_disk_is_not_asked():
    assert only(translate(flavor(), boot_from_volume=True))["resources"] == "MEMORY_MB:8192,VCPU:4"


def test_limit_follows_max_placement_results():
    assert "limit" not in only(translate(flavor(), max_placement_results=None))
    assert only(translate(flavor(), max_placement_results=50))["limit"] == "50"


def test_queries_parse_as_placement_queries():
    request = translate(flavor(hw__cpu_policy="dedicated", resources1__VGPU="1"))
    for query in request.queries:
        assert Request.parse(query).groups


def test_dedicated_sends_pcpu_then_the_vcpu_fallback():
    request = translate(flavor(hw__cpu_policy="dedicated", hw__cpu_thread_policy="isolate"))
    assert request.pcpu_fallback
    first, second = (params(q) for q in request.queries)
    assert first["resources"] == "DISK_GB:20,MEMORY_MB:8192,PCPU:4"
    assert first["required"] == "!HW_CPU_HYPERTHREADING"
    assert second["resources"] == "DISK_GB:20,MEMORY_MB:8192,VCPU:4"
    assert "required" not in second


def test_emulator_threads_isolate_adds_one_pcpu_and_require_asks_hyperthreading():
    request = translate(
        flavor(hw__cpu_policy="dedicated", hw__emulator_threads_policy="isolate", hw__cpu_thread_policy="require")
    )
    first = params(request.queries[0])
    assert first["resources"] == "DISK_GB:20,MEMORY_MB:8192,PCPU:5"
    assert first["required"] == "HW_CPU_HYPERTHREADING"


def test_mixed_splits_vcpu_and_pcpu_by_the_dedicated_mask_and_sends_no_fallback():
    request = translate(flavor(hw__cpu_policy="mixed", hw__cpu_dedicated_mask="^0"))
    assert not request.pcpu_fallback
    assert only(request)["resources"] == "DISK_GB:20,MEMORY_MB:8192,PCPU:3,VCPU:1"
    assert request.numa["dedicated_cpus"] == [1, 2, 3]


def test_explicit_pcpu_replaces_vcpu_without_a_fallback():
    request = translate(flavor(resources__PCPU="4"))
    assert only(request)["resources"] == "DISK_GB:20,MEMORY_MB:8192,PCPU:4"
    assert request.numa["cpu_policy"] == "dedicated"


def test_image_cpu_policy_pins_when_the_flavor_says_nothing():
    request = translate(flavor(), image_properties={"hw_cpu_policy": "dedicated"})
    assert request.pcpu_fallback


def test_groups_traits_and_group_policy_pass_through():
    query = only(
        translate(
            flavor(
                resources1__VGPU="1",
                trait1__CUSTOM_NVIDIA_A16="required",
                resources_GPU__CUSTOM_X="2",
                trait__HW_CPU_X86_AVX2="forbidden",
                group_policy="isolate",
            )
        )
    )
    assert query["resources1"] == "VGPU:1" and query["required1"] == "CUSTOM_NVIDIA_A16"
    assert query["resources_GPU"] == "CUSTOM_X:2"
    assert query["required"] == "!HW_CPU_X86_AVX2"
    assert query["group_policy"] == "isolate"


def test_two_flavor_groups_without_group_policy_are_sent_as_they_are():
    # Nova only defaults group_policy when at most one numbered group comes from the flavor
    query = only(translate(flavor(resources1__VGPU="1", resources2__VGPU="1")))
    assert "group_policy" not in query


def test_flavor_resources_override_the_flavor_sizes_and_zero_drops_a_class():
    query = only(translate(flavor(resources__MEMORY_MB="1024", resources__DISK_GB="0")))
    assert query["resources"] == "MEMORY_MB:1024,VCPU:4"


def test_amounts_and_trait_values_nova_cannot_read_are_dropped_and_reported():
    request = translate(flavor(resources1__VGPU="-1", group_policy="isolated"))
    # both pass extra-spec validation ('-1' is an integer) only to be dropped by the scheduler
    assert request.refusal and "isolated" in request.refusal["message"]
    request = translate(flavor(resources1__VGPU="-1"))
    assert "resources1" not in only(request)
    assert any("-1" in line for line in request.ignored)


def test_image_trait_properties_become_required_traits():
    query = only(translate(flavor(), image_properties={"trait:CUSTOM_GOLD": "required", "trait:CUSTOM_X": "forbidden"}))
    assert query["required"] == "CUSTOM_GOLD"


def test_pci_alias_in_placement_gives_one_group_per_device_with_owner_nova_and_group_policy_none():
    request = translate(flavor(pci_passthrough__alias="a16:2"), pci_aliases=[A16], pci_in_placement=True)
    query = only(request)
    groups = {k: v for k, v in query.items() if k.startswith("resources_pci")}
    assert sorted(groups.values()) == ["CUSTOM_PCI_10DE_25B6:1", "CUSTOM_PCI_10DE_25B6:1"]
    assert query["required_pci0-0"] == "OWNER_NOVA"
    assert query["group_policy"] == "none"
    assert request.pci_requests == [
        {"alias": "a16", "count": 2, "numa_policy": "legacy", "specs": [{"vendor_id": "10de", "product_id": "25b6"}]}
    ]


def test_pci_alias_resource_class_and_traits_are_normalised_as_nova_does():
    query = only(
        translate(flavor(pci_passthrough__alias="a100:1"), pci_aliases=[json.dumps(A100)], pci_in_placement=True)
    )
    assert query["resources_pci0-0"] == "CUSTOM_NVIDIA_A100:1"
    assert query["required_pci0-0"] == "CUSTOM_GOLD,HW_GPU_API_VULKAN,OWNER_NOVA"


def test_pci_alias_without_pci_in_placement_adds_no_group_but_a_pci_request():
    request = translate(flavor(pci_passthrough__alias="a16:1"), pci_aliases=[A16])
    assert not any(k.startswith("resources_pci") for k in only(request))
    assert request.pci_requests[0]["alias"] == "a16"


def test_two_flavor_groups_keep_their_missing_group_policy_even_with_pci_groups():
    query = only(
        translate(
            flavor(resources1__VGPU="1", resources2__VGPU="1", pci_passthrough__alias="a16:1"),
            pci_aliases=[A16],
            pci_in_placement=True,
        )
    )
    assert "group_policy" not in query


def test_pci_numa_socket_policy_requires_the_socket_trait():
    request = translate(flavor(hw__pci_numa_affinity_policy="socket"))
    assert only(request)["required"] == "COMPUTE_SOCKET_PCI_NUMA_AFFINITY"
    assert request.numa["pci_numa_affinity_policy"] == "socket"


def test_device_profile_groups_and_the_accelerators_root_trait():
    profiles = {"fpga": [{"resources:FPGA": "1", "trait:CUSTOM_INTEL": "required", "accel:bitstream": "x"}]}
    query = only(translate(flavor(accel__device_profile="fpga"), device_profiles=profiles))
    assert query["resourcesdevice_profile_0"] == "FPGA:1"
    assert query["requireddevice_profile_0"] == "CUSTOM_INTEL"
    assert query["root_required"] == "COMPUTE_ACCELERATORS,OWNER_NOVA,!COMPUTE_STATUS_DISABLED"


@pytest.mark.parametrize(
    ("specs", "image", "key", "nova"),
    [
        ({"hw:cpu_policy": "dedicate"}, {}, "hw:cpu_policy", "is not one of: dedicated, shared, mixed"),
        ({"hw:cpu_thread_policy": "isolate"}, {}, "hw:cpu_thread_policy", "non dedicated cpu pinning policy"),
        ({"hw:emulator_threads_policy": "isolate"}, {}, "hw:emulator_threads_policy", "requires a dedicated"),
        ({"hw:cpu_policy": "mixed"}, {}, "hw:cpu_dedicated_mask", "'mixed' CPU policy"),
        ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "0-3"}, {}, "hw:cpu_dedicated_mask", "1 unpinned"),
        ({"hw:cpu_policy": "dedicated", "resources:PCPU": "4"}, {}, "hw:cpu_policy", "one or the other"),
        ({"resources:PCPU": "3"}, {}, "resources:PCPU", "exactly flavor.vcpus PCPUs"),
        ({"resources1:VGPU": "x"}, {}, "resources1:VGPU", "'x' is not a valid integer value"),
        ({"trait:HW_CPU_X86_AVX9": "required"}, {}, "trait:HW_CPU_X86_AVX9", "does not appear to be a valid"),
        ({"trait:CUSTOM_X": "yes"}, {}, "trait:CUSTOM_X", "is not one of: required, forbidden"),
        ({"group_policy": "isolated"}, {}, "group_policy", "is not one of: isolate, none"),
        ({"pci_passthrough:alias": "a16"}, {}, "pci_passthrough:alias", "is not of the format"),
        ({"hw:numa_nodes": "0"}, {}, "hw:numa_nodes", "less than the min value"),
        ({"hw:cpu_policy": "shared"}, {"hw_cpu_policy": "dedicated"}, "hw_cpu_policy", "not permitted to override"),
        ({"hw:pci_numa_affinity_policy": "socket"}, {"hw_pci_numa_affinity_policy": "required"}, "hw_pci", "override"),
    ],
)
def test_nova_refusals_name_the_flavor_and_the_key(specs, image, key, nova):
    request = translate({**flavor(), "extra_specs": specs}, image_properties=image)
    assert request.queries == []
    assert request.refusal["code"] == "invalid_flavor"
    assert nova in request.refusal["message"]
    assert request.refusal["detail"].startswith("flavor 'gpu.large': ")
    assert key in request.refusal["key"]
    with pytest.raises(FlavorError, match="gpu.large"):
        request.raise_for_refusal()


def test_bad_cpu_policy_message_offers_the_values_and_the_nearest_one():
    request = translate(flavor(hw__cpu_policy="dedicate"))
    assert request.refusal["detail"] == (
        "flavor 'gpu.large': extra_specs 'hw:cpu_policy' is 'dedicate'; use shared, dedicated or mixed"
    )
    assert request.refusal["did_you_mean"] == ["dedicated"]


def test_undefined_alias_is_refused_with_did_you_mean():
    request = translate(flavor(pci_passthrough__alias="a10:1"), pci_aliases=[A16, A100])
    assert request.refusal["message"] == "PCI alias a10 is not defined"
    assert request.refusal["did_you_mean"] == ["a100"]
    assert "did you mean a100?" in request.refusal["detail"]


def test_unknown_device_profile_is_refused_with_did_you_mean():
    request = translate(flavor(accel__device_profile="fgpa"), device_profiles={"fpga": [{"resources:FPGA": "1"}]})
    assert request.refusal["message"] == "Device profile name fgpa: Expected 1 device profile but got nothing."
    assert request.refusal["did_you_mean"] == ["fpga"]


def test_alias_configuration_errors_are_nova_refusals():
    bad = {"name": "x", "vendor_id": "10de", "colour": "blue"}
    request = translate(flavor(pci_passthrough__alias="x:1"), pci_aliases=[bad])
    assert request.refusal["message"].startswith("Invalid PCI alias definition: Additional properties")
    # two lines for one alias without device_type: Nova fails on the missing key and says only that
    untyped = [A16, {**A16, "product_id": "25b7"}]
    assert parse_aliases(untyped)[1] == "'dev_type'"
    two = [{**A16, "device_type": "type-PF"}, {**A16, "product_id": "25b7", "device_type": "type-PF"}]
    assert parse_aliases(two)[1] is None
    request = translate(flavor(pci_passthrough__alias="a16:1"), pci_aliases=two, pci_in_placement=True)
    assert "multiple specs" in request.refusal["message"]
    assert translate(flavor(pci_passthrough__alias="a16:1"), pci_aliases=two).refusal is None


@pytest.mark.parametrize(
    ("change", "key"),
    [({"vcpus": None}, "vcpus"), ({"ram": "lots"}, "ram"), ({"disk": -1}, "disk"), ({"swap": 1.5}, "swap")],
)
def test_flavor_sizes_must_be_whole_numbers(change, key):
    broken = {**flavor(), **change}
    if change[key] is None:
        del broken[key]
    with pytest.raises(FlavorError, match=f"flavor 'gpu.large': '{key}'") as caught:
        translate(broken)
    assert isinstance(caught.value, AccelError)


def test_a_flavor_without_a_name_or_with_odd_extra_specs_fails_cleanly():
    with pytest.raises(FlavorError, match="'name' is missing"):
        translate({"vcpus": 1, "ram": 1, "disk": 1})
    with pytest.raises(FlavorError, match="'extra_specs'"):
        translate({**flavor(), "extra_specs": ["a"]})


def _answer(*roots):
    return {
        "allocation_requests": [{"allocations": {r: {"resources": {"VCPU": 1}}}, "mappings": {"": [r]}} for r in roots],
        "provider_summaries": {r: {"resources": {}, "traits": []} for r in roots},
    }


def test_merge_appends_the_fallback_candidates_after_the_pcpu_ones():
    request = translate(flavor(hw__cpu_policy="dedicated"))
    merged = merge_answers(request, [(200, _answer("pinned")), (200, _answer("legacy", "pinned"))])
    assert merged["outcome"] == "fits" and merged["status"] == 200
    assert [list(c["allocations"]) for c in merged["candidates"]] == [["pinned"], ["legacy"], ["pinned"]]
    assert sorted(merged["provider_summaries"]) == ["legacy", "pinned"]


def test_merge_without_candidates_is_no_host_and_a_400_is_rejected_by_placement():
    request = translate(flavor())
    assert merge_answers(request, [(200, _answer())])["outcome"] == "no_host"
    rejected = merge_answers(request, [(400, {"errors": [{"detail": "No such trait(s): CUSTOM_GOLDD."}]})])
    assert rejected["outcome"] == "rejected_by_placement" and rejected["status"] == 400
    assert rejected["message"] == "No such trait(s): CUSTOM_GOLDD."


def test_merge_of_a_dedicated_flavor_whose_fallback_is_refused_is_the_scheduler_crash():
    request = translate(flavor(hw__cpu_policy="dedicated", trait__CUSTOM_GOLDD="required"))
    bad = (400, "No such trait(s): CUSTOM_GOLDD.")
    merged = merge_answers(request, [bad, bad])
    assert merged["outcome"] == "scheduler_error" and merged["status"] == 400
    assert "TypeError" in merged["message"] and "CUSTOM_GOLDD" in merged["message"]


def test_merge_of_a_refused_flavor_is_invalid_flavor():
    request = translate(flavor(hw__cpu_policy="dedicate"))
    assert merge_answers(request, [])["outcome"] == "invalid_flavor"


def test_filter_returns_the_queries_and_fails_with_the_fix_for_a_refusal():
    queries = nova_request(flavor(hw__cpu_policy="dedicated"))
    assert len(queries) == 2 and "PCPU:4" in queries[0]
    assert nova_request(flavor(), details=True)["refusal"] is None
    with pytest.raises(AnsibleFilterError, match=r"is 'dedicate'; use shared, dedicated or mixed \(Nova says: "):
        nova_request(flavor(hw__cpu_policy="dedicate"))
    with pytest.raises(AnsibleFilterError, match="'ram' is missing"):
        nova_request({"name": "x", "vcpus": 1, "disk": 1})


def test_numa_nodes_must_split_cpus_and_memory_evenly():
    request = translate({**flavor(hw__numa_nodes="3")})
    assert request.refusal["message"].startswith("Instance CPUs and/or memory cannot be evenly distributed")
    assert "does not divide vcpus (4)" in request.refusal["detail"]
    assert translate(flavor(hw__numa_nodes="2")).numa["numa_nodes"] == 2


@pytest.mark.parametrize(
    ("specs", "image", "size"),
    [
        ({"hw:mem_page_size": "2MB"}, {}, 2048),
        ({"hw:mem_page_size": "1GiB"}, {}, 1048576),
        ({"hw:mem_page_size": "2048"}, {}, 2048),
        ({"hw:mem_page_size": "large"}, {}, "large"),
        ({"hw:mem_page_size": "any"}, {"hw_mem_page_size": "1GB"}, 1048576),
        ({"hw:mem_page_size": "large"}, {"hw_mem_page_size": "small"}, "small"),
        ({}, {}, None),
    ],
)
def test_the_page_size_is_the_flavors_or_the_images_within_it(specs, image, size):
    request = translate({**flavor(), "extra_specs": specs}, image_properties=image)
    assert request.refusal is None and request.numa["mem_page_size"] == size


@pytest.mark.parametrize(
    ("specs", "image", "message"),
    [
        ({"hw:mem_page_size": "2kB"}, {}, "Invalid memory page size '2kB'"),
        ({}, {"hw_mem_page_size": "2MB"}, "Page size 2MB forbidden against '<empty>'"),
        ({"hw:mem_page_size": "2MB"}, {"hw_mem_page_size": "1GB"}, "Page size 1GB forbidden against '2MB'"),
        ({"hw:mem_page_size": "any"}, {"hw_mem_page_size": "huge"}, "Invalid memory page size 'huge'"),
    ],
)
def test_a_page_size_nova_refuses_is_refused_with_novas_words(specs, image, message):
    request = translate({**flavor(), "extra_specs": specs}, image_properties=image)
    assert request.refusal["code"] == "invalid_flavor" and request.refusal["message"] == message
    assert "hw:mem_page_size" in request.refusal["detail"] or "hw_mem_page_size" in request.refusal["detail"]
