# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names Placement accepts: custom traits and resource classes, and the standard ones it ships.

Standard names (from os-traits and os-resource-classes) exist in every Placement database after
``placement-manage db sync``; this collection accepts them but never creates or deletes them. Custom
names must match Placement's own rule: ``CUSTOM_`` followed by upper-case letters, digits and ``_``,
at most 255 characters.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._names.custom import (
    MAX_NAME_LENGTH,
    PlacementNameError,
    custom_name_problem,
    is_custom,
    is_standard_form,
    normalize,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import did_you_mean


def name_problem(name: object, kind: str) -> str | None:
    """Why Placement would refuse ``name`` as a custom ``kind`` (trait / resource class), or None."""
    problem = custom_name_problem(name)
    if problem is None:
        return None
    shown = f"{name[:40]}..." if isinstance(name, str) and len(name) > MAX_NAME_LENGTH else repr(name)
    return f"{kind} name {shown} {problem}"


def split_names(names: list[str], kind: str) -> tuple[list[str], list[str]]:
    """Validate ``names`` and split them into (custom, standard), each sorted and deduplicated.

    Raises PlacementNameError naming every invalid custom name. A name that does not start with ``CUSTOM_``
    is treated as a standard name; whether Placement knows it is checked against the service.
    """
    custom, standard, problems = set(), set(), []
    for name in names:
        if isinstance(name, str) and is_custom(name.upper()):
            problem = name_problem(name, kind)
            if problem:
                problems.append(problem)
            else:
                custom.add(name)
        elif is_standard_form(name):
            standard.add(name)
        else:
            proposal = normalize(str(name))
            problems.append(
                f"{kind} name {name!r} is neither a standard name nor a custom one; "
                f"custom names look like {proposal if proposal != 'CUSTOM_' else 'CUSTOM_GPU_T4'!r}"
            )
    if problems:
        raise PlacementNameError("; ".join(problems))
    return sorted(custom), sorted(standard)


# -- converging a set of names --------------------------------------------------------------------
KINDS = {
    "trait": {"list": "traits", "ensure": "ensure_trait", "delete": "delete_trait"},
    "resource class": {
        "list": "resource_classes",
        "ensure": "ensure_resource_class",
        "delete": "delete_resource_class",
    },
}


def _existing(client, kind: str, names: list[str]) -> set[str]:
    if kind == "trait":
        return set(client.traits(names=names))
    return set(client.resource_classes())


def _all_known(client, kind: str) -> list[str]:
    return client.traits() if kind == "trait" else client.resource_classes()


def converge_names(client, kind: str, names: list[str], state: str, check_mode: bool) -> dict:
    """Create (state=present) or delete (state=absent) custom names; check that standard names exist.

    Returns the module result: changed, created/deleted lists, standard names found, diff.
    """
    custom, standard = split_names(names, kind)
    existing = _existing(client, kind, custom + standard)
    unknown = [n for n in standard if n not in existing]
    if unknown:
        known = _all_known(client, kind)
        hints = "".join(f" {n}{did_you_mean(n, known)}" for n in unknown)
        raise PlacementNameError(
            f"{kind} names {unknown} are not standard names this Placement knows, and standard names are "
            f"never created; use a custom name such as {normalize(unknown[0])!r} or fix the spelling:{hints}"
        )
    if state == "absent" and standard:
        raise PlacementNameError(
            f"{kind} names {standard} are standard names (os-traits / os-resource-classes); Placement "
            "owns them and they are never deleted: remove them from the list"
        )
    ops = KINDS[kind]
    if state == "present":
        todo = [n for n in custom if n not in existing]
        if not check_mode:
            for name in todo:
                getattr(client, ops["ensure"])(name)
        before, after = sorted(existing & set(custom)), custom
        result_key = "created"
    else:
        todo = [n for n in custom if n in existing]
        if not check_mode:
            for name in todo:
                try:
                    getattr(client, ops["delete"])(name)
                except Exception as exc:
                    if getattr(exc, "status", None) == 409:
                        raise PlacementNameError(
                            f"{kind} {name} is still used by resource providers ({exc}); remove it from "
                            f"them first (accel.openstack.placement_provider)"
                            + (f"; already deleted: {todo[: todo.index(name)]}" if todo.index(name) else "")
                        ) from exc
                    raise
        before, after = sorted(existing & set(custom)), []
        result_key = "deleted"
    return {
        "changed": bool(todo),
        result_key: todo,
        "standard": standard,
        "diff": {"before": {ops["list"]: before}, "after": {ops["list"]: after}},
    }
