"""Allocation candidates with Placement 1.39 semantics, computed from a fleet snapshot.

``allocation_candidates(fleet, request)`` returns what ``GET /allocation_candidates`` returns at
microversion 1.39. The steps follow Placement's own:

1. ``root_required`` picks the roots that may anchor a candidate (root providers only).
2. Each group, in request order, yields group candidates: an anchor root, the (provider, class, amount)
   it takes and the providers it maps to. The unsuffixed group may spread its classes over the
   providers of one tree plus sharing providers (``MISC_SHARES_VIA_AGGREGATE``) that share an aggregate
   with that tree; each class comes from one provider. Its ``required`` traits must be found on the
   providers it takes from, together; ``member_of`` matches a provider or its anchor root. A suffixed
   group takes everything from one provider that itself has the traits and aggregates; a sharing
   provider may serve it for any root it shares with. A group with nothing to offer ends the search
   with no candidates, before later groups are looked at (so later unknown names are not reported).
3. Per anchor, one candidate from every group is combined; ``group_policy=isolate`` needs distinct
   providers for the suffixed groups, ``same_subtree`` needs one of the providers of the listed groups
   to be an ancestor of (or the same as) all others, and the summed amounts must fit each provider's
   capacity and max_unit.
4. Provider summaries cover every provider of each tree that gives resources to a candidate.

Candidates come out in a stable order (anchor root as the fleet lists it, then providers); ``limit``
keeps the first ones. Placement's own order is arbitrary.
"""

from __future__ import annotations

import gc
from itertools import product

from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import suggest
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import SHARING_TRAIT, Fleet, Provider
from ansible_collections.accel.openstack.plugins.plugin_utils.request import (
    Request,
    RequestError,
    RequestGroup,
)


class _GroupCandidate:
    """What one group takes for one anchor: ((provider, class, amount), ...) and its providers."""

    __slots__ = ("anchor", "takes", "providers")

    def __init__(self, anchor: str, takes: tuple, providers: frozenset[str]):
        self.anchor = anchor
        self.takes = takes
        self.providers = providers


class NoCandidates(Exception):
    """Raised inside the search when a step leaves nothing; carries where and why (for explanations)."""

    def __init__(self, where: str, why: str):
        super().__init__(f"{where}: {why}")
        self.where = where
        self.why = why


def check_traits(fleet: Fleet, names) -> None:
    for name in names:
        if name not in fleet.traits:
            near = suggest(name, fleet.traits)
            hint = f"Did you mean {' or '.join(near)}?" if near else "No trait in the fleet is close to it."
            raise RequestError(f"No such trait(s): {name}.", hint)


def check_resource_classes(fleet: Fleet, names) -> None:
    for name in names:
        if name not in fleet.resource_classes:
            near = suggest(name, fleet.resource_classes)
            hint = f"Did you mean {' or '.join(near)}?" if near else "No resource class in the fleet is close to it."
            raise RequestError(f"Invalid resource class in resources parameter: No such resource class {name}.", hint)


def anchor_roots(fleet: Fleet, request: Request) -> set[str] | None:
    """Roots allowed to anchor a candidate (None: all)."""
    if not (request.root_required or request.root_forbidden):
        return None
    check_traits(fleet, sorted(request.root_required))
    check_traits(fleet, sorted(request.root_forbidden))
    allowed = set(fleet.root_uuids)
    for trait in request.root_required:
        allowed &= fleet.by_trait.get(trait, set())
    for trait in request.root_forbidden:
        allowed -= fleet.by_trait.get(trait, set())
    if not allowed:
        raise NoCandidates("root_required", "no root provider has the required traits without the forbidden ones")
    return allowed


def _capable(fleet: Fleet, group: RequestGroup, tree_root: str | None) -> dict[str, list[Provider]]:
    capable = {}
    for rc, amount in group.resources.items():
        found = [
            p
            for p in fleet.by_class.get(rc, ())
            if p.inventories[rc].fits(amount) and (tree_root is None or p.root == tree_root)
        ]
        if not found:
            raise NoCandidates(group.label, f"no provider has {rc}:{amount} free within its limits")
        capable[rc] = found
    return capable


def _members(fleet: Fleet, group: RequestGroup) -> set[str] | None:
    """Providers in every member_of list (None: no member_of)."""
    if not group.member_of:
        return None
    members: set[str] | None = None
    for any_of in group.member_of:
        found = fleet.members_of(any_of)
        members = found if members is None else members & found
    if not members:
        raise NoCandidates(group.label, "no provider is in the member_of aggregates")
    return members


def _prepare(fleet: Fleet, group: RequestGroup):
    """Checks and lookups in Placement's order: classes, aggregates, traits, in_tree, then capacity."""
    members, tree_root = _checked(fleet, group)
    return members, tree_root, _capable(fleet, group, tree_root)


def _tree_group(fleet: Fleet, group: RequestGroup, anchors: set[str] | None) -> list[_GroupCandidate]:
    """The unsuffixed group: classes spread over one tree and the sharing providers it can use."""
    members, tree_root, capable = _prepare(fleet, group)
    if group.required and not fleet.with_trait({t for any_of in group.required for t in any_of}):
        raise NoCandidates(group.label, "no provider has any of the required traits")
    sharing = fleet.sharing if members is None else fleet.sharing & members
    bad = fleet.members_of(group.forbidden_aggregates) if group.forbidden_aggregates else set()
    per_anchor: dict[str, dict[str, list[Provider]]] | None = None
    for rc, providers in capable.items():
        rows: dict[str, list[Provider]] = {}
        for p in providers:
            rows.setdefault(p.root, []).append(p)
            if tree_root is None and p.uuid in sharing:
                for anchor in fleet.sharing_anchors(p.uuid):
                    if anchor != p.root:
                        rows.setdefault(anchor, []).append(p)
        if anchors is not None:
            rows = {a: ps for a, ps in rows.items() if a in anchors}
        if members is not None:
            rows = {a: kept for a, ps in rows.items() if (kept := [p for p in ps if a in members or p.uuid in members])}
        if bad:
            rows = {
                a: kept for a, ps in rows.items() if a not in bad and (kept := [p for p in ps if p.uuid not in bad])
            }
        if per_anchor is None:
            per_anchor = {a: {rc: ps} for a, ps in rows.items()}
        else:
            per_anchor = {a: {**found, rc: rows[a]} for a, found in per_anchor.items() if a in rows}
        if not per_anchor:
            raise NoCandidates(group.label, f"no tree can supply {rc} together with the classes before it")
    classes = list(group.resources)
    candidates = []
    for anchor, by_rc in (per_anchor or {}).items():
        choices = []
        for rc in classes:
            kept = [p for p in by_rc[rc] if not group.forbidden & p.traits]
            if not kept:
                break
            choices.append(kept)
        else:
            for combo in product(*choices):
                if group.required:
                    traits = frozenset().union(*(p.traits for p in combo))
                    if not all(any_of & traits for any_of in group.required):
                        continue
                takes = tuple((p.uuid, rc, group.resources[rc]) for p, rc in zip(combo, classes, strict=True))
                candidates.append(_GroupCandidate(anchor, takes, frozenset(p.uuid for p in combo)))
    if not candidates:
        raise NoCandidates(group.label, "no tree has providers that together carry the required traits")
    return candidates


def _single_group(fleet: Fleet, group: RequestGroup, anchors: set[str] | None) -> list[_GroupCandidate]:
    """A suffixed group: everything from one provider that itself matches."""
    members, _tree_root, capable = _prepare(fleet, group)
    positive: set[str] | None = None
    for any_of in group.required:
        found = fleet.with_trait(any_of)
        positive = found if positive is None else positive & found
        if not positive:
            raise NoCandidates(group.label, "no provider has all the required traits")
    if members is not None:
        positive = members if positive is None else positive & members
        if not positive:
            raise NoCandidates(group.label, "no provider with the required traits is in the member_of aggregates")
    bad = fleet.members_of(group.forbidden_aggregates) | fleet.with_trait(group.forbidden)
    if positive is not None:
        positive -= bad
        if not positive:
            raise NoCandidates(group.label, "every matching provider has a forbidden trait or aggregate")
    if group.resources:
        matching: set[str] | None = positive
        for providers in capable.values():
            uuids = {p.uuid for p in providers}
            matching = uuids - bad if matching is None else matching & uuids
            if not matching:
                raise NoCandidates(group.label, "no single provider has all the classes free with the traits asked")
    else:
        # Placement looks at the traits and aggregates only, and needs at least one positive filter.
        matching = positive or set()
    candidates = []
    for provider in fleet.order:
        if provider.uuid not in matching:
            continue
        takes = tuple((provider.uuid, rc, amount) for rc, amount in group.resources.items())
        mapped = frozenset([provider.uuid])
        if anchors is None or provider.root in anchors:
            candidates.append(_GroupCandidate(provider.root, takes, mapped))
        if SHARING_TRAIT in provider.traits:
            for anchor in fleet.sharing_anchors(provider.uuid):
                if anchor != provider.root and (anchors is None or anchor in anchors):
                    candidates.append(_GroupCandidate(anchor, takes, mapped))
    if not candidates:
        raise NoCandidates(group.label, "no matching provider is under a root allowed by root_required")
    return candidates


def group_candidates(fleet: Fleet, request: Request, anchors: set[str] | None) -> dict[str, list[_GroupCandidate]]:
    found = {}
    for suffix, group in request.groups.items():
        solve = _single_group if group.use_same_provider else _tree_group
        found[suffix] = solve(fleet, group, anchors)
    return found


def _combine(fleet: Fleet, request: Request, found: dict[str, list[_GroupCandidate]], relax=()):
    """Yield (amount per (provider, class), mappings) for each valid combination, per anchor.

    ``relax`` may name checks to skip ("isolate", "same_subtree", "capacity"), for explanations."""
    suffixes = list(found)
    by_anchor: dict[str, dict[str, list[_GroupCandidate]]] = {}
    for suffix in suffixes:
        for cand in found[suffix]:
            by_anchor.setdefault(cand.anchor, {}).setdefault(suffix, []).append(cand)
    granular = [s for s in suffixes if s]
    isolate = "isolate" not in relax and request.group_policy == "isolate" and len(granular) > 1
    subtrees = [] if "same_subtree" in relax else request.same_subtrees
    for lists in by_anchor.values():
        if len(lists) != len(suffixes):
            continue
        ordered = [lists[s] for s in suffixes]
        yield from _search(fleet, suffixes, ordered, isolate, subtrees, "capacity" not in relax)


def _search(fleet, suffixes, ordered, isolate, subtrees, check_capacity):
    """Depth-first over groups, pruning on isolate and capacity as soon as they fail."""
    count = len(suffixes)
    chosen: list[_GroupCandidate] = []
    amounts: dict[tuple[str, str], int] = {}
    used_granular: set[str] = set()

    def fits(cand) -> bool:
        for uuid, rc, amount in cand.takes:
            total = amounts.get((uuid, rc), 0) + amount
            inv = fleet.providers[uuid].inventories[rc]
            if total + inv.used > inv.capacity or total > inv.max_unit:
                return False
        return True

    def step(index):
        if index == count:
            mappings = {s: c.providers for s, c in zip(suffixes, chosen, strict=True)}
            if subtrees and not all(_same_subtree(fleet, mappings, names) for names in subtrees):
                return
            yield dict(amounts), mappings
            return
        suffix = suffixes[index]
        for cand in ordered[index]:
            if isolate and suffix:
                (provider,) = cand.providers
                if provider in used_granular:
                    continue
            if check_capacity and not fits(cand):
                continue
            chosen.append(cand)
            for uuid, rc, amount in cand.takes:
                amounts[(uuid, rc)] = amounts.get((uuid, rc), 0) + amount
            if isolate and suffix:
                used_granular.update(cand.providers)
            yield from step(index + 1)
            if isolate and suffix:
                used_granular.difference_update(cand.providers)
            for uuid, rc, amount in cand.takes:
                left = amounts[(uuid, rc)] - amount
                if left:
                    amounts[(uuid, rc)] = left
                else:
                    del amounts[(uuid, rc)]
            chosen.pop()

    yield from step(0)


def _same_subtree(fleet: Fleet, mappings, names) -> bool:
    providers: set[str] = set()
    for name in names:
        providers |= mappings.get(name, frozenset())
    if len(providers) <= 1:
        return True
    common = set.intersection(*(fleet.ancestors(p) for p in providers))
    return bool(common & providers)


def solve(fleet: Fleet, request: Request) -> list[tuple[dict, dict]]:
    """The distinct candidates as (amount per (provider, class), providers per group); raises NoCandidates.

    The reference search, step by step as described above; explanations use it. ``allocation_candidates``
    gives the same candidates through the faster path below."""
    anchors = anchor_roots(fleet, request)
    found = group_candidates(fleet, request, anchors)
    seen = {}
    if len(found) == 1:
        # One group: its candidates already passed every check; only anchors may repeat them.
        suffix, cands = next(iter(found.items()))
        for cand in cands:
            key = (cand.takes, cand.providers)
            if key not in seen:
                seen[key] = ({(uuid, rc): amount for uuid, rc, amount in cand.takes}, {suffix: cand.providers})
        return list(seen.values())
    for amounts, mappings in _combine(fleet, request, found):
        key = (frozenset(amounts.items()), frozenset(mappings.items()))
        if key not in seen:
            seen[key] = (amounts, mappings)
    if not seen:
        raise NoCandidates("the request", "no combination of the groups fits together")
    return list(seen.values())


# -- the fast path ---------------------------------------------------------------------------------
#
# The same candidates as ``solve`` with far less work per query: each group first yields, per anchor
# root, only the providers it may take each class from (no candidate objects); the anchors every group
# can serve are intersected before anything is combined, so trees that fail any group cost nothing
# more; the answer is built straight from provider tuples, with provider summaries copied per tree from
# dicts the fleet built once. Placement's order of checks is kept: each group, in request order, is
# checked (names, then whether it has any candidate at all) before the next group is looked at.


def _checked(fleet: Fleet, group: RequestGroup):
    """Name checks and lookups in Placement's order: classes, aggregates, traits, in_tree."""
    check_resource_classes(fleet, group.resources)
    members = _members(fleet, group)
    for any_of in group.required:
        check_traits(fleet, sorted(any_of))
    check_traits(fleet, sorted(group.forbidden))
    tree_root = None
    if group.in_tree is not None:
        target = fleet.providers.get(group.in_tree)
        if target is None:
            raise NoCandidates(group.label, f"in_tree provider {group.in_tree} is not in the fleet")
        tree_root = target.root
    return members, tree_root


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
    )

    def __init__(self, fleet: Fleet, group: RequestGroup, anchors: set[str] | None):
        self.fleet = fleet
        self.group = group
        members, tree_root = _checked(fleet, group)
        if group.required and not fleet.with_trait({t for any_of in group.required for t in any_of}):
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
        return (
            inv.used + amount <= inv.limit
            and inv.min_unit <= amount <= inv.max_unit
            and amount % inv.step_size == 0
            and not (forbidden and forbidden & p.traits)
        )

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
                if (
                    inv.used + amount <= inv.limit
                    and inv.min_unit <= amount <= inv.max_unit
                    and amount % inv.step_size == 0
                    and (
                        plain
                        or not (
                            (forbidden and forbidden & p.traits)
                            or not (any_member or p.uuid in members)
                            or (bad and p.uuid in bad)
                        )
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
            lists.append(own)
        else:
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


def _single_rows(fleet: Fleet, group: RequestGroup, anchors: set[str] | None) -> dict[str, list[Provider]]:
    """A suffixed group: per anchor, the providers that can give everything and match themselves."""
    members, tree_root = _checked(fleet, group)
    positive: set[str] | None = None
    for any_of in group.required:
        found = fleet.with_trait(any_of)
        positive = found if positive is None else positive & found
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
            ):
                continue
            if others:
                inventories = p.inventories
                for rc, n in others:
                    inv = inventories.get(rc)
                    if inv is None or not (
                        inv.used + n <= inv.limit and inv.min_unit <= n <= inv.max_unit and n % inv.step_size == 0
                    ):
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


def _answer(fleet: Fleet, request: Request) -> dict:  # noqa: C901 - one tight loop, kept in one place
    anchors = anchor_roots(fleet, request)
    parts = []
    for suffix, group in request.groups.items():
        if group.use_same_provider:
            parts.append((suffix, group, _single_rows(fleet, group, anchors)))
        else:
            parts.append((suffix, group, _TreeRows(fleet, group, anchors)))
    # Anchors every group can serve: those of the suffixed group with the fewest, in its order (fleet
    # order), kept when every other group may use them; else every root the unsuffixed group allows.
    singles = [part[2] for part in parts if not isinstance(part[2], _TreeRows)]
    trees = [part[2] for part in parts if isinstance(part[2], _TreeRows)]
    if singles:
        driver = min(singles, key=len)
        others = [rows for rows in singles if rows is not driver]
        limits = [tree for tree in trees if tree.tree_root is not None or tree.allowed_roots is not None or tree.bad]
        if others or limits:
            order = [
                anchor
                for anchor in driver
                if all(anchor in rows for rows in others) and all(tree.allows(anchor) for tree in limits)
            ]
        else:
            order = list(driver)
    else:
        order = trees[0].anchors()
    limit = request.limit
    if not singles:
        return _tree_answer(fleet, trees[0], order, limit)
    tree = trees[0] if trees else None
    # The suffixed groups in request order: (suffix, amounts, rows).
    suffixed = [(suffix, list(group.resources.items()), rows) for suffix, group, rows in parts if suffix]
    isolate = request.group_policy == "isolate" and len(suffixed) > 1
    subtrees = request.same_subtrees
    classes = [rc for part in parts for rc in part[1].resources]
    overlap = len(set(classes)) < len(classes)
    tree_wanted = list(zip(*tree.wanted, strict=True)) if tree is not None else ((), ())
    tree_classes, tree_amounts = tree_wanted
    providers = fleet.providers
    sharing = fleet.sharing
    seen: set = set()
    allocation_requests: list[dict] = []
    roots: dict[str, None] = {}
    for anchor in order:
        if tree is not None:
            combos = tree.combos(anchor, keep=False)
            if not combos:
                continue
            lists = [combos]
        else:
            lists = []
        for _suffix, _wanted, rows in suffixed:
            lists.append(rows[anchor])
        for choice in product(*lists):
            if isolate:
                picked = {p.uuid for p in (choice[1:] if tree is not None else choice)}
                if len(picked) < len(suffixed):
                    continue
            allocations: dict[str, dict] = {}
            mappings: dict[str, list[str]] = {}
            index = 0
            if tree is not None:
                combo = choice[0]
                index = 1
                for p, rc, amount in zip(combo, tree_classes, tree_amounts):  # noqa: B905 - same length
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
            if overlap and not _sums_fit(providers, allocations):
                continue
            if subtrees and not all(
                _same_subtree(fleet, {s: frozenset(u) for s, u in mappings.items()}, names) for names in subtrees
            ):
                continue
            for uuid in allocations:
                if providers[uuid].root == anchor and uuid not in sharing:
                    break
            else:
                # Taken from sharing providers only: the same candidate may come again for other anchors.
                key = tuple((uuid, tuple(sorted(a["resources"].items()))) for uuid, a in sorted(allocations.items()))
                key += tuple((s, tuple(u)) for s, u in mappings.items())
                if key in seen:
                    continue
                seen.add(key)
            allocation_requests.append({"allocations": allocations, "mappings": mappings})
            for uuid in allocations:
                roots[providers[uuid].root] = None
            if limit is not None and len(allocation_requests) >= limit:
                break
        if limit is not None and len(allocation_requests) >= limit:
            break
    return {"allocation_requests": allocation_requests, "provider_summaries": fleet.summaries_of(roots)}


def _tree_answer(fleet: Fleet, rows: _TreeRows, order, limit: int | None) -> dict:
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
    left = -1 if limit is None else limit
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
                    ):
                        fit.append(p)
                if foreign and shared[rc]:
                    for p in shared_with.get(anchor, ()):
                        if p.uuid in shared[rc]:
                            fit.append(p)
                if not fit:
                    break
                single.append(fit)
            else:
                combos = list(product(*single))
            if len(single) < len(classes):
                continue
        else:
            combos = rows.combos(anchor, keep=False)
            if not combos:
                continue
        check = foreign and (all_shared or anchor in sharing_roots)
        for combo in combos:
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
    return {"allocation_requests": allocation_requests, "provider_summaries": fleet.summaries_of(roots)}


def _sums_fit(providers, allocations) -> bool:
    for uuid, allocation in allocations.items():
        inventories = providers[uuid].inventories
        for rc, total in allocation["resources"].items():
            inv = inventories[rc]
            if total + inv.used > inv.capacity or total > inv.max_unit:
                return False
    return True


def allocation_candidates(fleet: Fleet, request: Request) -> dict:
    """Placement 1.39's answer to ``GET /allocation_candidates`` for this request.

    Provider summaries are shared with the fleet (built once per snapshot) and equal allocation entries are
    shared between candidates: read the answer, do not modify it in place.

    The answer is thousands of small acyclic dicts at fleet scale; the cyclic garbage collector is paused
    while they are built (it would only rescan the fleet's indexes) and restored afterwards."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _answer(fleet, request)
    except NoCandidates:
        return {"allocation_requests": [], "provider_summaries": {}}
    finally:
        if paused:
            gc.enable()
