"""The solver's fast path against its step-by-step reference search (``solve``, which explanations use)
on seeded random fleets and queries: the same candidates, the same 400s, and provider summaries that
cover exactly the trees of the candidates. The differential suite checks both against Placement."""

import json
import random
from collections import Counter
from urllib.parse import urlencode

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import (
    NoCandidates,
    allocation_candidates,
    solve,
)
from tests.support.fleet_generator import random_fleet, random_query, scale_fleet


def _canonical(allocations: dict, mappings: dict) -> str:
    return json.dumps({"a": allocations, "m": {s: sorted(u) for s, u in mappings.items()}}, sort_keys=True)


def _fast(fleet: Fleet, query: str):
    try:
        answer = allocation_candidates(fleet, Request.parse(query))
    except RequestError as exc:
        return exc.placement_message, None
    return Counter(_canonical(a["allocations"], a["mappings"]) for a in answer["allocation_requests"]), answer


def _reference(fleet: Fleet, query: str):
    try:
        found = solve(fleet, Request.parse(query))
    except RequestError as exc:
        return exc.placement_message
    except NoCandidates:
        return Counter()
    answers = Counter()
    for amounts, mappings in found:
        allocations: dict = {}
        for (uuid, rc), amount in amounts.items():
            allocations.setdefault(uuid, {"resources": {}})["resources"][rc] = amount
        answers[_canonical(allocations, mappings)] += 1
    return answers


@pytest.mark.parametrize("seed", range(40))
def test_fast_path_gives_the_reference_candidates(seed):
    rng = random.Random(1000 + seed)
    snapshot = random_fleet(rng)
    fleet = Fleet.from_snapshot(snapshot)
    for _case in range(25):
        query = urlencode(random_query(rng, snapshot))
        fast, answer = _fast(fleet, query)
        reference = _reference(fleet, query)
        limit = Request.parse(query).limit if answer is not None else None
        if limit is not None:
            # limit keeps some of the candidates (the first ones, in the solver).
            assert not fast - reference, query
            assert sum(fast.values()) == min(limit, sum(reference.values())), query
        else:
            assert fast == reference, query
        if answer is not None:
            roots = {fleet.providers[u].root for a in answer["allocation_requests"] for u in a["allocations"]}
            expected = {p.uuid for root in roots for p in fleet.trees[root]}
            assert set(answer["provider_summaries"]) == expected, query
            # The roots-only answer: the full answer's roots in the order they first appear, and its count.
            shortcut = allocation_candidates(fleet, Request.parse(query), roots_only=True)
            in_order = [fleet.providers[u].root for a in answer["allocation_requests"] for u in a["allocations"]]
            assert shortcut == {
                "roots": list(dict.fromkeys(in_order)),
                "candidates": len(answer["allocation_requests"]),
            }, query


@pytest.mark.parametrize(
    "query",
    [
        "resources=VCPU:4,MEMORY_MB:8192,DISK_GB:20",
        "resources=VCPU:4,MEMORY_MB:8192&resources1=VGPU:1&required1=CUSTOM_NVIDIA_A100",
        "resources=VCPU:2,MEMORY_MB:4096&resources_NIC=SRIOV_NET_VF:1&required_NIC=CUSTOM_PHYSNET_A"
        "&resources_GPU=VGPU:2&group_policy=isolate&root_required=HW_CPU_X86_AVX512F",
        "resources=DISK_GB:20",
        "resources1=VGPU:2&resources2=VGPU:2&group_policy=none",
    ],
)
def test_fast_path_gives_the_reference_candidates_at_scale(query):
    fleet = Fleet.from_snapshot(scale_fleet(60))
    fast, _answer = _fast(fleet, query)
    assert fast
    assert fast == _reference(fleet, query)
