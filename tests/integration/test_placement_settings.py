"""Placement's settings against the real Placement 16: the same wide fleets answered by Placement started
at its defaults, with max_allocation_candidates depth-first and breadth-first, and with its advice for
wide trees (optimize_for_wide_provider_trees, 1000, breadth-first), compared with the model of its
generation (solver/generation.py) and the solver's answer at the same settings.

Queries the model says Placement needs more than a few seconds for are not sent (at the defaults, six or
eight GPUs of eight would take minutes); the model's count of what Placement walks is checked there
against the product sizes instead.
"""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.fast import claimable
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import (
    RECOMMENDED,
    PlacementConfig,
    generation,
)
from tests.support.placement_loader import load_fleet
from tests.support.wide_fleets import hgx_fleet, nova_query

SETTINGS = {
    "defaults": PlacementConfig(),
    "depth-first-10": PlacementConfig(10, "depth-first", False),
    "breadth-first-10": PlacementConfig(10, "breadth-first", False),
    "advised": RECOMMENDED,
    "workaround-alone": PlacementConfig(-1, "depth-first", True),
}
# Sent only where the model predicts an answer within this many seconds.
QUICK = 5.0


def wide_fleet() -> dict:
    """Five HGX-like hosts (8 GPUs each; two hosts with GPUs in use), one with 16 GPUs, each with a
    ConnectX PF whose VFs are partly in use."""
    return hgx_fleet([(8, 0, 0), (8, 2, 7), (8, 0, 3), (8, 5, 0), (16, 4, 6), (8, 0, 8)])


QUERIES = [
    nova_query(2),
    nova_query(3, limit=50),
    nova_query(4),
    nova_query(6),
    nova_query(8),
    nova_query(12),
    nova_query(16),
    nova_query(2, vfs=2),
    nova_query(3, vfs=2, policy="isolate"),
    nova_query(1, vfs=3),
]


@pytest.fixture(scope="module")
def configured(placement):
    fleet = wide_fleet()
    load_fleet(placement, fleet)
    yield placement, Fleet.from_snapshot(fleet)
    placement.reconfigure({})


def _roots(fleet: Fleet, answer: dict) -> set[str]:
    return {fleet.providers[uuid].root for a in answer["allocation_requests"] for uuid in a["allocations"]}


def _key(candidate: dict) -> tuple:
    allocations = tuple(sorted((u, tuple(sorted(a["resources"].items()))) for u, a in candidate["allocations"].items()))
    mappings = tuple(sorted((s, tuple(sorted(u))) for s, u in candidate["mappings"].items()))
    return allocations, mappings


@pytest.mark.parametrize("label", list(SETTINGS))
def test_placement_at_each_setting_answers_as_the_model_and_the_solver_say(configured, label):
    server, fleet = configured
    config = SETTINGS[label]
    server.reconfigure(config.as_dict())
    sent = 0
    for query in QUERIES:
        request = Request.parse(query)
        model = generation(fleet, request, config)
        if model["seconds"] > QUICK:
            # Not sent: the model's walk is checked against the product it counts instead.
            assert model["examined"] > 10_000, (label, query, model)
            continue
        sent += 1
        status, answer = server.request("GET", "/allocation_candidates?" + query)
        assert status == 200, (label, query, answer)
        got = answer["allocation_requests"]
        limit = request.limit
        assert len(got) == min(model["candidates"], limit), (label, query, model)
        mine = allocation_candidates(fleet, request, config=config)
        assert len(mine["allocation_requests"]) == len(got), (label, query)
        if model["candidates"] <= limit and model["roots_determined"]:
            assert _roots(fleet, answer) == set(model["roots"]), (label, query, model)
            assert _roots(fleet, mine) == set(model["roots"]), (label, query)
            refused = sum(1 for candidate in got if not claimable(fleet, candidate))
            assert refused == model["unclaimable"], (label, query, model)
            if not model["truncated"]:
                # Untruncated, the answer is Placement's whole set of candidates: equal as sets.
                assert {_key(c) for c in got} == {_key(c) for c in mine["allocation_requests"]}, (label, query)
                assert len(mine.get("unclaimable", [])) == refused
    assert sent >= 5


def test_the_defaults_walk_billions_for_a_full_node_and_the_advice_a_few_thousand(configured):
    _server, fleet = configured
    request = Request.parse(nova_query(8))
    defaults = generation(fleet, request, PlacementConfig())
    advised = generation(fleet, request, RECOMMENDED)
    assert defaults["overload"] and not advised["overload"]
    # 16^8 tuples on the 16-GPU host (12 free GPUs) dominate; 8^8 on each 8-GPU host with 8 free.
    assert defaults["examined"] >= 12**8 + 2 * 8**8
    assert advised["candidates"] == 1000 and advised["examined"] < 100_000
