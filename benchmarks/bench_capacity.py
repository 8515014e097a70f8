"""capacity_plan at fleet scale: a 1,000-instance mix placed on the flavor_fit benchmark's fleet.

Usage: python benchmarks/bench_capacity.py [--nodes 10000] [--usage-patterns 10000] [--instances 1000]
       [--whole-fleet] [--failures 0] [--worst-case 0] [--host-figures]

The fleet is ``bench_flavor_fit.fleet`` (10,000 compute nodes: H100 passthrough, A16 vGPU, NIC VF and
plain hosts, PCPU on a quarter; with ``--usage-patterns 10000`` every host's usage differs). The demand
mixes general flavors of three sizes, 1- and 2-GPU passthrough, vGPU, VF and pinned flavors, in the
shares below, scaled to ``--instances``. One run in a fresh process: the snapshot is read and the demand
placed with the spread weigher; wall time, CPU time (user + system, ``resource.getrusage``) and peak
RSS of the process are printed as one Markdown row. ``--whole-fleet`` asks the whole fleet for every
instance (the per-tree path off), for comparison. ``--host-figures`` gives every host the compute node's
figures the weighers read (hypervisor version, instances, I/O operations, one in 50 with a failed build)
and every host with PCPU two NUMA cells, so that every modelled weigher tells hosts apart and the pinned
instances consume cells. ``--worst-case K`` adds the worst case over every combination of K hosts lost
(each combination's instances placed again on the rest); the row then gives the combinations tried.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import resource
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
importlib.import_module("conftest")  # makes ansible_collections.accel.openstack importable
import bench_flavor_fit  # noqa: E402

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import capacity_plan  # noqa: E402

MIX = [
    ("general.small", 2, 4096, 20, {}, 0.30),
    ("general.medium", 8, 32768, 40, {}, 0.20),
    ("general.large", 32, 262144, 200, {}, 0.05),
    ("gpu.h100.1", 16, 131072, 100, {"pci_passthrough:alias": "h100:1"}, 0.15),
    ("gpu.h100.2", 32, 262144, 200, {"pci_passthrough:alias": "h100:2"}, 0.05),
    ("vgpu.a16", 4, 8192, 40, {"resources:CUSTOM_VGPU_A16_4Q": "1"}, 0.15),
    ("nic.vf2", 8, 16384, 40, {"pci_passthrough:alias": "vf:2"}, 0.05),
    ("pinned", 8, 32768, 40, {"hw:cpu_policy": "dedicated"}, 0.05),
]


def demand(instances: int) -> list[dict]:
    entries = []
    for name, vcpus, ram, disk, specs, share in MIX:
        flavor = {"name": name, "vcpus": vcpus, "ram": ram, "disk": disk, "extra_specs": specs}
        entries.append({"flavor": flavor, "count": round(instances * share)})
    return entries


def add_host_figures(snapshot: dict) -> None:
    """The compute node's figures on every root record, and two NUMA cells on those with PCPU."""
    rng = random.Random(5)
    for record in snapshot["resource_providers"]:
        if record.get("parent_provider_uuid"):
            continue
        record["hypervisor_version"] = rng.choice([8000000, 9002000, 10000000])
        record["num_instances"] = rng.randint(0, 20)
        record["num_io_ops"] = rng.randint(0, 3)
        record["failed_builds"] = 1 if rng.random() < 0.02 else 0
        inventories = record["inventories"]
        if "PCPU" in inventories:
            pcpus, vcpus = inventories["PCPU"]["total"], inventories.get("VCPU", {}).get("total", 0)
            memory = inventories["MEMORY_MB"]["total"]
            record["numa_cells"] = [
                {"id": 0, "pcpus": pcpus // 2, "vcpus": vcpus // 2, "memory_mb": memory // 2},
                {"id": 1, "pcpus": pcpus - pcpus // 2, "vcpus": vcpus - vcpus // 2, "memory_mb": memory // 2},
            ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--usage-patterns", type=int, default=10000)
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--failures", type=int, default=0)
    parser.add_argument("--worst-case", type=int, default=0)
    parser.add_argument("--whole-fleet", action="store_true")
    parser.add_argument("--host-figures", action="store_true")
    args = parser.parse_args()
    snapshot = bench_flavor_fit.fleet(args.nodes, args.usage_patterns)
    if args.host_figures:
        add_host_figures(snapshot)
    wanted = demand(args.instances)
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    plan = capacity_plan(
        wanted,
        snapshot,
        pci_aliases=bench_flavor_fit.ALIASES,
        pci_in_placement=True,
        failures=args.failures,
        per_tree=not args.whole_fleet,
        worst_case={"hosts": args.worst_case} if args.worst_case else None,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    placed, unplaced = sum(plan["placed"].values()), sum(plan["unplaced"].values())
    print("| nodes | usage patterns | instances | path | placed | unplaced | wall | CPU | peak RSS |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    path = ("whole fleet" if args.whole_fleet else "per tree") + (", host figures" if args.host_figures else "")
    worst = plan["worst_case"]
    if worst:
        lost = sum(entry["count"] for entry in worst["worst"]["lost"].values())
        path += (
            f", worst case of {worst['combinations']} combination(s) of {worst['hosts']} host(s): "
            f"{', '.join(worst['worst']['hosts'])} loses {lost}"
        )
    print(
        f"| {args.nodes} | {args.usage_patterns} | {args.instances} | {path} | {placed} | {unplaced} | {wall:.2f} s | "
        f"{cpu:.2f} s | {after.ru_maxrss / 1024:.0f} MB |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
