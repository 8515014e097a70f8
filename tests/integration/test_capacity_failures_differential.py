"""capacity_plan's failures against Nova 34's own weighing and the real Placement 16.0.0.

A seeded fleet (``tests/support/capacity_cases.py``) is loaded into Placement and a generated demand is
planned with ``fail_hosts`` naming the host that carries the most of it. ``tests/support/nova_weigher_oracle.py``
replays the plan's instances and then, with that host down (its providers and allocations stay in
Placement, as after a real host failure, and Nova's ComputeFilter drops it: the oracle leaves it out of the
hosts it weighs), the instances it held, in the plan's order: every re-placed instance lands on the same
surviving host as Nova's ``_get_sorted_hosts`` chooses, and so the figures a reader takes (moved and lost
per flavor) are Nova's.

A second test loads what-if hosts (H200 in MIG 3g.71gb, L40S as 4Q vGPU) into Placement and requires the
plan on them to agree with Nova step by step too.

``ACCEL_CAPACITY_FAILURE_FLEETS`` (default 2) sets how many fleets are drawn.
"""

from __future__ import annotations

import os
import random

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_what_if import what_if_hosts
from tests.integration.test_capacity_differential import _agree, _plan, _steps
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


def test_what_if_hosts_load_into_placement_and_nova_places_on_them_as_the_plan_does(placement_session):
    """The providers a what-if option predicts are accepted by the real Placement, and the demand placed on
    them (alone) lands where Nova's weighing puts it: MIG-backed and time-sliced vGPUs beside each other."""
    records = []
    for option in (
        {"name": "h200-mig", "model": "H200", "count": 2, "mode": "mig", "layout": "3g.71gb", "gpus": 2},
        {"name": "l40s-4q", "model": "L40S", "count": 2, "mode": "vgpu", "type": "NVIDIA L40S-4Q", "gpus": 1},
    ):
        records += what_if_hosts(option, True, set())[1]
    snapshot = {"resource_providers": records}
    placement = placement_session.reset()
    load_fleet(placement, snapshot)
    demand = [
        {
            "flavor": {"name": "vgpu", "vcpus": 8, "ram": 65536, "disk": 0, "extra_specs": {"resources:VGPU": "1"}},
            "count": 40,
        },
        {"flavor": {"name": "general", "vcpus": 16, "ram": 131072, "disk": 0}, "count": 12},
    ]
    plan, trace, case = _plan(placement, snapshot, demand)
    (result,) = ask("tests/support/nova_weigher_oracle.py", [case], 300, "the Nova weigher oracle")
    seen = {"steps": 0, "ties": 0, "choices": 0, "none": 0, "refused": 0, "drawn": 0}
    _agree("what-if hosts", demand, plan, trace, result, seen)
    # 2 H200 hosts x 2 GPUs x 2 GPU instances + 2 L40S hosts x 12 vGPUs = 32 vGPUs for 40 instances.
    assert plan["placed"] == {"vgpu": 32, "general": 12}
    assert seen["choices"] > 10 and seen["none"] == 1, seen
