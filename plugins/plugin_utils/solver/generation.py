"""What Placement 16 does with a query at its configured settings: which roots its candidates come from,
how many it generates, and how much work that is.

Placement answers ``GET /allocation_candidates`` in two phases (placement/objects/allocation_candidate.py):
each request group gets its own list of one-group candidates per anchor root, then, root by root, every
combination of one entry per group is tried (``_merge_candidates``). Three settings change the second
phase, and this module models each of them:

- ``[placement]allocation_candidates_generation_strategy``: ``depth-first`` walks one root's whole
  product before the next root's; ``breadth-first`` takes one tuple of each root's product per round.
- ``[placement]max_allocation_candidates``: generation stops once that many distinct candidates are
  collected (a prefix of the generation order; -1: no bound). ``limit`` is applied only afterwards, to the
  set of collected candidates.
- ``[workarounds]optimize_for_wide_provider_trees``: the product is walked with pruning (a prefix whose
  summed amounts exceed a provider's ``(total - reserved) x ratio`` or ``max_unit`` is not extended,
  usage ignored) and the final capacity check is skipped, so a candidate whose amounts exceed the free
  capacity is returned (Nova's claim of it then fails).

Roots are visited in the order they are first met in the first group's list. For a suffixed group (Nova's
sorted query starts with ``required<suffix>``) that list is built from a Python set of (provider id, root
id) integer pairs, whose order is a function of Placement's internal provider ids: the model numbers the
providers in the order they are listed, parents first, as Placement numbers them when they are created in
that order. Where the first group is the unsuffixed group of a fleet with nested or sharing providers, its
list comes from a set of objects hashed with resource class strings, and the order depends on the
process's hash seed: ``roots_determined`` is then false wherever a cut makes the order matter.

The work is counted per root by ``counting.Walk`` (tuples of the plain product, or prefixes of the pruned
one), with the candidates collected and the equality checks their set makes: candidates that differ only
in their group-to-provider mappings hash alike (N! per device set for N devices of one alias), and each
one added is compared with every equal-hash one already there. ``seconds`` turns these into Placement's
time with the per-item costs measured on the real Placement 16 (``COSTS``, see docs/solver.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._placement import settings
from ansible_collections.accel.openstack.plugins.module_utils._placement.settings import complete
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.checks import NoCandidates
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.counting import (
    Counts,
    TooManyStates,
    Walk,
    smallest_within,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.fast import _TreeRows, anchor_walk, group_rows

OPTIONS = {
    "max_allocation_candidates": "[placement]",
    "allocation_candidates_generation_strategy": "[placement]",
    "optimize_for_wide_provider_trees": "[workarounds]",
}
# Kolla-Ansible's HAProxy closes a backend call after haproxy_server_timeout (1 minute); Nova's
# scheduler then gets no candidates and the boot ends in NoValidHost.
DEFAULT_TIMEOUT = 60.0
# Seconds per item on the real Placement 16.0.0 (SQLite, one wsgiref process, 2 shared cores), fitted by
# benchmarks/calibrate_placement.py on timed answers at four settings (3 hosts x 8 GPUs, and 2 hosts x 16
# GPUs with 4 in use): a fixed part per query, a tuple of the plain product, a prefix of the pruned
# product, a candidate collected, an equality check in the candidate set. The equality checks grow faster
# than linearly in Placement (a set of 60,480 candidates in buckets of 720 equal hashes: 97 s for 6 of 8
# GPUs on 3 hosts at the defaults, where the fit on smaller sets gives 59 s); their cost is the one of that
# largest answer, so the prediction errs towards the slow side on smaller sets (6.3 s for a 4.3 s answer).
# The fit leaves nothing per root walked on 2- and 3-host fleets; ``root`` is a floor for large fleets
# (provider summaries), not fitted.
COSTS = {
    "query": 0.036,
    "root": 0.0001,
    "tuple": 0.0000095,
    "prefix": 0.000039,
    "candidate": 0.000024,
    "collision": 0.000004,
}


class PlacementConfigError(AccelError, ValueError):
    """A ``placement_config`` value Placement would not start with; the message names it and the fix."""


@dataclass(frozen=True)
class PlacementConfig:
    """Placement's settings that decide its answer, with Placement's own names and defaults."""

    max_allocation_candidates: int = -1
    allocation_candidates_generation_strategy: str = "depth-first"
    optimize_for_wide_provider_trees: bool = False

    @classmethod
    def checked(cls, value, where: str = "placement_config") -> PlacementConfig:
        if isinstance(value, PlacementConfig):
            return value
        if isinstance(value, Mapping) and not isinstance(value, dict):
            value = dict(value)
        try:
            return cls(**complete(settings.checked(value, where)))
        except settings.PlacementSettingsError as exc:
            raise PlacementConfigError(str(exc)) from None

    def as_dict(self) -> dict:
        return {
            "max_allocation_candidates": self.max_allocation_candidates,
            "allocation_candidates_generation_strategy": self.allocation_candidates_generation_strategy,
            "optimize_for_wide_provider_trees": self.optimize_for_wide_provider_trees,
        }

    @property
    def cut(self) -> int | None:
        """How many candidates generation stops at (Placement checks after adding one, so 0 gives 1)."""
        most = self.max_allocation_candidates
        return None if most < 0 else max(most, 1)

    @property
    def breadth_first(self) -> bool:
        return self.allocation_candidates_generation_strategy == "breadth-first"

    def words(self) -> str:
        return ", ".join(
            f"{OPTIONS[k]}{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in self.as_dict().items()
        )


# What Placement's own documentation advises for wide trees (placement/conf/workarounds.py).
RECOMMENDED = PlacementConfig(**settings.RECOMMENDED)


def check_timeout(value, where: str = "placement_timeout") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) or not 0 < value <= 86400:
        raise PlacementConfigError(f"{where} must be a number of seconds above 0 and at most 86400, got {value!r}")
    return float(value)


@dataclass
class _Root:
    """One root's share of the generation: its walk and its totals at the settings."""

    uuid: str
    walk: Walk
    counts: Counts  # the whole walk's
    yields: int  # what its generator yields: plain tuples, or the pruned product's complete tuples
    candidates: int  # those Placement keeps (valid; with the workaround, those that keep isolate)
    valid: int  # those a claim accepts
    collisions: int  # equal-hash pairs among all its candidates
    cache: dict  # shared by the roots of one shape
    counted: bool = True  # false where the providers were too unlike for classes (counts are bounds)

    def within(self, r: int, optimize: bool) -> Counts:
        """Counts among the first ``r`` yields (cached: a breadth-first search asks many roots the same);
        where the walk could not be counted, every yield is taken for a candidate (a bound)."""
        found = self.cache.get(r)
        if found is None:
            if not self.counted:
                found = Counts(r, r, r, r)
            else:
                found = self.walk.leaves_within(r) if optimize else self.walk.raw_within(r)
            self.cache[r] = found
        return found


def _taken(counts: Counts, optimize: bool) -> int:
    return counts.isolated if optimize else counts.valid


def placement_order(fleet: Fleet, request: Request, parts: list) -> tuple[list[str], bool]:
    """The roots in the order Placement's generation visits them, and whether that order is a function of
    the fleet (see the module docstring)."""
    suffix, group, rows = parts[0]
    fleet_order = [root.uuid for root in fleet.roots]
    if not suffix and (fleet.has_trees or fleet.sharing):
        return fleet_order, False
    if not group.resources or fleet.sharing:
        return fleet_order, False
    ids = _provider_ids(fleet)
    rc, amount = list(group.resources.items())[-1]
    tree_root = None
    if group.in_tree is not None and group.in_tree in fleet.providers:
        tree_root = fleet.providers[group.in_tree].root
    pairs = sorted(
        (ids[p.uuid], ids[p.root])
        for p, inv in fleet.inventories_of.get(rc, ())
        if inv.fits(amount) and (tree_root is None or p.root == tree_root)
    )
    if isinstance(rows, _TreeRows):
        matching = {ids[p.uuid] for anchor in rows.anchors() for combo in rows.combos(anchor) for p in combo}
    else:
        matching = {ids[p.uuid] for found in rows.values() for p in found}
    by_id = {number: uuid for uuid, number in ids.items()}
    order: dict[str, None] = {}
    for provider_id, root_id in set(pairs):  # the set's own order, as Placement iterates it
        if provider_id in matching:
            order[by_id[root_id]] = None
    return list(order), True


def _provider_ids(fleet: Fleet) -> dict[str, int]:
    """Placement's internal ids if the providers were created in listing order, parents first."""
    ids: dict[str, int] = {}

    def number(uuid: str) -> None:
        parent = fleet.providers[uuid].parent
        if parent is not None and parent not in ids and parent in fleet.providers:
            number(parent)
        if uuid not in ids:
            ids[uuid] = len(ids) + 1

    for provider in fleet.order:
        number(provider.uuid)
    return ids


def _pre_check(fleet: Fleet, parts: list, anchor: str, multi: dict[str, int]) -> bool:
    """Placement's ``_pre_check_overall_capacity``: for each class asked by several groups, the capacity of
    the providers any group may use under this root (usage ignored) covers the total asked."""
    if not multi:
        return True
    available: set[str] = set()
    for _suffix, _group, rows in parts:
        if isinstance(rows, _TreeRows):
            for combo in rows.combos(anchor, keep=False):
                available.update(p.uuid for p in combo)
        else:
            available.update(p.uuid for p in rows.get(anchor, ()))
    for rc, total in multi.items():
        have = sum(
            fleet.providers[u].inventories[rc].capacity for u in available if rc in fleet.providers[u].inventories
        )
        if total > have:
            return False
    return True


def _collisions(walk: Walk, optimize: bool) -> int:
    """Equal-hash pairs among a root's candidates: for each run of identical levels (N groups asking the
    same of the same providers), the candidates that take the same multiset of providers differ only in
    mappings, N!/prod(t!) of them for a multiset t. Counted as the sum over multisets of m(m-1)/2, by a
    generating polynomial per run; other levels multiply the count."""
    levels = walk.levels
    runs: list[list[int]] = []
    for index, level in enumerate(levels):
        if runs and levels[runs[-1][0]] == level and all(o.pick is not None for o in level):
            runs[-1].append(index)
        else:
            runs.append([index])
    squares = 1  # sum over allocations of m^2, as a product over runs
    plain = 1  # sum over allocations of m
    for run in runs:
        level = levels[run[0]]
        n = len(run)
        if n == 1:
            squares *= len(level)
            plain *= len(level)
            continue
        # Per provider (one option each), how many of the run's groups it can take at once.
        poly_sq = [1.0] + [0.0] * n
        poly = [1.0] + [0.0] * n
        for option in level:
            most = n
            for k, amount in option.takes:
                _p, capacity, used, max_unit = walk.keys[k]
                room = min(capacity if optimize else capacity - used, max_unit)
                most = min(most, room // amount if amount else n)
            if walk.isolate:
                most = min(most, 1)
            most = max(most, 0)
            terms_sq = [1.0 / math.factorial(t) ** 2 for t in range(most + 1)]
            terms = [1.0 / math.factorial(t) for t in range(most + 1)]
            poly_sq = _times(poly_sq, terms_sq, n)
            poly = _times(poly, terms, n)
        squares *= math.factorial(n) ** 2 * poly_sq[n]
        plain *= math.factorial(n) * poly[n]
    return max(int(round((squares - plain) / 2)), 0)


def _times(a: list[float], b: list[float], n: int) -> list[float]:
    out = [0.0] * (n + 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                if i + j > n:
                    break
                out[i + j] += x * y
    return out


def generation(fleet: Fleet, request: Request, config: PlacementConfig, timeout: float = DEFAULT_TIMEOUT) -> dict:
    """What Placement 16 at ``config`` does with ``request`` (see the module docstring):

    ``roots`` (uuids, in generation order, that give the collected candidates), ``per_root`` (how many
    each gives), ``roots_determined``, ``limited`` (``limit`` then keeps a part of them that Placement's
    process decides),
    ``candidates`` (collected, before ``limit``), ``unclaimable`` (of those, the ones a claim refuses),
    ``truncated`` (max_allocation_candidates stopped generation), ``examined`` (tuples of the plain
    product, or prefixes of the pruned one), ``collisions``, ``seconds`` (predicted), ``overload``
    (``seconds`` above ``timeout``) and ``exact`` (false where a count had to be bounded rather than
    counted: ``same_subtree``, providers too unlike for classes)."""
    report = {
        "settings": config.as_dict(),
        "roots": [],
        "per_root": {},
        "roots_determined": True,
        "candidates": 0,
        "unclaimable": 0,
        "truncated": False,
        "limited": False,
        "examined": 0,
        "collisions": 0,
        "seconds": COSTS["query"],
        "overload": False,
        "timeout": timeout,
        "exact": True,
    }
    try:
        parts = group_rows(fleet, request, Budget())
    except (NoCandidates, RequestError):
        # Placement stops at the first group with nothing to offer, or answers 400: no product is walked.
        return report
    optimize = config.optimize_for_wide_provider_trees
    suffixed = [(suffix, list(group.resources.items()), rows) for suffix, group, rows in parts if suffix]
    # Placement's product takes the groups in the order they first appear in the query string.
    in_order = [(suffix, list(group.resources.items()), rows) for suffix, group, rows in parts]
    tree = next((rows for suffix, _group, rows in parts if not suffix), None)
    isolate = request.group_policy == "isolate" and len(suffixed) > 1
    if request.same_subtrees:
        report["exact"] = False
    order, determined = placement_order(fleet, request, parts)
    multi: dict[str, int] = {}
    seen_classes: set[str] = set()
    for _suffix, group, _rows in parts:
        for rc in group.resources:
            if rc in seen_classes:
                multi[rc] = 0
            seen_classes.add(rc)
    for rc in multi:
        multi[rc] = sum(g.resources.get(rc, 0) for _s, g, _r in parts)
    # Per shape (roots of one shape share their counts): walk, counts, collisions, cache, counted.
    walks: dict[tuple, tuple] = {}
    roots: list[_Root] = []
    for anchor in order:
        if any(anchor not in rows for _s, _w, rows in suffixed):
            continue
        if tree is not None and not tree.allows(anchor):
            continue
        shape = anchor_walk(fleet, anchor, in_order, isolate)
        if not all(shape[0]):
            continue
        found = walks.get(shape)
        if found is None and not _pre_check(fleet, parts, anchor, multi):
            # Roots of one shape offer the same capacities to the same groups: the same pre-check.
            walks[shape] = found = (None, None, 0, {}, False)
        if found is not None and found[0] is None:
            continue
        if found is None:
            walk = Walk(*shape, isolate=isolate)
            try:
                counts = walk.total()
                counted = True
            except TooManyStates:
                # A bound: every tuple taken for a candidate (Placement walks them all the same).
                counts = Counts(walk.raw, walk.raw, walk.raw, walk.raw)
                counted = False
            found = walks[shape] = (walk, counts, _collisions(walk, optimize) if counted else 0, {}, counted)
        walk, counts, collisions, cache, counted = found
        if not counted:
            report["exact"] = False
        yields = counts.leaves if optimize else walk.raw
        roots.append(
            _Root(anchor, walk, counts, yields, _taken(counts, optimize), counts.valid, collisions, cache, counted)
        )
    _generate(report, roots, config, determined)
    # Placement keeps list(set)[:limit] of what it collected: which ones follow its process's hash seed.
    report["limited"] = request.limit is not None and report["candidates"] > request.limit
    report["seconds"] = round(
        COSTS["query"]
        + COSTS["root"] * report.pop("_walked")
        + COSTS["prefix" if optimize else "tuple"] * report["examined"]
        + COSTS["candidate"] * report["candidates"]
        + COSTS["collision"] * report["collisions"],
        3,
    )
    report["overload"] = report["seconds"] > timeout
    return report


def _generate(report: dict, roots: list[_Root], config: PlacementConfig, determined: bool) -> None:
    """Fills the roots, candidates and work of the generation, cut at max_allocation_candidates."""
    optimize = config.optimize_for_wide_provider_trees
    cut = config.cut
    total = sum(r.candidates for r in roots)
    taken: dict[str, tuple[int, Counts | None]] = {}  # per root: yields consumed, counts within them
    if cut is None or total < cut:
        for root in roots:
            taken[root.uuid] = (root.yields, None)
    elif not config.breadth_first:
        left = cut
        for root in roots:
            if root.candidates < left:
                taken[root.uuid] = (root.yields, None)
                left -= root.candidates
                continue
            r = smallest_within(root.yields, left, lambda r, root=root: _taken(root.within(r, optimize), optimize))
            taken[root.uuid] = (r, root.within(r, optimize))
            break
    else:
        _breadth_first(roots, cut, optimize, taken)
    # Generation stops at the cut-th candidate; candidates are lost only where there were more.
    report["truncated"] = cut is not None and total > cut
    examined = candidates = unclaimable = collisions = walked = 0
    kept: dict[str, int] = {}
    for root in roots:
        if root.uuid not in taken:
            continue
        walked += 1
        r, counts = taken[root.uuid]
        if counts is None:  # the whole product
            got = root.candidates
            examined += root.counts.nodes if optimize else root.walk.raw
            unclaimable += root.candidates - root.valid if optimize else 0
            collisions += root.collisions
        else:
            got = _taken(counts, optimize)
            examined += counts.nodes if optimize else r
            unclaimable += got - counts.valid if optimize else 0
            if root.candidates > 1:
                collisions += int(root.collisions * got * (got - 1) / (root.candidates * (root.candidates - 1)))
        candidates += got
        if got:
            kept[root.uuid] = got
    report.update(
        roots=list(kept),
        per_root=kept,
        candidates=candidates,
        unclaimable=unclaimable,
        examined=examined,
        collisions=collisions,
        _walked=walked,
    )
    # The order only matters where generation was cut (without a cut every root is walked).
    report["roots_determined"] = determined or not report["truncated"]


def _breadth_first(roots: list[_Root], cut: int, optimize: bool, taken: dict) -> None:
    """One yield of each root's generator per round, until ``cut`` candidates are collected."""

    # Roots of one shape share their counts (and their cache): each shape is asked once per round count.
    shapes: dict[int, tuple[_Root, int]] = {}
    for root in roots:
        first, count = shapes.get(id(root.cache), (root, 0))
        shapes[id(root.cache)] = (first, count + 1)

    def collected(rounds: int) -> int:
        return sum(
            count * _taken(root.within(min(rounds, root.yields), optimize), optimize) for root, count in shapes.values()
        )

    longest = max(root.yields for root in roots)
    rounds = smallest_within(longest, cut, collected)
    before = collected(rounds - 1) if rounds > 1 else 0
    left = cut - before
    for root in roots:
        if root.yields < rounds - 1:
            taken[root.uuid] = (root.yields, None)  # exhausted in an earlier round: walked to its end
        elif left > 0:  # visited in the last round, before the cut
            if root.yields == rounds - 1:
                taken[root.uuid] = (root.yields, None)  # its last call walks the rest and finds it exhausted
                continue
            gained = _taken(root.within(rounds, optimize), optimize)
            gained -= _taken(root.within(rounds - 1, optimize), optimize)
            left -= gained
            taken[root.uuid] = (rounds, root.within(rounds, optimize))
        else:
            taken[root.uuid] = (rounds - 1, root.within(rounds - 1, optimize))


def duration_words(seconds: float) -> str:
    """A predicted time as a person reads it (seconds up to two minutes, then minutes, hours, days)."""
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h"
    if seconds < 365 * 86400:
        return f"{seconds / 86400:.0f} days"
    return "more than a year"


def fix_words(config: PlacementConfig) -> str:
    """The settings to change, with the values Placement's documentation gives for wide trees."""
    return (
        "set [workarounds]optimize_for_wide_provider_trees=true, [placement]max_allocation_candidates=1000 and "
        "[placement]allocation_candidates_generation_strategy=breadth-first in placement.conf (the collection "
        "renders them from accel_placement_config: see docs/placement.md), then restart placement-api"
    )
