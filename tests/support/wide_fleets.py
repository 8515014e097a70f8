"""Wide provider trees as Nova reports them with PCI in Placement, and the query Nova sends for N devices.

``hgx_fleet(shapes)``: one compute node per shape ``(gpus, busy, vfs_used)``, each GPU a child provider of
one unit of ``GPU_CLASS`` (the first ``busy`` in use), and with ``vfs_used`` not None a NIC child with 8
SRIOV_NET_VF of which that many are in use. Uuids and names follow the host's position, so a fleet is the
same in every process. ``uniform(hosts, gpus, busy)`` is the common case. ``nova_query`` is Nova 34's
sorted query for ``pci_passthrough:alias=<alias>:N`` (N one-device groups) with optional VF groups, and
``gpu_flavor`` the flavor that asks it.
"""

from __future__ import annotations

GPU_CLASS = "CUSTOM_PCI_10DE_2330"
# The [pci] alias of those GPUs (Nova's default resource class for 10de:2330 is GPU_CLASS).
ALIASES = [{"name": "h100", "vendor_id": "10de", "product_id": "2330"}]


def inventory(total: int) -> dict:
    return {"total": total, "reserved": 0, "min_unit": 1, "max_unit": total, "step_size": 1, "allocation_ratio": 1.0}


def hgx_fleet(shapes: list[tuple[int, int, int | None]], vcpus_used_per_busy_gpu: int = 0) -> dict:
    providers = []
    for host, (gpus, busy, vfs_used) in enumerate(shapes):
        root = f"5e1f0000-0000-4000-8000-{host:04d}00000000"
        used_vcpus = vcpus_used_per_busy_gpu * busy
        providers.append(
            {
                "uuid": root,
                "name": f"hgx-{host}",
                "parent_provider_uuid": None,
                "inventories": {"VCPU": inventory(224), "MEMORY_MB": inventory(2_000_000), "DISK_GB": inventory(3000)},
                "traits": ["OWNER_NOVA"],
                "aggregates": [],
                "usages": {"VCPU": used_vcpus} if used_vcpus else {},
            }
        )
        for gpu in range(gpus):
            providers.append(
                {
                    "uuid": f"5e1f0000-0000-4000-8000-{host:04d}{gpu + 1:08d}",
                    "name": f"hgx-{host}_0000:{gpu + 0x10:02X}:00.0",
                    "parent_provider_uuid": root,
                    "inventories": {GPU_CLASS: inventory(1)},
                    "traits": ["OWNER_NOVA"],
                    "aggregates": [],
                    "usages": {GPU_CLASS: 1} if gpu < busy else {},
                }
            )
        if vfs_used is not None:
            providers.append(
                {
                    "uuid": f"5e1f0000-0000-4000-8000-{host:04d}99999999",
                    "name": f"hgx-{host}_nic",
                    "parent_provider_uuid": root,
                    "inventories": {"SRIOV_NET_VF": inventory(8)},
                    "traits": ["OWNER_NOVA"],
                    "aggregates": [],
                    "usages": {"SRIOV_NET_VF": vfs_used} if vfs_used else {},
                }
            )
    return {"resource_providers": providers}


def uniform(hosts: int, gpus: int, busy: int = 0) -> dict:
    """``hosts`` nodes of ``gpus`` GPUs each, the first ``busy`` of every node in use."""
    return hgx_fleet([(gpus, busy, None)] * hosts)


def nova_query(
    devices: int, vfs: int = 0, policy: str = "none", limit: int = 1000, vcpus: int = 8, ram: int = 1024
) -> str:
    """Nova's query for ``devices`` devices of one alias (and ``vfs`` VF groups), parameters sorted."""
    params = [("group_policy", policy), ("limit", str(limit))]
    params += [(f"required_pci0-{i}", "OWNER_NOVA") for i in range(devices)]
    params += [(f"resources_pci0-{i}", f"{GPU_CLASS}:1") for i in range(devices)]
    params += [(f"resources_vf{i}", "SRIOV_NET_VF:1") for i in range(vfs)]
    params += [("resources", f"MEMORY_MB:{ram},VCPU:{vcpus}"), ("root_required", "OWNER_NOVA,!COMPUTE_STATUS_DISABLED")]
    return "&".join(f"{k}={v}" for k, v in sorted(params))


def gpu_flavor(devices: int, vcpus: int = 8, ram: int = 1024) -> dict:
    """A flavor asking ``devices`` H100s through the alias (``pci_passthrough:alias=h100:N``)."""
    return {
        "name": f"gpu.h100.{devices}",
        "vcpus": vcpus,
        "ram": ram,
        "disk": 0,
        "extra_specs": {"pci_passthrough:alias": f"h100:{devices}"},
    }
