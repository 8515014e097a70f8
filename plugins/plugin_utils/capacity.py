# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Joint packing of a flavor mix: how much of a demand fits together, as Nova would place it.

``capacity_plan(demand, snapshot, **options)`` places a demand (``[{"flavor": FLAVOR, "count": N}]``) one
instance at a time, each as nova-scheduler places one server (docs/capacity.md gives the rule):

1. Nova's queries for the flavor (``flavor.py``) are answered from the fleet with its usage so far,
   with Placement 1.39 semantics and Nova's ``limit``, and merged as Nova merges them;
2. the hosts of the merged candidates go through the Nova filters the collection models
   (``nova_filters.py``); with ``pci_in_placement`` off the host's PCI device pools are consumed, and the
   hosts' NUMA cells are consumed by Nova's claim rule (``numa_claims.py``);
3. Nova's weighers rank the hosts (``weighers.py``: every weigher of Nova's default ``weight_classes``
   that tells hosts apart for new servers, with the multipliers of the options, the ``weigher`` preset or
   Nova's defaults, and of the hosts' aggregates), with Nova's normalisation and its stable sort; with
   ``host_subset_size`` N > 1 the host is drawn among the N best. Hosts of equal weight keep the fleet's
   order (Nova's own order among them is that of a Python set);
4. the first candidate of the merged answer on that host is allocated (the usage grows), unless
   nova-compute cannot pin the instance there (without NUMATopologyFilter): the build is refused and
   Nova's next host is tried, up to ``MAX_ATTEMPTS``.

Asking the whole fleet for each instance costs a search over every tree. Where every candidate lies in
one tree (no sharing provider) and the snapshot lists providers tree by tree, each query is answered
tree by tree instead (``_View``): a tree's answer is kept until an instance lands on it, and Nova's
``limit`` is applied over the trees in order. ``per_tree=False`` switches that off; the tests require
both paths to place every instance alike on generated fleets and demands.
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import math
import re
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of, shown
from ansible_collections.accel.openstack.plugins.plugin_utils import flavor as nova_flavor
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs, nova_filters, numa_claims
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_what_if import WhatIfError, what_if_hosts
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import (
    GENERAL_CLASSES,
    FitOptionError,
    FitOptions,
    FlavorFit,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import answer as fit_answer
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, FleetError, gc_paused
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import TooCombinatorial, allocation_candidates
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import (
    duration_words,
    fix_words,
    generation,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.weighers import (
    HOST_FIGURES,
    MULTIPLIERS,
    HostFigures,
    WeigherOptionError,
    Weighing,
    aggregate_multipliers,
    multipliers,
    raw_values,
)

ORDERS = ("as_given", "largest_first")
# settled: each instance's build is over when the next is scheduled; burst: all are still building.
ARRIVALS = ("settled", "burst")
# Bounds on what a demand may ask (each count, all counts together, hosts lost).
MAX_COUNT = 100_000
MAX_INSTANCES = 200_000
MAX_FAILURES = 1_000
# Bound on the combinations of hosts the worst case tries (each places the lost hosts' instances again).
MAX_COMBINATIONS = 5_000
# Bound on the what-if options of one plan (each places the whole demand again).
MAX_WHAT_IF = 20
# Nova's [scheduler] max_attempts default: the chosen host and its alternates an instance may be built on.
MAX_ATTEMPTS = 3
# Bound on a host's figures (instances, I/O operations, failed builds, hypervisor version, PCI pool counts).
_LARGEST_FIGURE = (1 << 63) - 1


class CapacityOptionError(AccelError):
    """A demand or option that is not usable; the message names it and the fix."""


@dataclasses.dataclass
class _Kind:
    """One flavor of the demand, translated once."""

    name: str
    flavor: Mapping
    count: int
    position: int
    req: nova_flavor.NovaRequest | None = None
    requests: list[Request] = dataclasses.field(default_factory=list)
    reason: dict | None = None
    blocked: bool = False  # Nova refuses the flavor (or cannot send its query) whatever the usage
    totals: dict[str, int] = dataclasses.field(default_factory=dict)
    asks: frozenset[str] = frozenset()
    on_hosts: dict[str, int] = dataclasses.field(default_factory=dict)  # instances the snapshot holds, per host

    def size(self) -> tuple:
        devices = sum(n for rc, n in self.totals.items() if rc not in GENERAL_CLASSES)
        cpus = self.totals.get("VCPU", 0) + self.totals.get("PCPU", 0)
        return (devices, cpus, self.totals.get("MEMORY_MB", 0), self.totals.get("DISK_GB", 0))


def _int_option(name: str, value, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise CapacityOptionError(f"{name} must be a whole number from {minimum} to {maximum}, got {shown(value)}")
    return value


def _host_figures(name: str, record: Mapping) -> dict[str, int]:
    """The compute node's figures the host record may give (``HOST_FIGURES``, 0 when absent), checked."""
    found = {}
    for key in HOST_FIGURES:
        value = record.get(key, 0)
        if value is None:
            value = 0
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _LARGEST_FIGURE:
            raise CapacityOptionError(
                f"fleet: host {name}: {key} must be a whole number from 0 to {_LARGEST_FIGURE} (the compute "
                f"node's figure; leave it out for 0), got {kind_of(value)}"
            )
        found[key] = value
    for index, pool in enumerate(record.get("pci_pools") or ()):
        count = pool.get("count") if isinstance(pool, Mapping) else None
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= _LARGEST_FIGURE:
            raise CapacityOptionError(
                f"fleet: host {name}: pci_pools entry {index} needs a count, a whole number from 0 to "
                f"{_LARGEST_FIGURE} (free devices of the pool), got {kind_of(count)}"
            )
    return found


def _demand(demand) -> list[_Kind]:
    if isinstance(demand, Mapping) or not isinstance(demand, list | tuple):
        raise CapacityOptionError(
            "the demand must be a list of {flavor: FLAVOR, count: N} entries, got " + kind_of(demand)
        )
    kinds: dict[str, _Kind] = {}
    total = 0
    for index, entry in enumerate(demand):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("flavor"), Mapping):
            raise CapacityOptionError(
                f"demand entry {index}: give {{flavor: FLAVOR, count: N}} with FLAVOR a dict as for flavor_fit "
                "(name, vcpus, ram, disk, extra_specs)"
            )
        unknown = sorted(set(entry) - {"flavor", "count"})
        if unknown:
            raise CapacityOptionError(f"demand entry {index}: unknown key(s) {', '.join(map(str, unknown))}")
        count = _int_option(f"demand entry {index} count", entry.get("count", 1), 0, MAX_COUNT)
        flavor = entry["flavor"]
        name = flavor.get("name")
        if not isinstance(name, str) or not name:
            raise CapacityOptionError(f"demand entry {index}: the flavor needs a name (a non-empty string)")
        total += count
        if total > MAX_INSTANCES:
            raise CapacityOptionError(f"the demand asks more than {MAX_INSTANCES} instances; split it")
        known = kinds.get(name)
        if known is None:
            kinds[name] = _Kind(name, flavor, count, len(kinds))
        elif dict(known.flavor) != dict(flavor):
            raise CapacityOptionError(
                f"demand entry {index}: flavor {name!r} is given twice with different definitions; "
                "give each flavor one definition (or different names)"
            )
        else:
            known.count += count
    return list(kinds.values())


def _names_known(fleet: Fleet, request: Request) -> bool:
    names = set(request.root_required | request.root_forbidden)
    for group in request.groups.values():
        if group.in_tree is not None:
            return False
        names.update(group.forbidden)
        for any_of in group.required:
            names.update(any_of)
    classes = {rc for group in request.groups.values() for rc in group.resources}
    return names <= fleet.traits and classes <= fleet.resource_classes


class _View:
    """One of Nova's queries for one flavor, answered tree by tree.

    With every candidate in one tree and the trees listed in the roots' order, the solver's answer on the
    whole fleet is each root's candidates (as its tree alone gives them) one root after another, cut at
    ``limit``. A root is in Nova's answer when fewer than ``limit`` candidates come before it. Per root
    the number of candidates (up to ``limit``) is kept until that root's usage changes.

    Usage only grows while a demand is placed, so a root's count only falls: the roots in the answer are
    kept in order with their counts (``rows``), the roots whose usage changed are counted again, and the
    scan goes on past the last root looked at only while fewer than ``limit`` candidates are found."""

    def __init__(self, plan: Plan, request: Request):
        self.plan = plan
        self.request = request
        self.limit = request.limit
        self.totals: dict[str, int] = {}
        for group in request.groups.values():
            for rc, amount in group.resources.items():
                self.totals[rc] = self.totals.get(rc, 0) + amount
        self.counts: dict[str, int] = {}
        self.reset()

    def reset(self) -> None:
        """Forget every count (the usage went back: the headroom check's end)."""
        self.counts.clear()
        self.rows: dict[str, int] = {}
        self.found = 0
        self.scanned = 0
        self.changed: set[str] = set()

    def touched(self, root: str) -> None:
        if self.counts.pop(root, None) is not None:
            self.changed.add(root)

    def count(self, root: str) -> int:
        found = self.counts.get(root)
        if found is None:
            found = self.counts[root] = self.plan.tree_answer(root, self.request, self.totals, True)["candidates"]
        return found

    def visible(self) -> dict[str, int]:
        """``{root: candidates of it within limit}`` for the roots in Nova's answer, in the roots' order."""
        rows, limit = self.rows, self.limit
        for root in self.changed:
            if root in rows:
                self.found -= rows[root]
                now = self.count(root)
                if now:
                    rows[root] = now
                    self.found += now
                else:
                    del rows[root]
        self.changed.clear()
        order = self.plan.root_order
        while (limit is None or self.found < limit) and self.scanned < len(order):
            root = order[self.scanned]
            self.scanned += 1
            now = self.count(root)
            if now:
                rows[root] = now
                self.found += now
        if limit is None or self.found <= limit:
            return rows
        window: dict[str, int] = {}
        before = 0
        for root, count in rows.items():
            if before >= limit:
                break
            window[root] = min(count, limit - before)
            before += count
        return window


class Plan:
    """The fleet with the usage the plan adds, and the placement of single instances on it."""

    def __init__(
        self,
        snapshot: Mapping,
        options: FitOptions,
        weighing: Weighing | None = None,
        per_tree: bool = True,
        arrival: str = "settled",
    ):
        try:
            self.fleet = Fleet.from_snapshot(snapshot)
        except FleetError as exc:
            raise CapacityOptionError(f"fleet: {exc}") from exc
        self.snapshot = snapshot
        self.options = options
        self.weighing = weighing or Weighing(MULTIPLIERS)
        self.burst = arrival == "burst"
        fleet = self.fleet
        self.root_name = {p.uuid: p.name for p in fleet.roots}
        self.root_of_name = {p.name: p.uuid for p in fleet.roots}
        self.position = {p.uuid: i for i, p in enumerate(fleet.roots)}
        self.records = {}
        for record in snapshot["resource_providers"]:
            if record.get("parent_provider_uuid") is None:
                self.records[record.get("name") or record["uuid"]] = dict(record)
        self.pools = {
            name: [dict(pool) for pool in record.get("pci_pools") or ()]
            for name, record in self.records.items()
            if record.get("pci_pools") is not None
        }
        self.figures = {name: _host_figures(name, record) for name, record in self.records.items()}
        # The figures no instance changes: a weigher reading one value on every host weighs nothing.
        self.weighing.drop_constant(
            {
                "build_failure_weight_multiplier": {f["failed_builds"] for f in self.figures.values()},
                "hypervisor_version_weight_multiplier": {f["hypervisor_version"] for f in self.figures.values()},
            }
        )
        # Per root, the inventories of its PCI devices as nova-compute reports them (pci_in_placement).
        self.pci_inventories: dict[str, list] = {}
        for provider in fleet.order:
            if "COMPUTE_MANAGED_PCI_DEVICE" in provider.traits:
                self.pci_inventories.setdefault(provider.root, []).extend(provider.inventories.values())
        self.instances: dict[str, int] = {}  # per host, instances the plan placed there
        # Per host with NUMA cells in its record: the cells with what the plan placed there.
        self.cells: dict[str, list[dict]] = {}
        for name, record in self.records.items():
            if record.get("numa_cells") is not None:
                try:
                    cells = inputs.numa_cells(record["numa_cells"], f"fleet: host {name}: numa_cells")
                except AccelError as exc:
                    raise CapacityOptionError(str(exc)) from exc
                self.cells[name] = numa_claims.host_cells(cells)
        self._numa: dict[str, tuple] = {}
        self.drawn: dict[str, int] = {}  # per flavor, instances whose host was drawn among several
        # Per flavor, builds nova-compute refuses ({"attempts": n, "detail": the first refusal}), and the
        # hosts that refused the instance being placed.
        self.refused: dict[str, dict] = {}
        self.tried: list[str] = []
        self.down: set[str] = set()
        # The per-tree path (see ``_View``): every candidate lies in one tree (no sharing provider) and the
        # snapshot lists the providers below the roots in the roots' order (tree by tree, or every root
        # first as Placement lists them), so the solver's candidates come out root after root in that
        # order, each root's in the order its tree alone gives them.
        position = self.position
        last = -1
        ordered = True
        for provider in fleet.order:
            if provider.parent is None:
                continue
            at = position[provider.root]
            if at < last:
                ordered = False
                break
            last = at
        self.per_tree = per_tree and ordered and not fleet.sharing
        self.root_order = [p.uuid for p in fleet.roots]
        self._tree_fleets: dict[str, Fleet] = {}
        self._views: dict[str, list[_View] | None] = {}
        self._kept: dict[str, dict[str, bool]] = {}
        self._raw: dict[str, tuple] = {}
        self._taking: dict[str, set[str]] = {}

    # -- state -------------------------------------------------------------------------------------
    def free_ram(self, root: str) -> int:
        """Nova's ``free_ram_mb`` of the host: MEMORY_MB total - reserved - used on the root provider."""
        inv = self.fleet.providers[root].inventories.get("MEMORY_MB")
        return 0 if inv is None else inv.total - inv.reserved - inv.used

    def host_figures(self, root: str) -> HostFigures:
        """What the modelled weighers read of the host now (docs/capacity.md gives each source)."""
        inventories = self.fleet.providers[root].inventories
        name = self.root_name[root]
        vcpu, pcpu, disk = inventories.get("VCPU"), inventories.get("PCPU"), inventories.get("DISK_GB")
        pci = self.pci_inventories.get(root)
        if pci is not None:
            pci_free = sum(inv.free for inv in pci)
        else:
            pci_free = sum(pool["count"] for pool in self.pools.get(name, ()))
        base = self.figures.get(name) or dict.fromkeys(HOST_FIGURES, 0)
        placed = self.instances.get(name, 0)
        return HostFigures(
            free_ram_mb=self.free_ram(root),
            vcpus_total=vcpu.total if vcpu else 0,
            vcpus_used=(vcpu.used if vcpu else 0) + (pcpu.used if pcpu else 0),
            cpu_allocation_ratio=vcpu.allocation_ratio if vcpu else 1.0,
            free_disk_mb=(disk.total - disk.reserved - disk.used) * 1024 if disk else 0,
            pci_free=pci_free,
            num_io_ops=base["num_io_ops"] + (placed if self.burst else 0),
            num_instances=base["num_instances"] + placed,
            failed_builds=base["failed_builds"],
            hypervisor_version=base["hypervisor_version"],
        )

    def raw(self, root: str) -> tuple:
        """The modelled weighers' raw values for the host (kept until an instance lands there)."""
        found = self._raw.get(root)
        if found is None:
            found = self._raw[root] = raw_values(self.host_figures(root))
        return found

    def ranked(self, hosts: list[str]):
        """The hosts in the order Nova tries them (``Weighing.ranked``)."""
        return self.weighing.ranked(hosts, [self.raw(self.root_of_name[h]) for h in hosts])

    def landed(self, kind: _Kind, host: str) -> None:
        """Count one instance of the flavor placed on the host (its instances grow, and in a burst its I/O
        operations: the build is still running)."""
        self.instances[host] = self.instances.get(host, 0) + 1
        wanted = self.numa_of(kind)[0]
        if wanted is not None and host in self.cells:
            chosen = self.claim(kind, host)
            if chosen is not None:  # refuses() or pinnable() saw to it that it fits
                numa_claims.consume(self.cells[host], chosen)
        self._raw.pop(self.root_of_name[host], None)
        if self.weighing.drew:
            self.drawn[kind.name] = self.drawn.get(kind.name, 0) + 1

    def usage(self) -> dict:
        return {(uuid, rc): inv.used for uuid, p in self.fleet.providers.items() for rc, inv in p.inventories.items()}

    def restore(self, saved: dict, pools: dict, instances: dict) -> None:
        for (uuid, rc), used in saved.items():
            self.fleet.providers[uuid].inventories[rc].used = used
        self.pools = pools
        self.instances = instances
        for views in self._views.values():
            for view in views or ():
                view.reset()
        self._kept.clear()
        self._raw.clear()
        self._taking.clear()

    def apply(self, allocations: Mapping, sign: int = 1) -> None:
        providers = self.fleet.providers
        roots = set()
        for uuid, allocation in allocations.items():
            roots.add(providers[uuid].root)
            for rc, amount in allocation["resources"].items():
                providers[uuid].inventories[rc].used += sign * amount
        for views in self._views.values():
            for view in views or ():
                for root in roots:
                    view.touched(root)
        for kept in self._kept.values():
            for root in roots:
                kept.pop(self.root_name.get(root), None)
        for root in roots:
            self._raw.pop(root, None)
        self._taking.clear()

    # -- one instance ------------------------------------------------------------------------------
    def candidates(self, kind: _Kind) -> list[dict]:
        """Nova's merged candidates for one instance of the flavor, on today's usage."""
        answers: list[tuple[int, dict | str]] = []
        for request in kind.requests:
            try:
                answers.append((200, fit_answer(self.fleet, request)))
            except RequestError as exc:  # Placement's 400 (names are checked lazily, so usage matters)
                answers.append((400, str(exc)))
        return nova_flavor.merge_answers(kind.req, answers)["candidates"]

    def filtered(self, kind: _Kind, hosts: list[str]) -> list[str]:
        pools = self.pools
        records = {
            h: dict(self.records[h], pci_pools=pools[h]) if h in pools else self.records[h]
            for h in hosts
            if h in self.records
        }
        opts = self.options
        kept = nova_filters.run_filters(
            records,
            hosts,
            kind.req,
            kind.flavor,
            pci_in_placement=opts.pci_in_placement,
            aggregates_metadata=opts.aggregates_metadata,
            enabled_filters=opts.enabled_filters,
        )["hosts"]
        kept = set(kept)
        return [h for h in hosts if h in kept and h not in self.down]

    def place(self, kind: _Kind) -> tuple[str, dict] | None:
        """Place one instance: (host name, allocations), or None when Nova finds no valid host."""
        self.tried = []
        views = self.views(kind)
        if views is not None:
            return self._place_per_tree(kind, views)
        found = self.candidates(kind)
        if not found:
            return None
        names = self.root_name
        by_root: dict[str, list[dict]] = {}
        for candidate in found:
            for uuid in candidate["allocations"]:
                if uuid in names:
                    by_root.setdefault(uuid, []).append(candidate)
        roots = sorted({self.fleet.providers[u].root for c in found for u in c["allocations"]}, key=self.position.get)
        hosts = self.filtered(kind, [names[r] for r in roots if r in names])

        def via_fallback(host: str) -> bool:
            root = self.root_of_name[host]
            first = by_root.get(root)
            mine = (first[0]["allocations"].get(root) or {}).get("resources") or {} if first else {}
            return "VCPU" in mine and "PCPU" not in mine

        hosts = self.pinnable(kind, hosts, via_fallback)
        for host in self.ranked(hosts):
            mine = by_root.get(self.root_of_name[host])
            if mine:
                if self.refuses(kind, host, via_fallback(host)):
                    if len(self.tried) >= MAX_ATTEMPTS:
                        return None
                    continue
                self.apply(mine[0]["allocations"])
                self.landed(kind, host)
                self._take_devices(kind, host)
                return host, mine[0]["allocations"]
        return None

    def numa_of(self, kind: _Kind) -> tuple:
        """(instance cells or None, pinned, emulator CPUs, pinned CPU count, the claim's options) of the
        flavor, kept."""
        found = self._numa.get(kind.name)
        if found is None:
            numa = kind.req.numa or {}
            pinned = numa.get("cpu_policy") in ("dedicated", "mixed")
            emulator = 1 if pinned and numa.get("emulator_threads_policy") == "isolate" else 0
            found = self._numa[kind.name] = (
                nova_filters._instance_cells(numa, kind.flavor),
                pinned,
                emulator,
                nova_filters.pinned_cpus(numa, kind.flavor),
                {
                    "pinned": pinned,
                    "mixed": numa.get("cpu_policy") == "mixed",
                    "emulator": emulator,
                    "pagesize": numa.get("mem_page_size"),
                    "thread_policy": numa.get("cpu_thread_policy") if pinned else None,
                },
            )
        return found

    def pinnable(self, kind: _Kind, hosts: list[str], via_fallback) -> list[str]:
        """With NUMATopologyFilter enabled, the hosts it keeps on today's usage (``cannot_pin``), before
        Nova weighs them; every host otherwise (the compute refuses, see ``refuses``)."""
        wanted, _pinned, _emulator, pinned_cpus, _options = self.numa_of(kind)
        if wanted is None and not pinned_cpus or "NUMATopologyFilter" not in self.options.enabled_filters:
            return hosts
        return [h for h in hosts if not self.cannot_pin(kind, h, via_fallback(h))]

    def refuses(self, kind: _Kind, host: str, via_fallback: bool) -> bool:
        """Whether nova-compute refuses to build the instance on the host the scheduler sent it to
        (``cannot_pin``), counting the refusal. With NUMATopologyFilter enabled the scheduler never sends
        it there (``pinnable``); without it the compute's claim, which fits the NUMA topology the same way,
        refuses the build and Nova tries the next of the ``MAX_ATTEMPTS`` hosts it chose."""
        if "NUMATopologyFilter" in self.options.enabled_filters:
            return False
        wanted, _pinned, _emulator, pinned_cpus, _options = self.numa_of(kind)
        if wanted is None and not pinned_cpus:
            return False
        why = self.cannot_pin(kind, host, via_fallback)
        if not why:
            return False
        self.tried.append(host)
        found = self.refused.setdefault(kind.name, {"attempts": 0, "detail": ""})
        found["attempts"] += 1
        if not found["detail"]:
            found["detail"] = (
                f"nova-compute on {host} refuses the build (its claim fits the NUMA topology as "
                f"NUMATopologyFilter does, which is not enabled): {why}"
            )
        return True

    def claim(self, kind: _Kind, host: str) -> list[int] | None:
        """The host cells Nova's claim gives the instance on today's usage (``numa_claims.claim``)."""
        wanted, _pinned, _emulator, _count, options = self.numa_of(kind)
        cells = self.cells[host]
        ratios = None
        if "NUMATopologyFilter" in self.options.enabled_filters:  # the filter's limits reach the claim
            inventories = self.fleet.providers[self.root_of_name[host]].inventories
            vcpu, memory = inventories.get("VCPU"), inventories.get("MEMORY_MB")
            ratios = (vcpu.allocation_ratio if vcpu else 1.0, memory.allocation_ratio if memory else 1.0)
        devices = None
        pools = self.pools.get(host)
        if pools:
            devices = {}
            for pool in pools:
                devices[pool.get("numa_node")] = devices.get(pool.get("numa_node"), 0) + pool["count"]
        return numa_claims.claim(
            cells,
            wanted,
            **options,
            ratios=ratios,
            devices=devices,
            pci_requested=bool(kind.req.pci_requests),
        )

    def cannot_pin(self, kind: _Kind, host: str, via_fallback: bool) -> str | None:
        """Why the host cannot take the instance's NUMA topology today, or None: a pinned instance that
        Placement offered the host for through the VCPU fallback query while the host's dedicated CPUs
        (PCPU) are all in use; the host's NUMA cells, with what the plan placed there, holding no room for
        the guest's cells (``numa_claims``); or, without NUMATopologyFilter, the filter's own rule."""
        req = kind.req
        wanted, _pinned, _emulator, pinned_cpus, _options = self.numa_of(kind)
        root = self.root_of_name[host]
        if pinned_cpus and req.pcpu_fallback and via_fallback:
            pcpu = self.fleet.providers[root].inventories.get("PCPU")
            if pcpu is not None:
                return (
                    f"the flavor pins {pinned_cpus} CPU(s) and the host's dedicated CPUs are all in use "
                    f"({pcpu.used} of {pcpu.capacity} PCPU); Placement returned it for the VCPU fallback query"
                )
        if wanted is not None and host in self.cells and self.claim(kind, host) is None:
            cells = self.cells[host]
            free = ", ".join(
                f"cell {c['id']}: {c['pcpus'] - c['pcpus_used']} dedicated CPU(s), "
                f"{c['memory_mb'] - c['memory_used']} MB"
                + "".join(
                    f", {total - used} of {total} {size} KiB page(s) free"
                    for size, (total, used) in c["pages"].items()
                    if size != numa_claims.SMALL_PAGE_KB
                )
                for c in cells[:8]
            )
            shape = ", ".join(
                f"{w['pcpus']} pinned + {w['cpus']} shared CPU(s), {w['memory_mb']} MB" for w in wanted[:4]
            )
            more = f" and {len(cells) - 8} more cell(s)" if len(cells) > 8 else ""
            return f"the host's NUMA cells no longer hold the guest's ({shape}); free: {free}{more}"
        if "NUMATopologyFilter" in self.options.enabled_filters:
            return None  # the filter kept the host on the same rule
        record = self.records.get(host) or {}
        if host in self.pools:
            record = dict(record, pci_pools=self.pools[host])
        flavor_policy = (req.numa or {}).get("pci_numa_affinity_policy")
        why = nova_filters.numa_topology_filter(
            record, req, kind.flavor, lambda request: flavor_policy or request.get("numa_policy") or "legacy"
        )
        return why.removeprefix("NUMATopologyFilter: ") if why else None

    def _take_devices(self, kind: _Kind, host: str) -> None:
        if self.options.pci_in_placement or host not in self.pools or not kind.req.pci_requests:
            return
        numa = kind.req.numa or {}
        flavor_policy = numa.get("pci_numa_affinity_policy")
        nova_filters.take_devices(
            self.pools[host],
            kind.req.pci_requests,
            lambda request: flavor_policy or request.get("numa_policy") or "legacy",
            None,
            consume=True,
        )

    # -- the per-tree path -------------------------------------------------------------------------
    def views(self, kind: _Kind) -> list[_View] | None:
        """One view per query of the flavor, or None when the per-tree path is not exact for it: a sharing
        provider, providers not listed tree by tree, ``in_tree``, or a name the fleet does not know (whether
        Placement answers 400 then depends on the other trees)."""
        if kind.name in self._views:
            return self._views[kind.name]
        views = None
        if self.per_tree and all(_names_known(self.fleet, r) for r in kind.requests):
            views = [_View(self, request) for request in kind.requests]
        self._views[kind.name] = views
        return views

    def tree_fleet(self, root: str) -> Fleet:
        """The root's tree alone, sharing its providers (and their usage) with the fleet."""
        found = self._tree_fleets.get(root)
        if found is None:
            fleet = self.fleet
            found = self._tree_fleets[root] = Fleet(fleet.trees[root])
            # The names the whole fleet knows (a name unknown here but known there is no 400 there).
            found.traits, found.resource_classes = fleet.traits, fleet.resource_classes
        return found

    def tree_answer(self, root: str, request: Request, totals: dict[str, int], roots_only: bool) -> dict:
        """The solver's answer on the root's tree alone; no search when the tree cannot hold the totals."""
        classes = self.fleet.tree_classes.get(root, {})
        for rc, amount in totals.items():
            if sum(inv.free for _p, inv in classes.get(rc, ())) < amount:
                return {"roots": [], "candidates": 0} if roots_only else {"allocation_requests": []}
        return allocation_candidates(self.tree_fleet(root), request, roots_only=roots_only)

    def kept(self, kind: _Kind, host: str) -> bool:
        """Whether the modelled filters keep the host for the flavor (cached until the host's usage changes)."""
        kept = self._kept.setdefault(kind.name, {})
        found = kept.get(host)
        if found is None:
            found = kept[host] = bool(self.filtered(kind, [host]))
        return found

    def _place_per_tree(self, kind: _Kind, views: list[_View]) -> tuple[str, dict] | None:
        windows = [view.visible() for view in views]
        if len(windows) > 1 and not kind.req.pcpu_fallback:
            windows = windows[:1]
        roots = sorted({root for window in windows for root in window}, key=self.position.get)
        names = self.root_name
        hosts = [names[r] for r in roots if r not in self.down and self.kept(kind, names[r])]
        hosts = [h for h in hosts if h not in self.down]

        def via_fallback(host: str) -> bool:
            return len(windows) > 1 and self.root_of_name[host] not in windows[0]

        hosts = self.pinnable(kind, hosts, via_fallback)
        for host in self.ranked(hosts):
            root = self.root_of_name[host]
            allocations = None
            for view, window in zip(views, windows):  # noqa: B905 - windows may be the first only
                if root not in window:
                    continue
                answer = self.tree_answer(
                    root, dataclasses.replace(view.request, limit=window[root]), view.totals, roots_only=False
                )
                mine = [c for c in answer["allocation_requests"] if root in c["allocations"]]
                if mine:
                    allocations = mine[0]["allocations"]
                    break
            if allocations is None:
                continue
            if self.refuses(kind, host, via_fallback(host)):
                if len(self.tried) >= MAX_ATTEMPTS:
                    return None
                continue
            self.apply(allocations)
            self.landed(kind, host)
            self._take_devices(kind, host)
            return host, allocations
        return None

    # -- the fleet after the demand ----------------------------------------------------------------
    def left(self) -> dict[str, dict[str, int]]:
        tree_classes = self.fleet.tree_classes
        return {
            name: {rc: sum(inv.free for _p, inv in entries) for rc, entries in sorted(tree_classes[root].items())}
            for root, name in self.root_name.items()
        }

    def takes(self, kind: _Kind, root: str) -> bool:
        """Whether one more instance of the flavor would be placed on the root's host (no ``limit``)."""
        host = self.root_name[root]
        views = self.views(kind)
        if views is None:
            taking = self._taking.get(kind.name)
            if taking is None:
                taking = self._taking[kind.name] = self.hosts_taking(kind)
            return host in taking
        if host in self.down:
            return False
        for index, view in enumerate(views if kind.req.pcpu_fallback else views[:1]):
            if view.count(root):
                return self.kept(kind, host) and not self.cannot_build(kind, host, index > 0)
        return False

    def cannot_build(self, kind: _Kind, host: str, via_fallback: bool) -> bool:
        """Whether the host cannot pin the instance (``cannot_pin``), for flavors with a NUMA topology."""
        wanted, _pinned, _emulator, pinned_cpus, _options = self.numa_of(kind)
        return (wanted is not None or bool(pinned_cpus)) and self.cannot_pin(kind, host, via_fallback) is not None

    def hosts_taking(self, kind: _Kind) -> set[str]:
        """Hosts where one more instance of the flavor would be placed (no ``limit``)."""
        found: set[str] = set()
        first: set[str] = set()  # the roots of Nova's first query (not the VCPU fallback's)
        for index, request in enumerate(kind.requests):
            try:
                answer = fit_answer(self.fleet, dataclasses.replace(request, limit=None), roots_only=True)
            except (RequestError, TooCombinatorial):
                continue
            found.update(answer["roots"])
            if index == 0:
                first = set(answer["roots"])
        names = [self.root_name[r] for r in sorted(found, key=self.position.get) if r in self.root_name]
        return {
            host
            for host in self.filtered(kind, names)
            if not self.cannot_build(kind, host, self.root_of_name[host] not in first)
        }


def _translate(kinds: list[_Kind], plan: Plan) -> None:
    opts = plan.options
    for kind in kinds:
        try:
            req = nova_flavor.translate(
                kind.flavor,
                pci_aliases=opts.pci_aliases,
                pci_in_placement=opts.pci_in_placement,
                device_profiles=opts.device_profiles,
                image_properties=opts.image_properties,
                boot_from_volume=opts.boot_from_volume,
                max_placement_results=opts.max_placement_results,
            )
        except AccelError as exc:
            kind.reason = {"code": "invalid_flavor", "detail": str(exc)}
            kind.blocked = True
            continue
        kind.req = req
        if req.refusal:
            kind.reason = {"code": "invalid_flavor", "detail": req.refusal.get("message", "")}
            kind.blocked = True
            continue
        requests = []
        for query in req.queries:
            try:
                requests.append(Request.parse(query))
            except RequestError as exc:
                kind.reason = {"code": "invalid_flavor", "detail": str(exc)}
                kind.blocked = True
                break
        if kind.reason:
            continue
        overload = _overload(plan, requests)
        if overload is not None:
            kind.reason = overload
            kind.blocked = True
            continue
        kind.requests = requests
        for group in requests[0].groups.values():
            for rc, amount in group.resources.items():
                kind.totals[rc] = kind.totals.get(rc, 0) + amount
        kind.asks = frozenset(rc for r in requests for g in r.groups.values() for rc in g.resources)


def _overload(plan: Plan, requests: list[Request]) -> dict | None:
    """The ``placement_overload`` reason when Placement at the cloud's settings does not answer one of
    the flavor's queries in time (on the fleet before the demand: its instances only make it smaller)."""
    opts = plan.options
    for request in requests:
        work = generation(plan.fleet, request, opts.placement_config, opts.placement_timeout)
        if work["overload"]:
            return {
                "code": "placement_overload",
                "detail": (
                    f"Placement at {opts.placement_config.words()} needs about "
                    f"{duration_words(work['seconds'])} for Nova's query, more than the "
                    f"{opts.placement_timeout:,.0f} s Nova's call waits: no instance of this "
                    f"flavor is placed. Fix: {fix_words(opts.placement_config)}"
                ),
                "did_you_mean": [],
            }
    return None


def _fit_reasons(kinds: list[_Kind], placed: dict[str, int], snapshot: Mapping, options: FitOptions) -> None:
    """Why instances of these flavors found no host, from flavor_fit on the fleet before the demand: its
    reason for a flavor placed nowhere; for one placed in part, whether the fleet holds no more of it even
    alone (flavor_fit's count, exact when no host reaches ``count_limit``) or the demand's other instances
    took the room (alone, copies on one host do not depend on the others, so it would place that count)."""
    if not kinds:
        return
    fit = FlavorFit(snapshot, options)
    for kind in kinds:
        report = fit.check(kind.flavor)
        done = placed[kind.name]
        alone = report["fleet_max_instances"]
        if not done and (kind.blocked or report["reason"] or not alone):
            kind.reason = report["reason"] or {"code": report["outcome"], "detail": report["message"]}
            continue
        exact = all(n < options.count_limit for n in report["max_instances"].values())
        numa = getattr(getattr(kind, "req", None), "numa", None) or {}
        if done < alone and nova_filters._instance_cells(numa, kind.flavor) is not None:
            # flavor_fit judges each host's empty NUMA cells; the claim fills them instance after instance
            detail = (
                f"{done} placed; the NUMA cells, filled instance after instance as Nova's claim fills them, or the "
                f"demand's other instances took the room for the rest (Placement and the filters on empty cells "
                f"allow {alone}{'' if exact else ' or more'})"
            )
        elif done < alone:
            detail = (
                f"{done} placed; the demand's other instances took the room for the rest (alone, the fleet "
                f"takes {alone}{'' if exact else ' or more'})"
            )
        elif exact:
            detail = f"{done} placed; the fleet as it is takes no more of this flavor, even with no other instance"
        else:
            detail = f"{done} placed; the demand's own instances took the room for the rest"
        kind.reason = {"code": "in_use", "detail": detail}


def _placement_order(kinds: list[_Kind], order: str) -> list[_Kind]:
    if order == "largest_first":
        return sorted(kinds, key=lambda k: tuple(-v for v in k.size()))
    return list(kinds)


def _run(plan: Plan, sequence: list[_Kind], trace: list | None) -> tuple[dict, dict, dict]:
    """Place every instance of ``sequence`` (kind after kind); placed, unplaced and hosts per flavor."""
    placed = {k.name: 0 for k in sequence}
    unplaced = {k.name: 0 for k in sequence}
    hosts: dict[str, dict[str, int]] = {}
    for kind in sequence:
        if kind.blocked:
            unplaced[kind.name] += kind.count
            continue
        for done in range(kind.count):
            try:
                got = plan.place(kind) if kind.requests else None
            except TooCombinatorial as exc:
                kind.reason = {"code": "scheduler_error", "detail": str(exc), "did_you_mean": []}
                kind.blocked = True
                got = None
            if got is None:
                if plan.tried and kind.name in plan.refused:
                    kind.reason = {
                        "code": "compute_refused",
                        "detail": (
                            f"{done} placed; the next was refused by nova-compute on each of the "
                            f"{len(plan.tried)} host(s) Nova tried ({', '.join(plan.tried)}): "
                            + plan.refused[kind.name]["detail"]
                        ),
                    }
                if trace is not None:
                    trace.append({"flavor": kind.name, "host": None, "allocations": None, "refused": list(plan.tried)})
                # Usage only grows: once Nova finds no host, no later copy of this flavor fits either.
                unplaced[kind.name] += kind.count - done
                break
            host, allocations = got
            placed[kind.name] += 1
            per_host = hosts.setdefault(host, {})
            per_host[kind.name] = per_host.get(kind.name, 0) + 1
            if trace is not None:
                trace.append(
                    {"flavor": kind.name, "host": host, "allocations": allocations, "refused": list(plan.tried)}
                )
    return placed, unplaced, hosts


def _stranded(plan: Plan, kinds: list[_Kind], placed: dict[str, int]) -> dict:
    """Per host and device class: devices free while no flavor of the demand that asks the class fits."""
    usable = [k for k in kinds if k.requests]
    found: dict[str, dict] = {}
    tree_classes = plan.fleet.tree_classes
    for root, host in plan.root_name.items():
        if host in plan.down:
            continue
        classes = tree_classes[root]
        for rc, entries in sorted(classes.items()):
            if rc in GENERAL_CLASSES:
                continue
            free = sum(inv.free for _p, inv in entries)
            askers = [k for k in usable if rc in k.asks]
            if not free or not askers or any(plan.takes(k, root) for k in askers):
                continue
            # What ran out, judged for the flavors that the fleet did take (a flavor larger than any host
            # would name every class); all askers when none of them was placed.
            judged = [k for k in askers if placed.get(k.name)] or askers
            short = set()
            for kind in judged:
                for wanted_rc, amount in kind.totals.items():
                    have = sum(inv.free for _p, inv in classes.get(wanted_rc, ()))
                    if have < amount:
                        short.add(wanted_rc)
            found.setdefault(host, {})[rc] = {
                "free": free,
                "short": sorted(short),
                "flavors": sorted(k.name for k in askers),
            }
    return found


def _survivors_state(plan: Plan):
    """What a failure run changes on the plan, saved to be put back."""
    return (
        plan.usage(),
        {n: [dict(p) for p in ps] for n, ps in plan.pools.items()},
        dict(plan.instances),
        dict(plan.drawn),
        {name: dict(entry) for name, entry in plan.refused.items()},
        {name: [dict(cell) for cell in host] for name, host in plan.cells.items()},
    )


def _put_back(plan: Plan, state) -> None:
    saved, pools, instances, drawn, refused, cells = state
    plan.down = set()
    plan.restore(saved, pools, instances)
    plan.drawn, plan.refused, plan.cells = drawn, refused, cells


def _why_lost(plan: Plan, kind: _Kind, lost_hosts: list[str]) -> dict:
    """Why the survivors, as the re-placement left them, take no more of the flavor."""
    if kind.blocked and kind.reason:  # Nova refuses the flavor whatever the hosts (an allocation it cannot ask)
        return {"code": kind.reason.get("code"), "detail": kind.reason.get("detail")}
    if kind.reason and kind.reason.get("code") == "compute_refused":
        return {"code": "compute_refused", "detail": kind.reason["detail"]}
    survivors = [root for root, name in plan.root_name.items() if name not in plan.down]
    tree_classes = plan.fleet.tree_classes
    devices = sorted(rc for rc in kind.totals if rc not in GENERAL_CLASSES)
    missing = [rc for rc in devices if not any(tree_classes[root].get(rc) for root in survivors)]
    if missing:
        return {
            "code": "no_host_with_device",
            "detail": f"no surviving host has {', '.join(missing)} (the lost hosts {', '.join(lost_hosts)} had them)",
        }
    short = sorted(
        rc
        for rc, amount in kind.totals.items()
        if amount and all(sum(inv.free for _p, inv in tree_classes[root].get(rc, ())) < amount for root in survivors)
    )
    if short:
        return {
            "code": "survivors_full",
            "detail": f"no surviving host has {', '.join(short)} free for one more instance",
        }
    wanted = plan.numa_of(kind)[0]
    if wanted is not None and plan.cells:
        return {
            "code": "numa_cells_full",
            "detail": (
                "the surviving hosts have the resources in total, but no NUMA cell holds the instance's "
                "pinned CPUs and memory"
            ),
        }
    return {
        "code": "no_valid_host",
        "detail": (
            "the surviving hosts have the resources in total, but a trait, a per-provider limit or a filter "
            "stands in the way"
        ),
    }


def _lose(
    plan: Plan,
    sequence: list[_Kind],
    hosts: dict,
    lost_hosts: list[str],
    existing: list[_Kind],
    trace: list | None = None,
) -> dict:
    """Lose ``lost_hosts``: place their instances (the demand's, then those the snapshot already had there)
    again on the other hosts as the plan left them; the plan is put back afterwards."""
    state = _survivors_state(plan)
    plan.down = set(lost_hosts)
    lost: dict[str, dict] = {}
    moved: dict[str, int] = {}
    try:
        again = []
        for kind in sequence:
            count = sum(hosts.get(h, {}).get(kind.name, 0) for h in lost_hosts)
            if count:
                again.append(dataclasses.replace(kind, count=count, reason=kind.reason if kind.blocked else None))
        for kind in existing:
            count = sum(kind.on_hosts.get(h, 0) for h in lost_hosts)
            if count:
                again.append(dataclasses.replace(kind, count=count, reason=kind.reason if kind.blocked else None))
        _placed, unplaced, _hosts = _run(plan, again, trace)
        for kind in again:
            moved[kind.name] = kind.count
            if unplaced[kind.name]:
                lost[kind.name] = dict(_why_lost(plan, kind, lost_hosts), count=unplaced[kind.name])
    finally:
        _put_back(plan, state)
    return {"hosts": list(lost_hosts), "moved": moved, "lost": lost, "survives": not lost}


def _headroom(plan: Plan, sequence: list[_Kind], hosts: dict, failures: int) -> dict:
    """Lose the ``failures`` hosts carrying most of the demand and re-place their instances on the rest."""
    if not failures:
        return {"failures": 0, "survives": True, "lost": {}, "hosts_lost": []}
    position = {name: plan.position[plan.root_of_name[name]] for name in hosts}
    ranked = sorted(hosts, key=lambda h: (-sum(hosts[h].values()), position[h]))
    if len(ranked) < failures:
        others = [n for r, n in plan.root_name.items() if n not in hosts]
        ranked += others[: failures - len(ranked)]
    lost_hosts = ranked[:failures]
    outcome = _lose(plan, sequence, hosts, lost_hosts, [])
    lost = {name: entry["count"] for name, entry in outcome["lost"].items()}
    return {"failures": failures, "survives": not lost, "lost": lost, "hosts_lost": lost_hosts}


def _failure_answer(outcome: dict, placed: dict[str, int], domain: str | None) -> dict:
    """A failure's outcome with what the demand still places."""
    still = {name: n - (outcome["lost"].get(name) or {}).get("count", 0) for name, n in placed.items()}
    return dict(outcome, domain=domain, still_placed=still)


def _named_hosts(plan: Plan, fail_hosts) -> list[str]:
    if isinstance(fail_hosts, str | bytes | Mapping) or not isinstance(fail_hosts, list | tuple):
        raise CapacityOptionError(f"fail_hosts must be a list of host names, got {kind_of(fail_hosts)}")
    if not fail_hosts:
        raise CapacityOptionError("fail_hosts is empty: name at least one host of the fleet to lose")
    if len(fail_hosts) > MAX_FAILURES:
        raise CapacityOptionError(f"fail_hosts names {len(fail_hosts)} hosts, more than the {MAX_FAILURES} allowed")
    known = plan.root_of_name
    chosen: list[str] = []
    unknown = []
    for name in fail_hosts:
        if not isinstance(name, str) or name not in known:
            unknown.append(shown(name))
        elif name not in chosen:
            chosen.append(name)
    if unknown:
        raise CapacityOptionError(
            f"fail_hosts: {', '.join(unknown)} is not a host of the fleet; "
            + _known_names("host", sorted(known), fail_hosts)
        )
    return chosen


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.:@-]+\Z")
_LISTED = 50


def _known_names(what: str, known: list[str], given) -> str:
    """The fleet's names for an error: all of them up to 50, else how many and the closest to those given."""

    def named(name: str) -> str:
        return name if isinstance(name, str) and _PLAIN_NAME.match(name) else shown(name)

    if not known:
        return f"the fleet has no {what}"
    if len(known) <= _LISTED:
        return f"the fleet's {what}s are " + ", ".join(named(n) for n in known)
    wanted = [g for g in (given if isinstance(given, list | tuple) else [given]) if isinstance(g, str)]
    close = []
    for name in wanted:
        close += [n for n in difflib.get_close_matches(name, known, n=5) if n not in close]
    hint = f"; the closest: {', '.join(named(n) for n in close)}" if close else ""
    return f"the fleet has {len(known):,} {what}s{hint}"


def _domain_hosts(plan: Plan, fail_domain) -> list[str]:
    """The hosts of an aggregate: by name in ``aggregates_metadata``, or by UUID in the snapshot's roots."""
    if not isinstance(fail_domain, str) or not fail_domain:
        raise CapacityOptionError(f"fail_domain must be an aggregate's name or UUID, got {kind_of(fail_domain)}")
    named: dict[str, list[str]] = {}
    for entry in plan.options.aggregates_metadata or ():
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            named.setdefault(entry["name"], []).extend(h for h in entry.get("hosts") or () if isinstance(h, str))
    if fail_domain in named:
        hosts = [h for h in dict.fromkeys(named[fail_domain]) if h in plan.root_of_name]
    else:
        hosts = [p.name for p in plan.fleet.roots if fail_domain in p.aggregates]
    if hosts:
        return hosts
    uuids = sorted({a for p in plan.fleet.roots for a in p.aggregates})
    known = sorted(named) + uuids
    if not known:
        raise CapacityOptionError(
            f"fail_domain: {shown(fail_domain)} is no aggregate with hosts in the fleet; the fleet has no aggregate "
            "(give aggregates_metadata with names, or fail_hosts)"
        )
    raise CapacityOptionError(
        f"fail_domain: {shown(fail_domain)} is no aggregate with hosts in the fleet; "
        + _known_names("aggregate", known, fail_domain)
    )


def _worst_case_size(plan: Plan, worst_case) -> int:
    if not isinstance(worst_case, Mapping) or set(worst_case) != {"hosts"}:
        raise CapacityOptionError(f"worst_case must be {{hosts: K}} (K hosts lost at once), got {kind_of(worst_case)}")
    k = _int_option("worst_case hosts", worst_case["hosts"], 1, MAX_FAILURES)
    n = len(plan.root_name)
    if k > n:
        raise CapacityOptionError(f"worst_case hosts ({k}) is more than the fleet's {n} hosts")
    combinations = math.comb(n, k)
    if combinations > MAX_COMBINATIONS:
        raise CapacityOptionError(
            f"worst_case: losing {k} of {n} hosts is {combinations:,} combinations, more than the "
            f"{MAX_COMBINATIONS:,} allowed; lower hosts, or name the hosts with fail_hosts or fail_domain"
        )
    return k


def _worst_case(plan: Plan, sequence, hosts, placed, existing, k: int) -> dict:
    """Every combination of ``k`` hosts lost; the one that loses the most instances (the first, in the
    snapshot's order, among equals)."""
    names = [plan.root_name[root] for root in plan.root_order]
    worst = None
    worst_lost = -1
    survived = 0
    count = 0
    for combination in itertools.combinations(names, k):
        count += 1
        lost_hosts = list(combination)
        if not any(hosts.get(h) for h in lost_hosts) and not any(
            kind.on_hosts.get(h) for kind in existing for h in lost_hosts
        ):
            survived += 1  # nothing to move
            if worst is None:
                worst, worst_lost = {"hosts": lost_hosts, "moved": {}, "lost": {}, "survives": True}, 0
            continue
        outcome = _lose(plan, sequence, hosts, lost_hosts, existing)
        total = sum(entry["count"] for entry in outcome["lost"].values())
        survived += outcome["survives"]
        if total > worst_lost:
            worst, worst_lost = outcome, total
    return {
        "hosts": k,
        "combinations": count,
        "survived": survived,
        "worst": _failure_answer(worst, placed, None),
    }


def _existing(plan: Plan) -> list[_Kind]:
    """The instances the snapshot's ``allocations`` hold on each host, as flavors asking what they hold.

    Consumers are grouped by what they hold on one host (a consumer of type INSTANCE or without a type;
    migrations and quarantines are not placed again)."""
    allocations = plan.snapshot.get("allocations")
    if allocations is None:
        return []
    if not isinstance(allocations, Mapping):
        raise CapacityOptionError(
            "fleet: allocations must be {consumer UUID: {allocations: {provider UUID: {resources}}}} as "
            f"placement_info returns them, got {kind_of(allocations)}"
        )
    providers = plan.fleet.providers
    kinds: dict[tuple, _Kind] = {}
    for consumer, entry in allocations.items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("allocations"), Mapping):
            raise CapacityOptionError(
                f"fleet: allocations of consumer {shown(consumer)} must hold allocations by provider"
            )
        if entry.get("consumer_type") not in (None, "INSTANCE"):
            continue
        per_root: dict[str, dict[str, int]] = {}
        for uuid, held in entry["allocations"].items():
            resources = held.get("resources") if isinstance(held, Mapping) else None
            if uuid not in providers or not isinstance(resources, Mapping):
                continue  # a provider outside the snapshot
            totals = per_root.setdefault(providers[uuid].root, {})
            for rc, amount in resources.items():
                if isinstance(amount, bool) or not isinstance(amount, int) or not 0 <= amount <= _LARGEST_FIGURE:
                    raise CapacityOptionError(
                        f"fleet: allocations of consumer {shown(consumer)}: {shown(rc)} must be a whole number "
                        f"from 0 to {_LARGEST_FIGURE}, got {shown(amount)}"
                    )
                if amount:
                    totals[str(rc)] = totals.get(str(rc), 0) + amount
        if len(per_root) != 1:
            continue  # nothing here, or held on two hosts at once (a move in progress)
        root, totals = next(iter(per_root.items()))
        signature = tuple(sorted(totals.items()))
        kind = kinds.get(signature)
        if kind is None:
            name = "existing " + ",".join(f"{rc}={n}" for rc, n in signature)
            specs = {f"resources:{rc}": str(n) for rc, n in signature}
            for rc in ("VCPU", "MEMORY_MB", "DISK_GB"):
                specs.setdefault(f"resources:{rc}", "0")
            flavor = {"name": name, "vcpus": 1, "ram": 0, "disk": 0, "extra_specs": specs}
            kind = kinds[signature] = _Kind(name, flavor, 0, -1)
        host = plan.root_name[root]
        kind.count += 1
        kind.on_hosts[host] = kind.on_hosts.get(host, 0) + 1
    found = list(kinds.values())
    _translate(found, plan)
    return found


def capacity_plan(
    demand,
    snapshot: Mapping,
    *,
    order: str = "as_given",
    weigher: str = "spread",
    failures: int = 0,
    trace: list | None = None,
    per_tree: bool = True,
    host_subset_size: int = 1,
    seed: int = 0,
    arrival: str = "settled",
    fail_hosts=None,
    fail_domain=None,
    worst_case=None,
    failure_trace: list | None = None,
    what_if=None,
    **options,
) -> dict:
    """The demand placed on the fleet (see the module docstring); raises CapacityOptionError for bad input.

    ``options`` are flavor_fit's and the weighers' multipliers (``MULTIPLIERS``' names; None or absent:
    the ``weigher`` preset's value, else Nova's default). ``trace``, when a list, receives
    ``{flavor, host, allocations}`` per instance placed, in order. ``fail_hosts`` (host names) or
    ``fail_domain`` (an aggregate) lose those hosts at once (``failure``); ``worst_case`` ``{hosts: K}`` tries
    every combination of K hosts (``worst_case``); ``failure_trace``, when a list, receives the steps of the
    named failure's re-placement as ``trace`` does."""
    if order not in ORDERS:
        raise CapacityOptionError(f"order must be one of {', '.join(ORDERS)}, got {shown(order)}")
    if arrival not in ARRIVALS:
        raise CapacityOptionError(f"arrival must be one of {', '.join(ARRIVALS)}, got {shown(arrival)}")
    given = {name: options.pop(name) for name in list(options) if name.endswith("_weight_multiplier")}
    failures = _int_option("failures", failures, 0, MAX_FAILURES)
    try:
        checked = FitOptions.checked(**options)
    except FitOptionError as exc:
        raise CapacityOptionError(str(exc)) from exc
    try:
        factors = multipliers(weigher, given)
        per_host = None
        if checked.aggregates_metadata is not None:
            per_host = aggregate_multipliers(nova_filters.aggregate_metadata_by_host(checked.aggregates_metadata))
        weighing = Weighing(factors, host_subset_size, seed, per_host)
    except WeigherOptionError as exc:
        raise CapacityOptionError(str(exc)) from exc
    if not isinstance(snapshot, Mapping):
        raise CapacityOptionError("fleet must be a fleet snapshot (what accel.openstack.placement_info returns)")
    kinds = _demand(demand)
    options_given = dict(options, **given)
    extra_hosts = _what_if_records(what_if, snapshot, checked.pci_in_placement) if what_if is not None else None
    with gc_paused():
        plan = Plan(snapshot, checked, weighing, per_tree, arrival)
        if failures > len(plan.root_name):
            raise CapacityOptionError(f"failures ({failures}) is more than the fleet's {len(plan.root_name)} hosts")
        if fail_hosts is not None and fail_domain is not None:
            raise CapacityOptionError("give fail_hosts or fail_domain, not both (fail_domain names the hosts itself)")
        named = None
        if fail_hosts is not None:
            named = _named_hosts(plan, fail_hosts)
        elif fail_domain is not None:
            named = _domain_hosts(plan, fail_domain)
        k = _worst_case_size(plan, worst_case) if worst_case is not None else 0
        _translate(kinds, plan)
        existing = _existing(plan) if named is not None or k else []
        sequence = _placement_order(kinds, order)
        placed, unplaced, hosts = _run(plan, sequence, trace)
        short = [
            k
            for k in kinds
            if unplaced[k.name]
            and (not placed[k.name] or not k.reason)
            and (k.reason or {}).get("code") != "compute_refused"
        ]
        _fit_reasons(short, placed, snapshot, checked)
        reasons = {}
        for kind in kinds:
            if unplaced[kind.name]:
                reasons[kind.name] = kind.reason
        result = {
            "placed": {k.name: placed[k.name] for k in kinds},
            "unplaced": {k.name: unplaced[k.name] for k in kinds},
            "hosts": {h: hosts[h] for h in sorted(hosts)},
            "left": plan.left(),
            "stranded": _stranded(plan, kinds, placed),
            "headroom": _headroom(plan, sequence, hosts, failures),
            "failure": None,
            "worst_case": None,
            "reasons": reasons,
            "order": [k.name for k in sequence],
            "weigher": weigher,
            "weighers": dict(factors, host_subset_size=host_subset_size, arrival=arrival),
            "drawn": {k.name: plan.drawn.get(k.name, 0) for k in kinds},
            "refused": {k.name: plan.refused[k.name] for k in kinds if k.name in plan.refused},
        }
        placed_now = result["placed"]
        if named is not None:
            outcome = _lose(plan, sequence, hosts, named, existing, failure_trace)
            result["failure"] = _failure_answer(outcome, placed_now, fail_domain)
        if k:
            result["worst_case"] = _worst_case(plan, sequence, hosts, placed_now, existing, k)
    result["what_if"] = None
    if extra_hosts is not None:
        settings = dict(
            options_given,
            order=order,
            weigher=weigher,
            per_tree=per_tree,
            host_subset_size=host_subset_size,
            seed=seed,
            arrival=arrival,
        )
        result["what_if"] = [_what_if_answer(demand, snapshot, entry, result, settings) for entry in extra_hosts]
    return result


def _what_if_records(what_if, snapshot, pci_in_placement: bool) -> list[tuple[str, list[dict], bool]]:
    """Each what-if option's hosts as snapshot records, checked before anything is placed."""
    if isinstance(what_if, str | bytes | Mapping) or not isinstance(what_if, list | tuple):
        raise CapacityOptionError(
            f"what_if must be a list of {{name, model, count, mode, ...}} options, got {kind_of(what_if)}"
        )
    if len(what_if) > MAX_WHAT_IF:
        raise CapacityOptionError(f"what_if gives {len(what_if)} options, more than the {MAX_WHAT_IF} allowed")
    taken = {
        record.get("name")
        for record in (snapshot.get("resource_providers") or () if isinstance(snapshot, Mapping) else ())
        if isinstance(record, Mapping)
    }
    found = []
    names = set()
    for option in what_if:
        try:
            name, records, alone = what_if_hosts(option, pci_in_placement, taken)
        except WhatIfError as exc:
            raise CapacityOptionError(str(exc)) from exc
        if name in names:
            raise CapacityOptionError(f"what_if {name}: the name is given twice; give each option its own name")
        names.add(name)
        found.append((name, records, alone))
    return found


def _what_if_answer(demand, snapshot: Mapping, entry, baseline: dict, settings: dict) -> dict:
    """The demand placed on the fleet with the option's hosts (or on them alone), against the plan."""
    name, records, alone = entry
    base = [] if alone else list(snapshot["resource_providers"])
    other = capacity_plan(demand, {"resource_providers": base + records}, **settings)
    added_hosts = {r["name"] for r in records if r.get("parent_provider_uuid") is None}
    stranded: dict[str, int] = {}
    for classes in other["stranded"].values():
        for rc, item in classes.items():
            stranded[rc] = stranded.get(rc, 0) + item["free"]
    return {
        "name": name,
        "alone": alone,
        "hosts_added": len(added_hosts),
        "placed": other["placed"],
        "unplaced": other["unplaced"],
        "added": {flavor: n - baseline["placed"].get(flavor, 0) for flavor, n in other["placed"].items()},
        "on_new_hosts": {
            flavor: sum(per.get(flavor, 0) for host, per in other["hosts"].items() if host in added_hosts)
            for flavor in other["placed"]
        },
        "stranded": dict(sorted(stranded.items())),
        "reasons": other["reasons"],
    }


def capacity_table(plan: Mapping) -> list[str]:
    """The plan as lines a person reads: per flavor placed and unplaced with the reason, stranded devices,
    headroom."""
    if not isinstance(plan, Mapping) or not all(key in plan for key in ("placed", "unplaced", "headroom")):
        raise CapacityOptionError("capacity_table: give the plan accel.openstack.capacity_plan returns")
    reasons = plan.get("reasons") or {}
    rows = [("flavor", "placed", "unplaced", "why not")]
    for name, placed in plan["placed"].items():
        reason = reasons.get(name) or {}
        why = f"{reason.get('code')}: {reason.get('detail')}" if reason else ""
        rows.append((str(name), str(placed), str(plan["unplaced"].get(name, 0)), why))  # whole, never cut
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [" | ".join([*(row[i].ljust(widths[i]) for i in range(3)), row[3]]).rstrip() for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths) + "-+-" + "-" * 7)
    for host, classes in sorted((plan.get("stranded") or {}).items()):
        for rc, entry in sorted(classes.items()):
            short = ", ".join(entry.get("short") or ()) or "no class short: a trait, a per-provider limit or a filter"
            lines.append(f"stranded on {host}: {entry.get('free')} {rc} free, none usable ({short})")
    for name, entry in sorted((plan.get("refused") or {}).items()):
        lines.append(f"refused by nova-compute: {name}: {entry.get('attempts')} build(s); {entry.get('detail')}")
    failure = plan.get("failure")
    if failure:
        lines.extend(_failure_lines("losing", failure))
    worst = plan.get("worst_case")
    if worst:
        lines.extend(
            _failure_lines(
                f"worst case of {worst.get('combinations')} combination(s) of {worst.get('hosts')} host(s) "
                f"({worst.get('survived')} lose nothing): losing",
                worst.get("worst") or {},
            )
        )
    for option in plan.get("what_if") or ():
        counts = ", ".join(
            f"{name}: {n} ({(option.get('added') or {}).get(name, 0):+d})"
            for name, n in (option.get("placed") or {}).items()
        )
        stranded = ", ".join(f"{n} {rc}" for rc, n in (option.get("stranded") or {}).items()) or "none"
        where = "alone" if option.get("alone") else "added to the fleet"
        lines.append(
            f"what if {option.get('name')} ({option.get('hosts_added')} host(s) {where}): placed {counts}; "
            f"stranded {stranded}"
        )
    headroom = plan["headroom"]
    if headroom.get("failures"):
        lost = ", ".join(f"{name}: {n}" for name, n in (headroom.get("lost") or {}).items())
        lines.append(
            f"headroom: losing {headroom['failures']} host(s) ({', '.join(headroom.get('hosts_lost') or ())}): "
            + ("every instance fits elsewhere" if headroom.get("survives") else f"instances lost ({lost})")
        )
    return lines


def _failure_lines(prefix: str, failure: Mapping) -> list[str]:
    hosts = ", ".join(failure.get("hosts") or ())
    domain = f" (aggregate {failure['domain']})" if failure.get("domain") else ""
    moved = sum((failure.get("moved") or {}).values())
    lines = [
        f"{prefix} {hosts}{domain}: {moved} instance(s) placed again, "
        + ("every one fits elsewhere" if failure.get("survives") else "some no longer fit")
    ]
    for name, entry in (failure.get("lost") or {}).items():
        lines.append(f"  lost {entry.get('count')} of {name}: {entry.get('code')}: {entry.get('detail')}")
    still = ", ".join(f"{name}: {n}" for name, n in (failure.get("still_placed") or {}).items())
    lines.append(f"  the demand still placed: {still}")
    return lines
