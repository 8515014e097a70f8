# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova's one-time-use devices: find the ones waiting for the operator, and return one to the pool.

Nova (``pci_placement_translator``, the ``one_time_use`` device_spec tag) sets ``reserved`` to the
inventory's ``total`` on the device's provider when an instance is given the device, and never lowers
it again: once the instance is gone the provider has usage 0 and ``reserved == total``. Such providers
carry the ``HW_PCI_ONE_TIME_USE`` trait. Nova's documentation leaves the return to the operator, with
``openstack resource provider inventory set --amend --resource <RC>:reserved=0 <provider>``: the one
field ``reserved`` of that inventory set to 0, every other field as it is. ``return_device`` does exactly
that, and only while the provider still has the trait, ``reserved == total`` and no usage; nova-compute
never sets ``reserved`` back on its own (it only raises it when the device is allocated again).
"""

from __future__ import annotations

from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.inventory import INVENTORY_FIELDS
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like
from ansible_collections.accel.openstack.plugins.module_utils._nova.naming import TRAIT_ONE_TIME_USE
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import PlacementClient
from ansible_collections.accel.openstack.plugins.module_utils._placement.quarantine import address_of


class OneTimeUseError(AccelError):
    """The device cannot be returned as asked; nothing was changed."""


def _waiting(provider: dict) -> list[str]:
    usages = provider.get("usages") or {}
    out = []
    for rc, inventory in (provider.get("inventories") or {}).items():
        if not isinstance(inventory, dict):
            continue
        total = inventory.get("total")
        if isinstance(total, int) and total > 0 and inventory.get("reserved") == total and not usages.get(rc):
            out.append(rc)
    return sorted(out)


def stuck_devices(fleet: dict) -> list[dict]:
    """One-time-use devices a fleet snapshot shows waiting for the operator (reserved = total, unused).

    Each: ``host`` (the compute node's provider name), ``provider``, ``provider_uuid``, ``address`` (from the
    provider's name, or null), ``resource_class``, ``total``.
    """
    if not isinstance(fleet, dict) or not isinstance(fleet.get("resource_providers"), list):
        raise OneTimeUseError("fleet: give the snapshot accel.openstack.placement_info returns")
    providers = [p for p in fleet["resource_providers"] if isinstance(p, dict) and p.get("uuid")]
    by_uuid = {p["uuid"]: p for p in providers}
    out = []
    for provider in providers:
        if TRAIT_ONE_TIME_USE not in (provider.get("traits") or []):
            continue
        root, seen = provider, set()
        while root.get("parent_provider_uuid") in by_uuid and root["uuid"] not in seen:
            seen.add(root["uuid"])
            root = by_uuid[root["parent_provider_uuid"]]
        host = str(root.get("name") or "")
        for rc in _waiting(provider):
            out.append(
                {
                    "host": host,
                    "provider": provider.get("name"),
                    "provider_uuid": provider["uuid"],
                    "address": address_of(str(provider.get("name") or ""), host),
                    "resource_class": rc,
                    "total": provider["inventories"][rc]["total"],
                }
            )
    return sorted(out, key=lambda d: (d["host"], str(d["provider"]), d["resource_class"]))


@dataclass
class ReturnPlan:
    provider: dict
    resource_class: str
    generation: int
    inventory: dict
    changed: bool

    def body(self) -> dict:
        record = {field: self.inventory[field] for field in INVENTORY_FIELDS if field in self.inventory}
        record["reserved"] = 0
        return dict(record, resource_provider_generation=self.generation)

    def result(self) -> dict:
        return {
            "provider": {"uuid": self.provider["uuid"], "name": self.provider["name"]},
            "resource_class": self.resource_class,
            "reserved_before": self.inventory.get("reserved"),
            "reserved_after": 0 if self.changed else self.inventory.get("reserved"),
        }


def plan_return(client: PlacementClient, provider: str, resource_class: str | None) -> ReturnPlan:
    """Check the device may be returned now (reads only)."""
    if not isinstance(provider, str) or not provider or len(provider) > 200:
        raise OneTimeUseError("provider must be the device provider's name or uuid")
    found = client.providers(uuid=provider) if is_uuid_like(provider) else client.providers(name=provider)
    if not found:
        raise OneTimeUseError(f"provider {provider!r} is not in Placement; give the device provider's name or uuid")
    record = found[0]
    _gen, traits = client.provider_traits(record["uuid"])
    if TRAIT_ONE_TIME_USE not in traits:
        raise OneTimeUseError(
            f"provider {record['name']} has no {TRAIT_ONE_TIME_USE} trait: its reserved value is nova-compute's and "
            "the operator's, not a one-time-use reservation; nothing was changed"
        )
    generation, inventories = client.inventories(record["uuid"])
    if resource_class is None:
        if len(inventories) != 1:
            raise OneTimeUseError(
                f"provider {record['name']} has inventories {', '.join(sorted(inventories)) or 'none'}; "
                "give resource_class"
            )
        resource_class = next(iter(inventories))
    if resource_class not in inventories:
        raise OneTimeUseError(
            f"provider {record['name']} has no {resource_class} inventory; it has {', '.join(sorted(inventories))}"
        )
    inventory = inventories[resource_class]
    used = client.usages(record["uuid"]).get(resource_class, 0)
    if used:
        raise OneTimeUseError(
            f"provider {record['name']}: {used} {resource_class} in use; a device in use is not returned (the "
            "instance holding it must be gone first)"
        )
    if inventory.get("reserved") not in (0, inventory.get("total")):
        raise OneTimeUseError(
            f"provider {record['name']}: reserved is {inventory.get('reserved')} of {inventory.get('total')}; Nova "
            "reserves a one-time-use device whole, so a partial value was set by someone else: left alone"
        )
    return ReturnPlan(record, resource_class, generation, inventory, bool(inventory.get("reserved")))


def apply_return(client: PlacementClient, plan: ReturnPlan) -> None:
    """PUT the one inventory with ``reserved`` 0 and every other field as read (``--amend``)."""
    if plan.changed:
        client.request(
            "PUT", f"/resource_providers/{plan.provider['uuid']}/inventories/{plan.resource_class}", plan.body()
        )
