"""Every room of the collection imports only the rooms below it.

A room is a package or a top-level file of ``plugins/module_utils`` (code that may run on a managed host or
in an API module) or of ``plugins/plugin_utils`` (controller-only code). The table says what each room may
import of the collection; anything else is a layering error:

- no ``module_utils`` file imports ``plugin_utils`` (a module would pull controller code onto a host);
- the host layer (``_host``) knows no OpenStack service;
- the OpenStack service rooms (``_placement``, ``_cyborg``, ``_ironic``) do not import each other; they share
  ``_openstack`` (the module base, the request loop, the redaction of credentials), which imports only the base;
- the solver depends only on the fleet model (``fleet``, ``request``), names, errors and Placement's settings;
- modules import no ``plugin_utils``;
- a filter file imports, when it is loaded, only the argument checks and what they stand on: Ansible's
  loader imports every filter file of the collection to find one filter by name, in every worker process
  (docs/decisions.md, "Filter files import when called").
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGINS = os.path.join(REPO, "plugins")
PREFIX = "ansible_collections.accel.openstack.plugins."

BASE = {"module_utils._errors", "module_utils._names", "module_utils._inputs", "module_utils._module"}
SHARED_CONTROLLER = {"module_utils._nova", "module_utils._host"}
# Room -> the rooms it may import (besides itself). "*" is every room of that kind.
ALLOWED = {
    "module_utils._errors": set(),
    "module_utils._names": {"module_utils._errors"},
    "module_utils._inputs": {"module_utils._errors"},
    "module_utils._module": {"module_utils._errors", "module_utils._inputs"},
    "module_utils._host": BASE,
    "module_utils._nova": BASE | {"module_utils._host"},
    "module_utils._openstack": BASE,
    "module_utils._placement": BASE | {"module_utils._nova", "module_utils._openstack"},
    "module_utils._cyborg": BASE | {"module_utils._openstack"},
    "module_utils._ironic": BASE | {"module_utils._nova", "module_utils._openstack"},
    "plugin_utils.solver": {
        "module_utils._errors",
        "module_utils._names",
        "module_utils._placement.settings",
        "plugin_utils.fleet",
        "plugin_utils.request",
    },
}
SERVICE_ROOMS = ("module_utils._placement", "module_utils._cyborg", "module_utils._ironic")


def room_of(path: str) -> str:
    parts = os.path.relpath(path, PLUGINS)[: -len(".py")].split(os.sep)
    if parts[0] in ("module_utils", "plugin_utils"):
        return ".".join(parts[:2])
    return parts[0]


def imported(path: str) -> list[str]:
    """The collection modules a file imports, as dotted names below plugins/ (``module_utils._nova.policy``)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    package = os.path.relpath(os.path.dirname(path), PLUGINS).replace(os.sep, ".")
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name[len(PREFIX) :] for alias in node.names if alias.name.startswith(PREFIX))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith(PREFIX):
                module = node.module[len(PREFIX) :]
            else:
                continue
            names.extend(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith(PREFIX):
                    names.append(arg.value[len(PREFIX) :])
    return names


def allowed(room: str, name: str) -> bool:
    if name == room or name.startswith(room + "."):
        return True
    rules = ALLOWED.get(room)
    if room.startswith("module_utils.") and name.startswith("plugin_utils"):
        return False
    if room == "modules" and name.startswith("plugin_utils"):
        return False
    if rules is None:
        return True
    return any(name == rule or name.startswith(rule + ".") for rule in rules)


def python_files() -> list[str]:
    out = []
    for base, _dirs, files in os.walk(PLUGINS):
        out.extend(os.path.join(base, f) for f in files if f.endswith(".py"))
    return sorted(out)


def test_every_room_of_the_table_exists_and_has_files():
    rooms = {room_of(path) for path in python_files()}
    assert set(ALLOWED) <= rooms, sorted(set(ALLOWED) - rooms)
    assert {"modules", "filter", "lookup", "inventory"} <= rooms


@pytest.mark.parametrize("path", python_files(), ids=lambda p: os.path.relpath(p, PLUGINS))
def test_a_file_imports_only_what_its_room_may(path):
    room = room_of(path)
    bad = [name for name in imported(path) if not allowed(room, name)]
    assert not bad, f"{os.path.relpath(path, REPO)} ({room}) imports {bad}: not allowed by the layering table"


@pytest.mark.parametrize(
    "room,source",
    [
        ("module_utils._host", "from ansible_collections.accel.openstack.plugins.module_utils._nova import naming"),
        ("module_utils._host", "from .._placement import names"),
        (
            "module_utils._placement",
            "from " + PREFIX + "module_utils._cyborg import arqs",
        ),
        ("module_utils._cyborg", "from .._ironic.client import IronicClient"),
        ("module_utils._openstack", "from .._placement.client import PlacementClient"),
        ("module_utils._nova", "import ansible_collections.accel.openstack.plugins.plugin_utils.fleet"),
        ("plugin_utils.solver", "from ansible_collections.accel.openstack.plugins.plugin_utils import flavor_fit"),
        (
            "plugin_utils.solver",
            "from " + PREFIX + "module_utils._placement import client",
        ),
        ("modules", "from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet"),
        (
            "module_utils._ironic",
            "importlib.import_module('" + PREFIX + "module_utils._cyborg.x')",
        ),
    ],
)
def test_the_check_catches_each_way_of_importing(tmp_path, room, source):
    folder = tmp_path / "plugins" / room.replace(".", os.sep)
    folder.mkdir(parents=True)
    path = folder / "bad.py"
    path.write_text(source + "\n")
    global PLUGINS
    saved, PLUGINS = PLUGINS, str(tmp_path / "plugins")
    try:
        assert room_of(str(path)) == room
        assert any(not allowed(room, name) for name in imported(str(path)))
    finally:
        PLUGINS = saved


# What loading every filter file may import of the collection (besides the packages above them).
FILTER_LOAD = {"plugin_utils.arguments", "plugin_utils.inputs", "module_utils._errors", "module_utils._inputs"}
LOAD_ALL_FILTERS = """
import importlib, json, os, sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
for name in sorted(os.listdir(sys.argv[2])):
    if name.endswith(".py"):
        importlib.import_module("ansible_collections.accel.openstack.plugins.filter." + name[:-3])
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def loaded_by_filter_files(plugins: str) -> set[str]:
    """The collection modules (below plugins/, no packages, no filter files) that loading every filter
    file of ``plugins`` imports, in a fresh interpreter as Ansible's worker process is."""
    collections = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(plugins))))
    done = subprocess.run(
        [sys.executable, "-c", LOAD_ALL_FILTERS, collections, os.path.join(plugins, "filter")],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {name[len(PREFIX) :] for name in json.loads(done.stdout) if name.startswith(PREFIX)}
    return {name for name in names if name.split(".")[0] != "filter" and name not in ("module_utils", "plugin_utils")}


def test_loading_every_filter_file_imports_only_the_argument_checks():
    plugins = os.path.join(REPO, ".build", "collections", "ansible_collections", "accel", "openstack", "plugins")
    assert os.path.isdir(plugins), "make collection links the checkout where the tests import it"
    assert loaded_by_filter_files(plugins) == FILTER_LOAD


def test_the_filter_load_check_catches_a_heavy_import_at_the_top(tmp_path):
    collection = tmp_path / "ansible_collections" / "accel" / "openstack"
    plugins = collection / "plugins"
    os.makedirs(plugins / "filter")
    for room in ("module_utils", "plugin_utils"):
        os.symlink(os.path.join(PLUGINS, room), plugins / room)
    (plugins / "filter" / "heavy.py").write_text(
        "from " + PREFIX + "plugin_utils.arguments import check\nfrom " + PREFIX + "plugin_utils.solver import solve\n"
    )
    loaded = loaded_by_filter_files(str(plugins))
    assert loaded > FILTER_LOAD and "plugin_utils.solver" in loaded
