"""The solver's semantics on small fleets written out by hand (the differential suite checks them all
against the real Placement; these pin the rules in words)."""

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, FleetError
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates

AGG = "a0000000-0000-4000-8000-00000000000a"


def _p(uuid, parent=None, inventories=None, traits=(), aggregates=(), usages=None):
    return {
        "uuid": uuid,
        "name": uuid,
        "parent_provider_uuid": parent,
        "inventories": inventories or {},
        "usages": usages or {},
        "traits": list(traits),
        "aggregates": list(aggregates),
    }


FLEET = Fleet.from_snapshot(
    {
        "resource_providers": [
            _p("cn1", None, {"VCPU": {"total": 8}}, ["HW_CPU_X86_AVX2"], [AGG]),
            _p("gpu1a", "cn1", {"VGPU": {"total": 4, "max_unit": 2}}, ["CUSTOM_NVIDIA_T4"]),
            _p("gpu1b", "cn1", {"VGPU": {"total": 4}}, ["CUSTOM_NVIDIA_A100"], usages={"VGPU": 3}),
            _p("cn2", None, {"VCPU": {"total": 2, "reserved": 1, "allocation_ratio": 2.0}}),
            _p("disk", None, {"DISK_GB": {"total": 100}}, ["MISC_SHARES_VIA_AGGREGATE"], [AGG]),
        ]
    }
)


def solve(query):
    return allocation_candidates(FLEET, Request.parse(query))


def allocations(answer):
    return sorted(
        sorted((uuid, rc, amount) for uuid, a in areq["allocations"].items() for rc, amount in a["resources"].items())
        for areq in answer["allocation_requests"]
    )


def test_unsuffixed_resources_spread_over_one_tree_but_one_class_is_never_split():
    assert allocations(solve("resources=VCPU:1,VGPU:2")) == [
        [("cn1", "VCPU", 1), ("gpu1a", "VGPU", 2)],
    ]
    assert allocations(solve("resources=VGPU:3")) == []  # 1 + 2 free on two GPUs is not 3 on one


def test_capacity_is_total_minus_reserved_times_ratio_minus_used():
    roots = {tuple(a)[0][0] for a in allocations(solve("resources=VCPU:2"))}
    assert roots == {"cn1", "cn2"}  # cn2: (2 - 1) * 2.0 = 2
    assert {a[0][0] for a in allocations(solve("resources=VCPU:3"))} == {"cn1"}


def test_sharing_provider_serves_trees_in_its_aggregate():
    assert allocations(solve("resources=VCPU:1,DISK_GB:10")) == [[("cn1", "VCPU", 1), ("disk", "DISK_GB", 10)]]


def test_unsuffixed_required_is_checked_on_the_providers_that_give_resources():
    assert allocations(solve("resources=VCPU:1,VGPU:1&required=CUSTOM_NVIDIA_A100")) == [
        [("cn1", "VCPU", 1), ("gpu1b", "VGPU", 1)]
    ]
    assert allocations(solve("resources=VCPU:1&required=CUSTOM_NVIDIA_A100")) == []


def test_numbered_groups_isolate_and_provider_summaries():
    answer = solve("resources1=VGPU:1&resources2=VGPU:1&group_policy=isolate")
    assert len(answer["allocation_requests"]) == 2  # (a, b) and (b, a)
    assert set(answer["provider_summaries"]) == {"cn1", "gpu1a", "gpu1b"}
    assert answer["provider_summaries"]["gpu1b"]["resources"] == {"VGPU": {"capacity": 4, "used": 3}}
    none = solve("resources1=VGPU:1&resources2=VGPU:1&group_policy=none")
    assert len(none["allocation_requests"]) == 3  # a+a (2 <= max_unit 2), a/b, b/a; b+b exceeds free


def test_unknown_names_are_400_with_a_hint():
    with pytest.raises(RequestError) as caught:
        solve("resources=VCPU:1&required=CUSTOM_NVIDIA_T5")
    assert caught.value.placement_message == "No such trait(s): CUSTOM_NVIDIA_T5."
    assert "CUSTOM_NVIDIA_T4" in caught.value.hint
    with pytest.raises(RequestError, match="No such resource class VGPUS"):
        solve("resources=VGPUS:1")


def test_limit_keeps_the_first_candidates_and_their_summaries():
    answer = solve("resources=VCPU:1&limit=1")
    assert len(answer["allocation_requests"]) == 1
    assert set(answer["provider_summaries"]) == {"cn1", "gpu1a", "gpu1b"}


def test_a_snapshot_with_a_missing_parent_is_refused_with_the_fix():
    with pytest.raises(FleetError, match="include the whole tree"):
        Fleet.from_snapshot({"resource_providers": [_p("x", "nowhere")]})
