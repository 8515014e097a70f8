# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Placement findings: the providers nova-compute reports, against the providers the host state predicts.

The prediction is the collection's own (``_nova/providers.py``, as ``nova_fleet`` uses it) from the
host's facts and its deployed nova-compute config (adopted as a policy). Only the device providers
(PCI and vGPU children of the compute node) are compared: the compute node's own inventory depends on
settings the facts do not carry. nova-compute owns every provider compared here: the fixes say what to
do on the host and in Nova so that nova-compute corrects them, never to edit them in Placement.
"""

from __future__ import annotations

import json
import re
import uuid

from ansible_collections.accel.openstack.plugins.module_utils._names.pci import normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like
from ansible_collections.accel.openstack.plugins.module_utils._nova import naming
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import PredictionError, predict_providers
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import host_devices
from ansible_collections.accel.openstack.plugins.module_utils._placement.quarantine import (
    consumer_uuid as quarantine_consumer,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.audit import lost_state
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding

RESTART = "restart nova-compute on {host} so it reports the host as it is"
_PCI_NAME = re.compile(r"_([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\Z")
_VGPU_NAME = re.compile(r"_pci_([0-9a-f]{4})_([0-9a-f]{2})_([0-9a-f]{2})_([0-7])\Z")
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}\Z")


def is_safe_name(name: str) -> bool:
    """A provider name that can be shown as it is (a hostname, a nova-compute provider name)."""
    return bool(_SAFE_NAME.match(name))


def device_address(nodename: str, provider_name: str) -> str | None:
    """The PCI address a nova-compute child provider's name encodes, or None."""
    if not provider_name.startswith(nodename + "_"):
        return None
    match = _VGPU_NAME.search(provider_name)
    if match:
        domain, bus, slot, function = match.groups()
        return f"{domain}:{bus}:{slot}.{function}"
    match = _PCI_NAME.search(provider_name)
    return normalize_address(match.group(1)) if match else None


def _totals(inventories: dict) -> dict[str, int]:
    return {rc: int(inv.get("total") or 0) for rc, inv in (inventories or {}).items()}


def check_host(cloud, host: str) -> list[dict]:
    nodename = cloud.nodename(host)
    root = cloud.roots.get(nodename)
    if root is None:
        return [
            finding(
                host,
                "compute_node_missing",
                f"Placement has no compute node provider named {nodename}: nova-compute on {host} is not "
                "reporting (down, or its hypervisor hostname differs)",
                "check nova-compute's log and `openstack compute service list`; set the host's "
                "hypervisor_hostname in the inventory if it differs from the inventory name",
            )
        ]
    facts = cloud.hosts.get(host) or {}
    try:
        # what nova-compute reports from its deployed config: it lists those devices whatever the IOMMU
        predicted = predict_providers(
            dict(facts),
            cloud.host_policy(host),
            nodename,
            cloud.reports_in_placement(host),
            withhold_without_iommu=False,
        )[1:]
    except PredictionError:
        predicted = None  # the deployed config holds what no policy says: listed by the adoption
    actual = {p["name"]: p for p in cloud.children.get(root["uuid"], [])}
    present = {normalize_address(d["address"]) for d in host_devices(facts)}
    found: list[dict] = []
    restart = RESTART.format(host=host)
    lost = lost_state.lost_addresses(cloud, host)  # reported by the host findings: restore, never restart
    if predicted is not None:
        wanted = {p["name"]: _totals(p["inventories"]) for p in predicted}
        for name, totals in sorted(wanted.items()):
            if device_address(nodename, name) in lost:
                continue
            record = actual.get(name)
            if record is None:
                found.append(
                    finding(
                        host,
                        "inventory_mismatch",
                        f"{name} ({', '.join(f'{rc}: {n}' for rc, n in totals.items())}) is what the host state and "
                        "its Nova config give, but Placement has no such provider",
                        restart + " (its log says why a device is skipped)",
                    )
                )
                continue
            have = _totals(record.get("inventories"))
            used = record.get("usages") or {}
            held = cloud.quarantine_held.get(record.get("uuid")) or {}
            vgpu = name.startswith(f"{nodename}_pci_")
            # A vGPU provider counts the mdevs it has created on top of what the type still offers; the units a
            # quarantine holds are an allocation, not mdevs, so the type still offers them.
            expected = {
                rc: n + (max(0, int(used.get(rc) or 0) - int(held.get(rc) or 0)) if vgpu else 0)
                for rc, n in totals.items()
            }
            if have != expected:
                found.append(
                    finding(
                        host,
                        "inventory_mismatch",
                        f"{name}: Placement has {have}, the host state predicts {expected}",
                        restart + "; if the host state is what changed (VFs, vGPU type, MIG), fix it first",
                    )
                )
    for name, record in sorted(actual.items()):
        if predicted is not None and name in {p["name"] for p in predicted}:
            continue
        address = device_address(nodename, name)
        if address is None or address in lost:
            continue  # not a device provider nova-compute names after an address, or host state lost
        used = {rc: n for rc, n in (record.get("usages") or {}).items() if n}
        if address not in present:
            found.append(
                finding(
                    host,
                    "provider_orphaned",
                    f"{name} stands for {address}, which the host no longer has (a replaced or dead GPU)"
                    + (f"; instances still hold {used}" if used else ""),
                    ("move or delete the instances that hold it, then " if used else "")
                    + restart
                    + ": nova-compute removes the provider of a device it no longer finds",
                    severity=None if used else "warning",
                )
            )
        elif predicted is not None:
            found.append(
                finding(
                    host,
                    "inventory_mismatch",
                    f"{name} is in Placement, but the deployed Nova config no longer hands out {address}",
                    restart,
                )
            )
    return found


def check_reservations(cloud) -> list[dict]:
    found = []
    for provider in cloud.fleet.get("resource_providers") or []:
        if naming.TRAIT_ONE_TIME_USE not in (provider.get("traits") or []):
            continue
        for rc, inv in (provider.get("inventories") or {}).items():
            used = int((provider.get("usages") or {}).get(rc) or 0)
            if inv.get("total") and inv.get("reserved") == inv.get("total") and not used:
                found.append(
                    finding(
                        cloud.host_of(provider),
                        "one_time_use_stuck",
                        f"{provider['name']}: one-time-use device reserved ({rc} reserved {inv['reserved']} of "
                        f"{inv['total']}) with nothing allocated: it was used once and waits for its operator",
                        "clean or inspect the device, then release it as Nova's one-time-use workflow says: "
                        f"openstack resource provider inventory set {provider['uuid']} --amend "
                        f"--resource {rc}:reserved=0",
                    )
                )
    return found


# Resource classes that are not devices: what Nova allocates on the compute node for every instance, and
# the network classes Neutron's ports take.
_GENERAL = {"VCPU", "PCPU", "MEMORY_MB", "DISK_GB", "IPV4_ADDRESS", "SRIOV_NET_VF", "MEM_ENCRYPTION_CONTEXT"}
_INSTANCE = ("VCPU", "PCPU", "MEMORY_MB")
MAX_SHOWN = 5


def _device_class(rc: str) -> bool:
    return rc not in _GENERAL and not rc.startswith(("NET_BW_", "NET_PACKET_RATE_"))


def consumers(cloud) -> dict[str, dict[str, dict[str, int]]] | None:
    """``{consumer: {provider uuid: {resource class: amount}}}`` from the snapshot's ``allocations`` (placement_info's
    ``allocations: true``), or None when the snapshot has none."""
    raw = cloud.fleet.get("allocations")
    if not isinstance(raw, dict):
        return None
    found: dict[str, dict[str, dict[str, int]]] = {}
    for consumer, body in raw.items():
        held = (body or {}).get("allocations") if isinstance(body, dict) else None
        if not isinstance(held, dict):
            continue
        found[str(consumer)] = {
            str(rp): {str(rc): int(n) for rc, n in ((alloc or {}).get("resources") or {}).items() if isinstance(n, int)}
            for rp, alloc in held.items()
            if isinstance(alloc, dict)
        }
    return found


def _as_uuid(value: object) -> str | None:
    """A consumer or provider id as a command argument: only a UUID, written canonically, is ever put into one."""
    return str(uuid.UUID(value)) if isinstance(value, str) and is_uuid_like(value) else None


def _tree(cloud, root: dict) -> list[dict]:
    by_parent = cloud.children
    tree, todo = [], [root]
    while todo:
        provider = todo.pop()
        tree.append(provider)
        todo.extend(by_parent.get(provider["uuid"], []))
    return tree


def check_gone(cloud) -> list[dict]:
    """Compute node trees of hosts the inventory no longer has (Nova's nova-compute gone, its providers left)."""
    known = {cloud.nodename(h) for h in cloud.hosts} | set(cloud.inventory_hosts) | set(cloud.nodenames.values())
    held_by = consumers(cloud)
    found = []
    for name, root in sorted(cloud.roots.items()):
        if name in known or "VCPU" not in (root.get("inventories") or {}):
            continue  # a host of the inventory, or no compute node (an Ironic node, a provider of its own)
        tree = _tree(cloud, root)
        uuids = {p["uuid"] for p in tree}
        used = {rc: n for p in tree for rc, n in (p.get("usages") or {}).items() if n}
        holders = sorted(c for c, held in (held_by or {}).items() if uuids & set(held))
        label = name if is_safe_name(name) else json.dumps(name)
        if holders or used:
            named = [c for c in (_as_uuid(h) for h in holders[:MAX_SHOWN]) if c]
            shown = ", ".join(_as_uuid(h) or json.dumps(h) for h in holders[:MAX_SHOWN])
            if len(holders) > MAX_SHOWN:
                shown += f" and {len(holders) - MAX_SHOWN} more"
            found.append(
                finding(
                    None,
                    "compute_node_gone",
                    f"compute node {label} is in Placement with {len(tree)} provider(s) but is no host of the "
                    f"inventory, and {len(holders) or 'some'} consumer(s) still hold {amounts(used)} there"
                    + (f": {shown}" if holders else " (accel_audit_allocations: true names them)"),
                    "find out whether each consumer is a live instance ("
                    + (
                        "; ".join(f"openstack server show {c}" for c in named)
                        or f"openstack resource provider show {_as_uuid(root['uuid']) or 'ROOT'} --allocations"
                    )
                    + "): evacuate or delete it, or add the host back to the inventory if it still runs; then delete "
                    "its compute service (openstack compute service delete), which removes the provider tree",
                    severity="error",
                )
            )
        else:
            found.append(
                finding(
                    None,
                    "compute_node_gone",
                    f"compute node {label} is in Placement with {len(tree)} provider(s) and nothing allocated, but is "
                    "no host of the inventory: a stale tree left by a host that was removed",
                    "if the host is retired, delete its compute service (openstack compute service delete), which "
                    "removes the tree; a tree left after the service is gone: openstack resource provider delete "
                    + " then ".join(u for u in (_as_uuid(p["uuid"]) for p in reversed(tree)) if u)
                    + "; if the host still runs, add it to the inventory (or to accel_audit_hypervisor_hostnames)",
                )
            )
    return found


def check_allocations(cloud) -> list[dict]:
    """Consumers that hold devices without the instance's own VCPU and memory, or that are no instance."""
    held_by = consumers(cloud)
    if held_by is None:
        return []
    by_uuid = {p["uuid"]: p for p in cloud.fleet.get("resource_providers") or []}
    quarantine = {d["consumer"] for d in cloud.quarantined}
    instances = None if cloud.instances is None else {str(i).lower() for i in cloud.instances}
    found = []
    for consumer, held in sorted(held_by.items()):
        if consumer in quarantine or any(is_uuid_like(rp) and quarantine_consumer(rp) == consumer for rp in held):
            continue  # a device quarantine: reported as device_quarantined
        devices = {
            by_uuid[rp]["name"]: {rc: n for rc, n in resources.items() if _device_class(rc)}
            for rp, resources in held.items()
            if rp in by_uuid and by_uuid[rp].get("parent_provider_uuid")
        }
        devices = {name: r for name, r in devices.items() if r}
        instance_like = any(rc in resources for resources in held.values() for rc in _INSTANCE)
        unknown = instances is not None and consumer.lower() not in instances and (instance_like or devices)
        if not ((devices and not instance_like) or unknown):
            continue
        where = set(devices) or {by_uuid[rp]["name"] for rp in held if rp in by_uuid}
        host = next((cloud.host_of(by_uuid[rp]) for rp in held if rp in by_uuid), None)
        shown = "; ".join(
            f"{n}: {amounts(devices.get(n) or held_on(by_uuid, held, n))}" for n in sorted(where)[:MAX_SHOWN]
        )
        command = _as_uuid(consumer)
        label = command or json.dumps(consumer)
        why = (
            f"consumer {label} holds devices ({shown}) but no VCPU or MEMORY_MB on a compute node, which Nova "
            "allocates for every instance: a leaked allocation (an instance deleted or moved half-way)"
            if devices and not instance_like
            else f"consumer {label} holds {shown} but is not in the server list of any project"
        )
        fix = (
            f"check it is no instance and no migration in progress (openstack server show {command}; openstack server "
            f"migration list), then free the devices: openstack resource provider allocation delete {command}"
            if command
            else "its id is not a UUID, so it is no Nova instance: find who wrote it before deleting it in Placement"
        )
        found.append(finding(host, "allocation_leaked", why + " (a migration in progress holds its source under "
                             "the migration's id)", fix))  # fmt: skip
    return found


def amounts(resources: dict) -> str:
    """``VCPU 4, MEMORY_MB 8192`` for a person."""
    return ", ".join(f"{rc} {n}" for rc, n in sorted(resources.items())) or "nothing"


def held_on(by_uuid: dict, held: dict, name: str) -> dict:
    return next((r for rp, r in held.items() if rp in by_uuid and by_uuid[rp]["name"] == name), {})
