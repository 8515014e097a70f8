"""The host layer knows no OpenStack: nothing under module_utils/_host imports the Nova, Placement, Cyborg
or Ironic packages, or the controller-only plugin_utils. Imports run one way (policy -> host calls), so
a host module never pulls OpenStack code onto a host."""

import ast
import os

import pytest

HOST = os.path.join(os.path.dirname(__file__), "../../../../../plugins/module_utils/_host")
FORBIDDEN = ("_nova", "_placement", "_cyborg", "_ironic", "plugin_utils")


def _imports(path: str) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            names.extend(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return names


def _forbidden(name: str) -> bool:
    return any(part in FORBIDDEN for part in name.replace("..", ".").split("."))


def _host_files() -> list[str]:
    out = []
    for base, _dirs, files in os.walk(HOST):
        out.extend(os.path.join(base, f) for f in files if f.endswith(".py"))
    return sorted(out)


def test_the_walk_sees_the_host_layer():
    names = {os.path.basename(p) for p in _host_files()}
    assert {"root.py", "gpu_restore.py", "sysfs.py"} <= names


@pytest.mark.parametrize("path", _host_files(), ids=os.path.basename)
def test_no_host_file_imports_openstack_or_controller_code(path):
    bad = [name for name in _imports(path) if _forbidden(name)]
    assert not bad, f"{os.path.basename(path)} imports {bad}; the host layer must not know OpenStack"


@pytest.mark.parametrize(
    "source",
    [
        "from ansible_collections.accel.openstack.plugins.module_utils._nova import naming",
        "from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy",
        "from .._placement import names",
        "import ansible_collections.accel.openstack.plugins.plugin_utils.fleet",
        "importlib.import_module('ansible_collections.accel.openstack.plugins.module_utils._ironic.x')",
    ],
)
def test_the_check_catches_each_way_of_importing(tmp_path, source):
    path = tmp_path / "bad.py"
    path.write_text(source + "\n")
    assert any(_forbidden(name) for name in _imports(str(path)))
