"""Type checks for the arguments of filters and lookups, before any work starts.

Ansible checks the types of a module's options, and of a lookup's declared options, but not of a
filter's arguments or a lookup's terms. ``check(plugin, option, value, kind)`` answers a wrong type with
the plugin, the argument, the type it got and what it expected, as an :class:`ArgumentTypeError` (an
AccelError and a TypeError); ``filter_errors`` turns those, and every other AccelError, into an
``AnsibleFilterError`` with the same message, so a filter never shows a Python traceback for bad input.

Kinds: ``"mapping"``, ``"list"`` (not a string: a string would be taken character by character),
``"string"``, ``"boolean"`` (a real boolean or one of Ansible's boolean words), ``"integer"`` (not a
boolean; ``minimum`` bounds it), ``"query"`` (a query string or a mapping of its parameters).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs

EXPECTED = {
    "mapping": "a mapping (dict)",
    "list": "a list",
    "string": "a string",
    "boolean": "a boolean (true or false)",
    "integer": "a whole number",
    "query": "a query string or a mapping of query parameters",
}


class ArgumentTypeError(AccelError, TypeError):
    """An argument of the wrong type; the message names the plugin, the argument, the type and the fix."""


def _shown(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return "a whole number of more than 19 digits"
    if isinstance(value, str) and len(value) > 60:
        return repr(value[:57]) + "..."
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check(plugin: str, option: str, value, kind: str, minimum: int | None = None, optional: bool = False):
    """``value`` converted to ``kind`` (booleans from Ansible's words), or ArgumentTypeError."""
    if value is None and optional:
        return None
    ok = False
    converted = value
    if kind == "mapping":
        ok = isinstance(value, Mapping)
    elif kind == "list":
        ok = isinstance(value, list | tuple)
    elif kind == "string":
        ok = isinstance(value, str)
    elif kind == "query":
        ok = isinstance(value, str | Mapping)
    elif kind == "boolean":
        if isinstance(value, bool):
            ok = True
        elif isinstance(value, str | int) and not isinstance(value, bool):
            word = str(value).lower() if isinstance(value, str) else value
            if word in BOOLEANS_TRUE or word in BOOLEANS_FALSE:
                ok, converted = True, word in BOOLEANS_TRUE
    elif kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok and isinstance(value, str) and value.strip().isascii() and value.strip().lstrip("-").isdigit():
            ok, converted = True, value.strip()
        if ok:
            try:
                converted = inputs.integer(converted, f"{plugin}: {option}", None, None)
            except inputs.InputError as exc:
                raise ArgumentTypeError(exc.msg, option=option) from None
        if ok and minimum is not None and converted < minimum:
            raise ArgumentTypeError(f"{plugin}: {option} is {converted}; give {minimum} or more")
    else:  # pragma: no cover - a programming error, not an input error
        raise ValueError(f"unknown kind {kind!r}")
    if not ok:
        raise ArgumentTypeError(
            f"{plugin}: {option} is {kind_of(value)} ({_shown(value)}); expected {EXPECTED[kind]}",
            option=option,
        )
    if kind in ("mapping", "list", "query", "string"):
        # Plain data from here on: ansible-core's tagged values and lazy templates copied out, with
        # nesting, size and numbers bounded (plugin_utils/inputs.py).
        try:
            converted = inputs.plain(converted, f"{plugin}: {option}")
        except inputs.InputError as exc:
            raise ArgumentTypeError(exc.msg, option=option) from None
    return converted


def filter_errors(function: Callable) -> Callable:
    """Wrap a filter so that every AccelError (an ArgumentTypeError included) is an AnsibleFilterError."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except AccelError as exc:
            raise AnsibleFilterError(exc.msg) from None

    return wrapper
