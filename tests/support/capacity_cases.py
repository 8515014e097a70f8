"""Generated fleets and demands for the capacity_plan tests (the differential test and the path comparison).

``generated_fleet(rng)``: 4 to 6 compute nodes of different sizes, reserved memory, CPU allocation ratios
and usages, the first two of one model (ties for the weigher), with H100 PCI providers (as
``pci_in_placement`` reports them), vGPU children or nothing, PCPU on some; some hosts give the compute
node's figures the weighers read (hypervisor version, instances, I/O operations, failed builds), and
NUMA cells on some hosts with PCPU.
``generated_demand(rng)``: 2 to 4 of general, 1- and 2-GPU, vGPU and pinned flavors with small counts.
``mixed_fleet(rng)``: GPU hosts and general hosts of one size, where the PCI weigher decides which hosts
general instances take. ``generated_multipliers(rng)``: Nova's weight multipliers drawn per weigher.
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
        if "PCPU" in inventories and rng.random() < 0.6:  # NUMA cells the pinned instances use up
            split = rng.choice([3, 4])
            providers[-1]["numa_cells"] = [
                {"id": 0, "pcpus": split, "vcpus": 8, "memory_mb": memory // 2},
                {"id": 1, "pcpus": 8 - split, "vcpus": 8, "memory_mb": memory // 2},
            ]
        if n >= 2 and rng.random() < 0.4:  # the compute node's figures (the first two stay alike: ties)
            providers[-1]["hypervisor_version"] = rng.choice([8000000, 9002000, 10000000])
            providers[-1]["num_instances"] = rng.randint(0, 6)
            providers[-1]["num_io_ops"] = rng.randint(0, 2)
            providers[-1]["failed_builds"] = rng.choice([0, 0, 0, 1])
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


def mixed_fleet(rng: random.Random) -> dict:
    """2 or 3 GPU hosts (2 or 4 H100 providers each) and 3 or 4 general hosts, all of one size and in a
    shuffled order: Nova's RAM, CPU and disk weighers cannot tell them apart, the PCI weigher can."""
    providers = []
    kinds = ["gpu"] * rng.randint(2, 3) + ["general"] * rng.randint(3, 4)
    rng.shuffle(kinds)
    memory = rng.choice([131072, 262144])
    for n, kind in enumerate(kinds):
        root = str(uuid.UUID(int=rng.getrandbits(128)))
        providers.append(
            {
                "uuid": root,
                "name": f"{kind}{n}",
                "parent_provider_uuid": None,
                "inventories": {"VCPU": _inv(64, ratio=4.0), "MEMORY_MB": _inv(memory), "DISK_GB": _inv(2000)},
                "traits": ["COMPUTE_NODE", "OWNER_NOVA"],
                "aggregates": [],
                "usages": {},
            }
        )
        for g in range(rng.choice([2, 4]) if kind == "gpu" else 0):
            providers.append(
                {
                    "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                    "name": f"{kind}{n}_0000:{0x18 + g:02X}:00.0",
                    "parent_provider_uuid": root,
                    "inventories": {"CUSTOM_PCI_10DE_2330": _inv(1)},
                    "traits": ["OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE"],
                    "aggregates": [],
                    "usages": {},
                }
            )
    return {"resource_providers": providers}


def mixed_demand(rng: random.Random, fleet: dict) -> list[dict]:
    """General instances first (a quarter of the hosts' RAM to more than the general hosts hold), then
    1-GPU instances of half a host's RAM, one per GPU of the fleet."""
    memory = fleet["resource_providers"][0]["inventories"]["MEMORY_MB"]["total"]
    roots = [p for p in fleet["resource_providers"] if not p["parent_provider_uuid"]]
    general_hosts = sum(p["name"].startswith("general") for p in roots)
    gpus = len(fleet["resource_providers"]) - len(roots)
    general = {"name": "general", "vcpus": 4, "ram": memory // 4, "disk": 20, "extra_specs": {}}
    gpu = {
        "name": "gpu",
        "vcpus": 8,
        "ram": memory // 2,
        "disk": 40,
        "extra_specs": {"pci_passthrough:alias": "h100:1"},
    }
    return [
        {"flavor": general, "count": rng.randint(general_hosts, 4 * general_hosts + 2)},
        {"flavor": gpu, "count": gpus},
    ]


def generated_multipliers(rng: random.Random) -> dict:
    """Nova's weight multipliers, each Nova's default or drawn (pci_weight_multiplier stays at least 0)."""
    return {
        "ram_weight_multiplier": rng.choice([1.0, -1.0, 0.0, 2.0]),
        "cpu_weight_multiplier": rng.choice([1.0, -1.0, 0.0]),
        "disk_weight_multiplier": rng.choice([1.0, -1.0, 0.0]),
        "io_ops_weight_multiplier": rng.choice([-1.0, 0.0, 1.0]),
        "pci_weight_multiplier": rng.choice([1.0, 0.0, 3.0]),
        "num_instances_weight_multiplier": rng.choice([0.0, -1.0, 1.0]),
        "build_failure_weight_multiplier": rng.choice([1000000.0, 0.0]),
        "hypervisor_version_weight_multiplier": rng.choice([1.0, -1.0, 0.0]),
    }
