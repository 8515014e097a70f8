"""Nova 34's own NUMA claims, instance after instance, on one host (runs in the nova venv).

JSON cases on stdin, JSON results on stdout (``nova_venv.serve``). A case::

    {"cells": [{"id", "pcpus", "vcpus", "memory_mb"}], "flavor": {"vcpus", "ram", "extra_specs"},
     "count": n, "ratios": [cpu_allocation_ratio, ram_allocation_ratio] or null}

The host's ``NUMATopology`` has those cells (dedicated and shared CPUs numbered apart, memory in 4 KiB
pages, one thread per core); the instance topology is Nova's ``numa_get_constraints`` of the flavor. Each
of ``count`` instances is fitted by ``numa_fit_instance_to_host`` (with ``NUMATopologyLimits`` from the
ratios when given, as NUMATopologyFilter passes them) and, when it fits, added to the host by
``numa_usage_from_instance_numa``. The result is ``{"cells": [host cell ids of each instance, or null]}``.
"""

from __future__ import annotations

import os
import sys
import warnings

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.support.nova_venv import serve  # noqa: E402


def _host(cells: list[dict]):
    from nova import objects

    numa_cells, cpu = [], 0
    for cell in cells:
        pcpuset = set(range(cpu, cpu + cell["pcpus"]))
        cpu += cell["pcpus"]
        cpuset = set(range(cpu, cpu + cell["vcpus"]))
        cpu += cell["vcpus"]
        numa_cells.append(
            objects.NUMACell(
                id=cell["id"],
                cpuset=cpuset,
                pcpuset=pcpuset,
                memory=cell["memory_mb"],
                cpu_usage=0,
                memory_usage=0,
                pinned_cpus=set(),
                siblings=[{c} for c in sorted(pcpuset | cpuset)],
                mempages=[objects.NUMAPagesTopology(size_kb=4, total=cell["memory_mb"] * 256, used=0, reserved=0)],
                network_metadata=objects.NetworkMetadata(physnets=set(), tunneled=False),
                socket=0,
            )
        )
    return objects.NUMATopology(cells=numa_cells)


def run_case(case: dict) -> dict:
    from nova import objects
    from nova.virt import hardware

    objects.register_all()
    host = _host(case["cells"])
    spec = case["flavor"]
    flavor = objects.Flavor(vcpus=spec["vcpus"], memory_mb=spec["ram"], extra_specs=dict(spec.get("extra_specs") or {}))
    wanted = hardware.numa_get_constraints(flavor, objects.ImageMeta.from_dict({}))
    limits = None
    if case.get("ratios"):
        cpu_ratio, ram_ratio = case["ratios"]
        limits = objects.NUMATopologyLimits(cpu_allocation_ratio=cpu_ratio, ram_allocation_ratio=ram_ratio)
    chosen = []
    for _instance in range(case["count"]):
        fitted = hardware.numa_fit_instance_to_host(host, wanted.obj_clone(), None, limits=limits)
        if fitted is None:
            chosen.append(None)
            continue
        chosen.append([cell.id for cell in fitted.cells])
        host = hardware.numa_usage_from_instance_numa(host, fitted)
    return {"cells": chosen}


if __name__ == "__main__":
    sys.exit(serve(lambda cases: [run_case(case) for case in cases]))
