"""The audit at cloud scale: 1,000 hosts' facts and a 10,000-provider Placement snapshot to a report.

Usage: python benchmarks/bench_audit.py [--hosts 1000] [--flavors 20] [--repeat 3]

Facts come from the discovery of real hardware profiles (fake roots, read once per profile and reused
for every host of that model): 8-GPU passthrough hosts (hgx-h100), A16 vGPU hosts (vgpu-a16, 16 vGPU
children each) and T4 hosts (configured-t4), in the ratio 4:4:2. The Nova config of every host is what
the device policy renders; the snapshot is what nova-compute reports for them (``nova_fleet``), padded
with compute nodes without devices up to 10,000 providers (``--providers``), and ten hosts carry a
planted defect each, so every check has work. The flavor catalog mixes passthrough, vGPU and general
flavors. Times are the medians of --repeat runs of ``audit_cloud`` in this process, after the facts are
gathered (the inputs are built once): wall time, and the CPU time of the process (what the audit costs
when the machine is shared); the load average is printed beside them. Peak RSS is the process's. Prints
one Markdown row.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import os
import resource
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
importlib.import_module("conftest")  # makes ansible_collections.accel.openstack importable
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover  # noqa: E402
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import Options, render_fleet  # noqa: E402
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import host_inputs  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import nova_fleet  # noqa: E402
from tests.support.fake_sysfs import build_root  # noqa: E402

POLICY = [
    {"name": "h100", "vendor_id": "10de", "product_id": "2330", "mode": "passthrough",
     "resource_class": "CUSTOM_NVIDIA_H100"},
    {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough",
     "resource_class": "CUSTOM_NVIDIA_T4"},
    {"name": "a16-4q", "vendor_id": "10de", "product_id": "25b6", "mode": "vgpu", "mdev_type": "nvidia-735",
     "mdev_class": "CUSTOM_VGPU_A16_4Q"},
]  # fmt: skip
MODELS = [("hgx-h100", 4), ("vgpu-a16", 4), ("configured-t4", 2)]


def inputs(hosts: int, providers: int, flavors: int) -> dict:
    with tempfile.TemporaryDirectory() as top:
        model_facts = {m: discover(build_root(m, os.path.join(top, m)))[0] for m, _ in MODELS}
    cycle = [m for m, n in MODELS for _ in range(n)]
    facts = {f"node-{i:05d}": model_facts[cycle[i % len(cycle)]] for i in range(hosts)}
    # One rendering per model (the config is the same on every host of a model), shared by its hosts.
    rendering = render_fleet(
        host_inputs([{"name": m, "facts": f} for m, f in model_facts.items()]),
        POLICY,
        Options(report_in_placement=True, pci_in_placement=True),
    )
    deployed = {h: {"compute": rendering.compute[cycle[i % len(cycle)]]} for i, h in enumerate(sorted(facts))}
    deployed["control"] = {"api": rendering.api, "scheduler": rendering.scheduler, "conductor": rendering.conductor}
    snapshot = nova_fleet(facts, POLICY, report_in_placement=True, disk_gb=1000)
    for record in snapshot["resource_providers"]:
        for key in ("numa_cells", "pci_pools", "disabled"):
            record.pop(key, None)
    pad = providers - len(snapshot["resource_providers"])
    for i in range(max(pad, 0)):
        snapshot["resource_providers"].append(
            {
                "uuid": f"00000000-0000-4000-8000-{i:012d}",
                "name": f"cpu-{i:05d}",
                "parent_provider_uuid": None,
                "inventories": {"VCPU": {"total": 64}, "MEMORY_MB": {"total": 262144}},
                "traits": ["COMPUTE_NODE", "OWNER_NOVA"],
                "aggregates": [],
            }
        )
    # Ten planted defects: two orphaned GPUs, three wrong vGPU totals, five hosts whose T4 left vfio-pci.
    records = snapshot["resource_providers"]
    roots = {r["name"]: r for r in records if r["parent_provider_uuid"] is None}
    for n, host in enumerate(h for h in sorted(facts) if cycle[int(h[5:]) % len(cycle)] == "hgx-h100"):
        if n >= 2:
            break
        records.append(
            {"uuid": f"11111111-0000-4000-8000-{n:012d}", "name": f"{host}_0000:EE:00.0",
             "parent_provider_uuid": roots[host]["uuid"],
             "inventories": {"CUSTOM_NVIDIA_H100": {"total": 1}}, "traits": [], "aggregates": []}
        )  # fmt: skip
    vgpus = [r for r in records if "_pci_" in r["name"]][:3]
    for record in vgpus:
        for inv in record["inventories"].values():
            inv["total"] += 1
            inv["max_unit"] += 1
    t4_hosts = [h for h in sorted(facts) if cycle[int(h[5:]) % len(cycle)] == "configured-t4"][:5]
    for host in t4_hosts:
        facts[host] = copy.deepcopy(facts[host])
        for device in facts[host]["accel_pci_devices"]:
            if device["product_id"] == "1eb8":
                device["driver"] = "nvidia"
    catalog = []
    for i in range(flavors):
        kind = i % 4
        specs = [{"pci_passthrough:alias": "h100:1"}, {"resources:CUSTOM_VGPU_A16_4Q": "1"},
                 {"pci_passthrough:alias": "t4:1"}, {}][kind]  # fmt: skip
        catalog.append({"name": f"flavor-{i}", "vcpus": 4 + i, "ram": 4096, "disk": 20, "extra_specs": specs})
    return {"hosts": facts, "deployed": deployed, "fleet": snapshot, "flavors": catalog}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--providers", type=int, default=10000)
    parser.add_argument("--flavors", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = inputs(args.hosts, args.providers, args.flavors)
    times, cpu, result = [], [], None
    for _ in range(args.repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = audit_cloud(data["hosts"], data["deployed"], data["fleet"], data["flavors"], POLICY)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    codes = sorted({f["code"] for f in result["findings"] if f["severity"] != "info"})
    load = os.getloadavg()[0]
    print("| hosts | providers | flavors | findings (codes) | median wall time | median CPU time | load | peak RSS |")
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {args.hosts} | {len(data['fleet']['resource_providers'])} | {args.flavors} | "
        f"{len(result['findings'])} ({', '.join(codes)}) | {statistics.median(times):.1f} s | "
        f"{statistics.median(cpu):.1f} s | {load:.1f} | {rss:.0f} MiB |"
    )


if __name__ == "__main__":
    main()
