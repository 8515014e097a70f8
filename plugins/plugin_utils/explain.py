"""Why a request has no allocation candidates on a root provider, in words and numbers.

``explain(fleet, request, roots=None)`` returns ``{"candidates": N, "unknown": [...], "roots": [...]}``:
for each root provider asked about (default: every root, when there is no candidate at all) whether a
candidate is anchored there and, if not, the first constraint that fails, e.g. ``group '1' needs
VGPU:2; gpu0 has 1 free of 4 (total 4, reserved 0, ratio 1.0, used 3)``. ``unknown`` lists the traits
and resource classes of the request that no provider has, with the closest names that exist; when
Placement would answer 400 (a name it does not know), ``error`` carries its message and no root is
explained.
"""

from __future__ import annotations

from collections.abc import Iterator

from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import suggest
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, Provider
from ansible_collections.accel.openstack.plugins.plugin_utils.request import (
    Request,
    RequestError,
    RequestGroup,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.checks import NoCandidates
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import generation
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.reference import (
    combine,
    group_candidates,
    solve,
)


def _unknown_names(fleet: Fleet, request: Request) -> list[dict]:
    used_traits = set(fleet.by_trait)
    found = []
    names = [("trait", t) for t in sorted(request.root_required | request.root_forbidden)]
    for group in request.groups.values():
        names += [("resource_class", rc) for rc in group.resources]
        names += [("trait", t) for any_of in group.required for t in sorted(any_of)]
    for kind, name in dict.fromkeys(names):
        present = name in fleet.by_class if kind == "resource_class" else name in used_traits
        if not present:
            pool = fleet.by_class if kind == "resource_class" else used_traits
            found.append({"kind": kind, "name": name, "did_you_mean": suggest(name, pool)})
    return found


def _inventory_words(provider: Provider, rc: str, amount: int) -> str:
    inv = provider.inventories[rc]
    numbers = (
        f"(total {inv.total}, reserved {inv.reserved}, ratio {inv.allocation_ratio:g}, used {inv.used}, "
        f"min_unit {inv.min_unit}, max_unit {inv.max_unit}, step_size {inv.step_size})"
    )
    if inv.used + amount > inv.limit:
        return f"{provider.name} has {inv.free} free of {inv.capacity} {numbers}"
    if amount > inv.max_unit:
        return f"{provider.name} allows at most {inv.max_unit} per allocation (max_unit) {numbers}"
    if amount < inv.min_unit:
        return f"{provider.name} allocates at least {inv.min_unit} (min_unit) {numbers}"
    return f"{provider.name} allocates in steps of {inv.step_size} (step_size) {numbers}"


def room_words(label: str, rc: str, amount: int, having: list[Provider]) -> str:
    """Why no provider of ``having`` gives ``amount`` of ``rc``, naming the one with the most free."""
    best = max(having, key=lambda p: p.inventories[rc].free)
    return f"{label} needs {rc}:{amount}; {_inventory_words(best, rc, amount)}"


def _group_checks(fleet: Fleet, group: RequestGroup, root: str) -> Iterator[str | tuple]:
    """The checks of one group on one tree before any search, in order: a sentence for one that fails
    whatever the usage, or ``(rc, amount, having)`` for one that holds when a provider of ``having`` has
    room for ``amount`` (which depends on usage)."""
    tree = fleet.trees[root]
    if group.in_tree is not None:
        target = fleet.providers.get(group.in_tree)
        if target is None or target.root != root:
            yield f"{group.label} is limited by in_tree to the tree of {group.in_tree}"
            return
    pool = list(tree)
    if not group.use_same_provider:
        pool += [fleet.providers[s] for s in fleet.sharing if root in fleet.sharing_anchors(s) and s not in tree]
    for rc, amount in group.resources.items():
        having = [p for p in pool if rc in p.inventories]
        if not having:
            yield f"{group.label} needs {rc}:{amount}; no provider in this tree has {rc} inventory"
            return
        yield rc, amount, having
    for any_of in group.required:
        if not any(any_of & p.traits for p in pool):
            names = " or ".join(sorted(any_of))
            yield f"{group.label} needs trait {names}; no provider in this tree has it"
            return
    for any_of in group.member_of:
        if not any(any_of & (p.aggregates | fleet.providers[root].aggregates) for p in pool):
            yield f"{group.label} needs member_of one of {sorted(any_of)}; this tree is in none of them"
            return


def checks_before_search(fleet: Fleet, request: Request, root: str) -> Iterator[str | tuple]:
    """What ``_root_reason`` checks on a tree before it searches, in its order: a sentence for a check that
    fails whatever the usage (nothing follows it), or ``(label, rc, amount, having)`` for one that holds when
    a provider of ``having`` has room for ``amount`` (else ``room_words`` says why)."""
    provider = fleet.providers[root]
    missing = sorted(request.root_required - provider.traits)
    if missing:
        yield f"root_required needs trait(s) {', '.join(missing)} on the root; it has {sorted(provider.traits)}"
        return
    present = sorted(request.root_forbidden & provider.traits)
    if present:
        yield f"root_required forbids trait(s) {', '.join(present)}, which the root has"
        return
    for group in request.groups.values():
        for check in _group_checks(fleet, group, root):
            if isinstance(check, str):
                yield check
                return
            yield (group.label, *check)


def _root_reason(fleet: Fleet, request: Request, root: str, budget: Budget) -> str:
    for check in checks_before_search(fleet, request, root):
        if isinstance(check, str):
            return check
        label, rc, amount, having = check
        if not any(p.inventories[rc].fits(amount) for p in having):
            return room_words(label, rc, amount, having)
    return search_reason(fleet, request, root, budget)


def search_reason(fleet: Fleet, request: Request, root: str, budget: Budget) -> str:
    """Why a tree whose every group passes ``checks_before_search`` still has no candidate."""
    try:
        found = group_candidates(fleet, request, {root}, budget)
    except NoCandidates as exc:
        return f"{exc.where}: {exc.why} (in this tree)"
    if next(combine(fleet, request, found, budget=budget), None) is not None:
        return "a candidate exists here"
    for relaxed, words in (
        ("capacity", "together they exceed a provider's capacity or max_unit"),
        ("isolate", "group_policy=isolate needs a different provider for each suffixed group"),
        ("same_subtree", "no combination keeps the same_subtree groups under one of their providers"),
    ):
        if next(combine(fleet, request, found, relax=(relaxed,), budget=budget), None) is not None:
            return f"every group fits alone, but {words}"
    return "every group fits alone, but capacity, group_policy and same_subtree together rule out every combination"


def explain(fleet: Fleet, request: Request, roots=None, unknown: bool = True, config=None) -> dict:
    """Explain the request's answer for the given root uuids or names (default: all roots); one search
    budget covers the whole explanation.

    ``unknown=False`` leaves the unknown names out (an empty list): a caller explaining many trees one at a
    time looks for close names once, on the whole fleet. With ``config`` (``generation.PlacementConfig``)
    the report also has ``placement``: what Placement at those settings does with the query (roots as
    names)."""
    if config is not None:
        found = explain(fleet, request, roots, unknown)
        work = generation(fleet, request, config)
        work["roots"] = [fleet.providers[uuid].name for uuid in work["roots"]]
        work["per_root"] = {fleet.providers[uuid].name: n for uuid, n in work["per_root"].items()}
        found["placement"] = work
        return found
    budget = Budget()
    try:
        candidates = solve(fleet, request, budget)
    except NoCandidates:
        candidates = []
    except RequestError as exc:
        # Placement answers 400 here (an unknown name): say so, with the close names that exist.
        names = _unknown_names(fleet, request) if unknown else []
        return {"candidates": 0, "error": str(exc), "unknown": names, "roots": []}
    anchored = {fleet.providers[uuid].root for amounts, _mappings in candidates for uuid, _rc in amounts}
    by_name = {p.name: p.uuid for p in fleet.roots}
    if roots is None:
        wanted = [] if candidates else [p.uuid for p in fleet.roots]
    else:
        wanted = []
        for root in roots:
            uuid = by_name.get(root, root)
            if uuid not in fleet.providers or fleet.providers[uuid].parent is not None:
                raise ValueError(f"{root!r} is not a root provider of the fleet; give a root's uuid or name")
            wanted.append(uuid)
    report = []
    for uuid in wanted:
        fits = uuid in anchored
        report.append(
            {
                "uuid": uuid,
                "name": fleet.providers[uuid].name,
                "fits": fits,
                "reason": "a candidate uses this tree" if fits else _root_reason(fleet, request, uuid, budget),
            }
        )
    names = _unknown_names(fleet, request) if unknown else []
    return {"candidates": len(candidates), "unknown": names, "roots": report}
