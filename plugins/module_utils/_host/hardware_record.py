# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which devices of a host were replaced, moved, added or removed since the last recorded run.

The record is ``/var/lib/accel-openstack/devices.json`` inside the root: the address, vendor and product
IDs and board serial (from ``nvidia-smi -q -x``, when the device has one) of every device ``pci_facts``
reported. ``compare`` matches the facts of this run against it:

- ``replaced``: the same address with another serial, or another vendor/product ID;
- ``moved``: a serial recorded at one address is now at another (and that address does not hold it any more);
- ``added`` / ``removed``: an address that is new / gone, with no serial tying it to another address.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._names import pci
from ansible_collections.accel.openstack.plugins.module_utils._names.text import load_json

RECORD = "/var/lib/accel-openstack/devices.json"
FIELDS = ("address", "vendor_id", "product_id", "serial")
MAX_DEVICES = 4096
MAX_RECORD_BYTES = 2 * 1024 * 1024


class HardwareRecordError(AccelError):
    """Facts or a record that cannot be compared; nothing was written."""


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
            raise HardwareRecordError(f"{where} ({address}): {key} {value!r} is not 4 hex digits")
        out[key] = value.lower()
    serial = raw.get("serial")
    if serial is not None and (not isinstance(serial, str) or not 0 < len(serial) <= 64 or not serial.isprintable()):
        raise HardwareRecordError(f"{where} ({address}): serial {serial!r} is not a board serial")
    out["serial"] = serial
    return out


def normalise(devices: object, label: str) -> list[dict]:
    if not isinstance(devices, list):
        raise HardwareRecordError(f"{label} must be a list of devices (accel_pci_devices)")
    if len(devices) > MAX_DEVICES:
        raise HardwareRecordError(f"{label} has {len(devices)} devices; at most {MAX_DEVICES} are recorded")
    entries = [_entry(raw, f"{label}[{index}]") for index, raw in enumerate(devices)]
    addresses = [e["address"] for e in entries]
    if len(set(addresses)) != len(addresses):
        raise HardwareRecordError(f"{label} lists an address twice")
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


def compare(before: list[dict], after: list[dict]) -> list[dict]:
    """The changes between two normalised device lists (see the module docstring), sorted by address."""
    old = {d["address"]: d for d in before}
    new = {d["address"]: d for d in after}
    changes: list[dict] = []
    moved_from: set[str] = set()
    moved_to: set[str] = set()
    old_by_serial = {d["serial"]: d for d in before if d["serial"]}
    for address, device in new.items():
        serial = device["serial"]
        origin = old_by_serial.get(serial) if serial else None
        if origin and origin["address"] != address and (new.get(origin["address"]) or {}).get("serial") != serial:
            changes.append({"change": "moved", "address": address, "from_address": origin["address"], "device": device})
            moved_from.add(origin["address"])
            moved_to.add(address)
    for address, device in new.items():
        if address in moved_to:
            continue
        was = old.get(address)
        if was is None:
            changes.append({"change": "added", "address": address, "device": device})
        elif (was["vendor_id"], was["product_id"]) != (device["vendor_id"], device["product_id"]) or (
            was["serial"] and device["serial"] and was["serial"] != device["serial"]
        ):
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
