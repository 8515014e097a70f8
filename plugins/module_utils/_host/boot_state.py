# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the restore unit found at the last boot, as ``pci_facts`` reports it (``accel_boot_state``).

The unit writes ``/var/lib/accel-openstack/boot-state.json`` after every run: ``status`` ``ok`` when the
host matched its recorded state (VFs, MIG mode and instances, vGPU types, the mdevs instances hold), else
``failed`` with ``missing`` (one sentence per item) and ``message`` (why it stopped). The file is read as
untrusted input: bounded, of the expected shape, or reported as ``unknown`` with a warning naming it.
"""

from __future__ import annotations

import json

from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot

# The file gpu_restore.BOOT_STATE names (equal by test); not imported from there, because every pci_facts
# call would then import the restore code as well.
PATH = "/var/lib/accel-openstack/boot-state.json"
MAX_BYTES = 1 << 20
MAX_ITEMS = 256
MAX_TEXT = 4000


def _text(value: object) -> str | None:
    return value[:MAX_TEXT] if isinstance(value, str) else None


def read_boot_state(host: HostRoot) -> dict | None:
    """``{status, missing, message, time}``; None when the unit has not run (no file)."""
    text = host.read_text(PATH, limit=MAX_BYTES)
    if text is None:
        if host.exists(PATH):
            return {"status": "unknown", "missing": [], "message": f"{PATH} could not be read", "time": None}
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if (
        not isinstance(data, dict)
        or data.get("status") not in ("ok", "failed")
        or not isinstance(data.get("missing", []), list)
    ):
        host.warn(f"{PATH}: not the restore unit's boot state; reported as unknown (it is rewritten at the next boot)")
        return {"status": "unknown", "missing": [], "message": f"{PATH} is not a boot state", "time": None}
    return {
        "status": data["status"],
        "missing": [m[:MAX_TEXT] for m in data.get("missing", [])[:MAX_ITEMS] if isinstance(m, str)],
        "message": _text(data.get("message")),
        "time": _text(data.get("time")),
    }
