"""Every default the docs state is the default the code has.

The docs state defaults in three shapes: prose (`` `accel_x` (default `v` ``, `` `accel_x`, default v ``,
`` `accel_x` (`v` by default ``, `` `a` / `b` (30 / 10 ``), and tables with a ``default`` column. Each
statement about an ``accel_*`` variable is compared with the roles' defaults (``roles/*/defaults/main.yml``,
the argument specs in ``roles/*/meta/argument_specs.yml``) and, for variables the roles leave unset, with
every ``accel_x | default(...)`` the roles and playbooks write. A statement about a module or lookup option
(a name that is an option of one of the collection's plugins) is compared with that plugin's documented
default. Where the doc names another variable (``default `accel_y` ``), the code's default must be made
from that variable.
"""

from __future__ import annotations

import ast
import glob
import os
import re

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))) + [os.path.join(REPO, "README.md")]

# A stated value: in backticks, or a bare word or number that ends at a comma, semicolon, colon or bracket.
VALUE = r"(`[^`]+`|[A-Za-z0-9_./-]+(?=[,;:)]))"
PROSE = [
    re.compile(r"`([a-z][a-z0-9_]*)`\s*[(,]\s*(?:by\s+)?default(?:s to|:)?\s+(?:is\s+)?" + VALUE),
    re.compile(r"`([a-z][a-z0-9_]*)`\s*\(" + VALUE + r" by default"),
]
PAIR = re.compile(r"`(accel_[a-z0-9_]+)`\s*/\s*`(accel_[a-z0-9_]+)`\s*\((\d+)\s*/\s*(\d+)")
IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
# One value: in backticks, or a bare word or number.
SINGLE = re.compile(r"^(`[^`]+`|[A-Za-z0-9_./*-]+)$")


def _role_defaults() -> dict[str, list]:
    found: dict[str, list] = {}
    for path in glob.glob(os.path.join(REPO, "roles", "*", "defaults", "main.yml")):
        with open(path) as handle:
            for name, value in (yaml.safe_load(handle) or {}).items():
                found.setdefault(name, []).append(value)
    for path in glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml")):
        with open(path) as handle:
            specs = (yaml.safe_load(handle) or {}).get("argument_specs") or {}
        for entry in specs.values():
            for name, option in (entry.get("options") or {}).items():
                if "default" in option and name not in found:
                    found.setdefault(name, []).append(option["default"])
    return found


def _written_defaults() -> dict[str, set[str]]:
    """``accel_x | default(v)`` as the roles and playbooks write it, per variable: the texts of v."""
    found: dict[str, set[str]] = {}
    pattern = re.compile(r"\b(accel_[a-z0-9_]+)\s*\|\s*default\(\s*((?:[^()]|\([^()]*\))*)\)")
    paths = glob.glob(os.path.join(REPO, "roles", "**", "*.yml"), recursive=True)
    paths += glob.glob(os.path.join(REPO, "playbooks", "**", "*.yml"), recursive=True)
    for path in paths:
        with open(path) as handle:
            for match in pattern.finditer(handle.read()):
                found.setdefault(match.group(1), set()).add(match.group(2).strip())
    return found


def _plugin_option_defaults() -> dict[str, list]:
    found: dict[str, list] = {}
    paths = glob.glob(os.path.join(REPO, "plugins", "modules", "*.py"))
    paths += glob.glob(os.path.join(REPO, "plugins", "lookup", "*.py"))
    paths += glob.glob(os.path.join(REPO, "plugins", "inventory", "*.py"))
    for path in paths:
        with open(path) as handle:
            tree = ast.parse(handle.read())
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "DOCUMENTATION" for t in node.targets):
                doc = yaml.safe_load(node.value.value) or {}
                for name, option in (doc.get("options") or {}).items():
                    if isinstance(option, dict) and "default" in option:
                        found.setdefault(name, []).append(option["default"])
    return found


ROLE_DEFAULTS = _role_defaults()
WRITTEN_DEFAULTS = _written_defaults()
OPTION_DEFAULTS = _plugin_option_defaults()


def _statements() -> list[tuple[str, str, str]]:
    """(doc and line, name, stated value) for every default statement of the docs."""
    statements = []
    for path in DOCS:
        with open(path) as handle:
            lines = handle.read().split("\n")
        rel = os.path.relpath(path, REPO)
        table_column = None
        for number, line in enumerate(lines, 1):
            where = f"{rel}:{number}"
            if line.startswith("|"):
                cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
                if "default" in cells and cells[0] in ("variable", "option"):
                    table_column = cells.index("default")
                    continue
                if table_column is not None and not set(cells[0]) <= set("-: "):
                    name = cells[0].strip("`")
                    if IDENTIFIER.match(name) and table_column < len(cells):
                        statements.append((where, name, cells[table_column]))
                continue
            table_column = None
        text = "\n".join(lines)
        for pattern in PROSE:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                statements.append((f"{rel}:{line}", match.group(1), match.group(2)))
        for match in PAIR.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            statements.append((f"{rel}:{line}", match.group(1), match.group(3)))
            statements.append((f"{rel}:{line}", match.group(2), match.group(4)))
    return statements


def _known(name: str) -> bool:
    if name.startswith("accel_"):
        return name in ROLE_DEFAULTS or name in WRITTEN_DEFAULTS
    return name in OPTION_DEFAULTS


STATEMENTS = [s for s in _statements() if _known(s[1])]


def _agrees(stated: str, default) -> bool:
    stated = stated.strip()
    tokens = re.findall(r"`([^`]+)`", stated)
    if not SINGLE.match(stated):
        # A sentence (a table cell): every value it quotes is in the default, and it quotes at least one.
        if not tokens:
            return False
        text = default if isinstance(default, str) else yaml.safe_dump(default)
        return all(re.search(r"(?<![\w-])" + re.escape(t) + r"(?![\w-])", text) for t in tokens)
    literal = stated.strip("`").strip()
    if isinstance(default, list) and not literal.startswith("["):
        return [t.strip() for t in literal.split(",")] == [str(d) for d in default]
    if isinstance(default, str) and "{{" in default:
        # A computed default: the doc names the variable it is made of, or the literal it falls back to.
        if IDENTIFIER.match(literal):
            return re.search(r"\b" + re.escape(literal) + r"\b", default) is not None
        return literal in default
    if IDENTIFIER.match(literal) and literal.startswith("accel_"):
        return False
    try:
        value = yaml.safe_load(literal)
    except yaml.YAMLError:
        value = literal
    return value == default or str(value) == str(default)


def _agrees_written(stated: str, written: set[str]) -> bool:
    literal = stated.strip().strip("`").strip()
    for text in written:
        if IDENTIFIER.match(literal) and re.search(r"\b" + re.escape(literal) + r"\b", text):
            continue
        try:
            value = yaml.safe_load(text.strip("'\""))
        except yaml.YAMLError:
            return False
        if not _agrees(literal, value):
            return False
    return bool(written)


def test_the_docs_state_defaults_and_the_extractor_finds_them():
    names = {name for _where, name, _stated in STATEMENTS}
    # The statements this test must see: one of each shape (prose, pair, table, plugin option).
    assert {"accel_audit_fail_on", "accel_placement_wait_retries", "accel_root", "stale_after"} <= names


@pytest.mark.parametrize("where,name,stated", STATEMENTS, ids=[f"{s[0]}:{s[1]}" for s in STATEMENTS])
def test_a_stated_default_is_the_code_default(where, name, stated):
    if name.startswith("accel_"):
        defaults = ROLE_DEFAULTS.get(name)
        if defaults:
            wrong = [d for d in defaults if not _agrees(stated, d)]
            assert not wrong, f"{where}: the docs say {name} defaults to {stated}; the roles default it to {wrong}"
        else:
            written = WRITTEN_DEFAULTS[name]
            assert _agrees_written(stated, written), (
                f"{where}: the docs say {name} defaults to {stated}; the roles and playbooks write {sorted(written)}"
            )
    else:
        defaults = OPTION_DEFAULTS[name]
        assert any(_agrees(stated, d) for d in defaults), (
            f"{where}: the docs say option {name} defaults to {stated}; the plugins document {defaults}"
        )
