"""A small GPU fleet with instances' allocations, for the live-migration tests: each host a compute node with
one vGPU GPU (``<host>_pci_0000_84_00_0``, 4 VGPU) and one passthrough GPU (``<host>_0000:41:00.0``, one
``CUSTOM_PCI_10DE_2331``), the facts and nova-compute config that make every rule pass; tests plant one
defect each."""

from __future__ import annotations

import copy
import uuid

NS = uuid.UUID("6f1c2a44-8f51-4b7e-9d0a-3c7b6e2f1a90")
PCI_RC = "CUSTOM_PCI_10DE_2331"
MDEV_TYPE = "nvidia-35"
ALIAS = {"name": "h100", "vendor_id": "10de", "product_id": "2331", "device_type": "type-PF", "live_migratable": "true"}
GOOD_FACTS = {
    "accel_kernel_release": "6.1.0-18-amd64",
    "accel_libvirt_version": "10.0.0",
    "accel_qemu_version": "8.2.2",
}


def uid(text: str) -> str:
    return str(uuid.uuid5(NS, text))


def _inventory(total: int) -> dict:
    return {"total": total, "reserved": 0, "min_unit": 1, "max_unit": total, "step_size": 1, "allocation_ratio": 1.0}


def host_providers(name: str, ram: int = 65536, vgpus: int = 4, tagged: bool = True) -> list[dict]:
    root = uid(name)
    pci_traits = ["COMPUTE_MANAGED_PCI_DEVICE"] + (["HW_PCI_LIVE_MIGRATABLE"] if tagged else [])
    return [
        {
            "uuid": root,
            "name": name,
            "parent_provider_uuid": None,
            "inventories": {"VCPU": _inventory(64), "MEMORY_MB": _inventory(ram), "DISK_GB": _inventory(1000)},
            "usages": {},
            "traits": ["HW_CPU_X86_AVX2"],
            "aggregates": [],
        },
        {
            "uuid": uid(name + "/vgpu"),
            "name": f"{name}_pci_0000_84_00_0",
            "parent_provider_uuid": root,
            "inventories": {"VGPU": _inventory(vgpus)},
            "usages": {},
            "traits": [],
            "aggregates": [],
        },
        {
            "uuid": uid(name + "/pci"),
            "name": f"{name}_0000:41:00.0",
            "parent_provider_uuid": root,
            "inventories": {PCI_RC: _inventory(1)},
            "usages": {},
            "traits": pci_traits,
            "aggregates": [],
        },
    ]


def cloud(names=("gpu-01", "gpu-02", "gpu-03")) -> dict:
    """``{fleet, hosts, deployed, servers, pci_aliases}`` with no instance yet."""
    providers = [p for name in names for p in host_providers(name)]
    compute = {
        "libvirt": {"live_migration_permit_post_copy": ["false"]},
        "devices": {"enabled_mdev_types": [MDEV_TYPE]},
        "pci": {"device_spec": ['{"vendor_id": "10de", "product_id": "2331", "live_migratable": "true"}']},
    }
    return {
        "fleet": {"resource_providers": providers, "allocations": {}},
        "hosts": {name: dict(GOOD_FACTS) for name in names},
        "deployed": {name: {"compute": copy.deepcopy(compute)} for name in names},
        "servers": [],
        "pci_aliases": [dict(ALIAS)],
    }


def place(inputs: dict, name: str, host: str, device: str, ram: int = 8192) -> str:
    """Allocate a server ``name`` on ``host`` with one vGPU (``device='vgpu'``) or the passthrough GPU."""
    consumer = uid("server/" + name)
    provider = uid(host + "/" + device)
    rc = "VGPU" if device == "vgpu" else PCI_RC
    allocations = {
        uid(host): {"resources": {"VCPU": 4, "MEMORY_MB": ram, "DISK_GB": 20}},
        provider: {"resources": {rc: 1}},
    }
    fleet = inputs["fleet"]
    fleet["allocations"][consumer] = {"allocations": allocations, "project_id": "p", "user_id": "u"}
    for record in fleet["resource_providers"]:
        for rc_name, amount in (allocations.get(record["uuid"]) or {}).get("resources", {}).items():
            record["usages"][rc_name] = record["usages"].get(rc_name, 0) + amount
    extra = {"pci_passthrough:alias": "h100:1"} if device == "pci" else {"resources:VGPU": "1"}
    inputs["servers"].append({"id": consumer, "name": name, "flavor": {"name": f"f.{device}", "extra_specs": extra}})
    return consumer


def provider(inputs: dict, name: str) -> dict:
    return next(p for p in inputs["fleet"]["resource_providers"] if p["name"] == name)
