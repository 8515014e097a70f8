# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Text that ends up in a file or a path: control characters, path components, directories.

Everything the collection writes into an INI, modprobe.d or GRUB file, and every name that becomes a
path, passes through here first. The rules are full matches (``re.fullmatch``), so a trailing newline is
never taken for the end of the text.

- No control character anywhere: C0 (``\\x00``-``\\x1f``, ``\\r`` and ``\\t`` included), DEL, C1
  (``\\x85`` is a line break to some readers) and the Unicode line and paragraph separators.
- A path component (an inventory hostname, a file name) is letters, digits, ``_``, ``-``, ``.``, ``@``
  and ``+``, starts with a letter, digit or ``_`` (so never ``.`` or ``..``) and is at most 255
  characters (the longest name a Linux filesystem stores).
- A directory is an absolute path whose components are free of ``..`` and control characters.
"""

from __future__ import annotations

import re

# C0, DEL, C1, LINE SEPARATOR, PARAGRAPH SEPARATOR
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_COMPONENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,254}")
_DECIMAL = re.compile(r"[0-9]+")
COMPONENT_RULE = "letters, digits, '_', '-', '.', '@' and '+', starting with a letter, digit or '_'"


def control_character(text: str) -> str | None:
    """The first control character in ``text`` as Python writes it (``'\\r'``), or None."""
    match = _CONTROL.search(text)
    return repr(match.group(0)) if match else None


def is_decimal(text: object) -> bool:
    """Whether ``text`` is ASCII digits only (``str.isdigit`` also takes ``'²'``, which ``int`` refuses)."""
    return isinstance(text, str) and _DECIMAL.fullmatch(text) is not None


def text_problem(value: object) -> str | None:
    """Why ``value`` cannot be written into a line of a configuration file, or None."""
    if not isinstance(value, str):
        return f"is {type(value).__name__}, not a string"
    char = control_character(value)
    if char:
        return f"contains the control character {char}; a value written to a file must stay on one line"
    return None


def component_problem(value: object) -> str | None:
    """Why ``value`` cannot be one name in a path (a hostname, a file name), or None."""
    if not isinstance(value, str):
        return f"is {type(value).__name__}, not a string"
    if _COMPONENT.fullmatch(value) is None:
        return f"is not a plain file or host name ({COMPONENT_RULE}, at most 255 characters)"
    return None


def directory_problem(value: object) -> str | None:
    """Why ``value`` cannot be a directory the collection writes in, or None."""
    if not isinstance(value, str):
        return f"is {type(value).__name__}, not a string"
    if not value.startswith("/"):
        return "is not an absolute path"
    char = control_character(value)
    if char:
        return f"contains the control character {char}"
    if ".." in value.split("/"):
        return "contains '..'; give the directory itself"
    return None


MAX_JSON_DEPTH = 64


def load_json(text: str, max_depth: int = MAX_JSON_DEPTH):
    """``json.loads`` for a file the collection reads back, refusing (ValueError) what would make the
    parser recurse without end (a document nested more than ``max_depth`` deep), non-finite numbers
    (``NaN``, ``Infinity``, ``1e999``) and whole numbers of more than 18 digits, each with a message of its
    own."""
    import json

    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                raise ValueError(f"nested more than {max_depth} levels deep")
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1

    def constant(name: str):
        raise ValueError(f"holds {name}, which is not a number JSON allows")

    def whole(digits: str) -> int:
        if len(digits.lstrip("-")) > 18:
            raise ValueError(f"holds a whole number of {len(digits.lstrip('-')):,} digits; at most 18 are read")
        return int(digits)

    def real(digits: str) -> float:
        number = float(digits)
        if number in (float("inf"), float("-inf")):
            raise ValueError(f"holds {digits[:20]!r}, a number too large to be finite")
        return number

    try:
        return json.loads(text, parse_constant=constant, parse_int=whole, parse_float=real)
    except RecursionError:  # pragma: no cover - the scan above stops it first
        raise ValueError(f"nested more than {max_depth} levels deep") from None
