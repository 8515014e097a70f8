"""capacity_plan's failures against Nova 34's own weighing and the real Placement 16.0.0.

A seeded fleet (``tests/support/capacity_cases.py``) is loaded into Placement and a generated demand is
planned with ``fail_hosts`` naming the host that carries the most of it. ``tests/support/nova_weigher_oracle.py``
replays the plan's instances and then, with that host down (its providers and allocations stay in
Placement, as after a real host failure, and Nova's ComputeFilter drops it: the oracle leaves it out of the
hosts it weighs), the instances it held, in the plan's order: every re-placed instance lands on the same
surviving host as Nova's ``_get_sorted_hosts`` chooses, and so the figures a reader takes (moved and lost
per flavor) are Nova's.

``ACCEL_CAPACITY_FAILURE_FLEETS`` (default 2) sets how many fleets are drawn.
"""

from __future__ import annotations

import os
import random

import pytest

from tests.integration.test_capacity_differential import _plan, _steps
from tests.support.capacity_cases import generated_demand, generated_fleet
from tests.support.nova_venv import ask
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement

FLEETS = int(os.environ.get("ACCEL_CAPACITY_FAILURE_FLEETS", "2"))


def test_instances_of_a_lost_host_are_placed_again_as_nova_and_placement_place_them(placement_session):
    rng = random.Random(4711)
    seen = {"moved": 0, "lost": 0, "failures": 0}
    for _fleet in range(FLEETS):
        placement = placement_session.reset()
        snapshot = generated_fleet(rng)
        load_fleet(placement, snapshot)
        demand = generated_demand(rng)
        first, _trace, _case = _plan(placement, snapshot, demand)
        if not first["hosts"]:
            continue
        lost = max(first["hosts"], key=lambda h: sum(first["hosts"][h].values()))
        again: list[dict] = []
        plan, trace, case = _plan(placement, snapshot, demand, fail_hosts=[lost], failure_trace=again)
        assert plan["hosts"] == first["hosts"]  # the failure does not change the plan
        steps = _steps(demand, again)
        for step in steps:
            step["down"] = [lost]
        case["steps"] += steps
        (result,) = ask("tests/support/nova_weigher_oracle.py", [case], 300, "the Nova weigher oracle")
        nova = result["steps"][len(trace) :]
        assert len(nova) == len(again)
        placed: dict[str, int] = {}
        for number, (mine, theirs) in enumerate(zip(again, nova, strict=True)):
            where = f"{demand}: {lost} lost, re-placed instance {number} ({mine['flavor']}), offered {theirs['hosts']}"
            assert lost not in theirs["hosts"], where
            assert theirs["chosen"] == mine["host"], where
            if mine["host"] is not None:
                assert theirs["plan_allocation_offered"] is True and theirs["status"] == 204, where
                placed[mine["flavor"]] = placed.get(mine["flavor"], 0) + 1
        failure = plan["failure"]
        assert failure["moved"] == first["hosts"][lost]
        # Lost per flavor, as Nova's run gives it: moved less what it placed again.
        assert {name: entry["count"] for name, entry in failure["lost"].items()} == {
            name: n - placed.get(name, 0) for name, n in failure["moved"].items() if n - placed.get(name, 0)
        }
        seen["failures"] += 1
        seen["moved"] += sum(failure["moved"].values())
        seen["lost"] += sum(entry["count"] for entry in failure["lost"].values())
    assert seen["failures"] and seen["moved"] > 3, seen
