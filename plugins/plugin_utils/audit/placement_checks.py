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

import re

from ansible_collections.accel.openstack.plugins.module_utils._names.pci import normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._nova import naming
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import PredictionError, predict_providers
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import host_devices
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding

RESTART = "restart nova-compute on {host} so it reports the host as it is"
_PCI_NAME = re.compile(r"_([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\Z")
_VGPU_NAME = re.compile(r"_pci_([0-9a-f]{4})_([0-9a-f]{2})_([0-9a-f]{2})_([0-7])\Z")


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
    if predicted is not None:
        wanted = {p["name"]: _totals(p["inventories"]) for p in predicted}
        for name, totals in sorted(wanted.items()):
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
        if address is None:
            continue  # not a device provider nova-compute names after an address
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
