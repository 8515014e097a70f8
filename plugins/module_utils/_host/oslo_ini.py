# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read an OpenStack service's INI file exactly as oslo.config reads it (and nothing more lenient).

The rules, one line at a time (lines as Python's text mode splits them: ``\\n``, ``\\r\\n`` and a lone
``\\r`` each end a line):

- trailing whitespace is dropped; a line left empty ends the value being read;
- a line that starts with a space or a tab continues the value of the key above it, its leading
  whitespace dropped, joined with a newline (a ``#`` there is part of the value, not a comment); with
  no key above (after a section header, a comment or a blank line) the file is refused;
- any other line first ends the value being read; then ``[name]`` starts a section (its name taken
  as written, spaces and case included), ``#`` or ``;`` starts a comment, and anything else is
  ``key = value`` or ``key: value``: whichever of ``=`` and ``:`` comes first separates them, both
  are stripped, and one pair of matching quotes around the first line of the value is removed;
- a section header without ``]`` at the end or without a name, a key line without ``=`` or ``:``, an
  empty key and a key before any section are refused. A byte-order mark is not skipped: it is part
  of the first line, which then is no section header.

A file gives its sections in order, each key's values in order (a repeated key keeps every value, a
repeated section continues the first). Services look groups up by name in lower case (``DEFAULT``
excepted, which stays as it is), so ``[PCI]`` and ``[pci]`` are one group and ``[ pci ]`` is another:
:func:`group_name` gives that name. Keys keep their case.

This module does not import oslo.config: it runs on managed hosts with plain Python.
"""

from __future__ import annotations

import json

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

IniConfig = dict[str, dict[str, list[str]]]
BOM = "\ufeff"
TEMPLATE_STATEMENTS = ("{%", "{#")


class OsloIniError(AccelError, ValueError):
    """A file oslo.config refuses to parse; the message names the file, the line and the fix."""

    def __init__(self, path: str, line_number: int, reason: str, line: str | None, fix: str):
        self.path = path
        self.line_number = line_number
        self.reason = reason
        self.line = line
        shown = f": {json.dumps(line)}" if line is not None else ""
        super().__init__(
            f"{path} line {line_number}: oslo.config refuses this file ({reason}{shown}), so the service "
            f"reading it does not start; {fix}",
            path=path,
        )


def lines_of(text: str) -> list[str]:
    """The lines of ``text`` as a file opened in Python's text mode yields them (without their ends)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def group_name(section: str) -> str:
    """The name a service looks a section up by: lower case, except ``DEFAULT``."""
    return section if section == "DEFAULT" else section.lower()


def _fix_for(reason: str, line: str | None) -> str:
    if line is not None and line.startswith(BOM):
        return "the file starts with a byte-order mark: save it as UTF-8 without one"
    if reason == "Unexpected continuation line":
        if line is not None and line.lstrip().startswith("["):
            return "a section header must start at the beginning of its line: remove the indentation"
        if line is not None and line.lstrip().startswith(("#", ";")):
            return "a comment must start at the beginning of its line: remove the indentation"
        return "an indented line continues the value above it: remove the indentation or the blank line before it"
    if reason.startswith("Invalid section"):
        return "a section header is [name] alone on its line: move what follows the ] to a line of its own"
    if reason == "Empty section name":
        return "give the section its name, e.g. [pci]"
    if reason.startswith("No ':' or '='"):
        return "write the line as key = value, or start it with # to make it a comment"
    if reason == "Key cannot be empty":
        return "write the key before the = or :"
    return "put the key under the section it belongs to, e.g. [DEFAULT]"


class _Reader:
    """One pass over the lines, the way oslo.config's parser walks them."""

    def __init__(self, path: str, template_lines: bool = False):
        self.path = path
        self.template_lines = template_lines
        self.sections: IniConfig = {}
        self.groups: IniConfig = {}
        self.section: str | None = None
        self.number = 0

    def refuse(self, reason: str, line: str | None, number: int | None = None) -> OsloIniError:
        return OsloIniError(self.path, self.number if number is None else number, reason, line, _fix_for(reason, line))

    def store(self, key: str, parts: list[str]) -> None:
        if self.section is None:
            # oslo.config notices it only when the value ends: at the line that ends it
            raise self.refuse("Section must be started before assignment", None)
        value = "\n".join(parts)
        self.sections[self.section].setdefault(key, []).append(value)
        self.groups[group_name(self.section)].setdefault(key, []).append(value)

    def header(self, line: str) -> None:
        if not line.endswith("]"):
            raise self.refuse("Invalid section (must end with ])", line)
        if len(line) <= 2:
            raise self.refuse("Empty section name", line)
        self.section = line[1:-1]
        self.sections.setdefault(self.section, {})
        self.groups.setdefault(group_name(self.section), {})

    def assignment(self, line: str) -> tuple[str, list[str]]:
        equal, colon = line.find("="), line.find(":")
        if equal < 0 and colon < 0:
            raise self.refuse("No ':' or '=' found in assignment", line)
        cut = equal if colon < 0 or 0 <= equal < colon else colon
        key, value = line[:cut].strip(), line[cut + 1 :].strip()
        if value and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if not key:
            raise self.refuse("Key cannot be empty", line)
        return key, [value]

    def read(self, text: str) -> IniConfig:
        key: str | None = None
        parts: list[str] = []
        for raw in lines_of(text):
            self.number += 1
            line = raw.rstrip()
            if self.template_lines and line.lstrip().startswith(TEMPLATE_STATEMENTS):
                continue  # a Jinja statement or comment line, which rendering removes
            if not line:
                if key:
                    self.store(key, parts)
                    key, parts = None, []
                continue
            if line[0] in " \t":
                if key is None:
                    raise self.refuse("Unexpected continuation line", line)
                parts.append(line.lstrip())
                continue
            if key:
                self.store(key, parts)
                key, parts = None, []
            if line[0] == "[":
                self.header(line)
            elif line[0] not in "#;":
                key, parts = self.assignment(line)
        if key:
            self.store(key, parts)
        return self.sections


def parse(text: str, path: str = "the file", template_lines: bool = False) -> IniConfig:
    """``{section: {key: [values]}}`` of one file, sections as written; :class:`OsloIniError` where
    oslo.config refuses the file. ``template_lines``: the file is a Jinja template (a Kolla-Ansible
    override) whose lines that hold only a statement or comment (``{% ... %}``, ``{# ... #}``) are
    removed by rendering before the parser sees it."""
    return _Reader(path, template_lines).read(text)


def parse_groups(text: str, path: str = "the file", template_lines: bool = False) -> IniConfig:
    """One file as a service reads it: ``{group: {key: [values]}}`` under the names services look groups
    up by (:func:`group_name`), sections that differ only in case being one group with their values in
    the order of the file; :class:`OsloIniError` where oslo.config refuses the file (``template_lines``
    as for :func:`parse`)."""
    reader = _Reader(path, template_lines)
    reader.read(text)
    return reader.groups
