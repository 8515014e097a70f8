# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA MIG state from ``nvidia-smi``, matched to PCI devices by bus id (never by GPU index).

Two sources give the same result:
- a live host (root ``/``) runs ``nvidia-smi -q -x`` and, for each GPU with MIG enabled,
  ``nvidia-smi mig -lgi -i <bus id>``;
- any other root (a chroot, an image, a fixture) never runs anything on the controller: it reads the
  recorded outputs at ``/var/lib/accel-openstack/nvidia-smi/q-x.xml`` and
  ``/var/lib/accel-openstack/nvidia-smi/mig-lgi/<address>.txt`` inside the root.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_address, normalize_address

RECORDED_DIR = "/var/lib/accel-openstack/nvidia-smi"
_LGI_ROW = re.compile(r"^\|\s*(\d{1,9})\s+MIG\s+(\S+)\s+(\d{1,9})\s+(\d{1,9})\s+(\d{1,9}):(\d{1,9})\s*\|")
# a line that claims to be a GPU instance row (``|  0  MIG 1g.10gb ...``), parsed or refused, never skipped
_LGI_CLAIM = re.compile(r"^\|\s*\S+\s+MIG\s")

# run(argv) -> (rc, stdout, stderr)
Runner = Callable[[list], tuple]


def bus_id_to_address(bus_id: str) -> str | None:
    """``00000000:3B:00.0`` (nvidia-smi's 8-digit domain) -> ``0000:3b:00.0``."""
    text = bus_id.strip()
    return normalize_address(text, require_domain=True) if is_address(text, require_domain=True) else None


def parse_query_xml(text: str) -> dict[str, dict]:
    """``nvidia-smi -q -x`` -> {address: {product_name, mig_mode_current, mig_mode_pending}}."""
    root = ET.fromstring(text)
    out: dict[str, dict] = {}
    for gpu in root.findall("gpu"):
        bus_id = gpu.get("id") or gpu.findtext("pci/pci_bus_id") or ""
        address = bus_id_to_address(bus_id)
        if address is None:
            continue
        out[address] = {
            "product_name": (gpu.findtext("product_name") or "").strip() or None,
            "mode_current": _mode(gpu.findtext("mig_mode/current_mig")),
            "mode_pending": _mode(gpu.findtext("mig_mode/pending_mig")),
            "serial": _identity(gpu.findtext("serial")),
            "uuid": _identity(gpu.findtext("uuid")),
        }
    return out


_IDENTITY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")


def _identity(value: str | None) -> str | None:
    """A board serial or GPU UUID as nvidia-smi prints it; None for N/A or anything else."""
    text = (value or "").strip()
    return text if text != "N/A" and _IDENTITY.fullmatch(text) else None


def _mode(value: str | None) -> str | None:
    value = (value or "").strip()
    return value.lower() if value and value != "N/A" else None


def parse_lgi(text: str) -> list[dict]:
    """``nvidia-smi mig -lgi`` table -> [{profile, profile_id, instance_id, placement: {start, size}}]."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        match = _LGI_ROW.match(line)
        if not match and _LGI_CLAIM.match(line):
            raise ValueError(
                f"line {number} is a GPU instance row whose GPU, profile ID, instance ID or placement is not a whole "
                "number of at most 9 digits"
            )
        if match:
            out.append(
                {
                    "profile": match.group(2),
                    "profile_id": int(match.group(3)),
                    "instance_id": int(match.group(4)),
                    "placement": {"start": int(match.group(5)), "size": int(match.group(6))},
                }
            )
    return sorted(out, key=lambda gi: (gi["placement"]["start"], gi["instance_id"]))


def _lgi_or_warn(host: HostRoot, text: str, source: str) -> list[dict]:
    try:
        return parse_lgi(text)
    except ValueError as err:
        host.warn(f"{source}: {err}; its GPU instances are not reported")
        return []


def read_profile_tables(host: HostRoot, address: str, run: Runner | None) -> tuple[str, str]:
    """The GPU's own ``nvidia-smi mig -lgip`` and ``-lgipp`` text ("" when unavailable).

    Live when ``run`` is given, else the recorded ``mig-lgip/<address>.txt`` and ``mig-lgipp/<address>.txt``.
    """
    if run is None:
        return (
            host.read_text(f"{RECORDED_DIR}/mig-lgip/{address}.txt") or "",
            host.read_text(f"{RECORDED_DIR}/mig-lgipp/{address}.txt") or "",
        )
    bus_id = "0000" + address.upper()
    texts = []
    for flag in ("-lgip", "-lgipp"):
        rc, out, _err = run(["nvidia-smi", "mig", flag, "-i", bus_id])
        texts.append(out if rc == 0 else "")
    return texts[0], texts[1]


def query_xml(host: HostRoot, run: Runner | None) -> str | None:
    """``nvidia-smi -q -x`` of a live host, or the recorded one of any other root; None when there is none."""
    if host.is_live:
        if run is None:
            return None
        rc, out, err = run(["nvidia-smi", "-q", "-x"])
        if rc == 127:
            return None  # no nvidia-smi on this host: nothing to add, nothing to warn about
        if rc != 0:
            host.warn(f"nvidia-smi -q -x failed (rc={rc}): {(err or out).strip()[:200]}")
            return None
        return out
    return host.read_text(f"{RECORDED_DIR}/q-x.xml")


def read_identities(host: HostRoot, xml_text: str | None) -> dict[str, dict]:
    """{address: {serial, uuid}} of every GPU in ``nvidia-smi -q -x`` output (what tells a replaced board)."""
    if not xml_text:
        return {}
    try:
        gpus = parse_query_xml(xml_text)
    except ET.ParseError:
        return {}  # read_mig_state warns about the same text
    return {address: {"serial": gpu["serial"], "uuid": gpu["uuid"]} for address, gpu in gpus.items()}


def read_mig_state(host: HostRoot, run: Runner | None, xml_text: str | None = None) -> dict[str, dict]:
    """{address: {mode_current, mode_pending, gpu_instances}} for every GPU nvidia-smi reports.

    ``xml_text`` is ``query_xml``'s answer when the caller already has it (nvidia-smi runs once).
    """
    if xml_text is None:
        xml_text = query_xml(host, run)
    if xml_text is None:
        return {}
    try:
        gpus = parse_query_xml(xml_text)
    except ET.ParseError as exc:
        host.warn(f"nvidia-smi -q -x output is not valid XML ({exc}); MIG state not reported")
        return {}
    state = {}
    for address, gpu in gpus.items():
        if gpu["mode_current"] is None and gpu["mode_pending"] is None:
            continue  # a GPU without MIG support reports N/A for both
        instances: list[dict] = []
        if gpu["mode_current"] == "enabled":
            if host.is_live:
                domain, rest = address.split(":", 1)
                bus_id = domain.upper().rjust(8, "0") + ":" + rest.upper()
                rc, out, err = run(["nvidia-smi", "mig", "-lgi", "-i", bus_id])
                if rc == 0:
                    instances = _lgi_or_warn(host, out, f"nvidia-smi mig -lgi -i {bus_id}")
                elif "No GPU instances found" not in (out + err):
                    host.warn(f"nvidia-smi mig -lgi -i {bus_id} failed (rc={rc}): {(err or out).strip()[:200]}")
            else:
                recorded = f"{RECORDED_DIR}/mig-lgi/{address}.txt"
                instances = _lgi_or_warn(host, host.read_text(recorded) or "", recorded)
        state[address] = {
            "mode_current": gpu["mode_current"],
            "mode_pending": gpu["mode_pending"],
            "gpu_instances": instances,
        }
    return state
