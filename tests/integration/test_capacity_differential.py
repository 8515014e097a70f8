"""capacity_plan against one-by-one placement through Nova 34's own weighing and the real Placement 16.0.0.

Seeded small fleets (compute nodes of different sizes, usages and allocation ratios; H100 PCI providers,
vGPU children, PCPU on some; hypervisor versions, instances, I/O operations and failed builds on some)
are loaded into Placement. For each fleet, several demands (general, GPU, vGPU and pinned flavors; the
``spread`` and ``pack`` presets and drawn multipliers; both orders) are planned by ``capacity_plan``;
then ``tests/support/nova_weigher_oracle.py`` replays them in the nova venv: every instance asks the real
Placement Nova's queries, Nova's ``SchedulerManager._get_sorted_hosts`` with Nova's default
``weight_classes`` (every weigher) and the plan's multipliers chooses the host from ``HostState``s with
the fields those weighers read, and the allocation is written into Placement before the next instance.
Every step must agree: the same host (hosts given to Nova in fleet order, so equal weights resolve alike),
the plan's allocation among Placement's candidates there, and no host where the plan found none; and so
the count placed per flavor and per host.

Mixed fleets of GPU hosts and general hosts of one size show the PCI weigher at work: with Nova's
default multipliers general instances keep off the GPU hosts, so the plan places more GPU instances than
with ``pci_weight_multiplier`` 0, and Nova agrees with both plans.

``ACCEL_CAPACITY_FLEETS`` (default 2) and ``ACCEL_CAPACITY_MIXED_FLEETS`` (default 2) set how many fleets
of each kind are drawn.
"""

from __future__ import annotations

import os
import random

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import flavor as nova_flavor
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import capacity_plan
from tests.support.capacity_cases import (
    ALIASES,
    generated_demand,
    generated_fleet,
    generated_multipliers,
    mixed_demand,
    mixed_fleet,
)
from tests.support.nova_venv import ask
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement

FLEETS = int(os.environ.get("ACCEL_CAPACITY_FLEETS", "2"))
MIXED_FLEETS = int(os.environ.get("ACCEL_CAPACITY_MIXED_FLEETS", "2"))
DEMANDS_PER_FLEET = 4
FIGURES = ("num_io_ops", "num_instances", "failed_builds", "hypervisor_version")


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
            "refused": len(step["refused"]),
            "first": (step["refused"] or [step["host"]])[0],
        }
        for step in trace
    ]


def _plan(placement, snapshot: dict, demand: list[dict], **options) -> tuple[dict, list, dict]:
    """The plan, its trace and the oracle's case for it."""
    trace: list[dict] = []
    plan = capacity_plan(
        demand,
        snapshot,
        pci_aliases=ALIASES,
        pci_in_placement=True,
        # The oracle runs no filter: this test is Placement, the weighers and the compute's refusals.
        enabled_filters=[],
        trace=trace,
        **options,
    )
    roots = [p for p in snapshot["resource_providers"] if not p["parent_provider_uuid"]]
    case = {
        "placement": placement.url,
        "multipliers": {k: v for k, v in plan["weighers"].items() if k.endswith("_weight_multiplier")},
        "arrival": plan["weighers"]["arrival"],
        "host_subset_size": plan["weighers"]["host_subset_size"],
        "roots": [[p["uuid"], p["name"]] for p in roots],
        "figures": {p["name"]: {k: p[k] for k in FIGURES if k in p} for p in roots},
        "steps": _steps(demand, trace),
    }
    return plan, trace, case


def _agree(label: str, demand: list[dict], plan: dict, trace: list[dict], result: dict, seen: dict) -> None:
    assert len(result["steps"]) == len(trace), label
    hosts: dict[str, dict[str, int]] = {}
    for number, (mine, nova) in enumerate(zip(trace, result["steps"], strict=True)):
        where = f"{label}: instance {number} ({mine['flavor']}), Placement offered {nova['hosts']}"
        first = (mine["refused"] or [mine["host"]])[0]
        if first is not None and len(nova["subset"]) > 1:  # Nova draws among its best: the plan's draw is one
            assert first in nova["subset"], where
            seen["drawn"] += 1
        # The hosts the plan saw refuse the build are the first Nova chose, and the build lands on the next.
        assert nova["attempts"][: len(mine["refused"])] == mine["refused"], where
        seen["refused"] += len(mine["refused"])
        if mine["host"] is None:
            assert len(mine["refused"]) == len(nova["attempts"]), where
        assert nova["chosen"] == mine["host"], where
        seen["steps"] += 1
        if mine["host"] is None:
            seen["none"] += 1
            continue
        assert nova["plan_allocation_offered"] is True, where
        assert nova["status"] == 204, where
        seen["choices"] += len(nova["hosts"]) > 1
        seen["ties"] += len(nova["tied"]) > 1
        per_host = hosts.setdefault(nova["chosen"], {})
        per_host[mine["flavor"]] = per_host.get(mine["flavor"], 0) + 1
    # The figures a reader takes from the plan are Nova's: per flavor and per host.
    assert plan["hosts"] == hosts, label
    assert {k: v for k, v in plan["placed"].items() if v} == {
        f: sum(h.get(f, 0) for h in hosts.values()) for f in {f for h in hosts.values() for f in h}
    }, label
    for entry in demand:
        name = entry["flavor"]["name"]
        assert plan["placed"][name] + plan["unplaced"][name] == entry["count"], label


def test_capacity_plan_places_as_nova_and_placement(placement_session):
    rng = random.Random(2026)
    seen = {"steps": 0, "ties": 0, "choices": 0, "none": 0, "refused": 0, "drawn": 0}
    for _fleet in range(FLEETS):
        placement = placement_session.reset()
        snapshot = generated_fleet(rng)
        load_fleet(placement, snapshot)
        cases, plans = [], []
        for index in range(DEMANDS_PER_FLEET):
            demand = generated_demand(rng)
            options = {
                "order": ("as_given", "largest_first")[index // 2 % 2],
                "arrival": ("settled", "burst")[index % 2],
            }
            if index % 2:
                options.update(generated_multipliers(rng) if index == 3 else {"weigher": "pack"})
            if index == 2:  # Nova draws among its 3 best hosts
                options.update(host_subset_size=3, seed=rng.randint(0, 1000))
            plan, trace, case = _plan(placement, snapshot, demand, **options)
            plans.append((demand, options, plan, trace))
            cases.append(case)
        results = ask("tests/support/nova_weigher_oracle.py", cases, 300, "the Nova weigher oracle")
        for (demand, options, plan, trace), result in zip(plans, results, strict=True):
            label = f"{options} {[(e['flavor']['name'], e['count']) for e in demand]}"
            _agree(label, demand, plan, trace, result, seen)
    # The cases must have exercised the weighers: real choices, ties, flavors that ran out,
    # and pinned instances that Placement offered shared hosts for through the VCPU fallback query.
    assert seen["choices"] > 10 and seen["ties"] > 1 and seen["none"] > 0 and seen["refused"] > 0, seen
    assert seen["drawn"] > 3, seen  # and draws among the best hosts


def test_pci_weigher_keeps_general_instances_off_gpu_hosts_as_nova_does(placement_session):
    rng = random.Random(34)
    seen = {"steps": 0, "ties": 0, "choices": 0, "none": 0, "refused": 0, "drawn": 0}
    totals = [{"general on GPU hosts": 0, "gpu placed": 0} for _run in range(2)]
    for _fleet in range(MIXED_FLEETS):
        placement = placement_session.reset()
        snapshot = mixed_fleet(rng)
        load_fleet(placement, snapshot)
        demand = mixed_demand(rng, snapshot)
        runs = [_plan(placement, snapshot, demand), _plan(placement, snapshot, demand, pci_weight_multiplier=0.0)]
        results = ask("tests/support/nova_weigher_oracle.py", [case for _p, _t, case in runs], 300, "the Nova oracle")
        for (plan, trace, _case), result in zip(runs, results, strict=True):
            label = f"pci_weight_multiplier {plan['weighers']['pci_weight_multiplier']} {demand}"
            _agree(label, demand, plan, trace, result, seen)
        for (plan, _t, _c), total in zip(runs, totals, strict=True):
            total["general on GPU hosts"] += sum(
                h.get("general", 0) for name, h in plan["hosts"].items() if name.startswith("gpu")
            )
            total["gpu placed"] += plan["placed"]["gpu"]
    # Nova's default multipliers keep general instances off the GPU hosts and so let more GPU instances in.
    default, no_pci = totals
    assert default["general on GPU hosts"] < no_pci["general on GPU hosts"], totals
    assert default["gpu placed"] > no_pci["gpu placed"], totals
