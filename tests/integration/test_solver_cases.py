"""Hand-written queries, asked of the real Placement and of the solver: every 400, every capacity edge.

The fleet is small and fixed: two compute nodes (one with a NUMA child holding two GPUs, one with a
NIC), a sharing disk provider in an aggregate with the first node, and inventories chosen so each
capacity rule (reserved, allocation_ratio with rounding, min_unit, max_unit, step_size, usage) sits
exactly on its boundary.
"""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates
from tests.support.placement_compare import compare
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement

AGG = "a0000000-0000-4000-8000-00000000000a"
AGG2 = "a0000000-0000-4000-8000-00000000000b"
CN1, NUMA, GPU0, GPU1 = (f"c1000000-0000-4000-8000-00000000000{i}" for i in range(4))
CN2, NIC = "c2000000-0000-4000-8000-000000000000", "c2000000-0000-4000-8000-000000000001"
DISK = "d0000000-0000-4000-8000-000000000000"


def _p(uuid, name, parent, inventories, traits=(), aggregates=(), usages=None):
    return {
        "uuid": uuid,
        "name": name,
        "parent_provider_uuid": parent,
        "inventories": inventories,
        "usages": usages or {},
        "traits": list(traits),
        "aggregates": list(aggregates),
    }


FLEET = {
    "resource_providers": [
        # VCPU: (10 - 2) * 1.5 = 12 capacity, 4 used -> 8 free; max_unit 8, step 1.
        _p(
            CN1,
            "cn1",
            None,
            {
                "VCPU": {"total": 10, "reserved": 2, "allocation_ratio": 1.5, "max_unit": 8},
                "MEMORY_MB": {"total": 1000, "reserved": 0, "allocation_ratio": 0.33, "max_unit": 1000},
            },
            ["HW_CPU_X86_AVX2", "CUSTOM_RACK_1"],
            [AGG],
            {"VCPU": 4, "MEMORY_MB": 100},
        ),
        _p(NUMA, "cn1_numa0", CN1, {}, ["HW_NUMA_ROOT"]),
        # VGPU: min_unit 2, step 2, max_unit 4, total 6, used 2 -> amounts 2 and 4 fit, 3 and 6 do not.
        _p(
            GPU0,
            "cn1_gpu0",
            NUMA,
            {"VGPU": {"total": 6, "min_unit": 2, "step_size": 2, "max_unit": 4}},
            ["CUSTOM_NVIDIA_A100"],
            usages={"VGPU": 2},
        ),
        _p(GPU1, "cn1_gpu1", NUMA, {"VGPU": {"total": 2, "max_unit": 2}}, ["CUSTOM_NVIDIA_T4"]),
        _p(
            CN2,
            "cn2",
            None,
            {"VCPU": {"total": 4, "max_unit": 4}, "MEMORY_MB": {"total": 2048, "reserved": 2048}},
            ["HW_CPU_X86_AVX2", "COMPUTE_STATUS_DISABLED"],
            [AGG2],
        ),
        _p(NIC, "cn2_nic", CN2, {"SRIOV_NET_VF": {"total": 8, "max_unit": 8}}, ["CUSTOM_PHYSNET_A"]),
        _p(
            DISK,
            "shared_disk",
            None,
            {"DISK_GB": {"total": 100, "reserved": 10, "max_unit": 50}},
            ["MISC_SHARES_VIA_AGGREGATE"],
            [AGG],
            {"DISK_GB": 40},
        ),
    ],
    "traits": ["CUSTOM_UNUSED_BUT_KNOWN"],
}

BAD_REQUESTS = [
    "",
    "resources=VCPU:1&foo=bar",
    "resources=VCPU:1&bar=1&foo=2",
    "resources=VCPU:1&limit=0",
    "resources=VCPU:1&limit=abc",
    "resources=VCPU:1&group_policy=bad",
    "resources=",
    "resources=VCPU",
    "resources=VCPU:1:2",
    "resources=VCPU:x",
    "resources=VCPU:0",
    "resources=VCPU:-1",
    "resources=CUSTOM_NOPE:1",
    "resources=VCPU:1&required=CUSTOM_NOPE",
    "resources=VCPU:1&required=!CUSTOM_NOPE",
    "resources=VCPU:1&required=in:HW_CPU_X86_AVX2,CUSTOM_NOPE",
    "resources=VCPU:1&required=",
    "resources=VCPU:1&required=HW_CPU_X86_AVX2,",
    "resources=VCPU:1&required=!",
    "resources=VCPU:1&required=in:",
    "resources=VCPU:1&required=in:!HW_CPU_X86_AVX2",
    "resources=VCPU:1&required=HW_CPU_X86_AVX2,!HW_CPU_X86_AVX2",
    "resources=VCPU:1&required=in:HW_CPU_X86_AVX2&required=!HW_CPU_X86_AVX2",
    "resources=VCPU:1&member_of=abc",
    f"resources=VCPU:1&member_of={AGG},{AGG2}",
    "resources=VCPU:1&member_of=in:abc",
    "resources=VCPU:1&in_tree=abc",
    "resources=VCPU:1&resources1=VGPU:2&resources2=VGPU:2",
    "resources=VCPU:1&required1=CUSTOM_NVIDIA_A100",
    "required=HW_CPU_X86_AVX2",
    "required1=HW_CPU_X86_AVX2&same_subtree=1",
    "resources=VCPU:1&same_subtree=,1",
    "resources=VCPU:1&resources1=VGPU:2&same_subtree=1,2",
    "resources=VCPU:1&root_required=CUSTOM_NOPE",
    "resources=VCPU:1&root_required=in:HW_CPU_X86_AVX2",
    "resources=VCPU:1&root_required=HW_CPU_X86_AVX2&root_required=CUSTOM_RACK_1",
    "resources=VCPU:1&root_required=HW_CPU_X86_AVX2,!HW_CPU_X86_AVX2",
    "resources=VCPU:1&root_required=",
    "resources_X=VCPU:1&resources_Y=VGPU:2",
]

CAPACITY_EDGES = [
    "resources=VCPU:8",  # exactly the free amount (12 capacity - 4 used) and max_unit
    "resources=VCPU:9",  # one over both
    "resources=MEMORY_MB:230",  # int(1000 * 0.33) = 330 - 100 used: 230 fits
    "resources=MEMORY_MB:231",
    "resources=MEMORY_MB:1",  # cn2 has everything reserved
    "resources1=VGPU:2",  # min_unit and step
    "resources1=VGPU:1",  # below min_unit on gpu0, fits gpu1
    "resources1=VGPU:3",  # not a step on gpu0
    "resources1=VGPU:4",  # free 4, max_unit 4
    "resources1=VGPU:6",  # above max_unit
    "resources=DISK_GB:50",  # shared: 90 capacity - 40 used = 50, max_unit 50
    "resources=DISK_GB:51",
    "resources=VCPU:1,DISK_GB:50",
    "resources=VCPU:4&resources1=VCPU:4&group_policy=none",  # two groups, same provider, sum 8 fits on cn1
    "resources=VCPU:4&resources1=VCPU:5&group_policy=none",  # sum 9 exceeds cn1, fits cn2 only for 4+? no
    "resources1=VGPU:2&resources2=VGPU:2&group_policy=none",  # sum 4 on gpu0 is max_unit and free
    "resources1=VGPU:2&resources2=VGPU:2&group_policy=isolate",
    "resources1=VGPU:4&resources2=VGPU:2&group_policy=none",
]

SEMANTICS = [
    "resources=VCPU:1,VGPU:2",
    "resources=VCPU:1,VGPU:2&required=CUSTOM_NVIDIA_T4",
    "resources=VCPU:1,VGPU:2&required=!CUSTOM_NVIDIA_A100",
    "resources=VCPU:1,VGPU:2&required=in:CUSTOM_NVIDIA_T4,CUSTOM_NVIDIA_A100",
    "resources=VCPU:1&required=CUSTOM_UNUSED_BUT_KNOWN",
    f"resources=VCPU:1&member_of={AGG}",
    f"resources=VCPU:1&member_of=!{AGG}",
    f"resources=VCPU:1&member_of=in:{AGG},{AGG2}&member_of=!{AGG2}",
    f"resources=VCPU:1,DISK_GB:5&member_of={AGG}",
    f"resources1=VGPU:2&member_of1={AGG}",
    f"resources=VCPU:1&in_tree={GPU0}",
    f"resources=VCPU:1,DISK_GB:1&in_tree={CN1}",
    "resources=VCPU:1&in_tree=00000000-0000-4000-8000-000000000000",
    "resources=VCPU:1&root_required=!COMPUTE_STATUS_DISABLED",
    "resources=VCPU:1&root_required=CUSTOM_NVIDIA_A100",
    "resources=VCPU:1&resources_G=VGPU:2&required_G=CUSTOM_NVIDIA_A100&group_policy=isolate",
    "resources_CPU=VCPU:1&resources_G=VGPU:2&resources_H=VGPU:2&group_policy=isolate"
    "&same_subtree=_G,_H,_N&required_N=HW_NUMA_ROOT",
    "resources_G=VGPU:2&resources_H=VGPU:2&group_policy=none&same_subtree=_G,_H",
    "resources=VCPU:1&resources1=DISK_GB:10",
    "resources=VCPU:1&resources1=SRIOV_NET_VF:1&required1=CUSTOM_PHYSNET_A",
    "resources=VCPU:1,VGPU:2&limit=1",
    "resources=VCPU:1&required=HW_CPU_X86_AVX2&required=!COMPUTE_STATUS_DISABLED",
]


@pytest.fixture(scope="module")
def loaded(placement):
    load_fleet(placement, FLEET)
    return placement, Fleet.from_snapshot(FLEET)


@pytest.mark.parametrize("query", BAD_REQUESTS)
def test_bad_request_gets_placements_400_and_message(loaded, query):
    server, fleet = loaded
    status, body = server.request("GET", "/allocation_candidates?" + query)
    assert status == 400, body
    assert compare(fleet, query, status, body, server) is None
    with pytest.raises(RequestError):
        allocation_candidates(fleet, Request.parse(query))


@pytest.mark.parametrize("query", CAPACITY_EDGES + SEMANTICS)
def test_answer_is_identical_to_placement(loaded, query):
    server, fleet = loaded
    status, body = server.request("GET", "/allocation_candidates?" + query)
    assert status == 200, body
    assert compare(fleet, query, status, body, server) is None


def test_capacity_edges_are_on_both_sides_of_the_boundary(loaded):
    server, fleet = loaded
    fits = {q: bool(allocation_candidates(fleet, Request.parse(q))["allocation_requests"]) for q in CAPACITY_EDGES}
    assert fits["resources=VCPU:8"] and not fits["resources=VCPU:9"]
    assert fits["resources=MEMORY_MB:230"] and not fits["resources=MEMORY_MB:231"]
    assert fits["resources=DISK_GB:50"] and not fits["resources=DISK_GB:51"]
    assert fits["resources1=VGPU:4"] and not fits["resources1=VGPU:6"] and not fits["resources1=VGPU:3"]


# Placement resolves names lazily, group by group in the order each group first appears in the query
# string, and stops at the first group with no candidate: an unknown name after it is an empty 200.
LAZY_NAMES = [
    ("resources=VCPU:1000&resources_x=CUSTOM_NOPE:1&group_policy=none", 200),
    ("resources=VCPU:1&resources_x=CUSTOM_NOPE:1&group_policy=none", 400),
    ("required_x=CUSTOM_NOPE&resources_x=VCPU:1&resources=VCPU:1000&group_policy=none", 400),
    ("resources_x=VCPU:1000&required_y=CUSTOM_NOPE&resources_y=VCPU:1&group_policy=none", 200),
    ("resources_y=VCPU:1&required_y=CUSTOM_NOPE&resources_x=VCPU:1000&group_policy=none", 400),
    ("resources=VCPU:1000&required=CUSTOM_NOPE", 400),
    ("root_required=CUSTOM_NOPE&resources=VCPU:1000", 400),
    ("resources=VCPU:1000&resources1=VGPU:1&required1=CUSTOM_NOPE", 200),
    (
        "resources=VCPU:1&member_of=00000000-0000-4000-8000-0000000000aa&resources_x=CUSTOM_NOPE:1&group_policy=none",
        200,
    ),
]


@pytest.mark.parametrize(("query", "expected"), LAZY_NAMES)
def test_names_are_checked_lazily_as_placement_does(loaded, query, expected):
    server, fleet = loaded
    status, body = server.request("GET", "/allocation_candidates?" + query)
    assert status == expected, body
    assert compare(fleet, query, status, body, server) is None
