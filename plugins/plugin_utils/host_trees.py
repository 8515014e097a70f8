# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each host's tree on its own, to count copies of a flavor and explain why none fits.

``Tree`` is one tree of the fleet alone (plus the sharing providers it may use): its candidates, the
copies placed one after another (``count``) and why it has no candidate (``reason``), each asked of the
solver on that tree.

``Structure`` stands for every host whose tree is the same but for usage and sizes (same providers in
the same places, classes, units, steps, traits and aggregates, no sharing provider): one template tree
with no usage, each inventory as large as the largest host's, and each host's usage as a row of numbers,
where what a host lacks of the largest capacity counts as used. What ``Tree`` answers host by host,
``Structure`` answers for all of them from the template's candidates, without a search per host:

- A candidate fits a host with usage ``U`` exactly when it is a candidate of the template and its summed
  amounts fit ``U`` (every check of Placement's is either structural or ``used + amount <= capacity``,
  which only tightens as usage grows; ``max_unit`` is in the structure where it can decide), and the
  solver lists a used tree's candidates in the template's order, so the copies a host takes one after
  another are the template's candidates taken in order from ``U``.
- The ``(provider, class, amount)`` every candidate of the flavor shares (the root's VCPU and MEMORY_MB,
  typically) limits the copies by a closed form, ``min(free // amount)``; what the candidates do not
  share (which devices) is counted by a closed form where their shape has one (``_closed_form``), else by
  placing copies on those providers alone, once per distinct usage of them, and the host's count is the
  smaller of the two.
  Both are what placing one copy at a time gives (``Tree.count``), to the unit: the shared part loses
  exactly ``amount`` per copy whichever candidate takes it.
- Why a host has no candidate follows ``Tree.reason``'s order: the totals (per class, the host's free
  units summed over its providers), then the explanation's checks before any search (structural ones
  decided once, room on a provider per host), and only for a host that passes all of them the search
  itself, on the template with the host's usage put in place.

Where the template's candidates are too many for the search budget, each host is asked on its own, on
the template with its usage put in place (the answers are the same, only slower).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from operator import itemgetter

from ansible_collections.accel.openstack.plugins.plugin_utils import explain as explaining
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, Inventory, Provider
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget, TooCombinatorial
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.checks import (
    NoCandidates,
    anchor_roots,
    check_resource_classes,
    check_traits,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.fast import (
    asks,
    counted_candidates,
    group_rows,
    suffixed_rows,
)

# A template names its providers by position: "\x00N\x00".
_PLACE = re.compile("\x00([0-9]+)\x00")


def copy_provider(provider: Provider, name: str) -> Provider:
    inventories = {
        rc: Inventory(i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio, i.used)
        for rc, i in provider.inventories.items()
    }
    return dataclasses.replace(provider, name=name, inventories=inventories)


def check_group_names(fleet: Fleet, group) -> None:
    """Placement's 400s for one request group, in its order: resource classes, required traits, forbidden."""
    check_resource_classes(fleet, group.resources)
    for any_of in group.required:
        check_traits(fleet, sorted(any_of))
    check_traits(fleet, sorted(group.forbidden))


def totals(request: Request) -> dict[str, int]:
    wanted: dict[str, int] = {}
    for group in request.groups.values():
        for rc, amount in group.resources.items():
            wanted[rc] = wanted.get(rc, 0) + amount
    return wanted


def viable_roots(fleet: Fleet, request: Request) -> set[str]:
    """Roots whose tree (with the sharing providers it may use) has, per class, at least the request's total
    free. Only these can anchor a candidate; the others are ruled out without a search, which for many
    groups of one class grows as providers ** groups."""
    wanted = totals(request)
    found = set()
    for root in fleet.root_uuids:
        classes = fleet.tree_classes.get(root, {})
        shared = fleet.shared_with.get(root, ())
        for rc, amount in wanted.items():
            free = sum(inv.free for _p, inv in classes.get(rc, ()))
            free += sum(p.inventories[rc].free for p in shared if rc in p.inventories)
            if free < amount:
                break
        else:
            found.add(root)
    return found


def max_free(fleet: Fleet) -> dict[str, int]:
    """Per resource class, the most any one tree (with the sharing providers it may use) has free."""
    found: dict[str, int] = {}
    for root in fleet.root_uuids:
        shared = fleet.shared_with.get(root, ())
        for rc, entries in fleet.tree_classes.get(root, {}).items():
            free = sum(inv.free for _p, inv in entries)
            free += sum(p.inventories[rc].free for p in shared if rc in p.inventories)
            if free > found.get(rc, -1):
                found[rc] = free
    for provider in (fleet.providers[u] for u in fleet.sharing):
        for rc, inv in provider.inventories.items():
            found[rc] = max(found.get(rc, 0), inv.free)
    return found


def answer(fleet: Fleet, request: Request, most: dict[str, int] | None = None, roots_only: bool = False) -> dict:
    """``allocation_candidates``, skipping the search when no tree can hold the request's totals (the names
    are still checked, so Placement's 400 comes out the same). ``most`` (from ``max_free``) makes the
    check one look-up per class for a large fleet; without it every tree is checked. ``roots_only`` gives
    the solver's roots-only answer (``roots``, ``candidates``)."""
    if most is not None:
        viable = all(amount <= most.get(rc, 0) for rc, amount in totals(request).items())
    else:
        viable = bool(viable_roots(fleet, request))
    if viable:
        return allocation_candidates(fleet, request, roots_only=roots_only)
    # Placement's 400s still come first, in its order: root traits, then per group its classes and traits,
    # until a group that no provider can serve alone ends the search.
    check_traits(fleet, sorted(request.root_required | request.root_forbidden))
    for group in request.groups.values():
        check_group_names(fleet, group)
        if not all(
            any(inv.fits(n) for _p, inv in fleet.inventories_of.get(rc, ())) for rc, n in group.resources.items()
        ):
            break
    return {"roots": [], "candidates": 0} if roots_only else {"allocation_requests": [], "provider_summaries": {}}


def totals_words(amount: int, rc: str, free: int, names: list[str], count: int) -> str:
    """The totals sentence: ``names`` are those of the first (four) of the ``count`` providers of ``rc``; the
    others are counted, never cut with an ellipsis."""
    return (
        f"the flavor asks {amount} {rc} in total; this host has {free} free over "
        f"{count} provider(s) ({', '.join(names)}{f' and {count - len(names)} more' if count > len(names) else ''})"
    )


class Tree:
    """One tree of the fleet alone (plus the sharing providers it may use), to count and explain on.

    Providers of a tree shared by several hosts are named by their position (``\\x00N\\x00``); a
    sentence about the tree gets each host's own names back from the caller."""

    def __init__(self, fleet: Fleet, root: str, templated: bool):
        tree = fleet.trees[root]
        self.root = root
        self.templated = templated
        providers = [copy_provider(p, f"\x00{i}\x00" if templated else p.name) for i, p in enumerate(tree)]
        providers += [copy_provider(p, p.name) for p in fleet.shared_with.get(root, ())]
        self.fleet = Fleet(providers, fleet.traits, fleet.resource_classes)
        self.mine = {p.uuid for p in tree}
        self._empty: Tree | None = None

    def empty(self) -> Tree:
        """The same tree with no usage (what an empty host of this shape offers)."""
        if self._empty is None:
            empty = Tree.__new__(Tree)
            providers = [copy_provider(p, p.name) for p in self.fleet.order]
            for provider in providers:
                for inv in provider.inventories.values():
                    inv.used = 0
            empty.root, empty.templated, empty.mine = self.root, self.templated, self.mine
            empty.fleet = Fleet(providers, self.fleet.traits, self.fleet.resource_classes)
            empty._empty = empty
            self._empty = empty
        return self._empty

    def candidates(self, requests: list[Request]) -> list[dict]:
        found = []
        for request in requests:
            try:
                result = answer(self.fleet, dataclasses.replace(request, limit=None))
            except RequestError:
                continue
            found += [a for a in result["allocation_requests"] if self.mine & a["allocations"].keys()]
        return found

    def count(self, requests: list[Request], cap: int) -> int:
        """Copies placed one after another, each on the first candidate that still fits."""
        inventories = self.fleet.providers
        saved = {(uuid, rc): inv.used for uuid, p in inventories.items() for rc, inv in p.inventories.items()}
        count = 0
        try:
            for candidate in self.candidates(requests):
                takes = [
                    (inventories[uuid].inventories[rc], amount)
                    for uuid, allocation in candidate["allocations"].items()
                    for rc, amount in allocation["resources"].items()
                    if amount
                ]
                while count < cap:
                    repeat = cap - count
                    for inv, amount in takes:
                        repeat = min(repeat, max(math.floor((inv.limit - inv.used) / amount), 0))
                    while repeat and any(inv.used + amount * repeat > inv.limit for inv, amount in takes):
                        repeat -= 1
                    if not repeat:
                        break
                    for inv, amount in takes:
                        inv.used += amount * repeat
                    count += repeat
                if count >= cap:
                    break
        finally:
            for (uuid, rc), used in saved.items():
                inventories[uuid].inventories[rc].used = used
        return count

    def reason(self, request: Request) -> str:
        """Why the request has no candidate on this tree, with templated provider names."""
        # Totals first: a request asking more of a class than the tree has free in all its providers
        # together is explained without searching combinations (which grow as providers ** groups).
        for rc, amount in totals(request).items():
            having = [p for p in self.fleet.order if rc in p.inventories]
            free = sum(p.inventories[rc].free for p in having)
            if having and amount > free:
                return totals_words(amount, rc, free, [p.name for p in having[:4]], len(having))
        try:
            report = explaining.explain(
                self.fleet, dataclasses.replace(request, limit=None), [self.root], unknown=False
            )
        except RequestError as exc:
            return str(exc)
        if report.get("error"):
            return report["error"]
        return report["roots"][0]["reason"]


class _Plan:
    """One query on a structure's template: its candidates as ``((index, amount), ...)`` over the
    structure's inventories, in the solver's order (``too_many`` when they are over the search budget,
    ``refused`` for Placement's 400)."""

    __slots__ = ("takes", "weight", "too_many", "refused", "_request", "_fleet", "_steps")

    def __init__(self, structure: Structure, request: Request):
        self.takes: list[tuple] = []
        self.weight = 1
        self.too_many = self.refused = False
        tree = structure.tree
        self._request = dataclasses.replace(request, limit=None)
        self._fleet = tree.fleet
        self._steps: int | None = None
        index = structure.index
        compact = _device_sets(structure, self._request)
        if compact is not None:
            self.takes, self.weight = compact
            return
        try:
            # Where the groups cannot be combined on this tree at all (isolate over fewer providers than
            # groups), counting says so without a listing that would run out of its budget.
            if counted_candidates(tree.fleet, self._request, tree.root) == 0:
                return
        except (NoCandidates, RequestError):
            pass
        try:
            result = answer(tree.fleet, self._request)
        except RequestError:
            self.refused = True
            return
        except TooCombinatorial:
            self.too_many = True
            return
        for candidate in result["allocation_requests"]:
            self.takes.append(
                tuple(
                    (index[uuid, rc], amount)
                    for uuid, allocation in candidate["allocations"].items()
                    for rc, amount in allocation["resources"].items()
                    if amount
                )
            )

    def steps(self) -> int | None:
        """The steps the solver's roots-only search spends on the template (as a whole-fleet search spends
        them on each tree, with no check of the totals first); None when it is refused."""
        if self._steps is None:
            budget = Budget()
            try:
                allocation_candidates(self._fleet, self._request, budget, roots_only=True)
            except (RequestError, TooCombinatorial):
                return None
            self._steps = budget.used
        return self._steps


# Device sets are listed instead of candidates from this many candidates on, and up to this many sets.
_SETS_FROM = 1000
_MOST_SETS = 100_000


def _device_sets(structure: Structure, request: Request) -> tuple[list[tuple], int] | None:
    """The template's candidates one per device set, where a flavor asks N single devices of an alias
    (N groups of one unit of one class over devices of capacity 1, as Nova asks ``alias:N``): the N! orders
    of one set are candidates alike for every count and check here, so each set stands for ``weight``
    of them (the product of N! over the aliases). Sets come in the order of their first candidate
    (``itertools.combinations`` of the devices in the solver's order), after the unsuffixed group's
    choices. None where the request has another shape, or has few candidates (they are listed)."""
    if request.same_subtrees:
        return None
    tree = structure.tree
    fleet, anchor, index = tree.fleet, tree.root, structure.index
    try:
        parts = group_rows(fleet, request, Budget())
    except (NoCandidates, RequestError):
        return None
    families: list[tuple[tuple, str, int, list[Provider]]] = []  # (asks key, class, groups, devices)
    classes: list[str] = [rc for _suffix, group, _rows in parts for rc in group.resources]
    unsuffixed = None
    for suffix, group, rows in parts:
        if not suffix:
            unsuffixed = rows
            continue
        if len(group.resources) != 1:
            return None
        ((rc, amount),) = group.resources.items()
        key = asks(group)
        if families and families[-1][0] == key:
            families[-1] = (key, rc, families[-1][2] + 1, families[-1][3])
            continue
        if amount != 1 or any(f[0] == key for f in families):
            return None  # a family that is not one run of equal groups
        devices = rows.get(anchor, [])
        if any(p.inventories[rc].capacity != 1 for p in devices):
            return None
        families.append((key, rc, 1, devices))
    if not families:
        return None
    for _key, rc, groups, _devices in families:
        if classes.count(rc) != groups:
            return None  # another group asks the same class
    seen: set[str] = set()
    for _key, _rc, _groups, devices in families:
        uuids = {p.uuid for p in devices}
        if uuids & seen:
            return None
        seen |= uuids
    if math.prod(math.perm(len(d), n) for _k, _rc, n, d in families) < _SETS_FROM:
        return None
    if math.prod(math.comb(len(d), n) for _k, _rc, n, d in families) > _MOST_SETS:
        return None  # too many sets to list as well: the search (and its budget) decides
    if unsuffixed is None:
        heads = [()]
    else:
        heads = [
            tuple((index[p.uuid, rc], amount) for p, (rc, amount) in zip(combo, unsuffixed.wanted))  # noqa: B905
            for combo in unsuffixed.combos(anchor, keep=False)
        ]
    weight = math.prod(math.factorial(n) for _k, _rc, n, _d in families)
    choices = [
        [tuple((index[p.uuid, rc], 1) for p in chosen) for chosen in itertools.combinations(devices, n)]
        for _key, rc, n, devices in families
    ]
    takes = [head + sum(sets, ()) for head in heads for sets in itertools.product(*choices)]
    return takes, weight


def _shared_part(candidates: list[tuple]) -> tuple[tuple, list[tuple]]:
    """What every candidate takes alike (index and amount), and what each takes beyond it."""
    shared = dict(candidates[0])
    for takes in candidates[1:]:
        mine = dict(takes)
        shared = {k: a for k, a in shared.items() if mine.get(k) == a}
        if not shared:
            break
    rest = [tuple((k, a) for k, a in takes if k not in shared) for takes in candidates]
    return tuple(shared.items()), rest


def _placed(rest: list[tuple], capacity: list[int], used: dict[int, int], cap: int) -> int:
    """Copies placed one after another on the candidates' own parts, each on the first that still fits."""
    count = 0
    for takes in rest:
        while count < cap:
            repeat = cap - count
            for k, amount in takes:
                room = (capacity[k] - used[k]) // amount
                if room < repeat:
                    repeat = room
            if repeat <= 0:
                break
            for k, amount in takes:
                used[k] += amount * repeat
            count += repeat
        if count >= cap:
            break
    return count


def _fitting(rest: list[tuple], capacity: list[int], used: dict[int, int]) -> int:
    """How many candidates' own parts fit the usage."""
    return sum(1 for takes in rest if all(used[k] + amount <= capacity[k] for k, amount in takes))


class Structure:
    """Hosts whose trees are equal but for usage: one template (no usage) and a usage row per host."""

    templated = True

    def __init__(self, fleet: Fleet, root: str, rows: list[int], usage: list[tuple], sizes: list[tuple]):
        self._fleet, self._root = fleet, root
        self.rows = rows  # positions of the hosts in the fleet's roots
        self._used = usage  # per host, the used amount of each inventory (tree order, classes sorted)
        self._sizes = sizes  # per host, (total, reserved, allocation_ratio, max_unit) of each inventory
        # Every host is measured against the largest capacity of each inventory: a host with less counts
        # the difference as used, so "used + amount <= capacity" reads the same for all of them.
        distinct = {id(row): row for row in sizes}
        self.uniform = len(distinct) == 1
        self._largest = [
            max((row[k] for row in distinct.values()), key=lambda size: (size[0] - size[1]) * size[2])
            for k in range(len(sizes[0]))
        ]
        if self.uniform:
            self.usage = usage
        else:
            largest = [int((t - r) * a) for t, r, a, _m in self._largest]
            short = {
                ident: tuple(most - int((t - r) * a) for most, (t, r, a, _m) in zip(largest, row))  # noqa: B905
                for ident, row in distinct.items()
            }
            self.usage = [
                tuple(u + s for u, s in zip(used, short[id(row)]))  # noqa: B905
                for used, row in zip(usage, sizes)  # noqa: B905
            ]
        self._tree: Tree | None = None
        self.inventories: list[Inventory] = []
        self.index: dict[tuple[str, str], int] = {}
        self.capacity: list[int] = []
        self._free: dict[int, list[int]] = {}
        self._sums: dict[tuple, list[int]] = {}
        self._plans: dict[int, tuple[Request, _Plan]] = {}
        self._host_names: dict[int, list[str]] = {}
        self._split: dict[str, tuple] = {}
        self._quotients: dict[tuple[int, int], list[int]] = {}
        self._usages: dict[tuple, list] = {}

    @property
    def tree(self) -> Tree:
        """The template: the first host's tree, with its providers named by position, no usage, and each
        inventory as large as the largest host's (``max_unit`` too): every candidate of any host is one."""
        if self._tree is None:
            self._tree = Tree(self._fleet, self._root, templated=True)
            for provider in self._tree.fleet.order:
                for rc in sorted(provider.inventories):
                    inv = provider.inventories[rc]
                    inv.used = 0
                    self.index[provider.uuid, rc] = len(self.inventories)
                    self.inventories.append(inv)
            if not self.uniform:
                for k, inv in enumerate(self.inventories):
                    _set_sizes(inv, self._largest[k], max(row[k][3] for row in self._sizes))
            self._template = [(i.total, i.reserved, i.allocation_ratio, i.max_unit) for i in self.inventories]
            self.capacity = [inv.capacity for inv in self.inventories]
        return self._tree

    # -- usage ---------------------------------------------------------------------------------
    def free(self, k: int) -> list[int]:
        """Per host, the free units of inventory ``k`` (never below 0)."""
        column = self._free.get(k)
        if column is None:
            self.tree  # noqa: B018 (sets the capacities)
            capacity = self.capacity[k]
            column = self._free[k] = [max(capacity - row[k], 0) for row in self.usage]
        return column

    def _copies(self, k: int, amount: int) -> list[int]:
        """Per host, how many times ``amount`` fits in the free units of inventory ``k``."""
        column = self._quotients.get((k, amount))
        if column is None:
            column = self._quotients[k, amount] = [free // amount for free in self.free(k)]
        return column

    def _most_copies(self, shared: tuple) -> int:
        """The most copies the shared part allows on any host (with no usage: the template's)."""
        return min(self.capacity[k] // amount for k, amount in shared)

    def _free_sum(self, ks: tuple) -> list[int]:
        column = self._sums.get(ks)
        if column is None:
            columns = [self.free(k) for k in ks]
            column = self._sums[ks] = columns[0] if len(columns) == 1 else [sum(v) for v in zip(*columns)]  # noqa: B905
        return column

    def most_free(self) -> dict[str, int]:
        """Per resource class, the most free units any host has over its providers of the class."""
        providers = self.tree.fleet.order
        found = {}
        for rc in sorted({rc for p in providers for rc in p.inventories}):
            column = self._free_sum(tuple(self.index[p.uuid, rc] for p in providers if rc in p.inventories))
            found[rc] = max(column)
        return found

    @contextmanager
    def at(self, host: int, empty: bool = False) -> Iterator[Tree]:
        """The template with host ``host``'s usage (none with ``empty``) and sizes put in place (the
        template's taken back after)."""
        tree = self.tree
        for inv, used in zip(self.inventories, self._used[host]):  # noqa: B905
            inv.used = 0 if empty else used
        if not self.uniform:
            for inv, size in zip(self.inventories, self._sizes[host]):  # noqa: B905
                _set_sizes(inv, size, size[3])
        try:
            yield tree
        finally:
            for inv in self.inventories:
                inv.used = 0
            if not self.uniform:
                for inv, size in zip(self.inventories, self._template):  # noqa: B905
                    _set_sizes(inv, size, size[3])

    # -- candidates ------------------------------------------------------------------------------
    def plan(self, request: Request) -> _Plan:
        found = self._plans.get(id(request))
        if found is None or found[0] is not request:
            found = self._plans[id(request)] = (request, _Plan(self, request))
        return found[1]

    def forget(self) -> None:
        """Drop the plans and sentences of the requests asked so far (they belong to one flavor)."""
        self._plans.clear()
        self._split.clear()

    def _by_host(self, candidates: list[tuple], cap: int, copies: bool) -> list[int]:
        """Per host: with ``copies``, the copies placed one after another (at most ``cap``); else the
        candidates that fit. The candidates' shared part gives a closed form per host (copies: its
        ``min(free // amount)`` caps the count; candidates: it fits or none does); their own parts are
        counted once per distinct usage of the inventories they take."""
        shared, rest = _shared_part(candidates)
        if shared:
            columns = [self._copies(k, amount) for k, amount in shared]
            limits = columns[0] if len(columns) == 1 else list(map(min, *columns))
            if cap < self._most_copies(shared):
                limits = [min(limit, cap) for limit in limits]
        else:
            limits = [cap] * len(self.usage)
        own = sorted({k for takes in rest for k, _a in takes})
        capacity = self.capacity
        if not own:
            value = _placed(rest, capacity, {}, cap) if copies else len(rest)
            return [(min(value, limit) if copies else value) if limit > 0 else 0 for limit in limits]
        values = self._closed_form(rest, copies)
        if values is not None:
            if copies:
                return [min(value, limit) if limit > 0 else 0 for value, limit in zip(values, limits)]  # noqa: B905
            return [value if limit > 0 else 0 for value, limit in zip(values, limits)]  # noqa: B905
        keys = self._usage_of(tuple(own))
        values = {}
        for key in {key for key, limit in zip(keys, limits) if limit > 0}:  # noqa: B905
            used = dict(zip(own, key)) if len(own) > 1 else {own[0]: key}  # noqa: B905
            values[key] = _placed(rest, capacity, used, cap) if copies else _fitting(rest, capacity, used)
        if copies:
            return [min(values[key], limit) if limit > 0 else 0 for key, limit in zip(keys, limits)]  # noqa: B905
        return [values[key] if limit > 0 else 0 for key, limit in zip(keys, limits)]  # noqa: B905

    def _closed_form(self, rest: list[tuple], copies: bool) -> list[int] | None:
        """Per host, the copies (or fitting candidates) of the candidates' own parts by a closed form, where
        the parts have one (None where they have none of these forms):

        - each part one provider, a different one each (a vGPU, or one device, per copy): provider ``k``
          gives ``free_k // amount_k`` copies, one after the other, so the copies are their sum;
        - each part ``n`` single-unit providers (``n`` devices of one alias), and the parts all the ``n``-sets
          of those providers, each as often: copies are ``free // n`` (while ``n`` are free, the first
          candidate not yet passed that takes them still fits), fitting candidates ``m * C(free, n)``."""
        size = len(rest[0])
        if any(len(takes) != size for takes in rest):
            return None
        if size == 1:
            ks = [takes[0][0] for takes in rest]
            if len(set(ks)) != len(ks):
                return None
            columns = [self._copies(k, amount) for ((k, amount),) in rest]
            if copies:
                return columns[0] if len(columns) == 1 else [sum(v) for v in zip(*columns)]  # noqa: B905
            return [sum(1 for v in values if v) for values in zip(*columns)]  # noqa: B905
        providers = sorted({k for takes in rest for k, _a in takes})
        if any(amount != 1 for takes in rest for _k, amount in takes) or any(self.capacity[k] != 1 for k in providers):
            return None
        sets: dict[frozenset, int] = {}
        for takes in rest:
            key = frozenset(k for k, _a in takes)
            sets[key] = sets.get(key, 0) + 1
        each = set(sets.values())
        if len(sets) != math.comb(len(providers), size) or len(each) != 1:
            return None
        free = self._free_sum(tuple(providers))
        if copies:
            return [n // size for n in free]
        times = each.pop()
        return [times * math.comb(n, size) for n in free]

    def _usage_of(self, ks: tuple) -> list:
        """Per host, the used amounts of inventories ``ks`` (one value for one inventory)."""
        column = self._usages.get(ks)
        if column is None:
            column = self._usages[ks] = list(map(itemgetter(*ks), self.usage))
        return column

    def counts(self, requests: list[Request], cap: int) -> list[int]:
        """Per host, ``Tree.count(requests, cap)``."""
        plans = [self.plan(request) for request in requests]
        if any(plan.too_many for plan in plans):
            found = []
            for host in range(len(self.usage)):
                with self.at(host) as tree:
                    found.append(tree.count(requests, cap))
            return found
        candidates = [takes for plan in plans for takes in plan.takes]
        if not candidates:
            return [0] * len(self.usage)
        return self._by_host(candidates, cap, copies=True)

    def candidate_counts(self, request: Request) -> tuple[list[int], int] | None:
        """Per host, how many candidates the solver gives for the request on that tree alone, and the
        steps the template's search spent (at least what any host's search takes: usage only removes
        providers from it); None when the template's search is refused (a 400, or over its budget)."""
        plan = self.plan(request)
        steps = None if plan.too_many or plan.refused else plan.steps()
        if steps is None:
            return None
        if not plan.takes:
            return [0] * len(self.usage), steps
        found = self._by_host(plan.takes, 1, copies=False)
        if plan.weight != 1:
            found = [count * plan.weight for count in found]
        return found, steps

    def first_providers(self, request: Request, group) -> list[int | None]:
        """Per host, the tree position of the first provider that alone serves the suffixed ``group`` of
        ``request`` at the host's usage (None when none does, or the root may not anchor the request)."""
        tree = self.tree
        hosts = len(self.usage)
        try:
            rows = suffixed_rows(tree.fleet, group, anchor_roots(tree.fleet, request))
        except (NoCandidates, RequestError):
            return [None] * hosts
        providers = rows.get(tree.root)
        if not providers:
            return [None] * hosts
        # They serve it with no usage: at a host's usage, the first whose every class still has room.
        position = {p.uuid: i for i, p in enumerate(tree.fleet.order)}
        capacity, index = self.capacity, self.index
        checks = [
            (
                position[p.uuid],
                [(index[p.uuid, rc], capacity[index[p.uuid, rc]] - n) for rc, n in group.resources.items()],
            )
            for p in providers
        ]
        own = sorted({k for _i, room in checks for k, _most in room})
        if not own:
            return [checks[0][0]] * hosts
        keys = self._usage_of(tuple(own))
        firsts = {}
        for key in set(keys):
            used = dict(zip(own, key)) if len(own) > 1 else {own[0]: key}  # noqa: B905
            firsts[key] = next((i for i, room in checks if all(used[k] <= most for k, most in room)), None)
        return [firsts[key] for key in keys]

    def any_fits(self, request: Request, empty: bool) -> bool:
        """Whether any host (or, with ``empty``, the template with no usage) gives the request a candidate."""
        plan = self.plan(request)
        if not plan.too_many:
            if not plan.takes:
                return False
            if not empty:
                return any(self._by_host(plan.takes, 1, copies=True))
            if self.uniform:
                return True  # the template is an empty host
            # An empty host of each size: what it lacks of the largest counts as used.
            capacity = self.capacity
            for host in self._one_per_size():
                used = [e - u for e, u in zip(self.usage[host], self._used[host])]  # noqa: B905
                if any(all(used[k] + amount <= capacity[k] for k, amount in takes) for takes in plan.takes):
                    return True
            return False
        # Too many candidates to list on the template: one is looked for on each host (an empty one of
        # each size).
        for host in self._one_per_size() if empty else range(len(self.usage)):
            with self.at(host, empty=empty) as tree:
                if _first(tree.fleet, request):
                    return True
        return False

    def _one_per_size(self) -> list[int]:
        """One host of each distinct size."""
        seen: dict[int, int] = {}
        for host, row in enumerate(self._sizes):
            seen.setdefault(id(row), host)
        return list(seen.values())

    # -- reasons ---------------------------------------------------------------------------------
    def reasons(self, request: Request, hosts: list[int]) -> dict[int, str]:
        """Per host (of ``hosts``, which have no candidate), ``Tree.reason(request)`` at its usage, in the
        host's own provider names."""
        found: dict[int, str] = {}
        left = hosts
        providers = self.tree.fleet.order
        for rc, amount in totals(request).items():
            having = [p for p in providers if rc in p.inventories]
            if not having or not left:
                continue
            sums = self._free_sum(tuple(self.index[p.uuid, rc] for p in having))
            places = [int(p.name.strip("\x00")) for p in having[:4]]
            kept = []
            for host in left:
                free = sums[host]
                if amount > free:
                    names = self._names(host)
                    found[host] = totals_words(amount, rc, free, [names[i] for i in places], len(having))
                else:
                    kept.append(host)
            left = kept
        if not left:
            return found
        for check in explaining.checks_before_search(self.tree.fleet, request, self.tree.root):
            if isinstance(check, str):
                if "\x00" in check:
                    for host in left:
                        found[host] = self._filled(check, host)
                else:
                    found.update(dict.fromkeys(left, check))
                return found
            label, rc, amount, having = check
            # A provider of the class has room when the amount is within its units and step, and
            # used + amount <= capacity (an integer, so the same as Placement's float limit).
            room = [
                (self.index[p.uuid, rc], self.capacity[self.index[p.uuid, rc]] - amount)
                for p in having
                if p.inventories[rc].min_unit <= amount <= p.inventories[rc].max_unit
                and amount % p.inventories[rc].step_size == 0
            ]
            usage = self.usage
            if len(room) == 1:
                ((k, most),) = room
                fits = [usage[host][k] <= most for host in left]
            else:
                fits = [any(usage[host][k] <= most for k, most in room) for host in left]
            kept = []
            for host, fit in zip(left, fits):  # noqa: B905
                if fit:
                    kept.append(host)
                    continue
                with self.at(host):
                    found[host] = self._filled(explaining.room_words(label, rc, amount, having), host)
            left = kept
            if not left:
                return found
        # The search itself. What it finds depends on usage only through comparisons of used + t with an
        # inventory's capacity, t being at most what the request asks of that class in all: hosts whose
        # free units, capped at that, are the same get the same sentence, found once.
        wanted = totals(request)
        capacity = self.capacity
        bounds = [(k, capacity[k], wanted[rc]) for (_uuid, rc), k in self.index.items() if rc in wanted]
        usage = self.usage
        seen: dict[tuple, str] = {}
        for host in left:
            row = usage[host]
            key = tuple([max(min(most - row[k], asked), -1) for k, most, asked in bounds])
            sentence = seen.get(key)
            if sentence is None:
                with self.at(host) as tree:
                    sentence = seen[key] = tree.reason(request)
            found[host] = self._filled(sentence, host)
        return found

    def _names(self, host: int) -> list[str]:
        """The host's own provider names, in tree order (the template's positions)."""
        names = self._host_names.get(host)
        if names is None:
            root = self._fleet.roots[self.rows[host]].uuid
            names = self._host_names[host] = [p.name for p in self._fleet.trees[root]]
        return names

    def _filled(self, sentence: str, host: int) -> str:
        """A template's sentence with the host's own provider names in place of positions."""
        parts = self._split.get(sentence)
        if parts is None:
            pieces = _PLACE.split(sentence)
            parts = self._split[sentence] = (
                ("%s".join(piece.replace("%", "%%") for piece in pieces[::2]), [int(i) for i in pieces[1::2]])
                if len(pieces) > 1
                else ()
            )
        if not parts:
            return sentence
        names = self._names(host)
        return parts[0] % tuple([names[i] for i in parts[1]])


def _set_sizes(inv: Inventory, size: tuple, max_unit: int) -> None:
    """An inventory's total, reserved, ratio (and the limit they give) and max_unit."""
    inv.total, inv.reserved, inv.allocation_ratio = size[0], size[1], size[2]
    inv.limit = (size[0] - size[1]) * size[2]
    inv.max_unit = max_unit


def _first(fleet: Fleet, request: Request) -> bool:
    try:
        return bool(answer(fleet, dataclasses.replace(request, limit=1))["allocation_requests"])
    except RequestError:
        return False


class Alone:
    """A host asked on its own tree (one that shares providers with other trees, or every host when
    structures are not used): the same questions as ``Structure``, each a search on that tree."""

    templated = False

    def __init__(self, fleet: Fleet, root: str, row: int):
        self._fleet, self._root = fleet, root
        self.rows = [row]
        self._tree: Tree | None = None

    @property
    def tree(self) -> Tree:
        if self._tree is None:
            self._tree = Tree(self._fleet, self._root, templated=False)
        return self._tree

    def forget(self) -> None:
        """Nothing is kept between flavors."""

    def counts(self, requests: list[Request], cap: int) -> list[int]:
        return [self.tree.count(requests, cap)]

    def candidate_counts(self, request: Request) -> tuple[list[int], int] | None:
        budget = Budget()
        try:
            unlimited = dataclasses.replace(request, limit=None)
            got = allocation_candidates(self.tree.fleet, unlimited, budget, roots_only=True)
        except (RequestError, TooCombinatorial):
            return None
        return [got["candidates"]], budget.used

    def any_fits(self, request: Request, empty: bool) -> bool:
        return _first((self.tree.empty() if empty else self.tree).fleet, request)

    def reasons(self, request: Request, hosts: list[int]) -> dict[int, str]:
        return dict.fromkeys(hosts, self.tree.reason(request))
