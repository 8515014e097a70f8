"""Which unit test modules ``make unit-newest`` runs.

``make unit`` runs every module on ansible-core 2.19. ``make unit-newest`` (``ACCEL_UNIT_SCOPE=ansible-core``)
runs, on the newest ansible-core, the modules whose outcome can depend on that release: those at the top of
``tests/unit`` (the docs, the packaging, the layering of the whole collection) and those that go through
ansible-core's own code (they import from ``ansible``, from the plugins ansible-core loads, from the module
base built on AnsibleModule, or run Ansible's commands and the test helpers that run them). The others
test the collection's own computations (the solver, the parsers, the models) with no ansible-core code
between the test and the code; they run once, in ``make unit``.
"""

from __future__ import annotations

import os
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent

THROUGH_ANSIBLE_CORE = re.compile(
    r"^\s*(?:from|import)\s+ansible\b"
    r"|plugins\.(?:modules|lookup|filter|inventory|action)\b"
    r"|tests\.support\.ansible_runner\b"
    r"|module_utils\._openstack\.base\b|module_utils\._module\b"
    r"|\bansible-(?:doc|playbook|galaxy|inventory)\b|\"ansible\"",
    re.MULTILINE,
)


def runs_on_every_release(path: pathlib.Path) -> bool:
    """Whether the test module at ``path`` runs under ``make unit-newest`` as well."""
    if path.resolve().parent == HERE:
        return True
    return bool(THROUGH_ANSIBLE_CORE.search(path.read_text(encoding="utf-8")))


def pytest_ignore_collect(collection_path, config):
    if os.environ.get("ACCEL_UNIT_SCOPE") != "ansible-core":
        return None
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    return None if runs_on_every_release(collection_path) else True
