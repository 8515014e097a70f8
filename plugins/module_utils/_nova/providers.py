# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resource providers nova-compute will report for a host, predicted from facts and the policy.

The prediction follows Nova 34 (libvirt driver, PCI-in-Placement translator):

- the compute node provider, named after the hypervisor hostname, with VCPU (every CPU of every NUMA
  node), MEMORY_MB (their memory; ``reserved_host_memory_mb`` reserved) and DISK_GB. Facts do not tell
  how large the instance store is: ``disk_gb`` gives it; unset (None), DISK_GB is predicted with
  Placement's largest total (``UNKNOWN_DISK_GB``), so the prediction never invents a disk limit the
  real host may not have (nova-compute reports the real size); 0 leaves DISK_GB out;
- with ``report_in_placement``, one provider per passed-through device (type-PCI / type-PF) named
  ``<hostname>_<ADDRESS>``, and one per PF whose VFs are passed through, counting the VFs; devices
  whose entry has a ``physical_network`` (Neutron's) get none. A ``one_time_use`` device's provider
  carries ``HW_PCI_ONE_TIME_USE`` and, as Nova reports a device no instance holds, ``reserved`` 0:
  Nova raises ``reserved`` to the total once an instance takes the device, and never lowers it;
- one child provider per mdev-capable device with an enabled vGPU type, named
  ``<hostname>_pci_0000_84_00_0``, holding ``available_instances`` of the type's class.

Traits Nova derives from the CPU and the hypervisor (``COMPUTE_*``, ``HW_CPU_*``) are not predicted;
the compute node carries ``COMPUTE_NODE`` and ``OWNER_NOVA`` plus what the provider config adds.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.inventory import (
    INVENTORY_DEFAULTS,
    INVENTORY_FIELDS,
    MAX_INT,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova import naming
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyEntry, parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import (
    HostSelection,
    PassthroughSelection,
    select,
)

# Placement's largest inventory total: DISK_GB of a host whose instance store size is unknown.
UNKNOWN_DISK_GB = MAX_INT
DEFAULTS = {
    "disk_gb": None,
    "cpu_allocation_ratio": 4.0,
    "ram_allocation_ratio": 1.0,
    "disk_allocation_ratio": 1.0,
    "reserved_host_memory_mb": 512,
    "reserved_host_disk_gb": 0,
    "reserved_host_cpus": 0,
}


class PredictionError(AccelError):
    """The facts or the policy do not allow a prediction; the message names the fix."""


def inventory(
    total: int, reserved: int | None = None, allocation_ratio: float | None = None, max_unit: int | None = None
) -> dict:
    """A full inventory record as Nova reports it: Placement's defaults, max_unit the total unless given."""
    values = {**INVENTORY_DEFAULTS, "total": int(total), "max_unit": int(total if max_unit is None else max_unit)}
    if reserved is not None:
        values["reserved"] = int(reserved)
    if allocation_ratio is not None:
        values["allocation_ratio"] = float(allocation_ratio)
    return {field: values[field] for field in INVENTORY_FIELDS}


def pci_traits(entry: PolicyEntry) -> list[str]:
    """The traits Nova puts on a PCI provider for a device matched by ``entry``."""
    traits = set(entry.traits) | {naming.TRAIT_MANAGED_PCI, naming.TRAIT_OWNER_NOVA}
    if entry.live_migratable:
        traits.add(naming.TRAIT_LIVE_MIGRATABLE)
    if entry.one_time_use:
        traits.add(naming.TRAIT_ONE_TIME_USE)
    return sorted(traits)


def pci_resource_class(item: PassthroughSelection, device: dict) -> str:
    if item.resource_class:
        return item.resource_class
    return naming.default_pci_resource_class(device["vendor_id"], device["product_id"])


def _compute_node(hostname: str, facts: dict, options: dict) -> dict:
    nodes = facts.get("accel_numa_nodes") or []
    cpus = sum(len(node.get("cpus") or []) for node in nodes)
    memory_mb = sum(int(node.get("memory_mb") or 0) for node in nodes)
    inventories: dict[str, dict] = {}
    if cpus:
        inventories["VCPU"] = inventory(
            cpus, options["reserved_host_cpus"], options["cpu_allocation_ratio"], max_unit=cpus
        )
    if memory_mb:
        inventories["MEMORY_MB"] = inventory(
            memory_mb, options["reserved_host_memory_mb"], options["ram_allocation_ratio"]
        )
    disk_gb = _disk_gb(options["disk_gb"])
    if disk_gb:
        inventories["DISK_GB"] = inventory(disk_gb, options["reserved_host_disk_gb"], options["disk_allocation_ratio"])
    for resource_class, amount in sorted((options.get("provider_inventories") or {}).items()):
        inventories[resource_class] = inventory(**_inventory_args(amount))
    traits = {naming.TRAIT_COMPUTE_NODE, naming.TRAIT_OWNER_NOVA} | set(options.get("provider_traits") or [])
    return {
        "name": hostname,
        "parent_name": None,
        "inventories": inventories,
        "traits": sorted(traits),
        "aggregates": [],
    }


def _disk_gb(value: object) -> int:
    """DISK_GB's total: the given size, UNKNOWN_DISK_GB when unknown, 0 (no DISK_GB) when 0."""
    if value is None:
        return UNKNOWN_DISK_GB
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= UNKNOWN_DISK_GB:
        raise PredictionError(
            f"disk_gb is {value!r}; give the instance store's size in GB (1 to {UNKNOWN_DISK_GB}), 0 to leave "
            "DISK_GB out, or nothing when it is unknown (then DISK_GB never limits the prediction)"
        )
    return value


def _inventory_args(amount: object) -> dict:
    if isinstance(amount, int):
        return {"total": amount}
    if isinstance(amount, dict) and isinstance(amount.get("total"), int):
        keys = ("total", "reserved", "allocation_ratio", "max_unit")
        return {k: amount[k] for k in keys if k in amount}
    raise PredictionError(f"provider inventory {amount!r} needs a whole-number total, e.g. {{total: 4}}")


def _pci_providers(selection: HostSelection) -> list[dict]:
    providers: dict[str, dict] = {}
    for item in selection.passthrough:
        if not item.in_placement:
            continue  # physical_network: Neutron's devices, which Nova keeps out of Placement
        for device in item.devices:
            _add_pci_device(providers, selection.hostname, item, device)
    return [providers[name] for name in sorted(providers)]


def _add_pci_device(providers: dict, hostname: str, item: PassthroughSelection, device: dict) -> None:
    owner = device.get("physfn") or device["address"]
    name = naming.pci_provider_name(hostname, owner)
    resource_class = pci_resource_class(item, device)
    provider = providers.setdefault(
        name,
        {
            "name": name,
            "parent_name": hostname,
            "inventories": {},
            "traits": pci_traits(item.entry),
            "aggregates": [],
        },
    )
    count = provider["inventories"].get(resource_class, {}).get("total", 0) + 1
    provider["inventories"][resource_class] = inventory(count)


def _vgpu_providers(selection: HostSelection, traits_by_entry: dict[int, list[str]]) -> list[dict]:
    providers = []
    for item in selection.vgpu:
        used = 0
        for device in item.parents:
            total = item.available_instances(device)
            limit = item.entry.max_instances
            if limit and used + total > limit:
                continue  # Nova drops a device whose instances would pass the type's max_instances
            used += total
            if total <= 0:
                continue  # Nova omits a provider with nothing to offer
            providers.append(
                {
                    "name": naming.vgpu_provider_name(selection.hostname, device["address"]),
                    "parent_name": selection.hostname,
                    "inventories": {item.mdev_class: inventory(total)},
                    "traits": sorted({naming.TRAIT_OWNER_NOVA, *traits_by_entry.get(item.entry.index, [])}),
                    "aggregates": [],
                }
            )
    return sorted(providers, key=lambda p: p["name"])


def predict_providers(
    facts: dict,
    policy: list[PolicyEntry],
    hostname: str,
    report_in_placement: bool = False,
    *,
    withhold_without_iommu: bool = True,
    **options,
) -> list[dict]:
    """The providers of ``hostname``'s tree, parent first (compute node, then PCI, then vGPU providers).

    A host whose IOMMU is off gets no PCI or vGPU provider (see :mod:`.selection`);
    ``withhold_without_iommu=False`` predicts what nova-compute reports from a deployed config instead."""
    unknown = sorted(set(options) - set(DEFAULTS) - {"provider_traits", "provider_inventories"})
    if unknown:
        raise PredictionError(f"unknown prediction option(s) {', '.join(unknown)}; known: {', '.join(DEFAULTS)}")
    settings = {**DEFAULTS, **{k: v for k, v in options.items() if v is not None}}
    selection = select(hostname, facts, policy, report_in_placement, withhold_without_iommu)
    if selection.errors:
        raise PredictionError("; ".join(selection.errors))
    providers = [_compute_node(hostname, facts, settings)]
    if report_in_placement:
        providers.extend(_pci_providers(selection))
    vgpu_traits = {e.index: list(e.traits) for e in policy if e.is_vgpu and e.traits}
    providers.extend(_vgpu_providers(selection, vgpu_traits))
    return providers


def nova_providers(facts: dict, policy: object, hostname: str, report_in_placement: bool = False, **options):
    """Filter entry point: validates the raw policy, then predicts (see :func:`predict_providers`)."""
    if not hostname:
        raise PredictionError("hostname is empty; give the hypervisor hostname nova-compute reports")
    if not isinstance(facts, dict):
        raise PredictionError("facts must be the host's accel_* discovery facts (a mapping)")
    return predict_providers(facts, parse_policy(policy), hostname, report_in_placement, **options)
