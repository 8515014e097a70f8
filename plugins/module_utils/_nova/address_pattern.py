# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``address`` of a Nova 34 ``[pci] device_spec`` entry: an exact address, a glob or regexes.

Nova accepts three forms, and a device policy's ``addresses`` items take the same three:

- an exact address, ``0000:41:00.0``;
- a glob string, ``0000:0a:00.*`` or ``*:0a:00.*``: each of domain, bus, slot and function is either
  ``*`` (or left empty) or a hex number not above ffff, ff, 1f and 7; missing leading fields mean any;
- a mapping of regular expressions, ``{domain: ".*", bus: "02", slot: "01", function: "[0-2]"}``;
  a field left out means any; each is matched from the start of the field's normal form (``re.match``
  on ``0000``, ``02``, ``01``, ``1``), as Nova matches it.

When all four fields are hex digits and name a physical function of the host (``sriov_totalvfs`` > 0),
Nova also matches the function's VFs against it; :meth:`AddressPattern.matches` does the same.

Stricter than Nova in two places, so that a typing slip is not taken for a wildcard: a glob must
contain ``*`` (``41:00.0`` is refused; write ``0000:41:00.0`` or ``*:41:00.0``), and a regex mapping
takes only the four field names.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_address, parse_address

# Runs on managed hosts from Python 3.9 on: zip() takes no strict= there. Every zip below pairs two
# four-element sequences (the address fields), equal in length by construction.
ANY = "*"
REGEX_ANY = ".*"
FIELDS = ("domain", "bus", "slot", "function")
# Largest value and printed width of each field, as Nova checks and writes them.
LIMITS = {"domain": (0xFFFF, 4), "bus": (0xFF, 2), "slot": (0x1F, 2), "function": (0x7, 1)}
_HEX = re.compile(r"^[0-9a-fA-F]+\Z")
EXAMPLES = "'0000:41:00.0', a glob such as '0000:41:00.*', or regexes such as {bus: '4[1-3]', function: '0'}"


class AddressPatternError(AccelError, ValueError):
    """Text or a mapping that Nova would not accept as a device_spec address (the message says why)."""


@dataclass(frozen=True)
class AddressPattern:
    """One parsed ``addresses`` item. ``kind`` is ``exact``, ``glob`` or ``regex``; ``fields`` holds the
    normalised glob fields or the regex texts, in :data:`FIELDS` order."""

    kind: str
    fields: tuple[str, str, str, str]

    @property
    def is_exact(self) -> bool:
        return self.kind == "exact"

    def device_spec_value(self) -> str | dict:
        """What goes into device_spec's ``address``: the address or glob text, or the regex mapping."""
        if self.kind == "regex":
            return {name: value for name, value in zip(FIELDS, self.fields) if value != REGEX_ANY}  # noqa: B905
        domain, bus, slot, function = self.fields
        return f"{domain}:{bus}:{slot}.{function}"

    def _single_address(self) -> str | None:
        """The address Nova looks up in sysfs to decide whether this pattern names a PF."""
        if all(all(c in string.hexdigits for c in value) for value in self.fields):
            domain, bus, slot, function = self.fields
            return f"{domain}:{bus}:{slot}.{function}"
        return None

    def _matches_fields(self, address: str) -> bool:
        parts = _split(address)
        if parts is None:
            return False
        if self.kind == "regex":
            return all(re.match(pattern, value) for pattern, value in zip(self.fields, parts))  # noqa: B905
        return all(pattern in (ANY, value) for pattern, value in zip(self.fields, parts))  # noqa: B905

    def matches(self, address: str, physfn: str | None = None, physical_functions: frozenset = frozenset()) -> bool:
        """Whether Nova matches the device at ``address`` (a VF of ``physfn`` when given).

        ``physical_functions``: the addresses of the host's SR-IOV physical functions.
        """
        if physfn and self._single_address() in physical_functions and self._matches_fields(physfn):
            return True
        return self._matches_fields(address)


def _split(address: str) -> tuple[str, str, str, str] | None:
    """The four fields of an address in their normal form, or None when it is no full address."""
    if not is_address(address, require_domain=True):
        return None
    parsed = parse_address(address, require_domain=True)
    return (f"{parsed.domain:04x}", f"{parsed.bus:02x}", f"{parsed.device:02x}", str(parsed.function))


def _glob_field(name: str, value: str, text: str) -> str:
    value = value.strip()
    if value in ("", ANY):
        return ANY
    maximum, width = LIMITS[name]
    if not _HEX.match(value):
        raise AddressPatternError(
            f"the {name} field {value!r} of glob {text!r} is neither '*' nor a hex number; Nova accepts no "
            "partial wildcards: write '*' for any value"
        )
    number = int(value, 16)
    if number > maximum:
        raise AddressPatternError(
            f"the {name} field {value!r} of glob {text!r} is above the largest PCI {name} ({maximum:x})"
        )
    return f"{number:0{width}x}"


def _parse_glob(text: str) -> AddressPattern:
    front, _dot, function = text.partition(".")
    parts = front.split(":") if front else []
    if len(parts) > 3:
        raise AddressPatternError(f"glob {text!r} has more than domain:bus:slot before the '.'")
    parts = [ANY] * (3 - len(parts)) + parts
    fields = tuple(_glob_field(name, value, text) for name, value in zip(FIELDS, [*parts, function]))  # noqa: B905
    return AddressPattern("glob", fields)


def _parse_regex(value: dict) -> AddressPattern:
    unknown = sorted(str(k) for k in value if k not in FIELDS)
    if unknown:
        raise AddressPatternError(
            f"regex address {value!r} has unknown field(s) {', '.join(unknown)}; the fields are {', '.join(FIELDS)}"
        )
    if not value:
        raise AddressPatternError("regex address {} matches every device; remove the item or give fields")
    fields = []
    for name in FIELDS:
        pattern = value.get(name, REGEX_ANY)
        if not isinstance(pattern, str) or not pattern:
            raise AddressPatternError(
                f"the {name} regex {pattern!r} of {value!r} is not a non-empty string; quote it in YAML"
            )
        try:
            re.compile(pattern)
        except re.error as exc:
            raise AddressPatternError(f"the {name} regex {pattern!r} of {value!r} does not compile: {exc}") from exc
        fields.append(pattern)
    return AddressPattern("regex", tuple(fields))


def parse(value: object) -> AddressPattern:
    """One ``addresses`` item as Nova reads device_spec's ``address``; raises :class:`AddressPatternError`."""
    if isinstance(value, dict):
        return _parse_regex(value)
    if not isinstance(value, str) or not value.strip():
        raise AddressPatternError(f"{value!r} is not an address; give {EXAMPLES}")
    text = value.strip()
    parts = _split(text)
    if parts is not None:
        if int(parts[0], 16) > LIMITS["domain"][0]:
            raise AddressPatternError(
                f"{value!r} is in PCI domain {parts[0]}, above ffff, the largest Nova's device_spec accepts"
            )
        return AddressPattern("exact", parts)
    if ANY not in text:
        raise AddressPatternError(
            f"{value!r} is not a full PCI address; write domain:bus:slot.function as in /sys/bus/pci/devices, "
            f"e.g. '0000:41:00.0', or mark the fields that may be anything with '*', e.g. '*:41:00.*'"
        )
    return _parse_glob(text)
