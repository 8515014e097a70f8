"""Explanations name the first failing constraint per root, with numbers, and suggest close names."""

from ansible_collections.accel.openstack.plugins.plugin_utils.explain import explain
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request

FLEET = Fleet.from_snapshot(
    {
        "resource_providers": [
            {"uuid": "cn1", "name": "compute1", "parent_provider_uuid": None, "inventories": {"VCPU": {"total": 8}}},
            {
                "uuid": "gpu1",
                "name": "compute1_gpu",
                "parent_provider_uuid": "cn1",
                "inventories": {"VGPU": {"total": 4}},
                "usages": {"VGPU": 3},
                "traits": ["CUSTOM_NVIDIA_T4"],
            },
            {"uuid": "cn2", "name": "compute2", "parent_provider_uuid": None, "inventories": {"VCPU": {"total": 8}}},
        ]
    }
)


def reasons(query, roots=None):
    answer = explain(FLEET, Request.parse(query), roots)
    return answer, {entry["name"]: entry["reason"] for entry in answer["roots"]}


def test_capacity_shortfall_is_said_with_numbers():
    answer, why = reasons("resources=VCPU:1&resources1=VGPU:2")
    assert answer["candidates"] == 0
    assert why["compute1"].startswith("group '1' needs VGPU:2; compute1_gpu has 1 free of 4")
    assert why["compute2"] == "group '1' needs VGPU:2; no provider in this tree has VGPU inventory"


def test_a_trait_no_provider_has_gets_did_you_mean():
    answer, _why = reasons("resources=VCPU:1,VGPU:1&required=CUSTOM_GPU_T4")
    assert answer["error"] == "No such trait(s): CUSTOM_GPU_T4. Did you mean CUSTOM_NVIDIA_T4?"
    assert {"kind": "trait", "name": "CUSTOM_GPU_T4", "did_you_mean": ["CUSTOM_NVIDIA_T4"]} in answer["unknown"]
    known, _why = reasons("resources=VCPU:1&required=HW_CPU_X86_AVX2")  # a standard trait nobody has: no 400
    assert known["candidates"] == 0 and "error" not in known
    assert known["unknown"][0]["name"] == "HW_CPU_X86_AVX2"


def test_named_roots_that_fit_say_so():
    answer, why = reasons("resources=VCPU:1,VGPU:1", roots=["compute1", "compute2"])
    assert answer["candidates"] == 1
    assert why["compute1"] == "a candidate uses this tree"
    assert why["compute2"].startswith("the unsuffixed group needs VGPU:1; no provider in this tree")


def test_isolate_is_named_when_groups_fit_alone_but_not_apart():
    _answer, why = reasons("resources1=VCPU:1&resources2=VCPU:1&group_policy=isolate", ["compute1"])
    assert "group_policy=isolate" in why["compute1"]
