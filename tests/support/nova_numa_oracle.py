"""Nova 34's own NUMA claims, instance after instance, on one host (runs in the nova venv).

JSON cases on stdin, JSON results on stdout (``nova_venv.serve``). A case::

    {"cells": [{"id", "pcpus", "vcpus", "memory_mb", "hugepages"?, "cores"?, "threads_per_core"?}],
     "flavor": {"vcpus", "ram", "extra_specs"}, "image": {properties}?,
     "count": n, "ratios": [cpu_allocation_ratio, ram_allocation_ratio] or null}

The host's ``NUMATopology`` has those cells (dedicated and shared CPUs numbered apart; memory in 4 KiB
pages less the huge pages, ``hugepages`` ``{size in KiB: pages}``, as libvirt reports them; thread
siblings: one core per entry of ``cores`` holding that many dedicated CPUs, then the shared CPUs in cores
of ``threads_per_core`` threads, one thread per core without ``cores``); the instance topology is Nova's
``numa_get_constraints`` of the flavor and image. Each
of ``count`` instances is fitted by ``numa_fit_instance_to_host`` (with ``NUMATopologyLimits`` from the
ratios when given, as NUMATopologyFilter passes them) and, when it fits, added to the host by
``numa_usage_from_instance_numa``. The result is ``{"cells": [host cell ids of each instance, or null],
"pages": [the page size (KiB) of each of its cells, null for small pages without hw:mem_page_size],
"state": [after each instance placed, per host cell: [pinned CPUs, {page size: pages used}]]}`` (counts
only: which thread of a core Nova pins depends on the order of a set).
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
        siblings = []
        for threads in cell.get("cores") or [1] * cell["pcpus"]:
            siblings.append(set(range(cpu, cpu + threads)))
            cpu += threads
        assert cpu == max(pcpuset, default=cpu - 1) + 1, "cores must hold the cell's dedicated CPUs"
        cpuset = set(range(cpu, cpu + cell["vcpus"]))
        per_core = cell.get("threads_per_core") or 1
        for first in range(cpu, cpu + cell["vcpus"], per_core):
            siblings.append(set(range(first, min(first + per_core, cpu + cell["vcpus"]))))
        cpu += cell["vcpus"]
        assert max(map(len, siblings), default=1) == per_core, "threads_per_core must be the widest core"
        huge = {int(size): count for size, count in (cell.get("hugepages") or {}).items()}
        small = (cell["memory_mb"] * 1024 - sum(size * count for size, count in huge.items())) // 4
        pages = [objects.NUMAPagesTopology(size_kb=4, total=small, used=0, reserved=0)]
        pages += [objects.NUMAPagesTopology(size_kb=s, total=c, used=0, reserved=0) for s, c in sorted(huge.items())]
        numa_cells.append(
            objects.NUMACell(
                id=cell["id"],
                cpuset=cpuset,
                pcpuset=pcpuset,
                memory=cell["memory_mb"],
                cpu_usage=0,
                memory_usage=0,
                pinned_cpus=set(),
                siblings=siblings,
                mempages=pages,
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
    image = objects.ImageMeta.from_dict({"properties": dict(case.get("image") or {})})
    wanted = hardware.numa_get_constraints(flavor, image)
    limits = None
    if case.get("ratios"):
        cpu_ratio, ram_ratio = case["ratios"]
        limits = objects.NUMATopologyLimits(cpu_allocation_ratio=cpu_ratio, ram_allocation_ratio=ram_ratio)
    chosen, pages, state = [], [], []
    for _instance in range(case["count"]):
        fitted = hardware.numa_fit_instance_to_host(host, wanted.obj_clone(), None, limits=limits)
        if fitted is None:
            chosen.append(None)
            pages.append(None)
            continue
        chosen.append([cell.id for cell in fitted.cells])
        pages.append([cell.pagesize if "pagesize" in cell and cell.pagesize else None for cell in fitted.cells])
        host = hardware.numa_usage_from_instance_numa(host, fitted)
        state.append([[len(cell.pinned_cpus), {str(p.size_kb): p.used for p in cell.mempages}] for cell in host.cells])
    return {"cells": chosen, "pages": pages, "state": state}


if __name__ == "__main__":
    sys.exit(serve(lambda cases: [run_case(case) for case in cases]))
