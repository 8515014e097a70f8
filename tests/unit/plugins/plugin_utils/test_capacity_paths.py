"""capacity_plan's per-tree path against asking the whole fleet for every instance, on generated cases.

Both paths must give the same plan (every key) and place every instance on the same host with the same
allocation, for generated fleets and demands, both weighers and orders, failures, a ``limit`` small
enough to cut Nova's answers, PCI devices in Placement or in the hosts' pools, and the benchmark's fleet
shape. Fleets where the per-tree path does not apply (sharing providers) must fall back to the whole
fleet and still plan.
"""

import random
import sys
from pathlib import Path

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import Plan, capacity_plan
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import FitOptions
from tests.support.capacity_cases import ALIASES, generated_demand, generated_fleet
from tests.support.fleet_generator import random_fleet

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
import bench_flavor_fit  # noqa: E402

CASES = 60


def both(demand, fleet, **options):
    plans = []
    for per_tree in (True, False):
        trace: list = []
        plan = capacity_plan(demand, fleet, per_tree=per_tree, trace=trace, **options)
        plans.append((plan, trace))
    return plans


@pytest.mark.parametrize("seed", range(CASES))
def test_per_tree_path_places_like_the_whole_fleet(seed):
    rng = random.Random(seed)
    pools = seed % 4 == 3
    fleet = generated_fleet(rng, pools=pools)
    if seed % 3 == 1:  # every root first, then the children, as Placement lists providers
        records = fleet["resource_providers"]
        records.sort(key=lambda r: r["parent_provider_uuid"] is not None)
    assert Plan(fleet, FitOptions()).per_tree
    demand = generated_demand(rng)
    for entry in demand:
        entry["count"] *= 3  # run the hosts out
    options = {
        "pci_aliases": ALIASES,
        "pci_in_placement": not pools,
        "weigher": ("spread", "pack")[seed % 2],
        "order": ("as_given", "largest_first")[seed // 2 % 2],
        "failures": seed % 3,
        "max_placement_results": (1000, 1, 2, 3, 5)[seed % 5],
    }
    if seed % 7 == 2:  # without NUMATopologyFilter nova-compute refuses what the filter would remove
        options["enabled_filters"] = ["ComputeFilter", "PciPassthroughFilter"]
    if seed % 6 == 5:  # Nova draws among the best hosts: both paths draw alike
        options["host_subset_size"] = 2
    (fast, fast_trace), (slow, slow_trace) = both(demand, fleet, **options)
    assert fast_trace == slow_trace
    assert fast == slow


def test_per_tree_path_on_the_benchmark_fleet_with_a_cut_answer():
    fleet = bench_flavor_fit.fleet(24, 24)
    demand = [{"flavor": f, "count": 6} for f in bench_flavor_fit.flavors(10)]
    options = {"pci_aliases": bench_flavor_fit.ALIASES, "pci_in_placement": True, "failures": 2}
    for limit in (1000, 7):
        (fast, fast_trace), (slow, slow_trace) = both(demand, fleet, max_placement_results=limit, **options)
        assert fast_trace == slow_trace and fast == slow
        assert sum(fast["placed"].values()) > 20


def test_children_out_of_the_roots_order_use_the_whole_fleet():
    rng = random.Random(11)
    fleet = generated_fleet(rng)
    records = fleet["resource_providers"]
    records.sort(key=lambda r: (r["parent_provider_uuid"] is not None, r["name"] if r["parent_provider_uuid"] else ""))
    records[:] = [r for r in records if not r["parent_provider_uuid"]] + list(
        reversed([r for r in records if r["parent_provider_uuid"]])
    )
    assert not Plan(fleet, FitOptions()).per_tree
    demand = [
        {
            "flavor": {
                "name": "gpu",
                "vcpus": 1,
                "ram": 64,
                "disk": 0,
                "extra_specs": {"pci_passthrough:alias": "h100:1"},
            },
            "count": 3,
        }
    ]
    (fast, _t1), (slow, _t2) = both(demand, fleet, pci_aliases=ALIASES, pci_in_placement=True)
    assert fast == slow and fast["placed"] == {"gpu": 3}


def test_fleets_with_sharing_providers_use_the_whole_fleet():
    rng = random.Random(5)
    fleet = next(
        f
        for f in (random_fleet(rng) for _n in range(20))
        if any("MISC_SHARES_VIA_AGGREGATE" in p["traits"] for p in f["resource_providers"])
    )
    assert not Plan(fleet, FitOptions()).per_tree
    demand = [{"flavor": {"name": "tiny", "vcpus": 1, "ram": 64, "disk": 0}, "count": 3}]
    (fast, _t1), (slow, _t2) = both(demand, fleet)
    assert fast == slow
