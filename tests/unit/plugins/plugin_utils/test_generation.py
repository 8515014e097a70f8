"""Placement's generation at its settings: the counted model against a tuple-by-tuple replay, and the
answers the solver gives with those settings."""

from __future__ import annotations

import random
import uuid

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.counting import Option, Walk
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.fast import claimable
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import (
    RECOMMENDED,
    PlacementConfig,
    PlacementConfigError,
    check_timeout,
    generation,
)
from tests.support.placement_generation import replay
from tests.support.wide_fleets import nova_query
from tests.support.wide_fleets import uniform as hgx

SETTINGS = [
    PlacementConfig(),
    PlacementConfig(7, "depth-first", False),
    PlacementConfig(7, "breadth-first", False),
    PlacementConfig(7, "breadth-first", True),
    PlacementConfig(-1, "depth-first", True),
    PlacementConfig(25, "depth-first", True),
]


def inv(total, used_ratio=1.0, max_unit=None):
    return {
        "total": total,
        "reserved": 0,
        "min_unit": 1,
        "max_unit": max_unit or total,
        "step_size": 1,
        "allocation_ratio": used_ratio,
    }


def wide_fleet(rng: random.Random) -> dict:
    """Hosts with GPU children (capacity 1, some in use) and a NIC with VFs (capacity 2 to 4, some used)."""
    providers = []
    for host in range(rng.randint(1, 4)):
        root = str(uuid.UUID(int=rng.getrandbits(128)))
        providers.append(
            {
                "uuid": root,
                "name": f"host{host}",
                "parent_provider_uuid": None,
                "inventories": {"VCPU": inv(64), "MEMORY_MB": inv(65536)},
                "usages": {"VCPU": rng.choice([0, 8, 60])},
                "traits": [],
                "aggregates": [],
            }
        )
        for gpu in range(rng.randint(1, 5)):
            providers.append(
                {
                    "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                    "name": f"host{host}_gpu{gpu}",
                    "parent_provider_uuid": root,
                    "inventories": {"CUSTOM_GPU": inv(rng.choice([1, 1, 1, 2]))},
                    "usages": {"CUSTOM_GPU": 1} if rng.random() < 0.25 else {},
                    "traits": [],
                    "aggregates": [],
                }
            )
        if rng.random() < 0.6:
            total = rng.randint(2, 4)
            providers.append(
                {
                    "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                    "name": f"host{host}_nic",
                    "parent_provider_uuid": root,
                    "inventories": {"SRIOV_NET_VF": inv(total)},
                    "usages": {"SRIOV_NET_VF": rng.randint(0, total - 1)},
                    "traits": [],
                    "aggregates": [],
                }
            )
    return {"resource_providers": providers}


def wide_query(rng: random.Random) -> str:
    params = [f"group_policy={rng.choice(['none', 'isolate'])}"]
    for index in range(rng.randint(1, 4)):
        params.append(f"required_g{index}=!CUSTOM_NOTHING")
        params.append(f"resources_g{index}=CUSTOM_GPU:1")
    for index in range(rng.randint(0, 2)):
        params.append(f"resources_v{index}=SRIOV_NET_VF:1")
    if rng.random() < 0.7:
        params.append("resources=VCPU:4")
    return "&".join(params)


CASES = [(seed, setting) for seed in range(120) for setting in range(len(SETTINGS))]


@pytest.mark.parametrize(("seed", "setting"), CASES)
def test_the_counted_generation_equals_a_tuple_by_tuple_replay(seed, setting):
    rng = random.Random(seed)
    snapshot = wide_fleet(rng)
    fleet = Fleet.from_snapshot(snapshot)
    fleet.traits = fleet.traits | {"CUSTOM_NOTHING"}
    request = Request.parse(wide_query(rng))
    config = SETTINGS[setting]
    model = generation(fleet, request, config)
    truth = replay(fleet, request, config)
    assert model["exact"]
    assert set(model["roots"]) == set(truth["roots"])
    assert model["per_root"] == truth["per_root"]
    assert model["candidates"] == truth["candidates"]
    assert model["unclaimable"] == truth["unclaimable"]
    assert model["examined"] == truth["examined"]
    if not model["truncated"]:
        assert model["collisions"] == truth["collisions"]


def test_eight_of_eight_gpus_is_a_full_node_per_host_and_placement_at_its_defaults_never_answers():
    fleet = Fleet.from_snapshot(hgx(3, 8))
    request = Request.parse(nova_query(8))
    defaults = generation(fleet, request, PlacementConfig())
    assert defaults["candidates"] == 3 * 40320  # 8! mappings of the one device set per host
    assert defaults["examined"] == 3 * 8**8
    assert defaults["collisions"] == 3 * 40320 * 40319 // 2
    assert defaults["overload"]
    advised = generation(fleet, request, RECOMMENDED)
    assert not advised["overload"]
    assert advised["candidates"] == 1000 and advised["truncated"]
    assert set(advised["roots"]) == {p.uuid for p in fleet.roots}  # breadth-first: every host
    cut = generation(fleet, request, PlacementConfig(1000, "depth-first", False))
    assert len(cut["roots"]) == 1  # depth-first: the first host Placement visits gives all 1000


def test_sixteen_of_sixteen_is_counted_not_listed():
    fleet = Fleet.from_snapshot(hgx(2, 16))
    report = generation(fleet, Request.parse(nova_query(16)), RECOMMENDED)
    assert report["exact"] and report["candidates"] == 1000 and len(report["roots"]) == 2
    defaults = generation(fleet, Request.parse(nova_query(16)), PlacementConfig())
    assert defaults["examined"] == 2 * 16**16 and defaults["overload"]


def test_the_answer_at_a_cut_has_as_many_candidates_from_the_same_roots():
    fleet = Fleet.from_snapshot(hgx(5, 8, busy=2))
    request = Request.parse(nova_query(4))
    for config in (PlacementConfig(10, "depth-first", False), PlacementConfig(10, "breadth-first", True)):
        model = generation(fleet, request, config)
        found = allocation_candidates(fleet, request, config=config)
        roots = []
        for candidate in found["allocation_requests"]:
            for provider in candidate["allocations"]:
                root = fleet.providers[provider].root
                if root not in roots:
                    roots.append(root)
        assert len(found["allocation_requests"]) == model["candidates"] == 10
        assert roots == model["roots"]


def test_the_workaround_returns_candidates_a_claim_refuses_and_marks_them():
    snapshot = {
        "resource_providers": [
            {"uuid": "r", "name": "nic-host", "inventories": {"VCPU": inv(8)}},
            {
                "uuid": "n",
                "name": "nic-host_pf",
                "parent_provider_uuid": "r",
                "inventories": {"SRIOV_NET_VF": inv(8)},
                "usages": {"SRIOV_NET_VF": 7},
            },
        ]
    }
    fleet = Fleet.from_snapshot(snapshot)
    request = Request.parse("resources=VCPU:1&resources_a=SRIOV_NET_VF:1&resources_b=SRIOV_NET_VF:1&group_policy=none")
    assert allocation_candidates(fleet, request)["allocation_requests"] == []
    found = allocation_candidates(fleet, request, config=PlacementConfig(-1, "depth-first", True))
    assert len(found["allocation_requests"]) == 1 and found["unclaimable"] == [0]
    assert not claimable(fleet, found["allocation_requests"][0])
    assert generation(fleet, request, PlacementConfig(-1, "depth-first", True))["unclaimable"] == 1


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("1000", "must be a dict"),
        ({"max_allocation_candidates": True}, "max_allocation_candidates must be -1"),
        ({"max_allocation_candidates": -2}, "max_allocation_candidates must be -1"),
        ({"max_allocation_candidates": 1.5}, "max_allocation_candidates must be -1"),
        ({"allocation_candidates_generation_strategy": "random"}, "must be one of depth-first, breadth-first"),
        ({"optimize_for_wide_provider_trees": "yes"}, "must be true or false"),
        ({"max_allocation_candidate": 10}, "unknown option(s) max_allocation_candidate"),
    ],
)
def test_settings_placement_would_not_start_with_are_refused_with_the_fix(value, words):
    with pytest.raises(PlacementConfigError, match=None) as caught:
        PlacementConfig.checked(value)
    assert words in str(caught.value)


@pytest.mark.parametrize("value", [0, -1, True, "60", float("nan"), 10**6])
def test_a_timeout_must_be_a_positive_number_of_seconds(value):
    with pytest.raises(PlacementConfigError):
        check_timeout(value)


def test_a_walk_counts_what_listing_finds():
    # Three GPUs of capacity 1 and one of 2, four groups of one unit, isolate off: by listing.
    keys = [(0, 1, 0, 1), (1, 1, 0, 1), (2, 1, 0, 1), (3, 2, 1, 2)]
    level = [Option(((k, 1),), k) for k in range(4)]
    walk = Walk([level] * 4, keys, isolate=False)
    listed = valid = 0
    for combo in __import__("itertools").product(range(4), repeat=4):
        taken = [combo.count(k) for k in range(4)]
        if all(taken[k] <= keys[k][1] for k in range(4)):
            listed += 1
            valid += all(taken[k] + keys[k][2] <= keys[k][1] for k in range(4))
    total = walk.total()
    assert (total.leaves, total.valid) == (listed, valid)


def test_providers_too_unlike_to_count_give_a_bound_marked_not_exact(monkeypatch):
    from ansible_collections.accel.openstack.plugins.plugin_utils.solver import generation as model

    class Tiny(Walk):
        def __init__(self, levels, keys, isolate):
            super().__init__(levels, keys, isolate, limit=0)

    monkeypatch.setattr(model, "Walk", Tiny)
    fleet = Fleet.from_snapshot(hgx(3, 8, busy=1))
    request = Request.parse(nova_query(4))
    for config in SETTINGS:
        report = generation(fleet, request, config)
        assert report["exact"] is False
        assert report["examined"] >= 1 and report["candidates"] >= 1
