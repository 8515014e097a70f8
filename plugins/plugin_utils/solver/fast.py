"""The fast path: the same candidates as the reference search, with far less work per query.

Each group first yields, per anchor root, only the providers it may take each class from (no candidate
objects); the anchors every group can serve are intersected before anything is combined, so trees that
fail any group cost nothing more; the answer is built straight from provider tuples, with provider
summaries copied per tree from dicts the fleet built once. Placement's order of checks is kept: each
group, in request order, is checked (names, then whether it has any candidate at all) before the next
group is looked at.
"""

from __future__ import annotations

from itertools import product

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import SHARING_TRAIT, Fleet, Provider
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestGroup
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget, product_size
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.checks import (
    NoCandidates,
    all_of,
    anchor_roots,
    checked,
    same_subtree,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.counting import Option, TooManyStates, Walk


class _TreeRows:
    """The unsuffixed group, tree by tree: its candidates under an anchor are computed when first asked.

    Only the sharing providers that fit are found up front (a few); a tree is looked at when the other
    groups leave it as a possible anchor, and stops at the first class it cannot give."""

    __slots__ = (
        "fleet",
        "group",
        "wanted",
        "tree_root",
        "allowed_roots",
        "shared",
        "members",
        "bad",
        "foreign",
        "plain",
        "_expanded",
        "budget",
    )

    def __init__(self, fleet: Fleet, group: RequestGroup, anchors: set[str] | None, budget: Budget):
        self.fleet = fleet
        self.budget = budget
        self.group = group
        members, tree_root = checked(fleet, group)
        if group.required and not any(fleet.by_trait.get(t) for any_of in group.required for t in any_of):
            raise NoCandidates(group.label, "no provider has any of the required traits")
        if not group.resources:
            raise NoCandidates(group.label, "no resources asked")
        self.wanted = list(group.resources.items())
        self.members = members
        self.bad = fleet.members_of(group.forbidden_aggregates) if group.forbidden_aggregates else frozenset()
        self.tree_root = tree_root
        self.allowed_roots = anchors
        # Sharing providers that can give each class (none with in_tree; with member_of, only members).
        self.shared: dict[str, set[str]] = {}
        if tree_root is None:
            sharing = fleet.sharing if members is None else fleet.sharing & members
            for rc, amount in self.wanted:
                self.shared[rc] = {
                    p.uuid
                    for p, inv in fleet.sharing_inventories_of.get(rc, ())
                    if p.uuid in sharing and p.uuid not in self.bad and self._fits(p, inv, amount)
                }
        self.foreign = any(self.shared.values())
        self.plain = not (group.forbidden or group.required or members is not None or self.bad)
        self._expanded: dict[str, list[tuple[Provider, ...]]] = {}
        if not any(self.combos(anchor) for anchor in self.anchors()):
            raise NoCandidates(group.label, "no tree has providers that give every class with the traits asked")

    def allows(self, anchor: str) -> bool:
        """Whether this root may anchor the group at all (before looking at its providers)."""
        return (
            (self.tree_root is None or anchor == self.tree_root)
            and (self.allowed_roots is None or anchor in self.allowed_roots)
            and anchor not in self.bad
        )

    def anchors(self):
        """The roots that may anchor the group, in fleet order."""
        if self.tree_root is not None:
            return [self.tree_root] if self.allows(self.tree_root) else []
        return (root.uuid for root in self.fleet.roots if self.allows(root.uuid))

    def _fits(self, p: Provider, inv, amount: int) -> bool:
        forbidden = self.group.forbidden
        return inv.fits(amount) and not (forbidden and forbidden & p.traits)

    def combos(self, anchor: str, keep: bool = True) -> list[tuple[Provider, ...]]:
        """The providers (one per class, in request order) of each candidate under this anchor."""
        found = self._expanded.get(anchor)
        if found is not None:
            return found
        found = []
        classes = self.fleet.tree_classes.get(anchor, {})
        shared_with = self.fleet.shared_with.get(anchor, ()) if self.foreign else ()
        members, bad, forbidden = self.members, self.bad, self.group.forbidden
        any_member = members is None or anchor in members
        lists = []
        plain = not forbidden and any_member and not bad
        for rc, amount in self.wanted:
            own = []
            for p, inv in classes.get(rc, ()):
                # Inventory.fits, inline (the hot loop of every tree).
                if (
                    inv.used + amount <= inv.limit
                    and inv.min_unit <= amount <= inv.max_unit
                    and amount % inv.step_size == 0
                ) and (
                    plain
                    or not (
                        (forbidden and forbidden & p.traits)
                        or not (any_member or p.uuid in members)
                        or (bad and p.uuid in bad)
                    )
                ):
                    own.append(p)
            if shared_with:
                shared = self.shared[rc]
                if shared:
                    for p in shared_with:
                        if p.uuid in shared:
                            own.append(p)
            if not own:
                break
            lists.append(own)  # _tree_answer repeats the plain case of this filter inline, for speed
        else:
            size = product_size(len(own) for own in lists)
            classes_asked = len(lists)
            self.budget.spend(size, lambda: (f"{self.group.label}'s {classes_asked} classes", size))  # noqa: B023
            found = list(product(*lists))
            required = self.group.required
            if required:
                found = [
                    combo
                    for combo in found
                    if all(any_of & frozenset().union(*(p.traits for p in combo)) for any_of in required)
                ]
        if keep:
            self._expanded[anchor] = found
        return found


_NOBODY: frozenset[str] = frozenset()


def _having(fleet: Fleet, any_of) -> set[str] | frozenset[str]:
    """The providers having any of the traits; for one trait, the fleet's own set (read, never changed)."""
    if len(any_of) == 1:
        for trait in any_of:
            return fleet.by_trait.get(trait, _NOBODY)
    return fleet.with_trait(any_of)


def asks(group: RequestGroup) -> tuple:
    """All a suffixed group's rows depend on, as a key: groups with equal keys have equal rows."""
    return (
        tuple(group.resources.items()),
        tuple(group.required),
        group.forbidden,
        tuple(group.member_of),
        group.forbidden_aggregates,
        group.in_tree,
    )


def suffixed_rows(fleet: Fleet, group: RequestGroup, anchors: set[str] | None) -> dict[str, list[Provider]]:
    """Per anchor root, the providers that alone serve a suffixed group, in fleet order; the anchors come
    in the order of their first such provider, which is the order candidates come out in when this group
    has the fewest anchors. Empty when no provider does."""
    try:
        return _single_rows(fleet, group, anchors)
    except NoCandidates:
        return {}


def _single_rows(fleet: Fleet, group: RequestGroup, anchors: set[str] | None) -> dict[str, list[Provider]]:
    """A suffixed group: per anchor, the providers that can give everything and match themselves."""
    members, tree_root = checked(fleet, group)
    positive = all_of(_having(fleet, any_of) for any_of in group.required)
    if members is not None:
        positive = members if positive is None else positive & members
    bad = fleet.members_of(group.forbidden_aggregates) | fleet.with_trait(group.forbidden)
    if group.resources:
        wanted = list(group.resources.items())
        first, amount = min(wanted, key=lambda item: len(fleet.inventories_of.get(item[0], ())))
        entries = fleet.inventories_of.get(first, [])
        if positive is not None and len(positive) < len(entries):
            # Fewer providers have the traits (or aggregates) than the class: start from those.
            position = fleet.position
            entries = [(fleet.providers[u], None) for u in sorted(positive, key=position.__getitem__)]
            others = wanted
        else:
            others = [(rc, n) for rc, n in wanted if rc != first]
        sharing = fleet.sharing
        matching = []
        for p, inv in entries:
            uuid = p.uuid
            if (
                (anchors is not None and p.root not in anchors and uuid not in sharing)
                or (tree_root is not None and p.root != tree_root)
                or (positive is not None and uuid not in positive)
                or uuid in bad
            ):
                continue
            if inv is not None and not (
                inv.used + amount <= inv.limit
                and inv.min_unit <= amount <= inv.max_unit
                and amount % inv.step_size == 0
            ):  # Inventory.fits, inline
                continue
            if others:
                inventories = p.inventories
                for rc, n in others:
                    inv = inventories.get(rc)
                    if inv is None or not inv.fits(n):
                        break
                else:
                    matching.append(p)
            else:
                matching.append(p)
    else:
        # Placement looks at the traits and aggregates only, and needs at least one positive filter.
        position = fleet.position
        matching = [fleet.providers[u] for u in sorted((positive or set()) - bad, key=position.__getitem__)]
    rows: dict[str, list[Provider]] = {}
    for p in matching:
        root = p.root
        if anchors is None or root in anchors:
            rows.setdefault(root, []).append(p)
        if SHARING_TRAIT in p.traits:
            for anchor in fleet.sharing_anchors(p.uuid):
                if anchor != root and (anchors is None or anchor in anchors):
                    rows.setdefault(anchor, []).append(p)
    if not rows:
        raise NoCandidates(group.label, "no provider matches every filter of the group")
    return rows


def group_rows(fleet: Fleet, request: Request, budget: Budget) -> list[tuple[str, RequestGroup, object]]:
    """Each group in request order with what it offers: ``(suffix, group, rows)``, rows being a
    ``_TreeRows`` for the unsuffixed group and ``{anchor: [providers]}`` for a suffixed one. Raises
    NoCandidates (or RequestError) at the first group Placement stops at, as Placement checks them."""
    anchors = anchor_roots(fleet, request)
    parts = []
    # Suffixed groups that ask the same (a flavor's N devices of one alias) share their rows, which are
    # only read: the fleet is walked once for all of them.
    rows_of: dict[tuple, dict[str, list[Provider]]] = {}
    for suffix, group in request.groups.items():
        if not group.use_same_provider:
            parts.append((suffix, group, _TreeRows(fleet, group, anchors, budget)))
            continue
        key = asks(group)
        rows = rows_of.get(key)
        if rows is None:
            rows = rows_of[key] = _single_rows(fleet, group, anchors)
        parts.append((suffix, group, rows))
    return parts


def answer(
    fleet: Fleet,
    request: Request,
    budget: Budget | None = None,
    roots_only: bool = False,
    quotas: dict[str, int] | None = None,
    ignore_usage: bool = False,
) -> dict:
    """Placement's answer; raises NoCandidates (or RequestError) where the reference search does, and
    TooCombinatorial when the search would take more than ``budget`` steps.

    ``roots_only``: instead of the answer, ``{"roots": [...], "candidates": N}``: the roots of the providers
    the answer's candidates take from (in the order they first appear) and how many candidates there are,
    without building the candidates or the provider summaries (the budget is spent the same way).

    ``quotas`` (``{anchor: n}``): only those anchors, in that order, each with its first ``n`` candidates
    (what a generation cut at max_allocation_candidates keeps). ``ignore_usage``: the amounts several groups
    take from one provider are checked against its capacity and max_unit without its usage, as Placement
    with ``optimize_for_wide_provider_trees`` checks them."""
    budget = budget or Budget()
    parts = group_rows(fleet, request, budget)
    if quotas is not None or ignore_usage:
        tree = next((rows for suffix, _group, rows in parts if not suffix), None)
        order = (
            list(quotas)
            if quotas is not None
            else _anchor_order(
                [rows for _s, _g, rows in parts if not isinstance(rows, _TreeRows)],
                [rows for _s, _g, rows in parts if isinstance(rows, _TreeRows)],
            )
        )
        return _combined_answer(fleet, request, parts, tree, order, budget, roots_only, quotas, ignore_usage)
    singles = [rows for _suffix, _group, rows in parts if not isinstance(rows, _TreeRows)]
    trees = [rows for _suffix, _group, rows in parts if isinstance(rows, _TreeRows)]
    order = _anchor_order(singles, trees)
    if not singles:
        return _tree_answer(fleet, trees[0], order, request.limit, budget, roots_only)
    return _combined_answer(fleet, request, parts, trees[0] if trees else None, order, budget, roots_only)


def _anchor_order(singles: list[dict[str, list[Provider]]], trees: list[_TreeRows]):
    """The anchors every group can serve, in the order candidates come out.

    Those of the suffixed group with the fewest, in its order (fleet order), kept when every other group
    may use them; with no suffixed group, every root the unsuffixed group allows."""
    if not singles:
        return trees[0].anchors()
    driver = min(singles, key=len)
    others = [rows for rows in singles if rows is not driver]
    limits = [tree for tree in trees if tree.tree_root is not None or tree.allowed_roots is not None or tree.bad]
    if not (others or limits):
        return list(driver)
    return [
        anchor
        for anchor in driver
        if all(anchor in rows for rows in others) and all(tree.allows(anchor) for tree in limits)
    ]


def _combined_answer(
    fleet: Fleet,
    request: Request,
    parts: list,
    tree: _TreeRows | None,
    order,
    budget: Budget,
    roots_only: bool = False,
    quotas: dict[str, int] | None = None,
    ignore_usage: bool = False,
) -> dict:
    """Suffixed groups (with or without the unsuffixed one): one choice per group, combined per anchor
    (``quotas`` and ``ignore_usage`` as for ``answer``)."""
    # The suffixed groups in request order: (suffix, amounts, rows).
    suffixed = [(suffix, list(group.resources.items()), rows) for suffix, group, rows in parts if suffix]
    isolate = request.group_policy == "isolate" and len(suffixed) > 1
    subtrees = request.same_subtrees
    classes = [rc for _suffix, group, _rows in parts for rc in group.resources]
    overlap = len(set(classes)) < len(classes)
    providers = fleet.providers
    sharing = fleet.sharing
    limit = request.limit
    seen: set = set()
    allocation_requests: list[dict] = []
    roots: dict[str, None] = {}
    first = 0 if tree is None else 1  # where the suffixed groups' providers start in a choice
    count = len(suffixed)

    def describe() -> tuple[str, int]:
        size = sum(product_size(len(rows.get(a, ())) for _s, _w, rows in suffixed) for a in order)
        policy = " (group_policy=isolate)" if isolate else ""
        providers_used = len({p.uuid for _s, _w, rows in suffixed for found in rows.values() for p in found})
        return f"{count} suffixed groups{policy} over {providers_used} providers", size

    spend = budget.spend
    if quotas is None and roots_only and not subtrees and not (sharing and _touches_sharing(sharing, tree, suffixed)):
        counted = _counted_roots(fleet, order, tree, suffixed, isolate, limit, lambda n: spend(n, describe))
        if counted is not None:
            return counted
    shared_classes = {rc for rc in classes if classes.count(rc) > 1} if overlap else set()
    for anchor in order:
        quota = None if quotas is None else quotas[anchor]
        if shared_classes and not _enough(anchor, tree, suffixed, parts, shared_classes, ignore_usage):
            continue
        choices = _choices(
            anchor, tree, suffixed, isolate, overlap, providers, lambda n: spend(n, describe), ignore_usage
        )
        for choice in choices:
            if quota is not None and quota <= 0:
                break
            spend(len(choice), describe)  # each choice costs its groups (a candidate of 32 groups, 32)
            if isolate and len({p.uuid for p in choice[first:]}) < count:
                continue
            allocations, mappings = _allocation(tree, choice, suffixed)
            if overlap and not _sums_fit(providers, allocations, ignore_usage):
                continue
            if subtrees and not all(
                same_subtree(fleet, {s: frozenset(u) for s, u in mappings.items()}, names) for names in subtrees
            ):
                continue
            for uuid in allocations:
                if providers[uuid].root == anchor and uuid not in sharing:
                    break
            else:
                # Taken from sharing providers only: the same candidate may come again for other anchors.
                if _seen_before(allocations, mappings, seen):
                    continue
            allocation_requests.append({"allocations": allocations, "mappings": mappings})
            if quota is not None:
                quota -= 1
            for uuid in allocations:
                roots[providers[uuid].root] = None
            if limit is not None and len(allocation_requests) >= limit:
                return _result(fleet, allocation_requests, roots, roots_only)
    return _result(fleet, allocation_requests, roots, roots_only)


def _enough(anchor: str, tree, suffixed: list, parts: list, shared_classes: set, ignore_usage: bool) -> bool:
    """Whether the providers the groups may use under ``anchor`` have, together, room for what the groups
    ask of each class several of them ask (Placement's own pre-check, with usage unless ignored): a tree
    that fails it has no candidate, and its product is not walked."""
    room: dict[tuple[str, str], int] = {}
    if tree is not None:
        for combo in tree.combos(anchor, keep=False):
            for p, (rc, _amount) in zip(combo, tree.wanted):  # noqa: B905
                if rc in shared_classes:
                    inv = p.inventories[rc]
                    room[p.uuid, rc] = inv.capacity if ignore_usage else inv.free
    for _suffix, wanted, rows in suffixed:
        for p in rows.get(anchor, ()):
            for rc, _amount in wanted:
                if rc in shared_classes:
                    inv = p.inventories[rc]
                    room[p.uuid, rc] = inv.capacity if ignore_usage else inv.free
    for rc in shared_classes:
        asked = sum(group.resources.get(rc, 0) for _suffix, group, _rows in parts)
        if asked > sum(free for (_uuid, klass), free in room.items() if klass == rc):
            return False
    return True


def _touches_sharing(sharing, tree: _TreeRows | None, suffixed: list) -> bool:
    """Whether a sharing provider may serve some group (candidates may then repeat across anchors)."""
    if tree is not None and tree.foreign:
        return True
    return any(p.uuid in sharing for _s, _w, rows in suffixed for found in rows.values() for p in found)


def anchor_walk(fleet: Fleet, anchor: str, levels_of: list, isolate: bool) -> tuple:
    """One anchor's product as a ``counting.Walk`` input: ``(levels, keys)`` with providers and keys
    numbered in the order they are first met, so that anchors with the same shape give equal values
    (usable as a cache key). ``levels_of``: per group in the order the product walks them,
    ``(suffix, amounts, rows)`` (rows: a ``_TreeRows`` for the unsuffixed group)."""
    numbers: dict[str, int] = {}
    keys: dict[tuple[str, str], int] = {}
    key_rows: list[tuple[int, int, int, int]] = []

    def key(p: Provider, rc: str) -> int:
        found = keys.get((p.uuid, rc))
        if found is None:
            number = numbers.setdefault(p.uuid, len(numbers))
            inv = p.inventories[rc]
            found = keys[p.uuid, rc] = len(key_rows)
            key_rows.append((number, inv.capacity, inv.used, inv.max_unit))
        return found

    levels = []
    built: dict[tuple[int, tuple], tuple] = {}  # groups that ask the same of the same providers: one level
    for _suffix, wanted, rows in levels_of:
        if isinstance(rows, _TreeRows):
            levels.append(
                tuple(
                    Option(tuple((key(p, rc), amount) for p, (rc, amount) in zip(combo, rows.wanted)))  # noqa: B905
                    for combo in rows.combos(anchor, keep=False)
                )
            )
            continue
        providers = rows[anchor]
        same = (id(providers), tuple(wanted))
        level = built.get(same)
        if level is None:
            level = built[same] = tuple(
                Option(tuple([(key(p, rc), amount) for rc, amount in wanted]), numbers.setdefault(p.uuid, len(numbers)))
                for p in providers
            )
        levels.append(level)
    return tuple(levels), tuple(key_rows)


def counted_candidates(fleet: Fleet, request: Request, anchor: str) -> int | None:
    """How many candidates ``anchor`` gives the request, counted by classes of providers rather than
    listed; None where counting does not apply (``same_subtree``, sharing providers, providers too unlike
    for classes). Raises NoCandidates or RequestError as the search does."""
    if request.same_subtrees or fleet.sharing:
        return None
    parts = group_rows(fleet, request, Budget())
    suffixed = [(suffix, list(group.resources.items()), rows) for suffix, group, rows in parts if suffix]
    if any(anchor not in rows for _s, _w, rows in suffixed):
        return 0
    tree = next((rows for suffix, _group, rows in parts if not suffix), None)
    if tree is not None and not tree.allows(anchor):
        return 0
    isolate = request.group_policy == "isolate" and len(suffixed) > 1
    levels = [(suffix, list(group.resources.items()), rows) for suffix, group, rows in parts]
    shape = anchor_walk(fleet, anchor, levels, isolate)
    try:
        return Walk(*shape, isolate=isolate).total().valid
    except TooManyStates:
        return None


def _counted_roots(fleet: Fleet, order, tree, suffixed: list, isolate: bool, limit, spend) -> dict | None:
    """The roots-only answer from counts (``counting.Walk``) rather than a listing, where some anchor's
    product is large; None where listing is as cheap (every product small) or the providers do not fall
    into few classes."""
    anchors = list(order)
    sizes = {}
    for anchor in anchors:
        size = product_size(len(rows[anchor]) for _s, _w, rows in suffixed)
        if tree is not None:
            size *= len(tree.combos(anchor, keep=False))
        sizes[anchor] = size
    if max(sizes.values(), default=0) <= _SMALL_PRODUCT:
        return None
    totals: dict[tuple, int] = {}
    roots: dict[str, None] = {}
    counted = 0
    left = limit if limit is not None and limit > 0 else None
    for anchor in anchors:
        if not sizes[anchor]:
            continue
        shape = anchor_walk(fleet, anchor, ([("", tree.wanted, tree)] if tree is not None else []) + suffixed, isolate)
        found = totals.get(shape)
        if found is None:
            try:
                walk = Walk(*shape, isolate=isolate)
                found = totals[shape] = walk.total().valid
            except TooManyStates:
                return None
            spend(len(walk._memo) + 1)
        if not found:
            continue
        roots[anchor] = None
        if left is None:
            counted += found
            continue
        taken = min(found, left)
        counted += taken
        left -= taken
        if not left:
            break
    return {"roots": list(roots), "candidates": counted}


def _result(fleet: Fleet, allocation_requests: list, roots: dict, roots_only: bool) -> dict:
    if roots_only:
        return {"roots": list(roots), "candidates": len(allocation_requests)}
    return {"allocation_requests": allocation_requests, "provider_summaries": fleet.summaries_of(roots)}


def _choices(
    anchor: str,
    tree: _TreeRows | None,
    suffixed: list,
    isolate: bool = False,
    overlap: bool = False,
    providers: dict | None = None,
    spend=None,
    ignore_usage: bool = False,
):
    """Each choice of one entry per group under ``anchor``: the unsuffixed group's providers (when there
    is that group), then one provider per suffixed group, in the order of their product.

    Where ``group_policy=isolate`` or a class asked by several groups can rule a prefix out (a provider
    picked twice, or amounts summed past its capacity), a prefix that no completion can save is not
    extended: the choices that remain are the product's valid ones in the product's order, and the walk
    costs what they cost rather than what the whole product would (eight groups over eight devices: 8! of
    8^8). ``spend(n)`` is charged for every prefix looked at."""
    lists = []
    if tree is not None:
        combos = tree.combos(anchor, keep=False)
        if not combos:
            return ()
        lists.append(combos)
    for _suffix, _wanted, rows in suffixed:
        lists.append(rows[anchor])
    if not (isolate or overlap) or product_size(len(found) for found in lists) <= _SMALL_PRODUCT:
        return product(*lists)
    return _pruned_product(lists, tree, suffixed, isolate, overlap, providers, spend, ignore_usage)


# Below this many combinations the plain product is walked: pruning would cost more than it saves.
_SMALL_PRODUCT = 256


def _pruned_product(lists, tree, suffixed, isolate, overlap, providers, spend, ignore_usage=False):
    """The product of ``lists`` without the prefixes that isolate or capacity rule out (see ``_choices``)."""
    first = 0 if tree is None else 1
    wanted = [tree.wanted] if tree is not None else []
    wanted += [amounts for _suffix, amounts, _rows in suffixed]
    depth = len(lists)
    chosen: list = [None] * depth
    taken: dict[tuple[str, str], int] = {}
    picked: set[str] = set()

    def takes(level: int, item) -> list[tuple[str, str, int]]:
        if level < first:
            return [(p.uuid, rc, amount) for p, (rc, amount) in zip(item, wanted[level])]  # noqa: B905
        return [(item.uuid, rc, amount) for rc, amount in wanted[level]]

    def walk(level: int):
        if level == depth:
            yield tuple(chosen)
            return
        items = lists[level]
        if spend is not None:
            spend(len(items))
        for item in items:
            pick = level >= first and isolate
            if pick and item.uuid in picked:
                continue
            adds = takes(level, item) if overlap else ()
            fits = True
            for uuid, rc, amount in adds:
                if not _holds(providers[uuid].inventories[rc], taken.get((uuid, rc), 0) + amount, ignore_usage):
                    fits = False
                    break
            if not fits:
                continue
            for uuid, rc, amount in adds:
                taken[uuid, rc] = taken.get((uuid, rc), 0) + amount
            if pick:
                picked.add(item.uuid)
            chosen[level] = item
            yield from walk(level + 1)
            if pick:
                picked.discard(item.uuid)
            for uuid, rc, amount in adds:
                taken[uuid, rc] -= amount

    return walk(0)


def _allocation(tree: _TreeRows | None, choice: tuple, suffixed: list) -> tuple[dict, dict]:
    """The allocations and mappings of one choice: the unsuffixed group's providers, then one per suffix."""
    allocations: dict[str, dict] = {}
    mappings: dict[str, list[str]] = {}
    index = 0
    if tree is not None:
        index = 1
        for p, (rc, amount) in zip(choice[0], tree.wanted):  # noqa: B905 - same length by construction
            found = allocations.get(p.uuid)
            if found is None:
                allocations[p.uuid] = {"resources": {rc: amount}}
            else:
                found["resources"][rc] = amount
        mappings[""] = sorted(allocations) if len(allocations) > 1 else list(allocations)
    for suffix, wanted, _rows in suffixed:
        uuid = choice[index].uuid
        index += 1
        mappings[suffix] = [uuid]
        if not wanted:
            continue  # a resourceless group maps a provider without taking anything from it
        found = allocations.get(uuid)
        if found is None:
            allocations[uuid] = {"resources": dict(wanted)}
        else:
            res = found["resources"]
            for rc, amount in wanted:
                res[rc] = res.get(rc, 0) + amount
    return allocations, mappings


def _seen_before(allocations: dict, mappings: dict, seen: set) -> bool:
    """Whether an equal candidate was already given (under another anchor); records it when not."""
    key = tuple((uuid, tuple(sorted(a["resources"].items()))) for uuid, a in sorted(allocations.items()))
    key += tuple((s, tuple(u)) for s, u in mappings.items())
    if key in seen:
        return True
    seen.add(key)
    return False


def _tree_answer(
    fleet: Fleet, rows: _TreeRows, order, limit: int | None, budget: Budget, roots_only: bool = False
) -> dict:
    """The most common shape, an unsuffixed group alone: no combination across groups."""
    classes = [rc for rc, _amount in rows.wanted]
    pairs = list(rows.wanted)
    entries: dict[tuple, dict] = {}
    foreign = rows.foreign
    sharing = fleet.sharing
    # A candidate can come again under another anchor only when all its providers are sharing ones:
    # possible when every class has a sharing provider, or the anchor's own tree has one.
    all_shared = foreign and all(rows.shared.get(rc) for rc in classes)
    sharing_roots = fleet.sharing_roots
    seen: set = set()
    allocation_requests: list[dict] = []
    append = allocation_requests.append
    roots: dict[str, None] = {}
    left = limit if limit is not None and limit > 0 else -1  # -1: no limit
    counted = 0
    plain = rows.plain
    tree_classes = fleet.tree_classes
    shared_with = fleet.shared_with
    shared = rows.shared
    for anchor in order:
        if plain:
            # Inline of combos() for a group with no trait or aggregate filter: one provider per class
            # (the usual tree) gives one candidate without building the product.
            tree = tree_classes.get(anchor, {})
            single = []
            for rc, amount in rows.wanted:
                fit = []
                for p, inv in tree.get(rc, ()):
                    if (
                        inv.used + amount <= inv.limit
                        and inv.min_unit <= amount <= inv.max_unit
                        and amount % inv.step_size == 0
                    ):  # Inventory.fits, inline
                        fit.append(p)
                if foreign and shared[rc]:
                    for p in shared_with.get(anchor, ()):
                        if p.uuid in shared[rc]:
                            fit.append(p)
                if not fit:
                    break
                # Written out again rather than shared with the filter in combos(): this loop runs once per
                # anchor and class, and a helper call per class made this setup about 18% slower (3 classes,
                # one provider each, timed with timeit on Python 3.11). combos() also filters by traits,
                # members and excluded providers, which this plain path never needs.
                single.append(fit)
            else:
                size = product_size(len(fit) for fit in single)
                # The refusal is phrased at once, inside this iteration: the names it reads are this anchor's.
                budget.spend(size, lambda: (f"{len(single)} classes over one tree's providers", size))  # noqa: B023
                if roots_only and not foreign:
                    # Every combination is one candidate of this anchor's tree: count them, build none.
                    taken = size if left < 0 else min(size, left)
                    counted += taken
                    roots[anchor] = None
                    left -= taken
                    if not left:
                        break
                    continue
                combos = list(product(*single))
            if len(single) < len(classes):
                continue
        else:
            combos = rows.combos(anchor, keep=False)
            if not combos:
                continue
        check = foreign and (all_shared or anchor in sharing_roots)
        # The two branches below (roots only, full candidates) repeat the sharing-only de-duplication and the
        # roots bookkeeping inline: this loop runs once per combination, and moving either into a helper made
        # it about 35% slower (1,000 three-provider combinations, timed with timeit on Python 3.11).
        for combo in combos:
            if roots_only:
                if check:
                    for p in combo:
                        if p.root == anchor and p.uuid not in sharing:
                            break
                    else:
                        key = tuple(p.uuid for p in combo)
                        if key in seen:
                            continue
                        seen.add(key)
                counted += 1
                if foreign:
                    for p in combo:
                        roots[p.root] = None
                else:
                    roots[anchor] = None
                left -= 1
                if not left:
                    break
                continue
            # Which classes each provider gives; equal entries are one shared dict across candidates.
            given: dict[str, tuple] = {}
            for p, pair in zip(combo, pairs):  # noqa: B905 - same length by construction
                given[p.uuid] = given.get(p.uuid, ()) + (pair,)
            allocations: dict[str, dict] = {}
            for uuid, key in given.items():
                entry = entries.get(key)
                if entry is None:
                    entry = entries[key] = {"resources": dict(key)}
                allocations[uuid] = entry
            if check:
                for p in combo:
                    if p.root == anchor and p.uuid not in sharing:
                        break
                else:
                    # Taken from sharing providers only: the same candidate may come again for other anchors.
                    key = tuple(p.uuid for p in combo)
                    if key in seen:
                        continue
                    seen.add(key)
            append({"allocations": allocations, "mappings": {"": sorted(allocations)}})
            if foreign:
                for p in combo:
                    roots[p.root] = None
            else:
                roots[anchor] = None
            left -= 1
            if not left:
                break
        if not left:
            break
    if roots_only:
        return {"roots": list(roots), "candidates": counted}
    return {"allocation_requests": allocation_requests, "provider_summaries": fleet.summaries_of(roots)}


def _holds(inv, total: int, ignore_usage: bool) -> bool:
    if ignore_usage:
        return total <= inv.capacity and total <= inv.max_unit
    return inv.holds(total)


def _sums_fit(providers, allocations, ignore_usage: bool = False) -> bool:
    """Whether every provider holds the summed amounts of all groups that take from it (with
    ``ignore_usage``, within its capacity and max_unit whatever it has in use)."""
    for uuid, allocation in allocations.items():
        inventories = providers[uuid].inventories
        for rc, total in allocation["resources"].items():
            if not _holds(inventories[rc], total, ignore_usage):
                return False
    return True


def claimable(fleet: Fleet, allocation_request: dict) -> bool:
    """Whether a candidate's amounts fit its providers' free capacity (what a claim of it checks)."""
    return _sums_fit(fleet.providers, allocation_request["allocations"])
