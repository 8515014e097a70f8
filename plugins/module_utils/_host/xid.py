# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA Xid events: what each one means, and the events a kernel log holds, per GPU and with their time.

The NVIDIA driver (NVRM) writes one kernel log line per Xid event::

    NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.

The address is the GPU's domain, bus and device (function 0 is the GPU). The line reaches the host's logs
behind one of the prefixes the readers add: ``journalctl -k -o short-iso`` (and rsyslog's ISO format)
``2026-12-02T06:49:16+0000 host kernel: ...``, the traditional syslog ``Dec  2 06:49:16 host kernel: ...``,
``dmesg -T`` ``[Wed Dec  2 06:49:16 2026] ...`` and plain ``dmesg`` ``[ 1234.567890] ...`` (seconds since
boot, placed in time with the host's boot time when it is known).

:data:`CATALOG` gives each Xid the collection knows its event class, the GPU state it implies, NVIDIA's
meaning (from NVIDIA's Xid catalog) and the action NVIDIA recommends. An Xid that is not in the catalog is
reported as class ``xid_other`` (degraded) with the advice to look it up.
"""

from __future__ import annotations

import calendar
import collections
import re
import time

from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_address, normalize_address

STATES = ("healthy", "degraded", "failed")
MAX_LINE = 4096  # characters of one log line that are read; the rest of a longer line is ignored
MAX_DETAIL = 300  # characters of the message kept in an event
MAX_XID = 65535
MAX_EVENTS = 20000  # Xid events kept from one log (the most recent); the older ones are counted in a warning

# Xid -> (class, state, meaning, recommended action). Meanings and actions follow NVIDIA's Xid catalog.
CATALOG: dict[int, tuple[str, str, str, str]] = {
    13: ("application", "healthy", "Graphics Engine Exception (an exception in a GPU program, such as an "
         "out-of-range address)", "restart the application and check its CUDA code; a hardware fault only if it "
         "repeats with different applications"),
    31: ("application", "healthy", "GPU memory page fault (an MMU fault: the application accessed an address it "
         "does not own)", "restart the application and check it for illegal memory accesses"),
    43: ("application", "healthy", "GPU stopped processing (a user application faulted and its channel was "
         "reset)", "restart the application; the GPU keeps serving other processes"),
    45: ("application", "healthy", "Preemptive cleanup, due to previous errors (the driver ended the channels "
         "of a process that was killed or hit another error)", "look at the Xid logged just before it; "
         "nothing to do when it follows an application's own exit"),
    48: ("uncorrectable_ecc", "failed", "Double-bit ECC error (DBE): an uncorrectable error in GPU memory",
         "drain the GPU and reset it (the faulty page is retired or its row remapped at the reset); contact "
         "NVIDIA support if it recurs"),
    61: ("microcontroller", "degraded", "Internal micro-controller breakpoint/warning",
         "reset the GPU when it is idle; contact NVIDIA support if it persists"),
    62: ("microcontroller", "failed", "Internal micro-controller halt",
         "drain the GPU and reset it; contact NVIDIA support if it persists"),
    63: ("row_remap_pending", "degraded", "ECC page retirement or row remapping recording event (a row is "
         "marked for remapping)", "reset the GPU when it is idle so that the remapping takes effect"),
    64: ("row_remap_failure", "failed", "ECC page retirement or row remapping recording failure",
         "drain the GPU and reset it; if the failure recurs, the GPU needs replacing (contact NVIDIA support)"),
    74: ("nvlink", "failed", "NVLink error (a fatal error on an NVLink link)",
         "drain the GPU and reset it; check the NVLink connections and contact NVIDIA support if it persists"),
    79: ("fell_off_bus", "failed", "GPU has fallen off the bus (it no longer answers on PCI Express)",
         "drain the host and reset the GPU or power-cycle the host; check the PCIe seating, power and cooling, "
         "and contact NVIDIA support if it recurs"),
    92: ("high_sbe_rate", "degraded", "High single-bit ECC error rate",
         "watch the GPU's ECC counters; reset it when it is idle so pages are retired or rows remapped"),
    94: ("contained_ecc", "degraded", "Contained ECC error: an uncorrectable memory error the GPU contained to "
         "the applications that used the memory", "restart the affected applications; reset the GPU when it is "
         "idle so the row is remapped"),
    95: ("uncorrectable_ecc", "failed", "Uncontained ECC error: an uncorrectable memory error that affects "
         "every application on the GPU", "drain the GPU and reset it; contact NVIDIA support if it recurs"),
    119: ("gsp", "failed", "GSP RPC timeout (the GPU System Processor did not answer the driver)",
          "drain the GPU and reset it; update the driver and contact NVIDIA support if it recurs"),
    120: ("gsp", "failed", "GSP error (the GPU System Processor reported an error)",
          "drain the GPU and reset it; contact NVIDIA support if it recurs"),
}  # fmt: skip
OTHER = ("xid_other", "degraded", "an Xid the collection has no entry for",
         "look it up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors), then act on it")  # fmt: skip

# The message after the reader's prefix. The address is domain:bus:device (older drivers omit "PCI:").
_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<address>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)\): "
    r"(?P<xid>\d{1,5})(?:,\s*pid=(?P<pid>[^,]{0,64}))?(?:,\s*name=(?P<name>[^,]{0,256}))?(?:,\s*(?P<text>.*))?\Z"
)
_XID_CLAIM = re.compile(r"NVRM: Xid\b")
_ISO = re.compile(
    r"^(?P<time>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:[.,]\d{1,9})?(?P<zone>Z|[+-]\d{2}:?\d{2})\s+\S+\s+kernel:\s?(?P<rest>.*)"
)
_SYSLOG = re.compile(r"^(?P<time>[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2})(?:\.\d{1,9})?\s+\S+\s+kernel:\s?(?P<rest>.*)")
_DMESG_T = re.compile(r"^\[(?P<time>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]?\d \d{2}:\d{2}:\d{2} \d{4})\]\s?(?P<rest>.*)")
_MONOTONIC = re.compile(r"^\[\s*(?P<seconds>\d{1,10}\.\d{1,9})\]\s?(?P<rest>.*)")


def describe(xid: int) -> dict:
    """The class, state, meaning and action of one Xid."""
    kind, state, meaning, action = CATALOG.get(xid, OTHER)
    return {"class": kind, "state": state, "meaning": meaning, "action": action}


def xid_address(text: str) -> str | None:
    """``0000:3b:00`` (NVRM's form) -> ``0000:3b:00.0``; None when it is no PCI address."""
    candidate = text if "." in text else text + ".0"
    if not is_address(candidate, require_domain=True):
        return None
    return normalize_address(candidate, require_domain=True)


def _zone_seconds(zone: str) -> int:
    if zone == "Z":
        return 0
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    return sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)


def line_time(line: str, now: float, boot_time: float | None) -> tuple[float | None, str]:
    """(the line's time as seconds since the epoch or None, the message after the reader's prefix)."""
    match = _ISO.match(line)
    if match:
        try:
            stamp = calendar.timegm(time.strptime(match["time"], "%Y-%m-%dT%H:%M:%S"))
        except ValueError:
            return None, match["rest"]
        return stamp - _zone_seconds(match["zone"]), _MONOTONIC.sub(r"\g<rest>", match["rest"], count=1)
    match = _SYSLOG.match(line)
    if match:
        # No year and no zone: the host's local time, this year (last year when that is still to come).
        year = time.localtime(now).tm_year
        stamp = None
        for candidate in (year, year - 1):
            try:
                value = time.mktime(time.strptime(f"{candidate} {match['time']}", "%Y %b %d %H:%M:%S"))
            except (ValueError, OverflowError):
                break
            if value <= now + 86400:
                stamp = value
                break
        return stamp, _MONOTONIC.sub(r"\g<rest>", match["rest"], count=1)
    match = _DMESG_T.match(line)
    if match:
        try:
            return time.mktime(time.strptime(" ".join(match["time"].split()), "%a %b %d %H:%M:%S %Y")), match["rest"]
        except (ValueError, OverflowError):
            return None, match["rest"]
    match = _MONOTONIC.match(line)
    if match:
        return (boot_time + float(match["seconds"]) if boot_time is not None else None), match["rest"]
    return None, line


def _known(value: str | None) -> str | None:
    """A pid or process name as the driver writes it; None for ``'<unknown>'``."""
    text = (value or "").strip().strip("'")
    return None if not text or text == "<unknown>" else text


def iso(stamp: float | None) -> str | None:
    return None if stamp is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def parse_kernel_log(
    text: str, source: str, now: float, boot_time: float | None = None
) -> tuple[list[dict], list[str]]:
    """The Xid events of a kernel log and the warnings about lines that claim to be Xid events but cannot be read.

    Each event: ``address``, ``xid``, ``time`` (ISO 8601 UTC or None), ``stamp`` (seconds or None), ``pid``,
    ``process``, ``detail`` (the driver's text, at most :data:`MAX_DETAIL` characters), ``line`` (its number in
    ``source``) and the catalog's ``class``, ``state``, ``meaning`` and ``action``.
    """
    events: collections.deque = collections.deque(maxlen=MAX_EVENTS)
    warnings: list[str] = []
    seen = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if "NVRM" not in raw:
            continue
        line = "".join(c if c.isprintable() else " " for c in raw[:MAX_LINE]).rstrip()
        stamp, message = line_time(line, now, boot_time)
        found = _XID_CLAIM.search(message)
        if found is None:
            continue
        match = _XID.match(message[found.start() :])
        address = xid_address(match["address"]) if match else None
        xid = int(match["xid"]) if match else 0
        if match is None or address is None or not 0 < xid <= MAX_XID:
            shown = message[found.start() : found.start() + 120]
            warnings.append(
                f"{source} line {number}: an Xid line whose PCI address or Xid number cannot be read ({shown}); "
                "it is not counted for any GPU"
            )
            continue
        seen += 1
        events.append(
            {
                "source": "kernel_log",
                "address": address,
                "xid": xid,
                "time": iso(stamp),
                "stamp": stamp,
                "pid": _known(match["pid"]),
                "process": _known(match["name"]),
                "detail": (match["text"] or "").strip()[:MAX_DETAIL],
                "line": number,
                **describe(xid),
            }
        )
    if seen > MAX_EVENTS:
        warnings.append(
            f"{source}: {seen:,} Xid events; the most recent {MAX_EVENTS:,} are counted, the {seen - MAX_EVENTS:,} "
            f"older {'one is' if seen - MAX_EVENTS == 1 else 'ones are'} not"
        )
    return list(events), warnings
