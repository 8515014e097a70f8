"""Generated fleets and demands for the capacity_plan tests (the differential test and the path comparison).

``generated_fleet(rng)``: 4 to 6 compute nodes of different sizes, reserved memory, CPU allocation ratios
and usages, the first two of one model (ties for the weigher), with H100 PCI providers (as
``pci_in_placement`` reports them), vGPU children or nothing, PCPU on some. ``generated_demand(rng)``: 2
to 4 of general, 1- and 2-GPU, vGPU and pinned flavors with small counts.
"""

from __future__ import annotations

import random
import uuid

ALIASES = [{"name": "h100", "vendor_id": "10de", "product_id": "2330"}]


def _inv(total: int, reserved: int = 0, ratio: float = 1.0) -> dict:
    return {
        "total": total,
        "reserved": reserved,
        "min_unit": 1,
        "max_unit": total,
        "step_size": 1,
        "allocation_ratio": ratio,
    }


def generated_fleet(rng: random.Random, pools: bool = False) -> dict:
    """With ``pools`` the GPUs are ``pci_pools`` of the compute node (pci_in_placement off), not providers."""
    providers = []

    def add(name, parent, inventories, traits, usages=None):
        record = {
            "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
            "name": name,
            "parent_provider_uuid": parent,
            "inventories": inventories,
            "traits": traits,
            "aggregates": [],
            "usages": usages or {},
        }
        providers.append(record)
        return record["uuid"]

    # Two hosts of one model start the same (ties); the others differ in size and usage.
    for n in range(rng.randint(4, 6)):
        memory = 65536 if n < 2 else rng.choice([32768, 65536, 131072])
        inventories = {
            "VCPU": _inv(rng.choice([16, 32]), ratio=rng.choice([1.0, 4.0])),
            "MEMORY_MB": _inv(memory, reserved=rng.choice([0, 512]) if n >= 2 else 512),
            "DISK_GB": _inv(1000),
        }
        if rng.random() < 0.3:
            inventories["PCPU"] = _inv(8)
        usages = {}
        if n >= 2 and rng.random() < 0.6:
            usages = {"VCPU": rng.randint(1, 8), "MEMORY_MB": rng.choice([2048, 8192, 16384])}
        root = add(f"cn{n}", None, inventories, ["COMPUTE_NODE", "OWNER_NOVA"], usages)
        kind = "gpu" if n < 2 else rng.choice(["gpu", "vgpu", "none"])
        gpus = rng.choice([2, 4]) if n >= 2 else 2
        if kind == "gpu" and pools:
            providers[-1]["pci_pools"] = [
                {"vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI", "numa_node": None, "count": gpus}
            ]
        elif kind == "gpu":
            for g in range(gpus):
                add(
                    f"cn{n}_0000:{0x18 + g:02X}:00.0",
                    root,
                    {"CUSTOM_PCI_10DE_2330": _inv(1)},
                    ["OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE"],
                )
        elif kind == "vgpu":
            for g in range(2):
                add(f"cn{n}_pci_0000_84_00_{g}", root, {"VGPU": _inv(rng.choice([2, 4]))}, ["OWNER_NOVA"])
    return {"resource_providers": providers}


def generated_demand(rng: random.Random) -> list[dict]:
    shapes = [
        ("general", {}),
        ("gpu1", {"pci_passthrough:alias": "h100:1"}),
        ("gpu2", {"pci_passthrough:alias": "h100:2"}),
        ("vgpu", {"resources:VGPU": "1"}),
        ("pinned", {"hw:cpu_policy": "dedicated"}),
    ]
    demand = []
    for name, specs in rng.sample(shapes, rng.randint(2, 4)):
        flavor = {
            "name": name,
            "vcpus": rng.choice([1, 2, 4]),
            "ram": rng.choice([2048, 4096, 8192, 16384]),
            "disk": rng.choice([10, 20]),
            "extra_specs": specs,
        }
        demand.append({"flavor": flavor, "count": rng.randint(1, 5)})
    return demand
