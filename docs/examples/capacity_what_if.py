"""The what-if example of docs/capacity.md: a flavor mix on a fleet, and the same mix with 20 8-GPU H200
hosts in MIG 3g.71gb or 40 L40S hosts as 4Q vGPU; then the worst single host lost.

Usage: python docs/examples/capacity_what_if.py (from the collection's root, with the collection
installed as ``make collection`` does). The printed text is pasted in docs/capacity.md, and
``tests/unit/plugins/plugin_utils/test_capacity_what_if.py`` requires the two to stay equal.
"""

from __future__ import annotations

import importlib
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
importlib.import_module("conftest")  # makes ansible_collections.accel.openstack importable

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import (  # noqa: E402
    capacity_plan,
    capacity_table,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_what_if import what_if_hosts  # noqa: E402

ALIASES = [{"name": "h100", "vendor_id": "10de", "product_id": "2330", "resource_class": "CUSTOM_NVIDIA_H100"}]
# Today's fleet: 12 HGX H100 hosts (8 GPUs each, passed through), predicted from the same tables (the
# hgx-h100 shape: 224 CPUs, 2 NUMA nodes, about 2 TB of memory), and 30 general hosts (128 CPUs at Nova's
# allocation ratio 4.0, 1 TB of memory, 4 TB of disk).
HGX = {"name": "hgx", "model": "H100", "count": 12, "mode": "passthrough"}
GENERAL_HOSTS = 30
WHAT_IF = [
    {"name": "h200-mig", "model": "H200", "count": 20, "mode": "mig", "layout": "3g.71gb"},
    {
        "name": "l40s-4q",
        "model": "L40S",
        "count": 40,
        "mode": "vgpu",
        "type": "NVIDIA L40S-4Q",
        "gpus": 4,
        "shape": "vgpu-l40s",
    },
]


def flavor(name, vcpus, ram, disk, **specs):
    return {"name": name, "vcpus": vcpus, "ram": ram, "disk": disk, "extra_specs": specs}


DEMAND = [
    {"flavor": flavor("gpu.h100.1", 16, 131072, 100, **{"pci_passthrough:alias": "h100:1"}), "count": 120},
    {"flavor": flavor("vgpu.inference", 8, 32768, 40, **{"resources:VGPU": "1"}), "count": 900},
    {"flavor": flavor("general.medium", 8, 32768, 40), "count": 1500},
]


def fleet() -> dict:
    records = what_if_hosts(HGX, True, set())[1]
    for number in range(1, GENERAL_HOSTS + 1):
        records.append(
            {
                "uuid": f"00000000-0000-4000-8000-{number:012d}",
                "name": f"general-{number:04d}",
                "parent_provider_uuid": None,
                "inventories": {
                    "VCPU": {"total": 128, "allocation_ratio": 4.0},
                    "MEMORY_MB": {"total": 1048576},
                    "DISK_GB": {"total": 4000},
                },
                "traits": ["COMPUTE_NODE", "OWNER_NOVA"],
                "aggregates": [],
            }
        )
    return {"resource_providers": records}


def main() -> str:
    plan = capacity_plan(
        DEMAND,
        fleet(),
        pci_aliases=ALIASES,
        pci_in_placement=True,
        what_if=WHAT_IF,
        worst_case={"hosts": 1},
    )
    return "\n".join(capacity_table(plan))


if __name__ == "__main__":
    print(main())
