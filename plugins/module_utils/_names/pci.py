# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI addresses and IDs: one grammar, one parser, one normal form.

An address is ``domain:bus:device.function`` in hex, as ``lspci -D`` and ``/sys/bus/pci/devices``
write it: ``0000:41:00.0``. The domain has four hex digits, or more where the platform numbers its
domains higher (Intel VMD: ``10000:00:05.0``; nvidia-smi pads to eight: ``00000000:41:00.0``); it may
be left out where a caller allows it (``41:00.0`` means domain 0). The normal form is lower case with
the domain written with at least four digits, the form sysfs uses. The whole text must match: no
surrounding space or newline is taken.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

_ADDRESS = re.compile(
    r"(?:(?P<domain>[0-9a-f]{4,8}):)?(?P<bus>[0-9a-f]{2}):(?P<device>[0-9a-f]{2})\.(?P<function>[0-7])",
    re.IGNORECASE,
)
_ID = re.compile(r"[0-9a-f]{4}", re.IGNORECASE)
EXAMPLE = "0000:41:00.0"


class PciAddressError(AccelError, ValueError):
    """Text that is not a PCI address."""


class PciAddress(NamedTuple):
    domain: int
    bus: int
    device: int
    function: int

    def __str__(self) -> str:
        return f"{self.domain:04x}:{self.bus:02x}:{self.device:02x}.{self.function}"


def parse_address(text: object, require_domain: bool = False) -> PciAddress:
    """The address ``text`` names; raises PciAddressError naming the text and the form to write."""
    match = _ADDRESS.fullmatch(text) if isinstance(text, str) else None
    if match is None or (require_domain and match["domain"] is None):
        what = "a full PCI address" if require_domain else "a PCI address"
        raise PciAddressError(
            f"{text!r} is not {what}; write domain:bus:device.function as lspci -D shows it, e.g. {EXAMPLE!r}"
        )
    return PciAddress(
        int(match["domain"] or "0", 16), int(match["bus"], 16), int(match["device"], 16), int(match["function"])
    )


def normalize_address(text: object, require_domain: bool = False) -> str:
    """``text`` in the normal form (``0000:41:00.0``); raises PciAddressError when it is no address."""
    return str(parse_address(text, require_domain))


def is_address(text: object, require_domain: bool = False) -> bool:
    """Whether ``text`` is a PCI address (in any case, with the domain when ``require_domain``)."""
    try:
        parse_address(text, require_domain)
    except PciAddressError:
        return False
    return True


def is_normal_address(text: object) -> bool:
    """Whether ``text`` is an address already in the normal form, as sysfs names its devices."""
    return is_address(text, require_domain=True) and normalize_address(text) == text


def is_pci_id(text: object) -> bool:
    """Whether ``text`` is a vendor or device ID: exactly four hex digits (``10de``)."""
    return isinstance(text, str) and _ID.fullmatch(text) is not None
