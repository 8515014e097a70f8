"""flavor_fit at fleet scale: 50 flavors against 10,000 compute nodes with PCI and vGPU children.

Usage: python benchmarks/bench_flavor_fit.py [--nodes 10000] [--flavors 50] [--usage-patterns 8] [--repeat 3]
       [--busy-devices 0.0]

The fleet is what ``nova_fleet`` predicts for racks of a few host models (compute nodes with VCPU,
PCPU on a quarter of them, MEMORY_MB, DISK_GB; 8-GPU passthrough hosts with one PCI provider per H100;
A16 hosts with 16 vGPU children; NIC hosts with a VF provider), with usage drawn from
``--usage-patterns`` patterns per model (0: every host empty; each distinct pattern is a distinct tree to
count on; ``--busy-devices`` puts that share of the H100 and vGPU providers in use). Flavors mix general,
pinned, passthrough (1, 2, 4 and 9 GPUs), vGPU, NIC VF, trait and typo cases. Each run answers every
flavor in full: Nova's queries with limit 1000, max_instances on every host (count_limit 64), why_not on
every host that is not returned, reason codes and the filters.
Time is the median of --repeat runs in this process (fleet indexing included), as wall time and as the
process's CPU time (what the answer costs when the cores are shared); peak RSS is measured in a fresh
process that does one run. Prints one Markdown row.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
import uuid

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
importlib.import_module("conftest")  # makes ansible_collections.accel.openstack importable
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit  # noqa: E402

ALIASES = [
    {"name": "h100", "vendor_id": "10de", "product_id": "2330", "resource_class": "CUSTOM_NVIDIA_H100"},
    {"name": "vf", "vendor_id": "15b3", "product_id": "101e", "device_type": "type-VF"},
]


def _inv(total, ratio=1.0, reserved=0):
    return {
        "total": total,
        "reserved": reserved,
        "min_unit": 1,
        "max_unit": total,
        "step_size": 1,
        "allocation_ratio": ratio,
    }


def fleet(nodes: int, patterns: int, seed: int = 3, busy: float = 0.0) -> dict:
    """The benchmark's fleet; ``busy`` is the share of H100 and A16 vGPU providers in use (drawn from a
    stream of their own, so that ``busy=0`` gives the same fleet as before the option)."""
    rng = random.Random(seed)
    devices = random.Random(seed + 1)

    def taken(rc: str) -> dict:
        return {rc: 1} if busy and devices.random() < busy else {}

    usage = [
        {"VCPU": rng.randint(0, 60) * (p > 0), "MEMORY_MB": rng.randint(0, 200) * 1024 * (p > 0)}
        for p in range(max(patterns, 1))
    ]
    providers = []

    def add(name, parent, inventories, traits, usages=None, **extra):
        record = {
            "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
            "name": name,
            "parent_provider_uuid": parent,
            "inventories": inventories,
            "traits": traits,
            "aggregates": [],
            "usages": usages or {},
            **extra,
        }
        providers.append(record)
        return record["uuid"]

    for n in range(nodes):
        model = n % 4
        inventories = {"VCPU": _inv(64, 4.0), "MEMORY_MB": _inv(524288, 1.0, 512), "DISK_GB": _inv(2000)}
        if n % 4 == 3:
            inventories["PCPU"] = _inv(48)
        root = add(
            f"cn{n:05d}",
            None,
            inventories,
            ["COMPUTE_NODE", "OWNER_NOVA", "HW_CPU_X86_AVX2"],
            usage[rng.randrange(len(usage))] if patterns else None,
        )
        if model == 0:
            for g in range(8):
                add(
                    f"cn{n:05d}_0000:{0x18 + g:02X}:00.0",
                    root,
                    {"CUSTOM_NVIDIA_H100": _inv(1)},
                    ["OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE", "CUSTOM_GPU_NVLINK"],
                    taken("CUSTOM_NVIDIA_H100"),
                )
        elif model == 1:
            for v in range(16):
                add(
                    f"cn{n:05d}_pci_0000_84_00_{v}",
                    root,
                    {"CUSTOM_VGPU_A16_4Q": _inv(1)},
                    ["OWNER_NOVA"],
                    taken("CUSTOM_VGPU_A16_4Q"),
                )
        elif model == 2:
            add(
                f"cn{n:05d}_0000:3B:00.0",
                root,
                {"CUSTOM_PCI_15B3_101E": _inv(8)},
                ["OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE"],
            )
    return {"resource_providers": providers}


def flavors(count: int) -> list[dict]:
    shapes = [
        {},
        {"hw:cpu_policy": "dedicated"},
        {"pci_passthrough:alias": "h100:1"},
        {"pci_passthrough:alias": "h100:2"},
        {"pci_passthrough:alias": "h100:4"},
        {"pci_passthrough:alias": "h100:9"},
        {"resources:CUSTOM_VGPU_A16_4Q": "1"},
        {"pci_passthrough:alias": "vf:2"},
        {"pci_passthrough:alias": "h100:1", "trait:CUSTOM_GPU_NVLINK": "required"},
        {"trait:CUSTOM_GPU_NVLNK": "required"},
    ]
    sizes = [(2, 4096, 20), (8, 32768, 40), (16, 131072, 100), (32, 262144, 200), (64, 600000, 500)]
    found = []
    for n in range(count):
        vcpus, ram, disk = sizes[n % len(sizes)]
        found.append(
            {"name": f"flavor{n:02d}", "vcpus": vcpus, "ram": ram, "disk": disk, "extra_specs": shapes[n % len(shapes)]}
        )
    return found


def run_once(nodes: int, count: int, patterns: int, busy: float = 0.0) -> tuple[float, float, list[dict]]:
    """Wall and CPU seconds of one full answer (fleet generation excluded), and the reports."""
    snapshot = fleet(nodes, patterns, busy=busy)
    wanted = flavors(count)
    start, cpu = time.perf_counter(), time.process_time()
    reports = flavor_fit(wanted, snapshot, pci_aliases=ALIASES, pci_in_placement=True)
    return time.perf_counter() - start, time.process_time() - cpu, reports


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--flavors", type=int, default=50)
    parser.add_argument("--usage-patterns", type=int, default=8)
    parser.add_argument("--busy-devices", type=float, default=0.0, help="share of H100 and vGPU providers in use")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rss-only", action="store_true")
    args = parser.parse_args()
    if args.rss_only:
        _seconds, _cpu, reports = run_once(args.nodes, args.flavors, args.usage_patterns, args.busy_devices)
        print(json.dumps({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
        return 0
    times, cpus = [], []
    for _run in range(args.repeat):
        reports = None  # the previous run's reports are not kept while the next one runs
        seconds, cpu, reports = run_once(args.nodes, args.flavors, args.usage_patterns, args.busy_devices)
        times.append(seconds)
        cpus.append(cpu)
    providers = len(fleet(args.nodes, args.usage_patterns, busy=args.busy_devices)["resource_providers"])
    outcomes = {}
    for report in reports:
        outcomes[report["outcome"]] = outcomes.get(report["outcome"], 0) + 1
    instances = sum(r["fleet_max_instances"] for r in reports)
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--rss-only",
            "--nodes",
            str(args.nodes),
            "--flavors",
            str(args.flavors),
            "--usage-patterns",
            str(args.usage_patterns),
            "--busy-devices",
            str(args.busy_devices),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rss = json.loads(done.stdout)["rss_mb"]
    print(
        "| nodes | providers | flavors | usage patterns | outcomes | instances counted | time (median) "
        "| CPU (median) | peak RSS |"
    )
    print("|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    print(
        f"| {args.nodes} | {providers} | {args.flavors} | {args.usage_patterns} | "
        f"{', '.join(f'{k} {v}' for k, v in sorted(outcomes.items()))} | {instances} | "
        f"{statistics.median(times):.2f} s | {statistics.median(cpus):.2f} s | {rss:.0f} MB |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
