"""Which candidates Placement 16 keeps when ``limit`` truncates its answer, against the real Placement.

Placement builds a multi-group answer in a Python ``set`` of allocation requests (``_merge_candidates``)
and slices ``list(set)[:limit]`` (``limit_results``, with ``randomize_allocation_candidates`` off). The
set's order comes from hashes of tuples holding resource class *strings*, and CPython salts string
hashes per process (``PYTHONHASHSEED``; random unless set, as under every WSGI server). So the same
Placement on the same database answers the same truncated query with different roots from one
process to the next: the first N candidates are not a function of the fleet, and no model of the fleet
can predict them. This test proves it, and proves what the solver guarantees instead: every kept
candidate is a valid one, and without truncation the roots are exactly Placement's.
"""

from __future__ import annotations

from collections import Counter

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates
from tests.support.placement_loader import load_fleet
from tests.support.placement_server import PlacementServer

HOSTS = 30
LIMIT = 10
IDENTICAL_GROUPS = "group_policy=none&resources=VCPU:1&resources_a=CUSTOM_GPU:1&resources_b=CUSTOM_GPU:1"
QUERIES = [IDENTICAL_GROUPS, "resources=VCPU:1"]


def _inventory(total: int) -> dict:
    return {"total": total, "reserved": 0, "min_unit": 1, "max_unit": total, "step_size": 1, "allocation_ratio": 1.0}


def fleet() -> dict:
    """30 hosts with two single-GPU children each (every root offers two candidates for two GPU groups)."""
    providers = []
    for host in range(HOSTS):
        root = f"00000000-0000-4000-8000-{host:012d}"
        providers.append(
            {
                "uuid": root,
                "name": f"host{host:02d}",
                "parent_provider_uuid": None,
                "inventories": {"VCPU": _inventory(8), "MEMORY_MB": _inventory(4096)},
                "traits": [],
                "aggregates": [],
            }
        )
        for device in range(2):
            providers.append(
                {
                    "uuid": f"00000000-0000-4000-9000-{host:06d}{device:06d}",
                    "name": f"host{host:02d}_gpu{device}",
                    "parent_provider_uuid": root,
                    "inventories": {"CUSTOM_GPU": _inventory(1)},
                    "traits": [],
                    "aggregates": [],
                }
            )
    return {"resource_providers": providers, "resource_classes": ["CUSTOM_GPU"]}


class SeededPlacement(PlacementServer):
    """The real Placement whose process salts string hashes with ``seed`` (the same database throughout)."""

    seed = "0"

    def _env(self) -> dict:
        env = super()._env()
        env["PYTHONHASHSEED"] = self.seed
        return env


def _roots(body: dict, root_of: dict) -> list[str]:
    return [root_of[sorted(a["allocations"])[0]] for a in body["allocation_requests"]]


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """{(seed, query, limit): roots of the candidates, in Placement's order}, from one database."""
    snapshot = fleet()
    names = {p["uuid"]: p["name"] for p in snapshot["resource_providers"]}
    root_of = {p["uuid"]: names[p["parent_provider_uuid"] or p["uuid"]] for p in snapshot["resource_providers"]}
    server = SeededPlacement(str(tmp_path_factory.mktemp("placement-seeded")))
    out = {}
    try:
        for index, seed in enumerate(["1", "2", "1"]):
            server.seed = seed
            server.start()
            if index == 0:
                load_fleet(server, snapshot)
            for query in QUERIES:
                for limit in (LIMIT, 1000):
                    status, body = server.request("GET", f"/allocation_candidates?limit={limit}&{query}")
                    assert status == 200, body
                    out[(index, query, limit)] = _roots(body, root_of)
            server.stop()
    finally:
        server.close()
    return snapshot, root_of, out


@pytest.mark.parametrize("query", QUERIES)
def test_the_truncated_order_is_the_placement_process_not_the_fleet(answers, query):
    _snapshot, _root_of, out = answers
    first, second, first_again = (out[(i, query, LIMIT)] for i in range(3))
    assert len(first) == len(second) == LIMIT
    # the same process seed on the same database: the same answer, in the same order
    assert first == first_again
    # another process of the same Placement on the same database: other roots in the first candidates
    assert first != second and set(first) != set(second), (first, second)
    # untruncated, every process returns the same candidates (in its own order)
    assert Counter(out[(0, query, 1000)]) == Counter(out[(1, query, 1000)])


@pytest.mark.parametrize("query", QUERIES)
def test_the_solver_keeps_valid_candidates_and_all_of_placements_roots_untruncated(answers, query):
    snapshot, root_of, out = answers
    fleet_model = Fleet.from_snapshot(snapshot)
    truncated = allocation_candidates(fleet_model, Request.parse(f"limit={LIMIT}&{query}"))
    full = allocation_candidates(fleet_model, Request.parse(f"limit=1000&{query}"))
    ours = _roots(truncated, root_of)
    assert len(ours) == LIMIT
    # every candidate the solver keeps is one Placement also returns (untruncated), so it is valid
    placement_full = Counter(out[(0, query, 1000)])
    assert Counter(ours) <= placement_full, ours
    assert Counter(_roots(full, root_of)) == placement_full
