# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Take one device out of scheduling with an allocation Placement enforces, and put it back.

A quarantine is an allocation held on the device's provider by a consumer of its own: the consumer's
UUID is derived from the provider's UUID (one per device, the same on every run), its project is
``QUARANTINE_PROJECT`` (no real project, so no quota is charged), its user is the operator's reason and
its consumer type is ``QUARANTINE``. It holds every unit of the provider that no other consumer holds,
so Placement offers no candidate on that device.

Why an allocation and not ``reserved`` or a trait: nova-compute rewrites the traits of its PCI providers
on every update, and sends inventories without ``reserved`` (Placement then sets it to 0) whenever a
total changes; it never reads, changes or removes allocations of consumers it does not know on child
providers (its clean-up of deleted instances reads only the compute node's own provider and skips
consumers that are not instances). The provider's inventory is never written: nova-compute owns it.

A unit an instance holds stays the instance's: the quarantine takes what is free now, and a unit freed
later becomes schedulable until the quarantine runs again (it is idempotent and takes it then).
"""

from __future__ import annotations

import datetime
import json
import uuid
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names import pci
from ansible_collections.accel.openstack.plugins.module_utils._names.inventory import capacity
from ansible_collections.accel.openstack.plugins.module_utils._names.text import component_problem, control_character
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like
from ansible_collections.accel.openstack.plugins.module_utils._nova.naming import pci_provider_name, vgpu_provider_name
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import PlacementClient

QUARANTINE_PROJECT = "accel-openstack-quarantine"
CONSUMER_TYPE = "QUARANTINE"
# Fixed namespace of the quarantine consumers: uuid5(NAMESPACE, provider uuid).
NAMESPACE = uuid.UUID("5d0c5a57-3f63-4b0e-9a43-6f1e0c2a9b71")
MAX_REASON = 255  # Placement's limit for a consumer's user
STATES = ("quarantined", "released")


class QuarantineError(AccelError):
    """The device cannot be quarantined or released as asked; nothing was changed."""


def consumer_uuid(provider_uuid: str) -> str:
    """The quarantine consumer of one device provider: the same UUID on every run and every machine."""
    return str(uuid.uuid5(NAMESPACE, str(uuid.UUID(provider_uuid))))


def reason_problem(reason: object) -> str | None:
    if not isinstance(reason, str) or not reason.strip():
        return "is empty; say why the device leaves scheduling, e.g. 'Xid 79: fell off the bus'"
    if len(reason) > MAX_REASON:
        return f"is {len(reason)} characters; Placement keeps at most {MAX_REASON}"
    char = control_character(reason)
    if char:
        return f"contains the control character {char}; write it on one line"
    return None


def address_of(provider_name: str, host: str) -> str | None:
    """The PCI address a device provider's name carries (``<host>_0000:41:00.0`` or ``<host>_pci_...``)."""
    prefix = f"{host}_"
    if not provider_name.startswith(prefix):
        return None
    tail = provider_name[len(prefix) :]
    if pci.is_address(tail, require_domain=True):
        return pci.normalize_address(tail, require_domain=True)
    parts = tail.split("_")
    if len(parts) == 5 and parts[0] == "pci":
        text = f"{parts[1]}:{parts[2]}:{parts[3]}.{parts[4]}"
        if pci.is_address(text, require_domain=True):
            return pci.normalize_address(text, require_domain=True)
    return None


# -- finding the device's provider -----------------------------------------------------------------
def resolve(client: PlacementClient, host: str | None, address: str | None, provider: str | None) -> dict:
    """The provider record (uuid, name, parent, root) of the device the options name."""
    if provider is not None:
        if not isinstance(provider, str) or not provider or len(provider) > 200:
            raise QuarantineError("provider must be a provider's name or uuid (at most 200 characters)")
        found = client.providers(uuid=provider) if is_uuid_like(provider) else client.providers(name=provider)
        if not found:
            raise QuarantineError(
                f"provider {provider!r} is not in Placement; give the device provider's name or uuid "
                "(openstack resource provider list shows them)"
            )
        record = found[0]
    else:
        problem = component_problem(host) if host is not None else "is missing"
        if problem:
            raise QuarantineError(f"host {host!r} {problem}; give the hypervisor hostname nova-compute reports")
        try:
            normal = pci.normalize_address(address, require_domain=True)
        except pci.PciAddressError as exc:
            raise QuarantineError(f"address: {exc}") from None
        roots = [r for r in client.providers(name=host) if r.get("parent_provider_uuid") is None]
        if not roots:
            raise QuarantineError(
                f"host {host!r}: no compute node provider has that name; give the hypervisor hostname "
                "(openstack hypervisor list) or the device's provider"
            )
        tree = client.providers(in_tree=roots[0]["uuid"])
        wanted = {pci_provider_name(host, normal), vgpu_provider_name(host, normal)}
        matches = [r for r in tree if r["name"] in wanted]
        if not matches:
            known = sorted(a for a in (address_of(r["name"], host) for r in tree) if a)
            raise QuarantineError(
                f"host {host!r} has no provider for device {normal}; devices with providers there: "
                f"{', '.join(known) or 'none'} (VFs passed through are counted on their PF's provider: give the "
                "PF's address; a vGPU-capable VF has its own; a device without report_in_placement or an enabled "
                "vGPU type has none)"
            )
        record = matches[0]
    if record.get("parent_provider_uuid") is None:
        raise QuarantineError(
            f"provider {record['name']} is a compute node, not a device; give one device's provider (or host and "
            "address), or disable the whole host with openstack compute service set --disable"
        )
    return record


# -- the plan ---------------------------------------------------------------------------------------
def _holdable(inventory: dict, others: int) -> int:
    """The most one allocation can hold of what the other consumers leave free (min/max/step honoured)."""
    free = min(capacity(inventory) - others, inventory.get("max_unit", inventory["total"]))
    step = max(1, int(inventory.get("step_size", 1)))
    amount = free - free % step if free > 0 else 0
    return amount if amount >= max(1, int(inventory.get("min_unit", 1))) else 0


@dataclass
class QuarantinePlan:
    provider: dict
    consumer: str
    state: str
    reason: str | None
    current: dict  # GET /allocations/{consumer}
    desired: dict[str, int]  # resource class -> amount on the provider
    others: dict[str, list[str]] = field(default_factory=dict)  # resource class -> other consumers
    usages: dict[str, int] = field(default_factory=dict)

    @property
    def held(self) -> dict[str, int]:
        mine = (self.current.get("allocations") or {}).get(self.provider["uuid"], {})
        return dict(mine.get("resources") or {})

    @property
    def held_reason(self) -> str | None:
        return self.current.get("user_id") if self.held else None

    @property
    def changed(self) -> bool:
        if self.state == "released":
            return bool(self.current.get("allocations"))
        return self.held != self.desired or self.held_reason != self.reason

    def body(self) -> dict:
        return {
            "allocations": {self.provider["uuid"]: {"resources": self.desired}},
            "project_id": QUARANTINE_PROJECT,
            "user_id": self.reason,
            "consumer_generation": self.current.get("consumer_generation"),
            "consumer_type": CONSUMER_TYPE,
        }

    def _view(self, held: dict, reason: str | None) -> dict:
        return {"provider": self.provider["name"], "quarantined": bool(held), "reason": reason, "held": held}

    def diff(self) -> dict:
        after = self._view(self.desired, self.reason) if self.state == "quarantined" else self._view({}, None)
        return {
            "before": json.dumps(self._view(self.held, self.held_reason), indent=2, sort_keys=True) + "\n",
            "after": json.dumps(after, indent=2, sort_keys=True) + "\n",
        }

    def result(self) -> dict:
        quarantined = self.state == "quarantined"
        held = self.desired if quarantined else {}
        in_use = {rc: consumers for rc, consumers in self.others.items() if consumers}
        return {
            "provider": {
                "uuid": self.provider["uuid"],
                "name": self.provider["name"],
                "root_provider_uuid": self.provider.get("root_provider_uuid"),
            },
            "consumer": self.consumer,
            "state": self.state,
            "reason": self.reason if quarantined else None,
            "held": held,
            "in_use_by": in_use,
        }


def plan(client: PlacementClient, record: dict, state: str, reason: str | None) -> QuarantinePlan:
    """What the quarantine consumer must hold on the device's provider (reads only)."""
    if state not in STATES:
        raise QuarantineError(f"state {state!r} is not one of {', '.join(STATES)}")
    if state == "quarantined":
        problem = reason_problem(reason)
        if problem:
            raise QuarantineError(f"reason {problem}")
    rp = record["uuid"]
    consumer = consumer_uuid(rp)
    current = client.request("GET", f"/allocations/{consumer}")[1] or {}
    if current.get("allocations") and current.get("project_id") != QUARANTINE_PROJECT:
        raise QuarantineError(
            f"consumer {consumer} on provider {record['name']} belongs to project {current.get('project_id')!r}, not "
            f"{QUARANTINE_PROJECT}; it is not a quarantine, so it is left alone: look at it with openstack "
            f"resource provider allocation show {consumer}"
        )
    mine = ((current.get("allocations") or {}).get(rp) or {}).get("resources") or {}
    _generation, inventories = client.inventories(rp)
    allocations = client.request("GET", f"/resource_providers/{rp}/allocations")[1]["allocations"]
    others: dict[str, list[str]] = {rc: [] for rc in inventories}
    used: dict[str, int] = {rc: 0 for rc in inventories}
    for other, alloc in allocations.items():
        for rc, amount in (alloc.get("resources") or {}).items():
            used[rc] = used.get(rc, 0) + amount
            if other != consumer:
                others.setdefault(rc, []).append(other)
    desired: dict[str, int] = {}
    if state == "quarantined":
        if not inventories:
            raise QuarantineError(f"provider {record['name']} has no inventory; there is nothing to take out")
        for rc, inventory in inventories.items():
            amount = _holdable(inventory, used.get(rc, 0) - mine.get(rc, 0))
            if amount:
                desired[rc] = amount
        if not desired:
            holders = sorted({c for cs in others.values() for c in cs})
            if not holders:
                raise QuarantineError(
                    f"provider {record['name']}: nothing is free to hold, its inventory is reserved whole (a "
                    "one-time-use device waiting to be cleaned, or an operator's reservation), so it is out of "
                    "scheduling already; quarantine it after it is returned, and do not return it until it is healthy"
                )
            raise QuarantineError(
                f"provider {record['name']}: every unit is held by other consumers ({', '.join(holders) or 'none'}) "
                "or reserved, so nothing can be held for the quarantine and the device would come back to scheduling "
                "as soon as they leave; migrate or delete those instances (openstack server migrate), then run again",
                in_use_by={rc: sorted(cs) for rc, cs in others.items() if cs},
            )
    return QuarantinePlan(record, consumer, state, reason, current, desired, others, used)


def apply(client: PlacementClient, quarantine: QuarantinePlan) -> None:
    if not quarantine.changed:
        return
    if quarantine.state == "released":
        client.request("DELETE", f"/allocations/{quarantine.consumer}", ok=(204, 404))
    else:
        client.request("PUT", f"/allocations/{quarantine.consumer}", quarantine.body(), ok=(204,))


# -- reading quarantines back (the audit) -----------------------------------------------------------
def read_quarantines(client: PlacementClient, fleet: dict) -> dict[str, dict]:
    """``{consumer uuid: GET /allocations/<consumer>}`` for the quarantines on the fleet's providers.

    One usage query first (nothing more when no quarantine exists anywhere), then one read per device
    provider that has usage. Each body gains ``last_modified``: when Placement last wrote the quarantine's
    allocation (its ``Last-Modified`` header, ISO 8601 UTC), or null.
    """
    usage = client.request("GET", f"/usages?project_id={QUARANTINE_PROJECT}")[1]
    if not (usage or {}).get("usages"):
        return {}
    found = {}
    for provider in fleet.get("resource_providers") or []:
        if provider.get("parent_provider_uuid") is None or not any((provider.get("usages") or {}).values()):
            continue
        consumer = consumer_uuid(provider["uuid"])
        body, written = client.read_dated(f"/allocations/{consumer}")
        if isinstance(body, dict) and body.get("allocations"):
            found[consumer] = {**body, "last_modified": written}
    return found


def _since(value: object) -> str | None:
    """The quarantine's ``last_modified`` when it is an ISO 8601 UTC time (it may come from a snapshot file)."""
    if not isinstance(value, str) or len(value) != 20:
        return None
    try:
        datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return value


def quarantined_devices(fleet: dict, quarantines: dict | None = None) -> list[dict]:
    """The quarantined devices of a fleet snapshot, sorted by host and provider.

    ``quarantines`` is what ``read_quarantines`` returns; without it the snapshot's optional
    ``quarantines`` key is used. Each entry: ``host`` (the compute node's provider name), ``provider``,
    ``provider_uuid``, ``address`` (from the provider's name, or null), ``reason``, ``held`` (units the
    quarantine holds per resource class), ``schedulable`` (units still free for new instances: non-zero
    once an instance that held part of the device leaves, until the quarantine runs again), ``consumer``,
    ``since`` (when Placement last wrote the quarantine, ISO 8601 UTC, or null when not known).
    """
    if not isinstance(fleet, dict):
        raise QuarantineError(f"fleet is {type(fleet).__name__}; give the snapshot placement_info returns")
    quarantines = quarantines if quarantines is not None else fleet.get("quarantines") or {}
    if not isinstance(quarantines, dict):
        raise QuarantineError("quarantines must map consumer uuids to their allocations")
    providers = [p for p in fleet.get("resource_providers") or [] if isinstance(p, dict) and p.get("uuid")]
    by_uuid = {p["uuid"]: p for p in providers}

    def root_of(provider: dict) -> dict:
        seen = set()
        while provider.get("parent_provider_uuid") in by_uuid and provider["uuid"] not in seen:
            seen.add(provider["uuid"])
            provider = by_uuid[provider["parent_provider_uuid"]]
        return provider

    out = []
    for provider in providers:
        consumer = consumer_uuid(provider["uuid"]) if is_uuid_like(provider["uuid"]) else None
        body = quarantines.get(consumer) if consumer else None
        if not isinstance(body, dict) or body.get("project_id") != QUARANTINE_PROJECT:
            continue  # a consumer of another project at that uuid is not a quarantine (plan() leaves it alone)
        held = ((body.get("allocations") or {}).get(provider["uuid"]) or {}).get("resources") or {}
        if not held:
            continue
        host = root_of(provider).get("name")
        usages = provider.get("usages") or {}
        schedulable = {
            rc: max(0, capacity(inv) - int(usages.get(rc, 0)))
            for rc, inv in (provider.get("inventories") or {}).items()
            if isinstance(inv, dict) and "total" in inv
        }
        out.append(
            {
                "host": host,
                "provider": provider.get("name"),
                "provider_uuid": provider["uuid"],
                "address": address_of(str(provider.get("name") or ""), str(host or "")),
                "reason": body.get("user_id"),
                "held": dict(held),
                "schedulable": {rc: n for rc, n in schedulable.items() if n},
                "consumer": consumer,
                "since": _since(body.get("last_modified")),
            }
        )
    return sorted(out, key=lambda e: (str(e["host"]), str(e["provider"])))
