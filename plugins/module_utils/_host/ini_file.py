# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Edit the keys we own in an INI file and leave every other line as it was.

Ownership is recorded in the file itself, in one header comment::

    # accel.openstack owns: devices.enabled_mdev_types pci.alias pci.device_spec

On each update the keys listed there and the keys wanted now are removed wherever they appear, then
the wanted keys are written at the end of their sections (sections are created at the end of the
file, in the order given). Keys we no longer want therefore disappear, keys we never owned stay,
and a section left empty by us is removed. Multi-valued keys are written as repeated lines. The same
input always produces the same text, so a second run changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.text import control_character

OWNER_PREFIX = "# accel.openstack owns:"
SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*\Z")
KEY = re.compile(r"^\s*([^=:#;\s][^=:]*?)\s*[=:]")

IniConfig = dict[str, dict[str, list[str]]]


class IniError(AccelError, ValueError):
    """The desired content cannot be written; the message names the bad key or value."""


def _validate(desired: IniConfig) -> None:
    for section, keys in desired.items():
        if not isinstance(section, str) or not section or "]" in section or control_character(section):
            raise IniError(f"section name {section!r} cannot be written in an INI file")
        if not isinstance(keys, dict):
            raise IniError(f"[{section}]: keys must be a mapping of key to a list of values")
        for key, values in keys.items():
            if (
                not isinstance(key, str)
                or not key
                or "=" in key
                or ":" in key
                or key.strip() != key
                or key[0] in "#;["
                or control_character(key)
            ):
                raise IniError(f"[{section}] key {key!r} cannot be written in an INI file")
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise IniError(f"[{section}] {key}: values must be a list of strings")
            for value in values:
                char = control_character(value)
                if char:
                    raise IniError(
                        f"[{section}] {key}: the value {value[:60]!r} contains the control character {char}; "
                        "a value must stay on its own line (a carriage return or newline would let it start "
                        "a new line or section that oslo.config reads)"
                    )


def split_lines(text: str, path: str = "the file") -> tuple[list[str], str]:
    """(lines, newline) of an existing file, so it is written back with its own line endings.

    Lines are split at ``\n`` only (as oslo.config and the shell read them), a file whose every line
    ends in ``\r\n`` keeps ``\r\n``; a lone ``\r`` or a mix of endings is refused, because the readers
    of the file disagree on where its lines are.
    """
    if not text:
        return [], "\n"
    body = text[:-1] if text.endswith("\n") else text
    lines = body.split("\n")
    crlf = sum(1 for line in lines[:-1] if line.endswith("\r")) + (1 if text.endswith("\r\n") else 0)
    endings = len(lines) - 1 + (1 if text.endswith("\n") else 0)
    newline = "\r\n" if endings and crlf == endings else "\n"
    if newline == "\r\n":
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if crlf and crlf != endings or any("\r" in line for line in lines):
        raise IniError(
            f"{path} mixes line endings or holds a carriage return inside a line; readers of the file "
            "disagree on where its lines are, so it is left untouched: convert it to one line ending "
            "(dos2unix) and run again",
            path=path,
        )
    return lines, newline


def owned_keys(text: str) -> set[tuple[str, str]]:
    """The (section, key) pairs the header comment says we own."""
    for line in text.split("\n"):
        if line.startswith(OWNER_PREFIX):
            owned = set()
            for item in line[len(OWNER_PREFIX) :].split():
                section, _dot, key = item.rpartition(".")
                if section and key:
                    owned.add((section, key))
            return owned
    return set()


def _header(keys: set[tuple[str, str]]) -> str:
    return OWNER_PREFIX + " " + " ".join(f"{s}.{k}" for s, k in sorted(keys))


@dataclass
class _Block:
    name: str | None  # None for the lines before the first section
    lines: list[str]


def _parse(lines: list[str]) -> list[_Block]:
    blocks = [_Block(None, [])]
    for line in lines:
        match = SECTION.match(line)
        if match:
            blocks.append(_Block(match.group(1).strip(), [line]))
        else:
            blocks[-1].lines.append(line)
    return blocks


def _key_of(line: str) -> str | None:
    if line.lstrip().startswith(("#", ";")) or line[:1].isspace():
        return None
    match = KEY.match(line)
    return match.group(1).strip() if match else None


def _has_content(block: _Block) -> bool:
    return any(line.strip() and not line.lstrip().startswith(("#", ";")) for line in block.lines[1:])


def update_text(current: str, desired: IniConfig, path: str = "the file") -> str:
    """The new file text: ``current`` with our keys replaced by ``desired``, in the file's line endings."""
    _validate(desired)
    lines, newline = split_lines(current, path)
    previous = owned_keys("\n".join(lines))
    wanted = {(s, k) for s, keys in desired.items() for k in keys}
    remove = previous | wanted
    if not remove:
        return current
    blocks = _parse(lines)
    # Drop our old header and every line of a key we own or want.
    blocks[0].lines = [line for line in blocks[0].lines if not line.startswith(OWNER_PREFIX)]
    touched: set[str] = set()
    for block in blocks:
        if block.name is None:
            continue
        kept = []
        for line in block.lines:
            key = _key_of(line)
            if key is not None and (block.name, key) in remove:
                touched.add(block.name)
                continue
            kept.append(line)
        block.lines = kept
    # Append the wanted keys to their sections (creating sections at the end, in the given order).
    by_name = {b.name: b for b in blocks if b.name is not None}
    created: set[str] = set()
    for section, keys in desired.items():
        block = by_name.get(section)
        if block is None:
            block = _Block(section, [f"[{section}]"])
            blocks.append(block)
            by_name[section] = block
            created.add(section)
        trailing = 0
        while len(block.lines) > 1 and not block.lines[-1].strip():
            block.lines.pop()
            trailing += 1
        for key, values in keys.items():
            block.lines.extend(f"{key} = {value}" for value in values)
        block.lines.extend([""] * trailing)
    # A section we emptied, and that holds nothing else now, goes.
    blocks = [b for b in blocks if b.name is None or b.name not in touched or _has_content(b) or b.name in desired]
    # Render: our header first, existing lines as they were, new sections after one blank line.
    out: list[str] = [_header(wanted)] if wanted else []
    out.extend(blocks[0].lines)
    for block in blocks[1:]:
        if block.name in created and out and out[-1].strip():
            out.append("")
        out.extend(block.lines)
    return newline.join(out) + newline if any(line.strip() for line in out) else ""


def render_text(desired: IniConfig) -> str:
    """A fresh file holding only ``desired`` (what :func:`update_text` makes from an empty file)."""
    return update_text("", desired)
