# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI vendor and product IDs in deployed ``[pci] device_spec`` and ``[pci] alias`` values, read as Nova reads them.

``device_spec`` (nova-compute's whitelist): an ID is a hexadecimal number as Python's ``int(text, 16)``
reads it, so ``"0x10de"``, ``"10DE"`` and ``" 10de "`` are all ``10de``; Nova writes it back as at least 4
lower-case hex digits and compares that with the device's ID. A missing ID, and a ``vendor_id`` of ``*``
(spaces around it allowed), match any device; ``product_id`` must be ``*`` exactly. Anything that is not
text, does not read as hexadecimal, or is above ``ffff`` makes nova-compute refuse to start.

``alias`` (nova-api, nova-scheduler, nova-compute): an ID must be exactly four hex digits (Nova's JSON
schema; a newline after them passes the schema too, and then matches no device); Nova compares it with
the device's ID in lower case.
"""

from __future__ import annotations

import json
import re

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

ANY = "*"
MAX_ID = 0xFFFF
# Searched, as Nova's JSON schema pattern "^[\da-fA-F]{4}$" is: "$" also matches before one final newline,
# which is written out here (\n?\Z) so that no pattern of the collection ends in "$".
ALIAS_ID = re.compile(r"^[\da-fA-F]{4}\n?\Z")


class DeviceIdError(AccelError, ValueError):
    """An ID Nova refuses; the message says why, as Nova would."""


def _shown(value: object) -> str:
    return json.dumps(value) if not isinstance(value, str) else f'"{value}"'


def spec_id(spec: dict, key: str) -> str:
    """``key`` (``vendor_id`` or ``product_id``) of a device_spec object as Nova matches it: ``*`` or the
    ID in lower-case hex; :class:`DeviceIdError` where nova-compute refuses the spec."""
    if key not in spec:
        return ANY
    value = spec[key]
    if not isinstance(value, str):
        raise DeviceIdError(f'device_spec {key} {_shown(value)} is not text; write the ID as a string, e.g. "10de"')
    if key == "vendor_id":
        value = value.strip()
    if value == ANY:
        return ANY
    try:
        number = int(value, 16)
    except ValueError:
        raise DeviceIdError(
            f'device_spec {key} {_shown(value)} does not parse as a hex number; give 4 hex digits, e.g. "10de"'
        ) from None
    if number > MAX_ID:
        raise DeviceIdError(f"device_spec {key} {_shown(value)} is greater than ffff, the largest PCI ID")
    return f"{number:04x}"


def spec_ids(spec: dict) -> tuple[str, str]:
    """``(vendor_id, product_id)`` of a device_spec object as Nova matches them (see :func:`spec_id`)."""
    return spec_id(spec, "vendor_id"), spec_id(spec, "product_id")


def alias_id(alias: dict, key: str) -> str | None:
    """``key`` of an alias object as Nova compares it (lower case), None when the alias has none;
    :class:`DeviceIdError` where Nova refuses the alias."""
    if key not in alias:
        return None
    value = alias[key]
    if not isinstance(value, str) or not ALIAS_ID.search(value):
        raise DeviceIdError(f'alias {key} {_shown(value)} is not exactly 4 hex digits; write it as e.g. "10de"')
    return value.lower()
