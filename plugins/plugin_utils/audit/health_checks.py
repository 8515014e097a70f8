# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU health as audit findings (area ``health``), from the ``accel_gpu_health`` fact when a host has it.

The fact is what the ``gpu_health`` module sets (the audit's ``accel_audit_gpu_health: true`` reads it, or the
``gpu_health`` role ran earlier in the play). Each GPU is matched with Placement's quarantines (the snapshot's
``quarantines``, read with ``quarantines: true``) by compute node name and PCI address:

- ``gpu_failed`` (error): a failed GPU that is not quarantined: new instances can land on it; the fix is the
  ``device_quarantine`` task that takes it out (or ``playbooks/health.yml``);
- ``gpu_degraded`` (warning): a degraded GPU that is not quarantined, with the actions its events recommend;
- ``gpu_healthy_quarantined`` (info): a quarantined GPU that is healthy now; the fix is the release task with
  its health command.

Every value put in a fix is validated (the address as a PCI address) or written as a quoted YAML scalar.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._names import pci
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.quarantines import MODULE, _text

MAX_DEVICES = 4096


def _bus_id(address: str) -> str:
    domain, rest = address.split(":", 1)
    return f"{domain:0>8}:{rest}".upper()


def _classes(device: Mapping) -> str:
    found = [_text(c, 40) for c in device.get("classes") or () if isinstance(c, str)]
    return ", ".join(found) or "none"


def _actions(device: Mapping) -> str:
    """The actions the GPU's current events recommend, each once."""
    said: list[str] = []
    for event in device.get("events") or ():
        if isinstance(event, Mapping) and event.get("current") and event.get("state") != "healthy":
            action = _text(event.get("action"), 300)
            if action and action not in said:
                said.append(action)
    return "; ".join(said)


def health_findings(hosts: Mapping, quarantined: list[dict], nodename) -> list[dict]:
    """Findings for every GPU of ``hosts`` (``{inventory hostname: facts}``) that has ``accel_gpu_health``."""
    held = {(d.get("host"), d.get("address")): d for d in quarantined if d.get("address")}
    found = []
    for host in sorted(hosts):
        health = (hosts.get(host) or {}).get("accel_gpu_health")
        if not isinstance(health, Mapping) or not isinstance(health.get("devices"), list):
            continue
        node = nodename(host)
        for device in health["devices"][:MAX_DEVICES]:
            if not isinstance(device, Mapping) or not pci.is_normal_address(device.get("address")):
                continue
            address, state = device["address"], device.get("state")
            quarantine = held.get((node, address))
            options = f"host: {json.dumps(_text(node))}, address: {json.dumps(address)}"
            if state == "failed" and quarantine is None:
                reason = json.dumps(f"gpu_health: {_classes(device)}")
                found.append(
                    finding(
                        host,
                        "gpu_failed",
                        f"GPU {address} of {_text(node)} is failed ({_classes(device)}) and not quarantined: new "
                        f"instances can be scheduled to it. {_actions(device)}",
                        f"take it out of scheduling with {MODULE}: {{{options}, reason: {reason}}} and the cloud's "
                        "auth options, or run playbooks/health.yml",
                    )
                )
            elif state == "degraded" and quarantine is None:
                found.append(
                    finding(
                        host,
                        "gpu_degraded",
                        f"GPU {address} of {_text(node)} is degraded ({_classes(device)})",
                        _actions(device) or "read its events in the gpu_health result",
                    )
                )
            elif state == "healthy" and quarantine is not None:
                reason = _text(quarantine.get("reason"), 255) or "no reason recorded"
                command = json.dumps(["nvidia-smi", "-q", "-i", _bus_id(address)])
                consumers = [c for c in quarantine.get("consumers") or [quarantine.get("consumer")] if is_uuid_like(c)]
                deletes = "; ".join(f"openstack resource provider allocation delete {c}" for c in consumers)
                by_hand = f"; without Ansible, after that command exits 0 on the host: {deletes}" if deletes else ""
                found.append(
                    finding(
                        host,
                        "gpu_healthy_quarantined",
                        f"GPU {address} of {_text(node)} is quarantined ({reason}) and healthy now: no condition and "
                        f"no Xid event within the last {health.get('window')} seconds",
                        f"release it with {MODULE}: {{{options}, state: released, health_command: {command}}} and "
                        "the cloud's auth options (it is released only when the command exits 0), or let "
                        f"playbooks/health.yml release it if its reason starts with gpu_health:{by_hand}",
                    )
                )
    return found


def check_health(cloud) -> list[dict]:
    """The audit's GPU health findings, on inventory hostnames."""
    return health_findings(cloud.hosts, cloud.quarantined, cloud.nodename)
