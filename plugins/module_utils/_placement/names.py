# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names Placement accepts: custom traits and resource classes, and the standard ones it ships.

Standard names (from os-traits and os-resource-classes) exist in every Placement database after
``placement-manage db sync``; this collection accepts them but never creates or deletes them. Custom
names must match Placement's own rule: ``CUSTOM_`` followed by upper-case letters, digits and ``_``,
at most 255 characters.
"""

from __future__ import annotations

import difflib
import re

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

CUSTOM_PREFIX = "CUSTOM_"
MAX_NAME_LENGTH = 255
_CUSTOM_RE = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
_NOT_ALLOWED_RE = re.compile(r"[^A-Z0-9_]")


class PlacementNameError(AccelError, ValueError):
    """A trait or resource class name Placement would refuse."""


def is_custom(name: str) -> bool:
    return name.startswith(CUSTOM_PREFIX)


def normalize(name: str) -> str:
    """The custom name an operator most likely meant: upper case, other characters as ``_``."""
    body = _NOT_ALLOWED_RE.sub("_", name.upper())
    if body.startswith(CUSTOM_PREFIX):
        body = body[len(CUSTOM_PREFIX) :]
    return CUSTOM_PREFIX + body


def custom_name_problem(name: str, kind: str) -> str | None:
    """Why Placement would refuse ``name`` as a custom ``kind`` (trait / resource class), or None."""
    if not isinstance(name, str) or not name:
        return f"{kind} name {name!r} is empty or not a string; give a name such as CUSTOM_NVIDIA_T4"
    if len(name) > MAX_NAME_LENGTH:
        return f"{kind} name {name[:40]}... is {len(name)} characters; Placement allows {MAX_NAME_LENGTH}"
    if not _CUSTOM_RE.match(name):
        return (
            f"{kind} name {name!r} is not a valid custom name: it must match ^CUSTOM_[A-Z0-9_]+$; "
            f"did you mean {normalize(name)!r}?"
        )
    return None


def split_names(names: list[str], kind: str) -> tuple[list[str], list[str]]:
    """Validate ``names`` and split them into (custom, standard), each sorted and deduplicated.

    Raises PlacementNameError naming every invalid custom name. A name that does not start with ``CUSTOM_``
    is treated as a standard name; whether Placement knows it is checked against the service.
    """
    custom, standard, problems = set(), set(), []
    for name in names:
        if isinstance(name, str) and is_custom(name.upper()) and not name.isupper():
            problems.append(custom_name_problem(name, kind))
        elif isinstance(name, str) and is_custom(name):
            problem = custom_name_problem(name, kind)
            if problem:
                problems.append(problem)
            else:
                custom.add(name)
        elif isinstance(name, str) and name and _CUSTOM_RE.match(CUSTOM_PREFIX + name):
            standard.add(name)
        else:
            problems.append(
                f"{kind} name {name!r} is neither a standard name nor a custom one; "
                f"custom names look like {normalize(str(name))!r}"
            )
    if problems:
        raise PlacementNameError("; ".join(problems))
    return sorted(custom), sorted(standard)


def suggest(name: str, known: list[str] | set[str], limit: int = 3) -> list[str]:
    """Known names close to ``name`` (for 'did you mean' hints), best first.

    Names ending in the same model token (CUSTOM_GPU_T4 and CUSTOM_NVIDIA_T4) come first, then names
    that are nearly the same string (within 0.1 of the best similarity, at least 0.75).
    """
    known = sorted(set(known) - {name})
    tail = name.rsplit("_", 1)[-1]
    same_model = [k for k in known if len(tail) >= 2 and k.rsplit("_", 1)[-1] == tail]
    scored = sorted(((difflib.SequenceMatcher(None, name, k).ratio(), k) for k in known), reverse=True)
    best = scored[0][0] if scored else 0.0
    similar = [k for score, k in scored if score >= 0.75 and score >= best - 0.1]
    out: list[str] = []
    for candidate in same_model + similar:
        if candidate not in out:
            out.append(candidate)
    return out[:limit]


def did_you_mean(name: str, known: list[str] | set[str]) -> str:
    hints = suggest(name, known)
    return f"; did you mean {' or '.join(hints)}?" if hints else ""


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
