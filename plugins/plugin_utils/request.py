"""A ``GET /allocation_candidates`` query, parsed and validated as Placement 1.39 does.

``Request.parse()`` takes the query string (without ``?``) or a dict of its parameters (a value may be a
list for a repeated parameter) and returns a ``Request`` of ordered ``RequestGroup`` objects. Every
query that Placement answers with 400 Bad Request raises ``RequestError``; its ``placement_message`` is
the text Placement puts in the error detail, and ``hint`` may add how to fix it.

Checks run in Placement's order: parameter names and simple values first, then request-wide
parameters (``limit``, ``group_policy``, ``root_required``, ``same_subtree``), then each group in the
order its first parameter appears, then the rules that relate groups to each other. Names of traits and
resource classes are checked later, against the fleet, by the solver.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like

MICROVERSION = "1.39"
_PREFIXES = ("resources", "required", "member_of", "in_tree")
_SUFFIX = r"[a-zA-Z0-9_-]{1,64}"
_KEY = re.compile(r"^(resources|required|member_of|in_tree)(" + _SUFFIX + r")?\Z")
_KEY_REGEXES = sorted(f"^{prefix}({_SUFFIX})?$" for prefix in _PREFIXES)
_REQUEST_WIDE = ("limit", "group_policy", "root_required", "same_subtree")
_LIMIT = re.compile(r"^[1-9][0-9]*\Z")
_GROUP_POLICIES = ["none", "isolate"]
_RESOURCES_FORM = "Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024."


class RequestError(AccelError, ValueError):
    """A query Placement rejects with 400 Bad Request."""

    def __init__(self, placement_message: str, hint: str = ""):
        self.placement_message = placement_message
        self.hint = hint
        super().__init__(placement_message + (f" {hint}" if hint else ""))


@dataclass
class RequestGroup:
    """One request group: unsuffixed (may spread over a tree and sharing providers) or suffixed."""

    suffix: str
    resources: dict[str, int] = field(default_factory=dict)
    required: list[frozenset[str]] = field(default_factory=list)  # all-of a list of any-of sets
    forbidden: frozenset[str] = frozenset()
    member_of: list[frozenset[str]] = field(default_factory=list)  # all-of a list of any-of sets
    forbidden_aggregates: frozenset[str] = frozenset()
    in_tree: str | None = None

    @property
    def use_same_provider(self) -> bool:
        return bool(self.suffix)

    @property
    def label(self) -> str:
        return f"group {self.suffix!r}" if self.suffix else "the unsuffixed group"


@dataclass
class Request:
    groups: dict[str, RequestGroup]
    limit: int | None = None
    group_policy: str | None = None
    root_required: frozenset[str] = frozenset()
    root_forbidden: frozenset[str] = frozenset()
    same_subtrees: list[frozenset[str]] = field(default_factory=list)

    @classmethod
    def parse(cls, query: str | Mapping) -> Request:
        return parse(query)


def query_items(query: str | Mapping) -> list[tuple[str, str]]:
    """The (name, value) pairs of a query string or dict, in order, repeated names kept."""
    if isinstance(query, str):
        return parse_qsl(query[1:] if query.startswith("?") else query, keep_blank_values=True)
    if not isinstance(query, Mapping):
        raise RequestError(
            f"Invalid query string parameters: {query!r} is neither a query string nor a dict",
            "Give the query as 'resources=VCPU:1&required=...' or as a dict of its parameters.",
        )
    items = []
    for name, value in query.items():
        values = value if isinstance(value, list | tuple) else [value]
        for one in values:
            if isinstance(one, bool) or not isinstance(one, str | int):
                raise RequestError(
                    f"Invalid query string parameters: {one!r} is not of type 'string'",
                    f"Give parameter {name!r} as a string (or a list of strings to repeat it).",
                )
            items.append((str(name), str(one)))
    return items


def parse(query: str | Mapping) -> Request:
    items = query_items(query)
    _check_names_and_values(items)
    request = _request_wide(items)
    request.groups = _groups(items)
    _check_groups(request)
    return request


def _all(items: list[tuple[str, str]], name: str) -> list[str]:
    return [value for key, value in items if key == name]


def _check_names_and_values(items: list[tuple[str, str]]) -> None:
    names = list(dict.fromkeys(key for key, _value in items))
    extra = [name for name in names if name not in _REQUEST_WIDE and not _KEY.match(name)]
    if extra:
        quoted = ", ".join(repr(name) for name in sorted(extra))
        verb = "does not match" if len(extra) == 1 else "do not match"
        raise RequestError(
            f"Invalid query string parameters: {quoted} {verb} any of the regexes: "
            + ", ".join(repr(regex) for regex in _KEY_REGEXES),
            "Known parameters: resources, required, member_of, in_tree (each with an optional suffix), "
            "limit, group_policy, root_required, same_subtree.",
        )
    last = dict(items)
    if "limit" in last and not _LIMIT.match(last["limit"]):
        raise RequestError(
            f"Invalid query string parameters: {last['limit']!r} does not match '^[1-9][0-9]*$'",
            "limit must be a positive integer.",
        )
    if "group_policy" in last and last["group_policy"] not in _GROUP_POLICIES:
        raise RequestError(
            f"Invalid query string parameters: {last['group_policy']!r} is not one of {_GROUP_POLICIES!r}",
        )


def _traits(value: str, allow_any_of: bool) -> tuple[list[frozenset[str]], set[str]]:
    """Parse one ``required`` value: ``A,!B`` (all-of, forbidden) or ``in:A,B`` (any-of)."""
    if value.startswith("in:"):
        if not allow_any_of:
            raise RequestError(
                "Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only "
                f"supported since microversion 1.39. Got: {value}"
            )
        any_of = {name.strip() for name in value[3:].split(",")}
        if not all(any_of):
            raise RequestError(
                "Invalid query string parameters: Expected 'required' parameter value of the form: "
                f"in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: {value}"
            )
        if any(name.startswith("!") for name in any_of):
            raise RequestError(
                "Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not "
                f"support forbidden traits. Got: {value}"
            )
        return [frozenset(any_of)], set()
    names = [name.strip() for name in value.split(",")]
    forbidden = {name.lstrip("!") for name in names if name.startswith("!")}
    if not all(names) or not all(forbidden):
        raise RequestError(
            "Invalid query string parameters: Expected 'required' parameter value of the form: "
            f"HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: {value}"
        )
    return [frozenset([name]) for name in names if not name.startswith("!")], forbidden


def _request_wide(items: list[tuple[str, str]]) -> Request:
    request = Request(groups={})
    limits = _all(items, "limit")
    if limits:
        # More than 18 digits is more candidates than any answer holds: read as no limit at all.
        request.limit = int(limits[0]) if len(limits[0].strip()) <= 18 else None
    policies = _all(items, "group_policy")
    if policies:
        request.group_policy = policies[0]
    root_required = _all(items, "root_required")
    if len(root_required) > 1:
        raise RequestError(
            "Query parameter 'root_required' may be specified only once.",
            "Join the traits with commas in one root_required value.",
        )
    if root_required:
        required, forbidden = _traits(root_required[0], allow_any_of=False)
        required_names = {name for any_of in required for name in any_of}
        conflicts = required_names & forbidden
        if conflicts:
            raise RequestError(
                "Conflicting required and forbidden traits found in root_required: " + ", ".join(sorted(conflicts))
            )
        request.root_required = frozenset(required_names)
        request.root_forbidden = frozenset(forbidden)
    for value in _all(items, "same_subtree"):
        suffixes = frozenset(part.strip() for part in value.split(","))
        if "" in suffixes:
            raise RequestError(
                "Empty string (unsuffixed group) can not be specified in `same_subtree`",
                "List only suffixed groups, e.g. same_subtree=_NIC,_ACCEL.",
            )
        request.same_subtrees.append(suffixes)
    return request


def _resources(value: str) -> dict[str, int]:
    if value.strip() == "":
        raise RequestError(f"Badly formed resources parameter. {_RESOURCES_FORM} Got: empty string.")
    amounts = {}
    for pair in value.split(","):
        parts = pair.split(":")
        if len(parts) != 2:
            raise RequestError(f"Badly formed resources parameter. {_RESOURCES_FORM} Got: {pair}.")
        name, text = parts
        try:
            if len(text.strip()) > 18:  # never converted: no provider holds that many of anything
                raise ValueError(text)
            amount = int(text)
        except ValueError:
            raise RequestError(f"Requested resource {name} expected positive integer amount. Got: {text}.") from None
        if amount < 1:
            raise RequestError(f"Requested resource {name} requires amount >= 1. Got: {amount}.")
        amounts[name] = amount
    return amounts


def _member_of(value: str) -> tuple[set[str], set[str]]:
    if "," in value and not value.startswith(("in:", "!in:")):
        raise RequestError(
            "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the "
            f"valid microversion. Got: {value}"
        )
    required: set[str] = set()
    forbidden: set[str] = set()
    if value.startswith("!in:"):
        forbidden = set(value[4:].split(","))
    elif value.startswith("!"):
        forbidden = {value[1:]}
    elif value.startswith("in:"):
        required = set(value[3:].split(","))
    else:
        required = {value}
    for aggregate in sorted(required | forbidden):
        if not is_uuid_like(aggregate):
            raise RequestError(
                "Invalid query string parameters: Expected 'member_of' parameter to contain valid "
                f"UUID(s). Got: {aggregate}"
            )
    return required, forbidden


def _groups(items: list[tuple[str, str]]) -> dict[str, RequestGroup]:
    groups: dict[str, RequestGroup] = {}
    for key, value in items:
        match = _KEY.match(key)
        if not match:
            continue
        prefix, suffix = match.group(1), match.group(2) or ""
        group = groups.setdefault(suffix, RequestGroup(suffix=suffix))
        if prefix == "resources":
            group.resources = _resources(value)
        elif prefix == "required":
            required: list[frozenset[str]] = []
            forbidden: set[str] = set()
            for one in _all(items, key):
                any_of, not_any = _traits(one, allow_any_of=True)
                required += any_of
                forbidden |= not_any
            group.required, group.forbidden = required, frozenset(forbidden)
        elif prefix == "member_of":
            member_of: list[frozenset[str]] = []
            not_in: set[str] = set()
            for one in _all(items, key):
                wanted, unwanted = _member_of(one)
                if wanted:
                    member_of.append(frozenset(wanted))
                not_in |= unwanted
            group.member_of, group.forbidden_aggregates = member_of, frozenset(not_in)
        else:
            tree = value.strip()
            if not is_uuid_like(tree):
                raise RequestError(
                    "Invalid query string parameters: Expected 'in_tree' parameter to be a format of "
                    f"uuid. Got: {value}"
                )
            group.in_tree = tree
    return groups


def _check_groups(request: Request) -> None:
    groups = request.groups
    resourceless = [suffix for suffix, group in groups.items() if not group.resources]
    in_subtrees: set[str] = set().union(*request.same_subtrees)
    if len(resourceless) == len(groups):
        raise RequestError(
            "There must be at least one resources or resources[$S] parameter.",
            "Ask for an amount of some resource class, e.g. resources=VCPU:1.",
        )
    bad = sorted(suffix for suffix in resourceless if suffix not in in_subtrees)
    if bad:
        raise RequestError(
            "Resourceless suffixed group request should be specified in `same_subtree` query param: "
            f"bad group(s) - {bad}.",
            "Give each such group resources, or name it in same_subtree with the groups it anchors.",
        )
    unknown = sorted(suffix for suffix in in_subtrees if suffix not in groups)
    if unknown:
        raise RequestError(
            f"Real suffixes should be specified in `same_subtree`: {unknown} not found in {list(groups)}."
        )
    conflicts = sorted(
        f"required{suffix}: ({', '.join(sorted(any_of))})"
        for suffix, group in groups.items()
        for any_of in group.required
        if all(name in group.forbidden for name in any_of)
    )
    if conflicts:
        raise RequestError(
            "Conflicting required and forbidden traits found in the following traits keys: " + ", ".join(conflicts)
        )
    if not request.group_policy and sum(1 for group in groups.values() if group.use_same_provider) > 1:
        raise RequestError(
            'The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.',
            hint="Add group_policy=none (groups may share a provider) or group_policy=isolate.",
        )
