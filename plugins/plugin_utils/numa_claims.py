# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NUMA cells consumed instance by instance, as Nova's claim does (``numa_fit_instance_to_host`` and
``numa_usage_from_instance_numa``).

A host's cells are the snapshot record's ``numa_cells`` (``{id, pcpus, vcpus, memory_mb}``: dedicated CPUs,
shared CPUs and memory of each cell, empty in the snapshot) with what the plan placed there
(``pcpus_used``, ``vcpus_used``, ``memory_used``). An instance's cells are ``nova_filters``' model of
Nova's ``numa_get_constraints`` (``{pcpus, cpus, memory_mb}`` per guest node).

``claim`` chooses the host cells as Nova 34 does with small pages (no ``hw:mem_page_size``) and
``packing_host_numa_cells_allocation_strategy`` off (its default): with more host cells than guest nodes
the cells are sorted by free memory (most first), then by free dedicated CPUs (most first) for a pinned
guest or by shared CPUs in use (fewest first) for another, then by the PCI devices in the cell (fewest
first without PCI requests, most first with them); the permutations of the sorted cells are tried in
order and the first whose every cell fits wins. A cell fits a guest node when: for pinned CPUs
(``dedicated`` or ``mixed``) its free memory holds the node's memory (no over-subscription) and its free
dedicated CPUs hold the node's pinned CPUs (plus one for an isolated emulator thread on the first node);
otherwise its memory holds the node's memory; for shared CPUs it has at least as many shared CPUs as the
node asks and, when the scheduler's limits apply (``ratios``: NUMATopologyFilter sets them from the
allocation ratios), the shared CPUs and memory in use stay within the cell's times the ratio.
``consume`` adds the instance to the chosen cells. Devices' NUMA affinity is not part of the choice
(``nova_filters`` judges it on the empty cells).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget


def host_cells(cells: list[Mapping]) -> list[dict]:
    """The record's cells with nothing used yet."""
    return [
        {
            "id": cell["id"],
            "pcpus": int(cell.get("pcpus") or 0),
            "vcpus": int(cell.get("vcpus") or 0),
            "memory_mb": int(cell.get("memory_mb") or 0),
            "pcpus_used": 0,
            "vcpus_used": 0,
            "memory_used": 0,
        }
        for cell in cells
    ]


def _fits(cell: dict, want: Mapping, pinned: bool, reserved: int, ratios: tuple[float, float] | None) -> bool:
    memory = want["memory_mb"]
    if pinned:
        if cell["memory_mb"] - cell["memory_used"] < memory:
            return False
    elif cell["memory_mb"] < memory:
        return False
    shared = want["cpus"]
    if (shared or not pinned) and shared > cell["vcpus"]:
        return False
    if pinned:
        need = want["pcpus"] + reserved
        if need > cell["pcpus"] or need > cell["pcpus"] - cell["pcpus_used"]:
            return False
    if (shared or not pinned) and ratios is not None:
        cpu_ratio, ram_ratio = ratios
        if cell["vcpus_used"] + shared > cell["vcpus"] * cpu_ratio:
            return False
        if cell["memory_used"] + memory > cell["memory_mb"] * ram_ratio:
            return False
    return True


def claim(
    cells: list[dict],
    wanted: list[Mapping],
    *,
    pinned: bool,
    emulator: int = 0,
    ratios: tuple[float, float] | None = None,
    devices: Mapping[int, int] | None = None,
    pci_requested: bool = False,
    budget: Budget | None = None,
) -> list[int] | None:
    """The indexes (into ``cells``) of the host cells Nova's claim gives the guest nodes, in the nodes'
    order; None when no permutation fits. ``devices``: PCI devices per cell id (the host's pools)."""
    if len(cells) < len(wanted):
        return None
    order = list(range(len(cells)))
    if len(cells) > len(wanted):
        order.sort(key=lambda i: cells[i]["memory_mb"] - cells[i]["memory_used"], reverse=True)
        if pinned:
            order.sort(key=lambda i: cells[i]["pcpus"] - cells[i]["pcpus_used"], reverse=True)
        else:
            order.sort(key=lambda i: cells[i]["vcpus_used"])
        if devices is not None:
            order.sort(key=lambda i: devices.get(cells[i]["id"], 0), reverse=pci_requested)
    budget = budget or Budget()

    def describe() -> tuple[str, int]:
        return (f"{len(wanted)} guest NUMA node(s) over {len(cells)} host NUMA cell(s)", len(cells) ** len(wanted))

    fit: dict[tuple[int, int], bool] = {}
    for permutation in itertools.permutations(order, len(wanted)):
        budget.spend(1, describe)
        for node, (index, want) in enumerate(zip(permutation, wanted, strict=True)):
            key = (index, node)
            found = fit.get(key)
            if found is None:
                found = fit[key] = _fits(cells[index], want, pinned, emulator if node == 0 else 0, ratios)
            if not found:
                break
        else:
            return list(permutation)
    return None


def consume(cells: list[dict], chosen: list[int], wanted: list[Mapping], pinned: bool, emulator: int = 0) -> None:
    """Add the instance to the chosen cells (what ``numa_usage_from_instance_numa`` records)."""
    for node, (index, want) in enumerate(zip(chosen, wanted, strict=True)):
        cell = cells[index]
        cell["memory_used"] += want["memory_mb"]
        cell["vcpus_used"] += want["cpus"]
        if pinned:
            cell["pcpus_used"] += want["pcpus"] + (emulator if node == 0 else 0)
