"""The simulated-root builder, for the tests: a re-export of the collection's own
(plugins/module_utils/_simulate/host_root.py), with its command line.

Command line (used by ``make demo``)::

    python -m tests.support.fake_sysfs --all --dest .demo/roots [--inventory inventories/demo/hosts.yml]
"""

import importlib
import sys

importlib.import_module("conftest")  # run as a script: makes ansible_collections.accel.openstack importable
from ansible_collections.accel.openstack.plugins.module_utils._simulate.host_root import *  # noqa: E402, F403
from ansible_collections.accel.openstack.plugins.module_utils._simulate.host_root import (  # noqa: E402, F401
    BRIDGE_CLASSES,
    DEMO_INVENTORY,
    NVIDIA_SMI_DIR,
    PCI_IDS,
    PROFILE_DIR,
    REPO,
    RootTree,
    _Tree,
    _write_device,
    build_inventory_roots,
    build_root,
    expand_profile,
    initially_creatable,
    inventory_profiles,
    is_bridge,
    load_profile,
    main,
    plan_root,
    profile_names,
)

if __name__ == "__main__":
    sys.exit(main())
