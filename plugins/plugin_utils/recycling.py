# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cleaning command for each one-time-use device waiting to be returned, or why it cannot be run.

A device goes back to the pool only after its cleaning command succeeded on that device, so the command
must be told which device: each item of the operator's command may carry ``{address}`` (the PCI address,
``0000:41:00.0``) and ``{bus_id}`` (nvidia-smi's form, ``00000000:41:00.0``), and at least one item must.
The address comes from the operator's ``addresses`` map (by provider uuid or name) or from the provider's
name (Nova names a device's provider ``<host>_<ADDRESS>``). It is validated as a PCI address, normalised,
and shell-quoted before it is put in an item, so that even an item that is a shell script text receives
one plain word. A device whose address cannot be resolved gets no command: it is reported with the fix
and stays reserved.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names import pci
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like

PLACEHOLDERS = ("{address}", "{bus_id}")
MAX_ITEMS = 256
MAX_ITEM = 4096


class RecyclingError(AccelError):
    """The cleaning command or the address map cannot be used; nothing runs."""


def command_problem(command: object) -> str | None:
    """Why ``command`` cannot be the cleaning command, or None."""
    example = '[/usr/local/sbin/gpu-scrub, --address, "{address}"]'
    if not isinstance(command, list) or not command:
        return f"recycle_devices_command must be the cleaning command as a list of strings, e.g. {example}"
    if len(command) > MAX_ITEMS:
        return f"recycle_devices_command has {len(command)} items; at most {MAX_ITEMS} are taken"
    for index, item in enumerate(command, 1):
        if not isinstance(item, str):
            return f"recycle_devices_command item {index} is not text; give every item as a string, e.g. {example}"
        if len(item) > MAX_ITEM or "\x00" in item:
            return f"recycle_devices_command item {index} is {len(item)} characters or holds a NUL; shorten it"
    if not command[0].strip():
        return "recycle_devices_command's first item (the program) is empty; give the program's path"
    if not any(mark in item for item in command for mark in PLACEHOLDERS):
        return (
            "recycle_devices_command names no device: put {address} (0000:41:00.0) or {bus_id} (00000000:41:00.0) "
            f"in one of its items, e.g. {example}, so that each run cleans the device it returns"
        )
    return None


def bus_id(address: str) -> str:
    """nvidia-smi's bus id of a normalised PCI address: an 8-digit domain, upper case."""
    domain, rest = address.split(":", 1)
    return f"{domain:0>8}:{rest}".upper()


def _quoted_name(value: object) -> str:
    text = "".join(c if c.isprintable() else " " for c in str(value if value is not None else ""))[:200]
    return shlex.quote(text)


def _address_for(device: Mapping, addresses: Mapping) -> tuple[str | None, str]:
    """(the normalised address, where it came from) or (None, why not)."""
    for key in (device.get("provider_uuid"), device.get("provider")):
        if isinstance(key, str) and key in addresses:
            given = addresses[key]
            if pci.is_address(given, require_domain=True):
                return pci.normalize_address(given, require_domain=True), "recycle_devices_addresses"
            return None, (
                f"recycle_devices_addresses gives it {_quoted_name(given)}, which is not a full PCI address "
                "(domain:bus:device.function, e.g. 0000:41:00.0)"
            )
    found = device.get("address")
    if found is None:
        return None, "its name carries no PCI address (Nova names a device's provider <host>_<ADDRESS>)"
    if pci.is_address(found, require_domain=True):
        return pci.normalize_address(found, require_domain=True), "provider name"
    return None, f"its address {_quoted_name(found)} is not a full PCI address"


def cleaning_commands(devices: object, command: object, addresses: object = None) -> list[dict]:
    """One entry per device of ``one_time_use_stuck``: the device's keys plus ``address`` (resolved or null),
    ``bus_id``, ``argv`` (the command to run, or null), ``command`` (``argv`` shell-quoted for people) and
    ``problem`` (null, or why no command runs and how to fix it; the device then stays reserved)."""
    problem = command_problem(command)
    if problem:
        raise RecyclingError(problem)
    addresses = {} if addresses is None else addresses
    if not isinstance(addresses, Mapping):
        raise RecyclingError(
            "recycle_devices_addresses must map a provider's uuid or name to its device's PCI address, e.g. "
            '{"4b0e4a6e-9f55-4a0d-8c36-0c3a7c6e2b10": "0000:41:00.0"}'
        )
    if not isinstance(devices, list):
        raise RecyclingError("the devices must be the list accel.openstack.one_time_use_stuck returns")
    out = []
    for device in devices:
        if not isinstance(device, Mapping):
            continue
        entry = {**device, "address": None, "bus_id": None, "argv": None, "command": None, "problem": None}
        uuid = device.get("provider_uuid")
        name = _quoted_name(device.get("provider"))
        if not is_uuid_like(uuid):
            entry["problem"] = f"provider {name} has no valid uuid in the snapshot; it stays reserved"
            out.append(entry)
            continue
        address, source = _address_for(device, addresses)
        if address is None:
            entry["problem"] = (
                f"provider {name} ({uuid}): {source}, so the cleaning command cannot be told which device to clean "
                f"and the device stays reserved; give its address in recycle_devices_addresses (e.g. {{{uuid}: "
                f'"0000:41:00.0"}}) and run again, or clean it by hand and return it with '
                f"accel.openstack.one_time_use_device provider={uuid}"
            )
            out.append(entry)
            continue
        values = {"{address}": shlex.quote(address), "{bus_id}": shlex.quote(bus_id(address))}
        argv = []
        for item in command:
            text = item
            for mark, value in values.items():
                text = text.replace(mark, value)
            argv.append(text)
        entry.update(address=address, bus_id=bus_id(address), argv=argv, command=shlex.join(argv), source=source)
        out.append(entry)
    return out
