"""capacity_plan against one-by-one placement through Nova 34's own weighing and the real Placement 16.0.0.

Seeded small fleets (compute nodes of different sizes, usages and allocation ratios; H100 PCI providers,
vGPU children, PCPU on some) are loaded into Placement. For each fleet, several demands (general, GPU,
vGPU and pinned flavors, both weighers, both orders) are planned by ``capacity_plan``; then
``tests/support/nova_weigher_oracle.py`` replays them in the nova venv: every instance asks the real
Placement Nova's queries, Nova's ``SchedulerManager._get_sorted_hosts`` (RAMWeigher) chooses the host,
and the allocation is written into Placement before the next instance. Every step must agree: the same
host (hosts given to Nova in fleet order), the plan's allocation among Placement's candidates there, and
no host where the plan found none.
"""

from __future__ import annotations

import random

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import flavor as nova_flavor
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import WEIGHERS, capacity_plan
from tests.support.capacity_cases import ALIASES, generated_demand, generated_fleet
from tests.support.nova_venv import ask
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement

FLEETS = 3
DEMANDS_PER_FLEET = 4


def _steps(demand: list[dict], trace: list[dict]) -> list[dict]:
    requests = {
        entry["flavor"]["name"]: nova_flavor.translate(entry["flavor"], pci_aliases=ALIASES, pci_in_placement=True)
        for entry in demand
    }
    return [
        {
            "flavor": step["flavor"],
            "queries": requests[step["flavor"]].queries,
            "pcpu_fallback": requests[step["flavor"]].pcpu_fallback,
            "allocations": step["allocations"],
        }
        for step in trace
    ]


def test_capacity_plan_places_as_nova_and_placement(placement_session):
    rng = random.Random(2026)
    seen = {"steps": 0, "ties": 0, "choices": 0, "none": 0}
    for _fleet in range(FLEETS):
        placement = placement_session.reset()
        snapshot = generated_fleet(rng)
        load_fleet(placement, snapshot)
        roots = [[p["uuid"], p["name"]] for p in snapshot["resource_providers"] if not p["parent_provider_uuid"]]
        cases, plans = [], []
        for index in range(DEMANDS_PER_FLEET):
            demand = generated_demand(rng)
            weigher = ("spread", "pack")[index % 2]
            order = ("as_given", "largest_first")[index // 2 % 2]
            trace: list[dict] = []
            plan = capacity_plan(
                demand,
                snapshot,
                weigher=weigher,
                order=order,
                pci_aliases=ALIASES,
                pci_in_placement=True,
                enabled_filters=[],  # the oracle runs no filter: this test is Placement and the weigher
                trace=trace,
            )
            plans.append((demand, weigher, order, plan, trace))
            cases.append(
                {
                    "placement": placement.url,
                    "multiplier": WEIGHERS[weigher],
                    "roots": roots,
                    "steps": _steps(demand, trace),
                }
            )
        results = ask("tests/support/nova_weigher_oracle.py", cases, 300, "the Nova weigher oracle")
        for (demand, weigher, order, plan, trace), result in zip(plans, results, strict=True):
            label = f"{weigher}/{order} {[(e['flavor']['name'], e['count']) for e in demand]}"
            assert len(result["steps"]) == len(trace), label
            for number, (mine, nova) in enumerate(zip(trace, result["steps"], strict=True)):
                where = f"{label}: instance {number} ({mine['flavor']}), Placement offered {nova['hosts']}"
                assert nova["chosen"] == mine["host"], where
                seen["steps"] += 1
                if mine["host"] is None:
                    seen["none"] += 1
                    continue
                assert nova["plan_allocation_offered"] is True, where
                assert nova["status"] == 204, where
                seen["choices"] += len(nova["hosts"]) > 1
                seen["ties"] += len(nova["tied"]) > 1
            placed = {}
            for step in trace:
                if step["host"]:
                    placed[step["flavor"]] = placed.get(step["flavor"], 0) + 1
            assert {k: v for k, v in plan["placed"].items() if v} == placed, label
            for entry in demand:
                name = entry["flavor"]["name"]
                assert plan["placed"][name] + plan["unplaced"][name] == entry["count"], label
    # The cases must have exercised the weigher: real choices, ties, and flavors that ran out.
    assert seen["choices"] > 20 and seen["ties"] > 3 and seen["none"] > 0, seen
