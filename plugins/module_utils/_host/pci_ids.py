# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Vendor and device names from the host's PCI ID database (pci.ids), when it has one."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot

PCI_IDS_LIMIT = 16 << 20  # the full database is about 1.5 MB; more than this is not a pci.ids
PCI_IDS_PATHS = ("/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids")


def find_database(host: HostRoot) -> str | None:
    for path in PCI_IDS_PATHS:
        if host.exists(path):
            return path
    return None


def lookup_names(host: HostRoot, wanted: set[tuple[str, str]]) -> dict[tuple[str, str | None], str]:
    """Names for ``wanted`` (vendor_id, product_id) pairs.

    Returns a dict keyed by ``(vendor, None)`` for vendor names and ``(vendor, product)`` for device
    names. Only the vendors asked for are parsed, so a full database costs one pass over its lines.
    """
    path = find_database(host)
    names: dict[tuple[str, str | None], str] = {}
    if path is None or not wanted:
        return names
    text = host.read_text(path, limit=PCI_IDS_LIMIT)
    if text is None:
        return names
    vendors = {v for v, _unused in wanted}
    vendor: str | None = None
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        if line[0] != "\t":
            if line.startswith("C "):  # the device class section ends the vendor list
                break
            candidate = line[:4].lower()
            vendor = candidate if candidate in vendors else None
            if vendor is not None:
                names[(vendor, None)] = line[4:].strip()
            continue
        if vendor is None or line.startswith("\t\t"):
            continue
        product = line[1:5].lower()
        if (vendor, product) in wanted:
            names[(vendor, product)] = line[5:].strip()
    return names
