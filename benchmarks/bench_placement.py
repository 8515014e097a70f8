"""Placement registration benchmark: API calls and wall time to register, then re-converge, a fleet.

Run: ``make benchmark-placement`` (or ``.venv/bin/python benchmarks/bench_placement.py [--nodes N]``).

It starts the real Placement (SQLite, single-threaded) and declares N compute nodes with 2 child PCI
providers each, as nova-compute reports them. The large run calls the module's backend
(``_placement_provider.converge``) in this process, as the module does in one task; a smaller sample
runs the same declarations through ``ansible-playbook`` and the ``accel.openstack.placement_provider``
module. Requests are counted twice: by the client, and independently by a response hook on the HTTP
session underneath keystoneauth.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))
from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import connect  # noqa: E402
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import (  # noqa: E402
    PlacementClient,
)
from ansible_collections.accel.openstack.plugins.module_utils._placement.provider import (  # noqa: E402
    ProviderSpec,
    converge,
)
from tests.support.ansible_runner import run_playbook, task_results  # noqa: E402
from tests.support.placement_server import PlacementServer  # noqa: E402


def declarations(nodes: int, prefix: str = "bench") -> list[dict]:
    out = []
    for n in range(nodes):
        host = f"{prefix}-{n:04d}"
        out.append(
            {
                "name": host,
                "inventories": {
                    "VCPU": {"total": 128, "allocation_ratio": 4.0},
                    "MEMORY_MB": {"total": 1031168, "reserved": 512},
                    "DISK_GB": {"total": 1800},
                },
                "traits": ["COMPUTE_NODE", "OWNER_NOVA"],
            }
        )
        for address in ("0000:41:00.0", "0000:C1:00.0"):
            out.append(
                {
                    "name": f"{host}_{address}",
                    "parent": host,
                    "inventories": {"CUSTOM_NVIDIA_H100": {"total": 1, "max_unit": 1}},
                    "traits": ["COMPUTE_MANAGED_PCI_DEVICE", "CUSTOM_GPU_NVLINK", "OWNER_NOVA"],
                }
            )
    return out


class Counted:
    """A client plus an independent request counter on the HTTP session below keystoneauth."""

    def __init__(self, auth: dict):
        conn = connect(auth)
        self.client = PlacementClient(conn.placement)
        self.hooked = 0
        conn.session.session.hooks["response"].append(self._count)

    def _count(self, response, *args, **kwargs):
        self.hooked += 1


def measure(auth: dict, specs: list[dict]) -> dict:
    counted = Counted(auth)
    start = time.perf_counter()
    result = converge(counted.client, [ProviderSpec.from_dict(s) for s in specs], simulate_compute=True)
    wall = time.perf_counter() - start
    calls = dict(counted.client.calls)
    total = sum(calls.values())
    assert total == counted.hooked, f"client counted {total} requests, the HTTP session saw {counted.hooked}"
    return {"changed": result["changed"], "calls": calls, "total": total, "wall": wall, "providers": len(specs)}


def through_ansible(auth: dict, specs: list[dict]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        playbook = os.path.join(tmp, "register.yml")
        with open(playbook, "w") as handle:
            handle.write(
                "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
                "    - name: Register\n      accel.openstack.placement_provider:\n"
                "        providers: '{{ bench_providers }}'\n        simulate_compute: true\n"
                "        auth_type: '{{ bench_auth.auth_type }}'\n"
                "        auth: '{{ bench_auth.auth }}'\n"
            )
        start = time.perf_counter()
        report = run_playbook(
            playbook,
            "localhost,",
            {
                "bench_providers": specs,
                "bench_auth": auth,
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
            },
        )
        wall = time.perf_counter() - start
    assert report["rc"] == 0, json.dumps(report)[-3000:]
    (result,) = task_results(report, "Register").values()
    calls = result["api_calls"]
    return {"changed": result["changed"], "calls": calls, "total": sum(calls.values()), "wall": wall,
            "providers": len(specs)}  # fmt: skip


def row(label: str, m: dict) -> str:
    per = m["total"] / m["providers"]
    calls = ", ".join(f"{k} {v}" for k, v in sorted(m["calls"].items()))
    return f"| {label} | {m['providers']} | {m['total']} ({calls}) | {per:.2f} | {m['wall']:.1f} s | {m['changed']} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000, help="compute nodes (each gets 2 children)")
    parser.add_argument("--ansible-nodes", type=int, default=50, help="compute nodes in the ansible sample")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    rows, figures = [], {}
    with PlacementServer() as server:
        specs = declarations(args.nodes)
        figures["register"] = measure(server.auth, specs)
        figures["reconverge"] = measure(server.auth, specs)
        sample = declarations(args.ansible_nodes, prefix="play")
        figures["ansible_register"] = through_ansible(server.auth, sample)
        figures["ansible_reconverge"] = through_ansible(server.auth, sample)
        single = declarations(1, prefix="single")
        figures["single_register"] = measure(server.auth, [single[0]])
        figures["single_child_register"] = measure(server.auth, [single[1]])
        figures["single_reconverge"] = measure(server.auth, [single[1]])
    assert not figures["reconverge"]["changed"] and not figures["ansible_reconverge"]["changed"]
    rows = [
        row(f"register {args.nodes} nodes x 3 providers (backend, one call)", figures["register"]),
        row("re-converge, nothing to change (backend)", figures["reconverge"]),
        row(f"register {args.ansible_nodes} nodes x 3 (ansible-playbook, one task)", figures["ansible_register"]),
        row("re-converge (ansible-playbook)", figures["ansible_reconverge"]),
        row("one new compute node (name lookup, no bulk list)", figures["single_register"]),
        row("one new child under an existing parent", figures["single_child_register"]),
        row("one unchanged child (per-provider reads)", figures["single_reconverge"]),
    ]
    print("| run | providers | API calls | calls per provider | wall time | changed |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
