# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NUMA cells consumed instance by instance, as Nova's claim does (``numa_fit_instance_to_host`` and
``numa_usage_from_instance_numa``).

A host's cells are the snapshot record's ``numa_cells`` (``{id, pcpus, vcpus, memory_mb}``: dedicated CPUs,
shared CPUs and memory of each cell, empty in the snapshot; optionally ``hugepages``, ``{page size in KiB:
pages}``, and ``cores`` with ``threads_per_core``, the dedicated CPUs of each physical core and the most
threads a core of the cell has) with what the plan placed there. An instance's cells are ``nova_filters``'
model of Nova's ``numa_get_constraints`` (``{pcpus, cpus, memory_mb}`` per guest node).

Memory pages: a cell's pages are its huge pages of each size and its small (4 KiB) pages, which are the
cell's memory less its huge pages (as libvirt reports them to nova-compute). The page size of a guest node
(``hw:mem_page_size``) is chosen per host cell as Nova does: ``small`` the small pages, ``large`` the
largest huge page size whose free pages hold the node's memory in whole pages, ``any`` the same over every
size (small pages last), a size those pages alone. Without a page size the small pages hold the node: their
total (over-subscription allowed) for shared CPUs, their free pages for pinned CPUs. The size chosen for a
guest node the first time it fits a cell's pages in a claim is the size it asks of every later cell of the
same claim (Nova keeps it on the instance's cell). Pages of that size are used in the chosen cell.

Pinned CPUs: each cell's dedicated CPUs form cores of thread siblings (one thread per core without
``cores``). A guest node's pinned CPUs are packed onto the free threads as Nova's
``_pack_instance_onto_cores`` does, per ``hw:cpu_thread_policy``: ``prefer`` (the default) and ``require``
try, from the most threads per core down, the cores with that many free threads, taking that many threads
of each in order; ``require`` only with two or more threads per core and on cells whose cores have
siblings; ``prefer`` falls back to any free threads in order. ``isolate`` takes one thread of each fully
free core and keeps the rest of the core from others, on a cell without thread siblings only (Nova refuses
it on hosts with SMT that report dedicated CPUs apart from shared ones). An isolated emulator thread takes
one more free thread (after the guest's) of the first guest node's cell.

``claim`` chooses the host cells as Nova 34 does with ``packing_host_numa_cells_allocation_strategy`` off
(its default): with more host cells than guest nodes the cells are sorted by free memory (most first),
then by free dedicated CPUs (most first) for a pinned guest or by shared CPUs in use (fewest first) for
another, then by the PCI devices in the cell (fewest first without PCI requests, most first with them);
the permutations of the sorted cells are tried in order and the first whose every cell fits wins. A cell
fits a guest node when its pages hold the node's memory (above); the cell has as many shared CPUs as the
node asks; for pinned CPUs (``dedicated`` or ``mixed``) the cell has as many dedicated CPUs, free ones
(plus one for an isolated emulator thread on the first node), and the packing above succeeds; and, for
shared CPUs when the scheduler's limits apply (``ratios``: NUMATopologyFilter sets them from the
allocation ratios), the shared CPUs and memory in use stay within the cell's times the ratio.
``consume`` adds the instance to the chosen cells. Devices' NUMA affinity is not part of the choice
(``nova_filters`` judges it on the empty cells).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget

SMALL_PAGE_KB = 4
PAGE_SIZE_WORDS = ("small", "large", "any")
THREAD_POLICIES = ("prefer", "isolate", "require")


_ANY_CORE = -1  # the key of a pinning on a cell whose cores have one thread each


class Fit(list):
    """The indexes (into the host's cells) of the cells the guest nodes get, in the nodes' order, with
    what each node takes there: ``uses[n] = (memory_mb, shared CPUs, page size in KiB, {core index:
    threads})``."""

    def __init__(self, chosen: list[int], uses: list[tuple]):
        super().__init__(chosen)
        self.uses = uses


def host_cells(cells: list[Mapping]) -> list[dict]:
    """The record's cells with nothing used yet."""
    out = []
    for cell in cells:
        memory_mb = int(cell.get("memory_mb") or 0)
        pcpus = int(cell.get("pcpus") or 0)
        huge = {int(size): int(count) for size, count in (cell.get("hugepages") or {}).items() if int(size) > 4}
        small = max(0, memory_mb * 1024 - sum(size * count for size, count in huge.items())) // SMALL_PAGE_KB
        pages = {SMALL_PAGE_KB: [small, 0], **{size: [count, 0] for size, count in sorted(huge.items())}}
        cores = cell.get("cores")
        per_core = int(cell.get("threads_per_core") or 1) if cores is not None else 1
        out.append(
            {
                "id": cell["id"],
                "pcpus": pcpus,
                "vcpus": int(cell.get("vcpus") or 0),
                "memory_mb": memory_mb,
                "pcpus_used": 0,
                "vcpus_used": 0,
                "memory_used": 0,
                "pages": pages,  # size in KiB: [total, used]
                "threads_per_core": per_core,
                # free threads of each core; None when every core has one thread (then counts suffice)
                "cores": [int(c) for c in cores] if per_core > 1 else None,
            }
        )
    return out


def _page_size(cell: dict, memory_mb: int, pinned: bool, asked) -> int | None:
    """The page size (KiB) the cell gives the node's memory, or None."""
    pages = cell["pages"]
    memory_kb = memory_mb * 1024

    def holds(size: int, use_free: bool) -> bool:
        total, used = pages[size]
        return memory_kb <= (total - used if use_free else total) * size and memory_kb % size == 0

    sizes = sorted(pages, reverse=True)
    if asked is None:
        return SMALL_PAGE_KB if holds(SMALL_PAGE_KB, pinned) else None
    if asked == "small":
        sizes = sizes[-1:]
    elif asked == "large":
        sizes = sizes[:-1]
    elif asked != "any":
        sizes = [asked] if asked in pages else []
    return next((size for size in sizes if holds(size, True)), None)


def _takes(cores: list[int], width: int, count: int) -> dict[int, int] | None:
    """Nova's pinning of ``count`` CPUs onto the cores with ``width`` free threads or more (in order),
    ``width`` threads of each: {core index: threads}, or None when they are too few."""
    usable = [i for i, free in enumerate(cores) if free >= width]
    if width * len(usable) < count:
        return None
    taken: dict[int, int] = {}
    for index in usable:
        if count <= 0:
            break
        taken[index] = min(width, count)
        count -= width
    return taken


def _reserve(cores: list[int], taken: dict[int, int], whole: bool) -> int | None:
    """The core of the isolated emulator thread: the first with a free thread left (with ``whole``, the
    first the guest does not use), or None."""
    for index, free in enumerate(cores):
        if whole and index in taken:
            continue
        if free - (0 if whole else taken.get(index, 0)) > 0:
            return index
    return None


def pack(cell: dict, count: int, reserved: int, policy: str | None) -> dict[int, int] | None:
    """The threads of each core (index: count) ``count`` pinned CPUs and ``reserved`` emulator CPUs take
    in the cell under the thread ``policy`` (the siblings an ``isolate`` guest keeps from others included),
    or None when Nova's packing fails."""
    cores, per_core = cell["cores"], cell["threads_per_core"]
    if cores is None:
        # one thread per core: every core is alike, and the caller saw to it that enough are free
        if policy == "require" or (not count and (policy == "isolate" or reserved)):
            return None
        return {_ANY_CORE: count + reserved}
    widest = max(cores, default=0)
    if policy == "isolate":
        if widest < per_core or per_core != 1:
            return None
        taken = _takes(cores, per_core, count)
        if not taken:
            return None
        if reserved:
            extra = _reserve(cores, taken, True)
            if extra is None:
                return None
            taken[extra] = per_core
        return {index: cores[index] for index in taken}  # whole cores
    if policy == "require" and per_core <= 1:
        return None
    taken = extra = None
    width = 1
    for width in range(widest, 0, -1):
        if policy == "require" and width <= 1:
            continue
        taken = _takes(cores, width, count)
        extra = _reserve(cores, taken, False) if taken and reserved else None
        if taken is None or (reserved and extra is None):
            continue
        break
    if policy != "require" and not taken:
        # every free thread as a core of its own, in order
        singles = [i for i, free in enumerate(cores) for _thread in range(free)]
        if width * len(singles) < count:
            return None
        taken = {}
        for index in singles[:count]:
            taken[index] = taken.get(index, 0) + 1
        extra = _reserve(cores, taken, False) if taken and reserved else None
    if taken is None or (reserved and extra is None):
        return None
    if reserved:
        taken[extra] = taken.get(extra, 0) + 1
    return taken


def _fits(cell: dict, want: Mapping, pinned: bool, mixed: bool, reserved: int, ratios, pagesize, policy):
    """(page size, core takes) when the cell fits the guest node, else None. ``pagesize`` is the page
    size asked (a word, a size or None); the chosen size is returned even when the CPUs do not fit."""
    memory = want["memory_mb"]
    size = _page_size(cell, memory, pinned, pagesize)
    if size is None:
        return None, None
    shared = want["cpus"]
    if shared > cell["vcpus"]:
        return size, None
    takes: dict[int, int] = {}
    if pinned:
        need = want["pcpus"] + reserved
        if need > cell["pcpus"] or need > cell["pcpus"] - cell["pcpus_used"]:
            return size, None
        takes = pack(cell, want["pcpus"], reserved, policy)
        if takes is None:
            return size, None
    if (mixed or not pinned) and ratios is not None:
        cpu_ratio, ram_ratio = ratios
        if cell["vcpus_used"] + shared > cell["vcpus"] * cpu_ratio:
            return size, None
        if cell["memory_used"] + memory > cell["memory_mb"] * ram_ratio:
            return size, None
    return size, takes


def claim(
    cells: list[dict],
    wanted: list[Mapping],
    *,
    pinned: bool,
    mixed: bool = False,
    emulator: int = 0,
    ratios: tuple[float, float] | None = None,
    devices: Mapping[int, int] | None = None,
    pci_requested: bool = False,
    pagesize: str | int | None = None,
    thread_policy: str | None = None,
    budget: Budget | None = None,
) -> Fit | None:
    """The host cells Nova's claim gives the guest nodes (a ``Fit``), or None when no permutation fits.
    ``devices``: PCI devices per cell id (the host's pools); ``pagesize``: ``hw:mem_page_size`` (a word of
    ``PAGE_SIZE_WORDS`` or a size in KiB); ``thread_policy``: ``hw:cpu_thread_policy``; ``mixed``: the
    ``mixed`` CPU policy (pinned and shared CPUs: the scheduler's limits apply to its every node)."""
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

    asked = [pagesize] * len(wanted)  # a node's page size, once chosen, is what it asks of later cells
    fit: dict[tuple[int, int], tuple] = {}
    for permutation in itertools.permutations(order, len(wanted)):
        budget.spend(1, describe)
        uses = []
        for node, (index, want) in enumerate(zip(permutation, wanted, strict=True)):
            key = (index, node)
            found = fit.get(key)
            if found is None:
                size, takes = _fits(
                    cells[index], want, pinned, mixed, emulator if node == 0 else 0, ratios, asked[node], thread_policy
                )
                if size is not None and asked[node] is not None:
                    asked[node] = size
                found = fit[key] = (size, takes) if takes is not None else ()
            if not found:
                break
            uses.append((want["memory_mb"], want["cpus"], found[0], found[1]))
        else:
            return Fit(list(permutation), uses)
    return None


def consume(cells: list[dict], chosen: Fit) -> None:
    """Add the instance to the chosen cells (what ``numa_usage_from_instance_numa`` records)."""
    for index, (memory_mb, shared, size, takes) in zip(chosen, chosen.uses, strict=True):
        cell = cells[index]
        cell["memory_used"] += memory_mb
        cell["vcpus_used"] += shared
        cell["pages"][size][1] += memory_mb * 1024 // size
        for core, threads in takes.items():
            if core != _ANY_CORE:
                cell["cores"][core] -= threads
            cell["pcpus_used"] += threads
