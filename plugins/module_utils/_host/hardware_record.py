# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which devices of a host were replaced, moved, added or removed since the last recorded run.

The record is ``/var/lib/accel-openstack/devices.json`` inside the root: the address, vendor and product
IDs, board serial and GPU UUID (both from ``nvidia-smi -q -x``, when the device has them) of every device
``pci_facts`` reported. ``compare`` matches the facts of this run against it.

A device is known by its GPU UUID; without one on both sides, by its board serial, but only where that
serial names one device in the record and one now (an A16 board carries four GPUs under one serial, so
its serial alone cannot tell them apart):

- ``replaced``: the same address holds another device (another UUID or serial) or another vendor/product ID;
- ``moved``: a device recorded at one address is now at another (and that address does not hold it any more);
- ``added`` / ``removed``: an address that is new / gone, with no device tying it to another address.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._names import pci
from ansible_collections.accel.openstack.plugins.module_utils._names.text import load_json

RECORD = "/var/lib/accel-openstack/devices.json"
FIELDS = ("address", "vendor_id", "product_id", "serial", "gpu_uuid")
MAX_DEVICES = 4096
MAX_RECORD_BYTES = 2 * 1024 * 1024
# nvidia-smi's GPU UUID: "GPU-" and a UUID in its 8-4-4-4-12 form
GPU_UUID = re.compile(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


class HardwareRecordError(AccelError):
    """Facts or a record that cannot be compared; nothing was written."""


def _shown(value: object) -> str:
    """A bad value as a message can show it: short printable text quoted, anything else described."""
    if isinstance(value, str):
        return json.dumps(value) if len(value) <= 64 and value.isprintable() else f"(a text of {len(value)} characters)"
    return "(missing)" if value is None else f"(a {type(value).__name__}, not a text)"


def _entry(raw: object, where: str) -> dict:
    if not isinstance(raw, dict):
        raise HardwareRecordError(f"{where}: must be a device mapping as pci_facts reports it")
    try:
        address = pci.normalize_address(raw.get("address"), require_domain=True)
    except pci.PciAddressError as exc:
        raise HardwareRecordError(f"{where}: {exc}") from None
    out = {"address": address}
    for key in ("vendor_id", "product_id"):
        value = raw.get(key)
        if not pci.is_pci_id(value):
            raise HardwareRecordError(f"{where} ({address}): {key} {_shown(value)} is not 4 hex digits")
        out[key] = value.lower()
    serial = raw.get("serial")
    if serial is not None and (not isinstance(serial, str) or not 0 < len(serial) <= 64 or not serial.isprintable()):
        raise HardwareRecordError(f"{where} ({address}): serial {_shown(serial)} is not a board serial")
    out["serial"] = serial
    gpu_uuid = raw.get("gpu_uuid")
    if gpu_uuid is not None and (not isinstance(gpu_uuid, str) or not GPU_UUID.fullmatch(gpu_uuid)):
        raise HardwareRecordError(
            f"{where} ({address}): gpu_uuid {_shown(gpu_uuid)} is not a GPU UUID as nvidia-smi gives it "
            '("GPU-" and a UUID, e.g. GPU-5d1f7c2e-8a3b-4c6d-9e0f-1a2b3c4d5e6f); give the fact pci_facts reports'
        )
    out["gpu_uuid"] = "GPU-" + gpu_uuid[4:].lower() if gpu_uuid else None
    return out


def normalise(devices: object, label: str) -> list[dict]:
    if not isinstance(devices, list):
        raise HardwareRecordError(f"{label} must be a list of devices (accel_pci_devices)")
    if len(devices) > MAX_DEVICES:
        raise HardwareRecordError(f"{label} has {len(devices)} devices; at most {MAX_DEVICES} are recorded")
    entries = [_entry(raw, f"{label}[{index}]") for index, raw in enumerate(devices)]
    for address, count in sorted(Counter(e["address"] for e in entries).items()):
        if count > 1:
            raise HardwareRecordError(
                f"{label} lists the address {address} twice or more ({count} times); list each device once"
            )
    where: dict[str, list[str]] = {}
    for entry in entries:
        if entry["gpu_uuid"]:
            where.setdefault(entry["gpu_uuid"], []).append(entry["address"])
    for gpu_uuid, addresses in sorted(where.items()):
        if len(addresses) > 1:
            raise HardwareRecordError(
                f"{label} gives the GPU UUID {gpu_uuid} to {len(addresses)} addresses "
                f"({', '.join(sorted(addresses))}); "
                "a GPU UUID names one GPU: read the devices again with pci_facts"
            )
    return sorted(entries, key=lambda e: e["address"])


def read_record(host: HostRoot) -> list[dict] | None:
    """The recorded devices, or None when this host has no record yet."""
    text = host.read_text(RECORD)
    if text is None:
        return None
    if len(text) > MAX_RECORD_BYTES:
        raise HardwareRecordError(f"{RECORD} is over {MAX_RECORD_BYTES} bytes; it is not the collection's record")
    try:
        data = load_json(text)
    except ValueError as err:  # RecursionError is not one: load_json refuses the depth before parsing
        raise HardwareRecordError(
            f"{RECORD} is not the collection's JSON ({err}); remove it to start a new record"
        ) from None
    if not isinstance(data, dict):
        raise HardwareRecordError(f"{RECORD} is not the collection's record; remove it to start a new record")
    return normalise(data.get("devices"), RECORD)


def document(devices: list[dict]) -> str:
    return json.dumps({"devices": devices}, indent=2, sort_keys=True) + "\n"


class _Identity:
    """Tells whether two device entries (one recorded, one now) are the same GPU."""

    def __init__(self, before: list[dict], after: list[dict]):
        counts = Counter(d["serial"] for d in [*before, *after] if d["serial"])
        in_both = {d["serial"] for d in before} & {d["serial"] for d in after}
        # a serial tells a device only where it names one device in the record and one now
        self.unique_serials = {s for s in in_both if s and counts[s] == 2}

    def same(self, was: dict, now: dict) -> bool:
        if was["gpu_uuid"] and now["gpu_uuid"]:
            return was["gpu_uuid"] == now["gpu_uuid"]
        return bool(was["serial"]) and was["serial"] == now["serial"] and was["serial"] in self.unique_serials

    def differs(self, was: dict, now: dict) -> bool:
        """Another device at the same address (the model, or what tells GPUs apart, is not the same)."""
        if (was["vendor_id"], was["product_id"]) != (now["vendor_id"], now["product_id"]):
            return True
        if was["gpu_uuid"] and now["gpu_uuid"]:
            return was["gpu_uuid"] != now["gpu_uuid"]
        return bool(was["serial"] and now["serial"]) and was["serial"] != now["serial"]


def compare(before: list[dict], after: list[dict]) -> list[dict]:
    """The changes between two normalised device lists (see the module docstring), sorted by address."""
    old = {d["address"]: d for d in before}
    new = {d["address"]: d for d in after}
    identity = _Identity(before, after)
    changes: list[dict] = []
    moved_from: set[str] = set()
    moved_to: set[str] = set()
    for address, device in new.items():
        here = old.get(address)
        if here is not None and identity.same(here, device):
            continue  # still where it was
        origins = [
            was
            for was in before
            if was["address"] != address
            and was["address"] not in moved_from
            and identity.same(was, device)
            and not (new.get(was["address"]) and identity.same(was, new[was["address"]]))
        ]
        if len(origins) == 1:
            origin = origins[0]["address"]
            changes.append({"change": "moved", "address": address, "from_address": origin, "device": device})
            moved_from.add(origin)
            moved_to.add(address)
    for address, device in new.items():
        if address in moved_to:
            continue
        was = old.get(address)
        if was is None:
            changes.append({"change": "added", "address": address, "device": device})
        elif identity.differs(was, device):
            changes.append({"change": "replaced", "address": address, "was": was, "device": device})
    for address, device in old.items():
        if address not in new and address not in moved_from:
            changes.append({"change": "removed", "address": address, "was": device})
    return sorted(changes, key=lambda c: (c["address"], c["change"]))


@dataclass
class RecordPlan:
    first_run: bool
    changes: list[dict]
    file: FileChange

    def result(self) -> dict:
        return {"first_run": self.first_run, "changes": self.changes, "record": RECORD}


def plan(host: HostRoot, devices: object) -> RecordPlan:
    current = normalise(devices, "devices")
    recorded = read_record(host)
    changes = compare(recorded, current) if recorded is not None else []
    return RecordPlan(recorded is None, changes, FileChange.of(host, RECORD, document(current)))
