"""What both searches share: Placement's name checks in its order, root_required, member_of, same_subtree.

Each check raises ``RequestError`` (Placement would answer 400) or ``NoCandidates`` (Placement would answer
200 with no candidates; the explanations read where and why).
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import suggest
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError, RequestGroup


class NoCandidates(AccelError):
    """Raised inside the search when a step leaves nothing; carries where and why (for explanations)."""

    def __init__(self, where: str, why: str):
        super().__init__(f"{where}: {why}")
        self.where = where
        self.why = why


def _refuse_unknown(names, known, kind: str, message: str) -> None:
    for name in names:
        if name not in known:
            near = suggest(name, known)
            hint = f"Did you mean {' or '.join(near)}?" if near else f"No {kind} in the fleet is close to it."
            raise RequestError(message.format(name=name), hint)


def check_traits(fleet: Fleet, names) -> None:
    _refuse_unknown(names, fleet.traits, "trait", "No such trait(s): {name}.")


def check_resource_classes(fleet: Fleet, names) -> None:
    _refuse_unknown(
        names,
        fleet.resource_classes,
        "resource class",
        "Invalid resource class in resources parameter: No such resource class {name}.",
    )


def all_of(sets) -> set[str] | None:
    """The providers in every one of ``sets`` (None when there is none)."""
    common: set[str] | None = None
    for found in sets:
        common = found if common is None else common & found
        if not common:
            break
    return common


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


def _members(fleet: Fleet, group: RequestGroup) -> set[str] | None:
    """Providers in every member_of list (None: no member_of)."""
    if not group.member_of:
        return None
    members = all_of(fleet.members_of(any_of) for any_of in group.member_of)
    if not members:
        raise NoCandidates(group.label, "no provider is in the member_of aggregates")
    return members


def checked(fleet: Fleet, group: RequestGroup):
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


def same_subtree(fleet: Fleet, mappings, names) -> bool:
    providers: set[str] = set()
    for name in names:
        providers |= mappings.get(name, frozenset())
    if len(providers) <= 1:
        return True
    common = set.intersection(*(fleet.ancestors(p) for p in providers))
    return bool(common & providers)
