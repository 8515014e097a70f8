"""The reference search: each group's candidates as objects, combined depth-first, step by step.

It follows the steps the package describes one by one and keeps every intermediate result, so the
explanations can replay it with a check relaxed (``combine(..., relax=...)``). ``solve`` returns the
distinct candidates; ``allocation_candidates`` reaches the same ones through the fast path.
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


class _GroupCandidate:
    """What one group takes for one anchor: ((provider, class, amount), ...) and its providers."""

    __slots__ = ("anchor", "takes", "providers")

    def __init__(self, anchor: str, takes: tuple, providers: frozenset[str]):
        self.anchor = anchor
        self.takes = takes
        self.providers = providers


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


def _prepare(fleet: Fleet, group: RequestGroup):
    """Checks and lookups in Placement's order: classes, aggregates, traits, in_tree, then capacity."""
    members, tree_root = checked(fleet, group)
    return members, tree_root, _capable(fleet, group, tree_root)


def _tree_group(
    fleet: Fleet, group: RequestGroup, anchors: set[str] | None, budget: Budget | None = None
) -> list[_GroupCandidate]:
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
            size = product_size(len(kept) for kept in choices)
            if budget is not None:
                budget.spend(size, lambda: (f"{group.label}'s {len(choices)} classes", size))  # noqa: B023
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
    positive = all_of(fleet.with_trait(any_of) for any_of in group.required)
    if positive is not None and not positive:
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


def group_candidates(
    fleet: Fleet, request: Request, anchors: set[str] | None, budget: Budget | None = None
) -> dict[str, list[_GroupCandidate]]:
    found = {}
    for suffix, group in request.groups.items():
        if group.use_same_provider:
            found[suffix] = _single_group(fleet, group, anchors)
        else:
            found[suffix] = _tree_group(fleet, group, anchors, budget)
    return found


def combine(
    fleet: Fleet, request: Request, found: dict[str, list[_GroupCandidate]], relax=(), budget: Budget | None = None
):
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
    budget = budget or Budget()

    def describe() -> tuple[str, int]:
        size = sum(product_size(len(lists.get(s, ())) for s in suffixes) for lists in by_anchor.values())
        policy = " (group_policy=isolate)" if isolate else ""
        providers = len({p for s in suffixes for cand in found[s] for p in cand.providers})
        return f"{len(suffixes)} groups{policy} over {providers} providers", size

    for lists in by_anchor.values():
        if len(lists) != len(suffixes):
            continue
        ordered = [lists[s] for s in suffixes]
        yield from _search(fleet, suffixes, ordered, isolate, subtrees, "capacity" not in relax, budget, describe)


def _search(fleet, suffixes, ordered, isolate, subtrees, check_capacity, budget, describe):
    """Depth-first over groups, pruning on isolate and capacity as soon as they fail."""
    count = len(suffixes)
    chosen: list[_GroupCandidate] = []
    amounts: dict[tuple[str, str], int] = {}
    used_granular: set[str] = set()

    def fits(cand) -> bool:
        for uuid, rc, amount in cand.takes:
            total = amounts.get((uuid, rc), 0) + amount
            if not fleet.providers[uuid].inventories[rc].holds(total):
                return False
        return True

    def step(index):
        if index == count:
            mappings = {s: c.providers for s, c in zip(suffixes, chosen, strict=True)}
            if subtrees and not all(same_subtree(fleet, mappings, names) for names in subtrees):
                return
            yield dict(amounts), mappings
            return
        suffix = suffixes[index]
        for cand in ordered[index]:
            budget.spend(1, describe)
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


def solve(fleet: Fleet, request: Request, budget: Budget | None = None) -> list[tuple[dict, dict]]:
    """The distinct candidates as (amount per (provider, class), providers per group); raises NoCandidates.

    The reference search, step by step as described above; explanations use it. ``allocation_candidates``
    gives the same candidates through the faster path below."""
    budget = budget or Budget()
    anchors = anchor_roots(fleet, request)
    found = group_candidates(fleet, request, anchors, budget)
    seen = {}
    if len(found) == 1:
        # One group: its candidates already passed every check; only anchors may repeat them.
        suffix, cands = next(iter(found.items()))
        for cand in cands:
            key = (cand.takes, cand.providers)
            if key not in seen:
                seen[key] = ({(uuid, rc): amount for uuid, rc, amount in cand.takes}, {suffix: cand.providers})
        return list(seen.values())
    for amounts, mappings in combine(fleet, request, found, budget=budget):
        key = (frozenset(amounts.items()), frozenset(mappings.items()))
        if key not in seen:
            seen[key] = (amounts, mappings)
    if not seen:
        raise NoCandidates("the request", "no combination of the groups fits together")
    return list(seen.values())
