# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova 34's extra-spec validation (nova-api, microversion 2.86+) from the table generated from its registry.

``nova_refusal(name, value)`` is None where ``nova.api.validation.extra_specs.validators.validate``
accepts the extra spec, else Nova's own message, found the way Nova finds it: the validator of that
exact name, else the first in the registry's order whose name pattern matches, else, for a name with a
``:`` in a namespace Nova knows, "does not appear to be a valid extra spec". Nova runs this check only
when a flavor is created or its extra specs are set at microversion 2.86 or later: a flavor that already
holds a refused key still boots.
"""

from __future__ import annotations

import re

from ansible_collections.accel.openstack.plugins.module_utils._names.extra_specs import NAMESPACES, VALIDATORS

_TRUE = ("1", "t", "true", "on", "y", "yes")
_FALSE = ("0", "f", "false", "off", "n", "no")
_BY_NAME = {row[0]: row for row in VALIDATORS}
_COMPILED: list[tuple[re.Pattern, tuple]] | None = None
_NAMESPACES = [re.compile(ns) for ns in NAMESPACES]


def _compiled() -> list[tuple[re.Pattern, tuple]]:
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = [(re.compile(row[1]), row) for row in VALIDATORS]
    return _COMPILED


def _value_refusal(row: tuple, value) -> str | None:
    _name, _regex, kind, pattern, enum, minimum, maximum = row
    if kind == "int":
        try:
            number = int(value)
        except (TypeError, ValueError):
            return f"Validation failed; '{value}' is not a valid integer value."
        if maximum is not None and maximum < number:
            return f"Validation failed; '{number}' is greater than the max value of '{maximum}'."
        if minimum is not None and minimum > number:
            return f"Validation failed; '{number}' is less than the min value of '{minimum}'."
        return None
    if kind == "bool":
        if str(value).strip().lower() not in _TRUE + _FALSE:
            return f"Validation failed; '{value}' is not a valid boolean-like value."
        return None
    if pattern is not None:
        if not re.fullmatch(pattern, str(value)):
            return f"Validation failed; '{value}' is not of the format '{pattern}'."
    elif enum is not None and value not in enum:
        return f"Validation failed; '{value}' is not one of: {', '.join(enum)}."
    return None


def nova_refusal(name: str, value) -> str | None:
    """Nova's message refusing the extra spec, or None (see the module docstring)."""
    name = str(name)
    row = _BY_NAME.get(name)
    if row is not None:
        return _value_refusal(row, value)
    for pattern, found in _compiled():
        if pattern.fullmatch(name):
            return _value_refusal(found, value)
    if ":" not in name:
        return None
    namespace = name.split(":", 1)[0]
    if not any(ns.fullmatch(namespace) for ns in _NAMESPACES):
        return None
    return f"Validation failed; extra spec '{name}' does not appear to be a valid extra spec."
