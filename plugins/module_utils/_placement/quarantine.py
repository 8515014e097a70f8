# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Take one device out of scheduling with allocations Placement enforces, and put it back.

A device has one provider or more: Nova's PCI provider (``<host>_<ADDRESS>``) and, for a vGPU-capable GPU
or VF, its vGPU provider (``<host>_pci_<address with underscores>``). A quarantine holds every unit that
no other consumer holds, on every provider of the device, so that Placement offers no candidate there.

Placement refuses one allocation larger than the inventory's ``max_unit`` (a consumer has one allocation
per provider and resource class), so one consumer cannot take a provider whose total is 4 and max_unit 1.
The quarantine therefore holds the free units in pieces of at most ``max_unit`` (each a multiple of
``step_size`` and at least ``min_unit``), one piece per consumer: consumer 0 of a provider is
``uuid5(NAMESPACE, provider uuid)`` (as it always was), consumer ``n`` is
``uuid5(NAMESPACE, "<provider uuid>/<n>")``. Every consumer's project is ``QUARANTINE_PROJECT`` (no real
project, so no quota is charged), its user is the operator's reason and its consumer type is
``QUARANTINE``. All of a device's consumers are written in one ``POST /allocations``, so a quarantine is
taken, changed or released whole or not at all.

Why allocations and not ``reserved`` or a trait: nova-compute rewrites the traits of its PCI providers
on every update, and sends inventories without ``reserved`` (Placement then sets it to 0) whenever a
total changes; it never reads, changes or removes allocations of consumers it does not know on child
providers (its clean-up of deleted instances reads only the compute node's own provider and skips
consumers that are not instances). The provider's inventory is never written: nova-compute owns it.

A unit an instance holds stays the instance's: the quarantine takes what is free now, and a unit freed
later becomes schedulable until the quarantine runs again (it is idempotent and takes it then).
After writing, ``prove`` asks Placement's allocation candidates for the smallest amount each inventory
allows, restricted to the device's tree: a device provider that still appears fails the task.
"""

from __future__ import annotations

import datetime
import json
import re
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
# Fixed namespace of the quarantine consumers: uuid5(NAMESPACE, provider uuid), then "<provider uuid>/<n>".
NAMESPACE = uuid.UUID("5d0c5a57-3f63-4b0e-9a43-6f1e0c2a9b71")
MAX_REASON = 255  # Placement's limit for a consumer's user
# The most consumers one provider's quarantine uses (pieces of max_unit); more is refused, with the numbers.
MAX_CONSUMERS = 256
STATES = ("quarantined", "released")
RESOURCE_CLASS = re.compile(r"[A-Z0-9_]{1,255}")  # what Placement accepts as a resource class name


class QuarantineError(AccelError):
    """The device cannot be quarantined or released as asked; nothing was changed."""


def consumer_uuid(provider_uuid: str, index: int = 0) -> str:
    """Quarantine consumer ``index`` of one device provider: the same UUID on every run and every machine."""
    canonical = str(uuid.UUID(provider_uuid))
    return str(uuid.uuid5(NAMESPACE, canonical if index == 0 else f"{canonical}/{index}"))


def consumer_uuids(provider_uuid: str) -> dict[str, int]:
    """``{consumer uuid: index}`` for every consumer a quarantine of this provider may use."""
    return {consumer_uuid(provider_uuid, n): n for n in range(MAX_CONSUMERS)}


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


# -- finding the device's providers ----------------------------------------------------------------
def _device_providers(tree: list[dict], host: str, address: str) -> list[dict]:
    """The providers of one device in its host's tree: the PCI provider and the vGPU provider, as present."""
    wanted = (pci_provider_name(host, address), vgpu_provider_name(host, address))
    return [r for name in wanted for r in tree if r.get("name") == name]


def resolve(client: PlacementClient, host: str | None, address: str | None, provider: str | None) -> list[dict]:
    """The provider records (uuid, name, parent, root) of the device the options name, PCI provider first.

    A device named by its provider gains the other provider of the same address (the vGPU provider of a GPU
    named by its PCI provider, and the other way round), found by name in the same host's tree.
    """
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
        _refuse_compute_node(record)
        records = [record]
        root = client.provider(record["root_provider_uuid"]) if record.get("root_provider_uuid") else None
        host_name = str((root or {}).get("name") or "")
        device = address_of(str(record.get("name") or ""), host_name) if host_name else None
        if device:
            tree = client.providers(in_tree=record["root_provider_uuid"])
            records = _device_providers(tree, host_name, device) or records
        return records
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
    matches = _device_providers(tree, host, normal)
    if not matches:
        known = sorted({a for a in (address_of(r["name"], host) for r in tree) if a})
        raise QuarantineError(
            f"host {host!r} has no provider for device {normal}; devices with providers there: "
            f"{', '.join(known) or 'none'} (VFs passed through are counted on their PF's provider: give the "
            "PF's address; a vGPU-capable VF has its own; a device without report_in_placement or an enabled "
            "vGPU type has none)"
        )
    for record in matches:
        _refuse_compute_node(record)
    return matches


def _refuse_compute_node(record: dict) -> None:
    if record.get("parent_provider_uuid") is None:
        raise QuarantineError(
            f"provider {record['name']} is a compute node, not a device; give one device's provider (or host and "
            "address), or disable the whole host with openstack compute service set --disable"
        )


# -- the plan ---------------------------------------------------------------------------------------
def _piece(inventory: dict) -> tuple[int, int, int]:
    """(the largest amount one allocation may hold, step_size, min_unit) of one inventory."""
    step = max(1, int(inventory.get("step_size", 1)))
    most = int(inventory.get("max_unit", inventory["total"]))
    return most - most % step, step, max(1, int(inventory.get("min_unit", 1)))


def pieces(inventory: dict, free: int) -> list[int]:
    """``free`` units cut into amounts Placement accepts for one allocation each (max_unit, step_size,
    min_unit honoured), largest first; what is left over is smaller than any amount a request may ask."""
    largest, step, least = _piece(inventory)
    out: list[int] = []
    if largest < least:
        return out
    while free >= largest and largest > 0:
        out.append(largest)
        free -= largest
        if len(out) > MAX_CONSUMERS:
            return out
    rest = free - free % step
    if rest >= least:
        out.append(rest)
    return out


def smallest_request(inventory: dict) -> int:
    """The smallest amount of this inventory a request can ask (a multiple of step_size, at least min_unit)."""
    _largest, step, least = _piece(inventory)
    return -(-least // step) * step


@dataclass
class ProviderQuarantine:
    """One provider of the device: what its quarantine consumers hold now and must hold."""

    provider: dict
    inventories: dict
    current: dict[str, dict]  # consumer uuid -> GET /allocations/<consumer> (the quarantine's, held now)
    desired: dict[str, dict[str, int]]  # consumer uuid -> resources it must hold on the provider
    others: dict[str, list[str]] = field(default_factory=dict)  # resource class -> other consumers

    def held_by(self, consumer: str) -> dict[str, int]:
        body = self.current.get(consumer) or {}
        return dict(((body.get("allocations") or {}).get(self.provider["uuid"]) or {}).get("resources") or {})

    @property
    def held(self) -> dict[str, int]:
        return _summed(self.held_by(c) for c in self.current)

    @property
    def wanted(self) -> dict[str, int]:
        return _summed(self.desired.values())

    @property
    def reasons(self) -> set[str]:
        return {str(body.get("user_id")) for c, body in self.current.items() if self.held_by(c)}


def _summed(amounts) -> dict[str, int]:
    out: dict[str, int] = {}
    for resources in amounts:
        for rc, n in resources.items():
            out[rc] = out.get(rc, 0) + n
    return out


@dataclass
class QuarantinePlan:
    providers: list[ProviderQuarantine]
    state: str
    reason: str | None

    @property
    def provider(self) -> dict:
        return self.providers[0].provider

    @property
    def consumer(self) -> str:
        return consumer_uuid(self.provider["uuid"])

    @property
    def held(self) -> dict[str, int]:
        return _summed(p.held for p in self.providers)

    @property
    def held_reason(self) -> str | None:
        reasons = sorted({r for p in self.providers for r in p.reasons})
        return reasons[0] if len(reasons) == 1 else ("; ".join(reasons) or None)

    def writes(self) -> dict[str, dict]:
        """``POST /allocations`` body: every consumer whose allocations change (empty ones are deleted)."""
        body = {}
        for part in self.providers:
            rp = part.provider["uuid"]
            for consumer in sorted(set(part.current) | set(part.desired)):
                want = part.desired.get(consumer, {}) if self.state == "quarantined" else {}
                current = part.current.get(consumer) or {}
                if want == part.held_by(consumer) and (not want or current.get("user_id") == self.reason):
                    continue
                body[consumer] = {
                    "allocations": {rp: {"resources": want}} if want else {},
                    "project_id": QUARANTINE_PROJECT,
                    "user_id": self.reason if want else str(current.get("user_id") or QUARANTINE_PROJECT),
                    "consumer_generation": current.get("consumer_generation"),
                    "consumer_type": CONSUMER_TYPE,
                }
        return body

    @property
    def changed(self) -> bool:
        return bool(self.writes())

    def _view(self, held: dict[str, dict[str, int]], reason: str | None) -> dict:
        held = {name: amounts for name, amounts in held.items() if amounts}
        return {"quarantined": bool(held), "reason": reason if held else None, "held": held}

    def diff(self) -> dict:
        before = self._view({p.provider["name"]: p.held for p in self.providers}, self.held_reason)
        after = self._view(
            {p.provider["name"]: p.wanted for p in self.providers} if self.state == "quarantined" else {}, self.reason
        )
        return {
            "before": json.dumps(before, indent=2, sort_keys=True) + "\n",
            "after": json.dumps(after, indent=2, sort_keys=True) + "\n",
        }

    def result(self) -> dict:
        quarantined = self.state == "quarantined"
        in_use: dict[str, list[str]] = {}
        for part in self.providers:
            for rc, consumers in part.others.items():
                if consumers:
                    in_use[rc] = sorted(set(in_use.get(rc, [])) | set(consumers))
        return {
            "provider": _public(self.provider),
            "providers": [
                {
                    **_public(p.provider),
                    "held": p.wanted if quarantined else {},
                    "consumers": sorted(p.desired) if quarantined else [],
                }
                for p in self.providers
            ],
            "consumer": self.consumer,
            "state": self.state,
            "reason": self.reason if quarantined else None,
            "held": _summed(p.wanted for p in self.providers) if quarantined else {},
            "in_use_by": in_use,
        }


def _public(provider: dict) -> dict:
    return {
        "uuid": provider["uuid"],
        "name": provider["name"],
        "root_provider_uuid": provider.get("root_provider_uuid"),
    }


def _read_provider(client: PlacementClient, record: dict, state: str) -> ProviderQuarantine:
    rp = record["uuid"]
    ours = consumer_uuids(rp)
    first = consumer_uuid(rp)
    allocations = client.request("GET", f"/resource_providers/{rp}/allocations")[1]["allocations"]
    current: dict[str, dict] = {}
    for consumer in sorted({first} | (set(allocations) & set(ours)), key=lambda c: ours[c]):
        body = client.request("GET", f"/allocations/{consumer}")[1] or {}
        if not body.get("allocations"):
            continue
        if body.get("project_id") != QUARANTINE_PROJECT:
            raise QuarantineError(
                f"consumer {consumer} on provider {record['name']} belongs to project {body.get('project_id')!r}, "
                f"not {QUARANTINE_PROJECT}; it is not a quarantine, so it is left alone: look at it with openstack "
                f"resource provider allocation show {consumer}"
            )
        current[consumer] = body
    _generation, inventories = client.inventories(rp)
    others: dict[str, list[str]] = {rc: [] for rc in inventories}
    used_by_others: dict[str, int] = {rc: 0 for rc in inventories}
    for other, alloc in allocations.items():
        if other in current:
            continue
        for rc, amount in (alloc.get("resources") or {}).items():
            used_by_others[rc] = used_by_others.get(rc, 0) + amount
            others.setdefault(rc, []).append(other)
    desired: dict[str, dict[str, int]] = {}
    if state == "quarantined":
        for rc, inventory in sorted(inventories.items()):
            cut = pieces(inventory, capacity(inventory) - used_by_others.get(rc, 0))
            if len(cut) > MAX_CONSUMERS:
                largest = _piece(inventory)[0]
                raise QuarantineError(
                    f"provider {record['name']}: {rc} has {capacity(inventory) - used_by_others.get(rc, 0)} free units "
                    f"and max_unit {largest}, so holding them takes more than {MAX_CONSUMERS} quarantine consumers; "
                    "disable the host instead (openstack compute service set --disable)"
                )
            for index, amount in enumerate(cut):
                desired.setdefault(consumer_uuid(rp, index), {})[rc] = amount
    return ProviderQuarantine(record, inventories, current, desired, others)


def plan(client: PlacementClient, records: list[dict] | dict, state: str, reason: str | None) -> QuarantinePlan:
    """What the quarantine consumers must hold on each of the device's providers (reads only)."""
    if state not in STATES:
        raise QuarantineError(f"state {state!r} is not one of {', '.join(STATES)}")
    if state == "quarantined":
        problem = reason_problem(reason)
        if problem:
            raise QuarantineError(f"reason {problem}")
    records = [records] if isinstance(records, dict) else list(records)
    parts = [_read_provider(client, record, state) for record in records]
    quarantine = QuarantinePlan(parts, state, reason if state == "quarantined" else None)
    if state == "quarantined":
        names = ", ".join(p.provider["name"] for p in parts)
        if not any(p.inventories for p in parts):
            raise QuarantineError(f"provider {names} has no inventory; there is nothing to take out")
        if not any(p.desired for p in parts):
            holders = sorted({c for p in parts for cs in p.others.values() for c in cs})
            if not holders:
                raise QuarantineError(
                    f"provider {names}: nothing is free to hold, its inventory is reserved whole (a "
                    "one-time-use device waiting to be cleaned, or an operator's reservation), so it is out of "
                    "scheduling already; quarantine it after it is returned, and do not return it until it is healthy"
                )
            raise QuarantineError(
                f"provider {names}: every unit is held by other consumers ({', '.join(holders)}) "
                "or reserved, so nothing can be held for the quarantine and the device would come back to scheduling "
                "as soon as they leave; migrate or delete those instances (openstack server migrate), then run again",
                in_use_by=quarantine.result()["in_use_by"],
            )
    return quarantine


def apply(client: PlacementClient, quarantine: QuarantinePlan) -> None:
    """Write every changed consumer of the device in one request (Placement applies it whole or not at all)."""
    body = quarantine.writes()
    if body:
        client.request("POST", "/allocations", body, ok=(204,))


def prove(client: PlacementClient, quarantine: QuarantinePlan) -> list[dict]:
    """Ask Placement's allocation candidates, per provider and resource class, for the smallest amount a
    request may ask, within the device's tree; a quarantined provider must not be offered. Returns one
    ``{provider, resource_class, query, offered}`` per question; raises when a provider is still offered."""
    asked = []
    for part in quarantine.providers:
        rp = part.provider["uuid"]
        for rc, inventory in sorted(part.inventories.items()):
            if not isinstance(rc, str) or not RESOURCE_CLASS.fullmatch(rc):
                raise QuarantineError(
                    f"provider {part.provider['name']} has an inventory named {json.dumps(str(rc))[:300]}, which is "
                    "not a resource class name; the quarantine was written, but Placement cannot be asked about it"
                )
            query = f"resources={rc}:{smallest_request(inventory)}&in_tree={rp}"
            body = client.request("GET", f"/allocation_candidates?{query}")[1] or {}
            offered = any(rp in (req.get("allocations") or {}) for req in body.get("allocation_requests") or [])
            asked.append({"provider": part.provider["name"], "resource_class": rc, "query": query, "offered": offered})
    still = [a for a in asked if a["offered"]]
    if still:
        said = ", ".join(
            f"{a['provider']} for {a['resource_class']} (GET /allocation_candidates?{a['query']})" for a in still
        )
        raise QuarantineError(
            f"the quarantine was written, but Placement still offers {said}; an instance may have left the device "
            "meanwhile: run the task again, and if it fails again disable the host (openstack compute service set "
            "--disable)",
            candidates=asked,
        )
    return asked


# -- reading quarantines back (the audit) -----------------------------------------------------------
def read_quarantines(client: PlacementClient, fleet: dict) -> dict[str, dict]:
    """``{consumer 0's uuid: GET /allocations/<consumer 0>}`` for the quarantines on the fleet's providers.

    One usage query first (nothing more when no quarantine exists anywhere), then one read per device
    provider that has usage; where that provider is quarantined, one more for its allocations and one per
    further quarantine consumer, whose units are added to consumer 0's (``consumers`` lists them all). Each
    body gains ``last_modified``: when Placement last wrote consumer 0's allocation (its ``Last-Modified``
    header, ISO 8601 UTC), or null.
    """
    usage = client.request("GET", f"/usages?project_id={QUARANTINE_PROJECT}")[1]
    if not (usage or {}).get("usages"):
        return {}
    found = {}
    for provider in fleet.get("resource_providers") or []:
        if provider.get("parent_provider_uuid") is None or not any((provider.get("usages") or {}).values()):
            continue
        rp = provider["uuid"]
        consumer = consumer_uuid(rp)
        body, written = client.read_dated(f"/allocations/{consumer}")
        if not (isinstance(body, dict) and body.get("allocations")) or body.get("project_id") != QUARANTINE_PROJECT:
            continue
        held = dict(((body["allocations"].get(rp) or {}).get("resources")) or {})
        consumers = [consumer]
        ours = consumer_uuids(rp)
        on_provider = client.request("GET", f"/resource_providers/{rp}/allocations")[1].get("allocations") or {}
        for other in sorted(set(on_provider) & set(ours), key=lambda c: ours[c]):
            if other == consumer:
                continue
            extra = client.request("GET", f"/allocations/{other}")[1] or {}
            if extra.get("project_id") != QUARANTINE_PROJECT:
                continue
            consumers.append(other)
            for rc, n in (((extra.get("allocations") or {}).get(rp) or {}).get("resources") or {}).items():
                held[rc] = held.get(rc, 0) + n
        merged = {**body, "allocations": {rp: {"resources": held}}, "consumers": consumers}
        found[consumer] = {**merged, "last_modified": written}
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


def _consumers(listed: object, provider_uuid: str, first: str) -> list[str]:
    """The quarantine's consumers as read (only uuids a quarantine of this provider may use), consumer 0 first."""
    if not isinstance(listed, list):
        return [first]
    ours = consumer_uuids(provider_uuid)
    return sorted({first} | {c for c in listed if isinstance(c, str) and c in ours}, key=lambda c: ours[c])


def quarantined_devices(fleet: dict, quarantines: dict | None = None) -> list[dict]:
    """The quarantined devices of a fleet snapshot, sorted by host and provider.

    ``quarantines`` is what ``read_quarantines`` returns; without it the snapshot's optional
    ``quarantines`` key is used. Each entry: ``host`` (the compute node's provider name), ``provider``,
    ``provider_uuid``, ``address`` (from the provider's name, or null), ``reason``, ``held`` (units the
    quarantine holds per resource class, all its consumers together), ``schedulable`` (units still free for
    new instances: non-zero once an instance that held part of the device leaves, until the quarantine runs
    again), ``consumer`` (consumer 0), ``consumers`` (every consumer of the quarantine, consumer 0 first),
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
                "consumers": _consumers(body.get("consumers"), provider["uuid"], consumer),
                "since": _since(body.get("last_modified")),
            }
        )
    return sorted(out, key=lambda e: (str(e["host"]), str(e["provider"])))
