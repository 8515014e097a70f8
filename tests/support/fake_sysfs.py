"""The simulated-root builder, for the tests: a re-export of the collection's own
(plugins/module_utils/_simulate/host_root.py), with its command line.

Command line (used by ``make demo``)::

    python -m tests.support.fake_sysfs --all --dest .demo/roots [--inventory inventories/demo/hosts.yml]
"""

import importlib
import sys

importlib.import_module("conftest")  # run as a script: makes ansible_collections.accel.openstack importable
from ansible_collections.accel.openstack.plugins.module_utils._simulate.host_root import (  # noqa: E402
    DEMO_INVENTORY,
    NVIDIA_SMI_DIR,
    PCI_IDS,
    PROFILE_DIR,
    _Tree,
    _write_device,
    build_inventory_roots,
    build_root,
    command_line,
    expand_profile,
    initially_creatable,
    inventory_profiles,
    is_bridge,
    load_profile,
    profile_names,
)

__all__ = [
    "DEMO_INVENTORY",
    "NVIDIA_SMI_DIR",
    "PCI_IDS",
    "PROFILE_DIR",
    "build_inventory_roots",
    "_Tree",
    "_write_device",
    "build_root",
    "expand_profile",
    "initially_creatable",
    "inventory_profiles",
    "is_bridge",
    "load_profile",
    "profile_names",
    "main",
]


def main(argv: list[str] | None = None) -> int:
    for line in command_line(sys.argv[1:] if argv is None else argv):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
