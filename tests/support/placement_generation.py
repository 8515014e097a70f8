"""A step-by-step replay of Placement 16's candidate generation, as a test oracle for solver/generation.py.

It walks exactly what Placement walks, one tuple at a time (so it is only usable on small fleets): the
per-group lists under each anchor (from the solver's own group rows, which the differential tests already
prove equal to Placement's), the roots in the order ``generation.placement_order`` gives, each root's
product plain or pruned (a prefix whose summed amounts pass a provider's capacity or max_unit, usage
ignored, is not extended), the roots one after the other or one tuple each per round, isolate, the final
capacity check with usage (skipped with the workaround), and the cut at max_allocation_candidates. It
counts the tuples (or prefixes) it looks at, and the equal-hash pairs among the candidates it keeps
(candidates that take the same amounts from the same providers).
"""

from __future__ import annotations

import itertools
from collections import Counter

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.fast import _TreeRows, group_rows
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import PlacementConfig, placement_order


def _entries(parts, anchor):
    """Per group, its entries under the anchor: (takes, pick) with takes ((uuid, rc, amount), ...)."""
    levels = []
    for _suffix, group, rows in parts:
        if isinstance(rows, _TreeRows):
            wanted = rows.wanted
            levels.append(
                [
                    (tuple((p.uuid, rc, n) for p, (rc, n) in zip(combo, wanted, strict=True)), None)
                    for combo in rows.combos(anchor, keep=False)
                ]
            )
        else:
            levels.append(
                [(tuple((p.uuid, rc, n) for rc, n in group.resources.items()), p.uuid) for p in rows.get(anchor, [])]
            )
    return levels


def replay(fleet: Fleet, request: Request, config: PlacementConfig) -> dict:
    found = {"roots": [], "per_root": {}, "candidates": 0, "unclaimable": 0, "examined": 0, "collisions": 0}
    try:
        parts = group_rows(fleet, request, Budget(10**9))
    except Exception:  # noqa: BLE001 - Placement's empty or 400 answer: nothing is walked
        return found
    order, _determined = placement_order(fleet, request, parts)
    optimize = config.optimize_for_wide_provider_trees
    isolate = request.group_policy == "isolate" and sum(1 for s, _g, _r in parts if s) > 1
    multi = Counter(rc for _s, g, _r in parts for rc in g.resources)
    totals = Counter()
    for _s, g, _r in parts:
        totals.update(g.resources)
    counter = {"examined": 0}

    def capacity(uuid, rc):
        return fleet.providers[uuid].inventories[rc].capacity

    def too_much(prefix, with_usage):
        sums = Counter()
        for takes, _pick in prefix:
            for uuid, rc, n in takes:
                sums[uuid, rc] += n
        for (uuid, rc), total in sums.items():
            inv = fleet.providers[uuid].inventories[rc]
            if total > inv.max_unit or total + (inv.used if with_usage else 0) > inv.capacity:
                return True
        return False

    def plain(levels):
        for combo in itertools.product(*levels):
            counter["examined"] += 1
            yield combo

    def pruned(levels, prefix=()):
        if len(prefix) == len(levels):
            yield prefix
            return
        for entry in levels[len(prefix)]:
            counter["examined"] += 1
            longer = prefix + (entry,)
            if too_much(longer, with_usage=False):
                continue
            yield from pruned(levels, longer)

    generators = []
    for anchor in order:
        levels = _entries(parts, anchor)
        if any(not level for level in levels):
            continue
        available = {uuid for level in levels for takes, _p in level for uuid, _rc, _n in takes}
        if any(
            totals[rc] > sum(capacity(u, rc) for u in available if rc in fleet.providers[u].inventories)
            for rc, count in multi.items()
            if count > 1
        ):
            continue  # Placement's pre-check of the tree's overall capacity
        generators.append((anchor, (pruned if optimize else plain)(levels)))

    def rounds():
        active = list(generators)
        while active:
            still = []
            for anchor, generator in active:
                combo = next(generator, None)
                if combo is None:
                    continue
                still.append((anchor, generator))
                yield anchor, combo
            active = still

    def chained():
        for anchor, generator in generators:
            for combo in generator:
                yield anchor, combo

    cut = config.cut
    kept: list[tuple[str, tuple]] = []
    for anchor, combo in rounds() if config.breadth_first else chained():
        if isolate:
            picks = [pick for _takes, pick in combo if pick is not None]
            if len(set(picks)) < len(picks):
                continue
        if not optimize and too_much(combo, with_usage=True):
            continue
        kept.append((anchor, combo))
        if cut is not None and len(kept) >= cut:
            break
    per_root: dict[str, int] = {}
    hashes = Counter()
    for anchor, combo in kept:
        per_root[anchor] = per_root.get(anchor, 0) + 1
        sums = Counter()
        for takes, _pick in combo:
            for uuid, rc, n in takes:
                sums[uuid, rc] += n
        hashes[frozenset(sums.items())] += 1
        if too_much(combo, with_usage=True):
            found["unclaimable"] += 1
    found.update(
        roots=list(per_root),
        per_root=per_root,
        candidates=len(kept),
        examined=counter["examined"],
        collisions=sum(m * (m - 1) // 2 for m in hashes.values()),
    )
    return found
