# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Quarantined devices as audit findings (area ``placement``).

The quarantines are read by ``placement_info`` with ``quarantines: true`` (the snapshot's optional
``quarantines`` key) and listed by ``quarantined_devices`` (``_placement/quarantine.py``). Each quarantined
device gives one ``device_quarantined`` finding (info: the device is out of scheduling on purpose) whose fix is the
``device_quarantine`` task that releases it after the repair; a quarantine that no longer holds every
unit (an instance that held part of the device has left since) also gives ``quarantine_incomplete``
(warning: new instances can land on the failed device) whose fix is the task that takes those units back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding

MODULE = "accel.openstack.device_quarantine"
MAX_NAME = 200


def _text(value: object, limit: int = MAX_NAME) -> str:
    """A value from Placement on one line, printable and bounded (names and reasons are whatever was stored)."""
    text = str(value if value is not None else "")[: limit * 4]
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())[:limit]


def _quoted(value: object) -> str:
    """A YAML flow scalar that reads back as ``value`` whatever it holds (JSON strings are YAML)."""
    return json.dumps(_text(value, 255))


def _amounts(amounts: Mapping) -> str:
    return ", ".join(f"{_text(rc)}: {n}" for rc, n in sorted(amounts.items())) or "nothing"


def _device(entry: dict) -> dict[str, str]:
    """The options of device_quarantine that name this device: host and address, else the provider."""
    if entry.get("address") and entry.get("host"):
        return {"host": _quoted(entry["host"]), "address": _quoted(entry["address"])}
    return {"provider": _quoted(entry.get("provider_uuid"))}


def _task(options: dict[str, str]) -> str:
    return f"{MODULE}: {{{', '.join(f'{k}: {v}' for k, v in options.items())}}}"


def quarantine_findings(devices: list[dict], hosts: Mapping[str, str] | None = None) -> list[dict]:
    """Findings for ``quarantined_devices`` entries; ``hosts`` maps a compute node's name (the hypervisor
    hostname) to its inventory hostname where they differ."""
    hosts = hosts or {}
    found = []
    for entry in devices:
        nodename = entry.get("host")
        host = hosts.get(nodename, nodename) if isinstance(nodename, str) else None
        provider = _text(entry.get("provider"))
        device = f"device {entry['address']}" if entry.get("address") else f"device provider {provider}"
        since = entry.get("since") or "a time Placement does not say"
        reason = _text(entry.get("reason"), 255) or "no reason recorded"
        options = _device(entry)
        consumers = [c for c in entry.get("consumers") or [entry.get("consumer")] if is_uuid_like(c)]
        deletes = "; ".join(f"openstack resource provider allocation delete {c}" for c in consumers)
        found.append(
            finding(
                host,
                "device_quarantined",
                f"{device} of {_text(nodename)} (provider {provider}) is quarantined, out of scheduling since "
                f"{since}: {reason} (the quarantine holds {_amounts(entry.get('held') or {})})",
                f"after the repair, release it with {_task({**options, 'state': 'released'})} and the cloud's auth "
                "options, plus health_command (the command that proves the device healthy; it is released only when "
                f"that command exits 0) or health_check: false; without Ansible: {deletes}",
            )
        )
        leak = entry.get("schedulable") or {}
        if leak:
            found.append(
                finding(
                    host,
                    "quarantine_incomplete",
                    f"{device} of {_text(nodename)} (provider {provider}) is quarantined ({reason}), but "
                    f"{_amounts(leak)} of it is schedulable again: an instance that held it has left since the "
                    "quarantine last ran, and new instances can land on the failed device",
                    f"run the quarantine again: {_task({**options, 'reason': _quoted(reason)})} "
                    "with the cloud's auth options",
                )
            )
    return found


def check_quarantines(cloud) -> list[dict]:
    """The quarantined devices of the audit's Placement snapshot, as findings on inventory hostnames."""
    hosts = {cloud.nodename(host): host for host in cloud.hosts}
    return quarantine_findings(cloud.quarantined, hosts)
