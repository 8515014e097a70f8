"""The solver against the real Placement on the same fleets and queries: time, identical answers, memory.

Usage: python benchmarks/bench_solver.py [--nodes 1000 5000] [--rss-nodes 10000] [--repeat 5] [--db-dir DIR]

For each size, a realistic fleet (compute nodes with CPU and memory, GPU and NIC children, shared
storage; about 2.5 providers per node) is loaded into a fresh Placement over HTTP, then each query is
asked of Placement (HTTP, median of --repeat) and of the solver (in process, median of --repeat, the
fleet indexed once beforehand). Answers must be identical. Peak RSS is measured in a separate process
that indexes a fleet of --rss-nodes nodes and answers every query. Prints a Markdown table.

Loading thousands of nodes into Placement over HTTP takes minutes (about 12 providers per second), so
each loaded database is kept under --db-dir (default .build/bench-solver), named by a digest of the
snapshot, and reused by later runs: only the first run at a size pays for the load. ``--load-only``
fills that cache and stops.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
importlib.import_module("conftest")  # makes ansible_collections.accel.openstack importable
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates  # noqa: E402
from tests.support.fleet_generator import scale_fleet  # noqa: E402

QUERIES = {
    "cpu+ram+shared disk": "resources=VCPU:4,MEMORY_MB:8192,DISK_GB:20",
    "1 A100 vGPU": "resources=VCPU:4,MEMORY_MB:8192&resources1=VGPU:1&required1=CUSTOM_NVIDIA_A100",
    "vGPU+VF isolate": (
        "resources=VCPU:2,MEMORY_MB:4096&resources_NIC=SRIOV_NET_VF:1&required_NIC=CUSTOM_PHYSNET_A"
        "&resources_GPU=VGPU:2&group_policy=isolate&root_required=HW_CPU_X86_AVX512F"
    ),
}


def canonical(answer: dict) -> tuple:
    requests = Counter(
        json.dumps({"a": a["allocations"], "m": {k: sorted(v) for k, v in a["mappings"].items()}}, sort_keys=True)
        for a in answer["allocation_requests"]
    )
    summaries = {u: {**s, "traits": sorted(s["traits"])} for u, s in answer["provider_summaries"].items()}
    return requests, json.dumps(summaries, sort_keys=True)


def timed(func, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _run in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def rss_child(nodes: int) -> None:
    snapshot = scale_fleet(nodes)
    fleet = Fleet.from_snapshot(snapshot)
    del snapshot
    for query in QUERIES.values():
        allocation_candidates(fleet, Request.parse(query))
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)


def cached_placement(db_dir: str, snapshot: dict):
    """A started Placement holding this snapshot: a cached database if one exists, else loaded now."""
    from tests.support.placement_loader import load_fleet
    from tests.support.placement_server import PlacementServer

    digest = hashlib.sha256(json.dumps(snapshot, sort_keys=True).encode()).hexdigest()[:16]
    workdir = os.path.join(db_dir, f"fleet-{len(snapshot['resource_providers'])}-{digest}")
    marker = os.path.join(workdir, "loaded")
    if not os.path.exists(marker):
        # A half-loaded database from an interrupted run is thrown away.
        if os.path.isdir(workdir):
            for name in os.listdir(workdir):
                os.unlink(os.path.join(workdir, name))
        os.makedirs(workdir, exist_ok=True)
    server = PlacementServer(workdir=workdir).start()
    load_s = None
    if not os.path.exists(marker):
        start = time.perf_counter()
        try:
            load_fleet(server, snapshot)
        except BaseException:
            server.close()
            raise
        load_s = time.perf_counter() - start
        with open(marker, "w") as handle:
            handle.write(f"{load_s:.0f} s\n")
    return server, load_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--rss-nodes", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db-dir", default=os.path.join(REPO, ".build", "bench-solver"))
    parser.add_argument("--load-only", action="store_true", help="load (or find) the databases and stop")
    parser.add_argument("--rss-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        rss_child(args.rss_child)
        return

    rows = []
    for nodes in args.nodes:
        snapshot = scale_fleet(nodes)
        server, load_s = cached_placement(args.db_dir, snapshot)
        try:
            loaded = "reused a loaded database" if load_s is None else f"loaded into Placement in {load_s:.0f} s"
            if args.load_only:
                print(f"{nodes} nodes: {len(snapshot['resource_providers'])} providers, {loaded}", file=sys.stderr)
                continue
            start = time.perf_counter()
            fleet = Fleet.from_snapshot(snapshot)
            index_s = time.perf_counter() - start
            print(
                f"{nodes} nodes: {len(snapshot['resource_providers'])} providers, {loaded}, "
                f"indexed in {index_s * 1000:.0f} ms",
                file=sys.stderr,
            )
            for label, query in QUERIES.items():
                placement_s, (status, body) = timed(
                    lambda q=query, s=server: s.request("GET", "/allocation_candidates?" + q), args.repeat
                )
                solver_s, answer = timed(
                    lambda q=query, f=fleet: allocation_candidates(f, Request.parse(q)), args.repeat
                )
                same = status == 200 and canonical(body) == canonical(answer)
                rows.append(
                    (
                        nodes,
                        len(snapshot["resource_providers"]),
                        label,
                        len(answer["allocation_requests"]),
                        placement_s,
                        solver_s,
                        same,
                    )
                )
                print(rows[-1], file=sys.stderr)
        finally:
            server.close()
    if args.load_only:
        return
    rss = subprocess.run(
        [sys.executable, __file__, "--rss-child", str(args.rss_nodes)], capture_output=True, text=True, check=True
    ).stdout.strip()
    print("| nodes | providers | query | candidates | Placement (HTTP) | solver | speed-up | identical |")
    print("|---:|---:|---|---:|---:|---:|---:|:---:|")
    for nodes, providers, label, count, placement_s, solver_s, same in rows:
        print(
            f"| {nodes} | {providers} | {label} | {count} | {placement_s * 1000:.0f} ms | {solver_s * 1000:.1f} ms "
            f"| {placement_s / solver_s:.0f}x | {'yes' if same else 'NO'} |"
        )
    print(f"\nPeak RSS indexing {args.rss_nodes} nodes and answering every query: {rss} MiB")
    print("\nQueries: " + "; ".join(f"{label}: `{query}`" for label, query in QUERIES.items()))
    if not all(row[-1] for row in rows):
        sys.exit("answers differ from Placement")


if __name__ == "__main__":
    main()
