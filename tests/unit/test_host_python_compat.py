"""The code that runs on managed hosts uses nothing newer than Python 3.9 (docs/install.md).

The host modules and every module_utils file they import (followed import by import) are scanned for
what fails on 3.9 at run time, not only at compile time: ``X | Y`` outside annotations (as in
``isinstance(v, str | int)``), annotations evaluated at definition time without
``from __future__ import annotations``, ``zip(strict=)``, ``match`` statements, ``dataclass(slots=,
kw_only=)`` and the 3.10+ library calls. tests/integration/test_managed_host_python.py runs them on 3.9.
"""

import ast
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREFIX = "ansible_collections.accel.openstack.plugins."
NEWER_CALLS = {"pairwise", "bit_count", "aiter", "anext"}


def _path(module: str) -> str | None:
    path = os.path.join(REPO, "plugins", *module[len(PREFIX) :].split("."))
    for candidate in (path + ".py", os.path.join(path, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _imports(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith(PREFIX))
    return found


def host_side_files() -> list[str]:
    """Every host module (not an OpenStack one) and the module_utils it reaches."""
    todo, seen = [], set()
    modules = os.path.join(REPO, "plugins", "modules")
    for name in sorted(n for n in os.listdir(modules) if n.endswith(".py")):
        path = os.path.join(modules, name)
        with open(path) as handle:
            text = handle.read()
        if not any(base in text for base in ("OpenStackModule", "PlacementModule", "NamesModule")):
            todo.append(path)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        with open(path) as handle:
            tree = ast.parse(handle.read())
        todo.extend(p for p in (_path(m) for m in _imports(tree)) if p and p not in seen)
    return sorted(seen)


def _annotations(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            targets = [a.annotation for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs]
            targets += [node.returns, node.args.vararg and node.args.vararg.annotation]
            targets += [node.args.kwarg and node.args.kwarg.annotation]
        elif isinstance(node, ast.AnnAssign):
            targets = [node.annotation]
        for target in targets:
            if target is not None:
                ids.update(id(n) for n in ast.walk(target))
    return ids


def problems(path: str) -> list[str]:
    with open(path) as handle:
        source = handle.read()
    tree = ast.parse(source)
    future = any(
        isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    )
    in_annotation = _annotations(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{os.path.relpath(path, REPO)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) and id(node) in in_annotation and not future:
            found.append(f"{where}: X | Y annotation without from __future__ import annotations")
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            unions = len(node.args) == 2 and any(
                isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr) for n in ast.walk(node.args[1])
            )
            if name in ("isinstance", "issubclass") and unions:
                found.append(f"{where}: {name}() with X | Y (a tuple works on 3.9)")
            if name == "zip" and any(k.arg == "strict" for k in node.keywords):
                found.append(f"{where}: zip(strict=) is 3.10+")
            if name == "dataclass" and any(k.arg in ("slots", "kw_only") for k in node.keywords):
                found.append(f"{where}: dataclass(slots=/kw_only=) is 3.10+")
            if name in NEWER_CALLS:
                found.append(f"{where}: {name} is 3.10+")
        if type(node).__name__ == "Match":
            found.append(f"{where}: match statement is 3.10+")
    return found


def test_the_host_side_code_is_found():
    files = {os.path.relpath(p, REPO) for p in host_side_files()}
    assert "plugins/modules/vfio_pci.py" in files and "plugins/module_utils/_nova/address_pattern.py" in files
    assert not any("_openstack/" in f for f in files)


def test_the_host_side_code_runs_on_python_3_9():
    assert [p for path in host_side_files() for p in problems(path)] == []
