"""Full-node GPU flavors on wide provider trees: flavor_fit on 1,000 HGX hosts, and the solver beside the
real Placement 16 at Placement's advised settings.

Usage: python benchmarks/bench_wide_trees.py [--hosts 1000] [--placement-hosts 100] [--repeat 3]

Part 1 (no service): fleets of ``--hosts`` compute nodes with 8 single-GPU PCI children each (and, for
the 16-GPU flavors, as many nodes with 16), a quarter of the GPUs of every fourth host in use. Each flavor
(``h100:6``, ``h100:8`` on the 8-GPU fleet; ``h100:12``, ``h100:16`` on the 16-GPU fleet) is answered by
flavor_fit in full (Nova's query, max_instances on every host, why_not, the model of Placement's work) at
Placement's defaults and at its advice for wide trees (optimize_for_wide_provider_trees,
max_allocation_candidates=1000, breadth-first). The fleet is indexed once per fleet; the time per flavor
is the median of ``--repeat`` runs of one flavor on the indexed fleet (process CPU time).

Part 2 (the real Placement): ``--placement-hosts`` 8-GPU hosts loaded into the real Placement started at
the advised settings; Nova's query for ``h100:6`` and ``h100:8`` is timed on Placement (HTTP, median of
``--repeat``) and answered by the solver's allocation_candidates lookup at the same settings on the same
fleet (same number of candidates, same hosts), and the ratio is printed.

Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
importlib.import_module("conftest")
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import FitOptions, FlavorFit  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import (  # noqa: E402
    RECOMMENDED,
    PlacementConfig,
    duration_words,
)
from tests.support.wide_fleets import ALIASES, gpu_flavor, hgx_fleet, nova_query  # noqa: E402


def hgx(hosts: int, gpus: int) -> dict:
    """``hosts`` nodes of ``gpus`` GPUs, a quarter of the GPUs (and 16 VCPU each) in use on every fourth."""
    return hgx_fleet([(gpus, gpus // 4 if host % 4 == 3 else 0, None) for host in range(hosts)], 16)


def part_one(hosts: int, repeat: int) -> None:
    print(f"\n### flavor_fit, {hosts} hosts\n")
    print("| fleet | flavor | settings | outcome | hosts | instances | Placement predicted | ms per flavor (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for gpus, devices in ((8, (6, 8)), (16, (12, 16))):
        snapshot = hgx(hosts, gpus)
        for label, config in (("defaults", PlacementConfig()), ("advised", RECOMMENDED)):
            options = FitOptions.checked(pci_aliases=ALIASES, pci_in_placement=True, placement_config=config.as_dict())
            fit = FlavorFit(snapshot, options)
            for n in devices:
                times, report = [], None
                for _run in range(repeat):
                    start = time.process_time()
                    report = fit.check(gpu_flavor(n, ram=16384))
                    times.append(time.process_time() - start)
                work = max(report["placement"], key=lambda w: w["seconds"]) if report["placement"] else {}
                predicted = duration_words(work.get("seconds", 0)) + (" (overload)" if work.get("overload") else "")
                print(
                    f"| {hosts} x {gpus} GPUs | h100:{n} | {label} | {report['outcome']} "
                    f"{(report['reason'] or {}).get('code') or ''} | {len(report['hosts'])} | "
                    f"{report['fleet_max_instances']} | {predicted} | {statistics.median(times) * 1000:.0f} |"
                )


def part_two(hosts: int, repeat: int) -> None:
    from tests.support.placement_loader import load_fleet
    from tests.support.placement_server import PlacementServer

    snapshot = hgx(hosts, 8)
    fleet = Fleet.from_snapshot(snapshot)
    print(f"\n### The real Placement 16 at the advised settings, {hosts} hosts x 8 GPUs\n")
    print("| flavor | Placement (HTTP) | solver | ratio | candidates (Placement, solver) | hosts (Placement, solver) |")
    print("|---|---|---|---|---|---|")
    with PlacementServer(config=RECOMMENDED.as_dict()) as server:
        server.start()
        started = time.perf_counter()
        load_fleet(server, snapshot)
        loaded = time.perf_counter() - started
        for n in (6, 8):
            query = nova_query(n, ram=16384)
            request = Request.parse(query)
            placement_times, solver_times = [], []
            answer = mine = None
            for _run in range(repeat):
                start = time.perf_counter()
                status, answer = server.request("GET", "/allocation_candidates?" + query)
                placement_times.append(time.perf_counter() - start)
                assert status == 200, answer
                start = time.perf_counter()
                mine = allocation_candidates(fleet, request, config=RECOMMENDED)
                solver_times.append(time.perf_counter() - start)

            def roots(found: dict) -> int:
                return len({fleet.providers[u].root for a in found["allocation_requests"] for u in a["allocations"]})

            placement, solver = statistics.median(placement_times), statistics.median(solver_times)
            print(
                f"| h100:{n} | {placement:.2f} s | {solver * 1000:.0f} ms | {placement / solver:,.0f}x | "
                f"{len(answer['allocation_requests'])}, {len(mine['allocation_requests'])} | "
                f"{roots(answer)}, {roots(mine)} |"
            )
    print(f"\n(loading the fleet into Placement took {loaded:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--placement-hosts", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    part_one(args.hosts, args.repeat)
    if args.placement_hosts:
        part_two(args.placement_hosts, args.repeat)


if __name__ == "__main__":
    main()
