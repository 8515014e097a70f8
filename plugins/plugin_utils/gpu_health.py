# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the gpu_health role does with the GPUs' health: quarantine, release or report, and the metrics.

:func:`health_plan` takes ``{inventory hostname: accel_gpu_health}`` (the ``gpu_health`` module's fact), the
Placement snapshot with its quarantines (``placement_info`` with ``quarantines: true``) and the operator's
policy (``{event class: report | quarantine}``), and gives one row per GPU with an ``action``:

- ``quarantine``: a current event of a class the policy quarantines, and the device is not quarantined: the
  role quarantines it with ``device_quarantine``, reason ``gpu_health: <classes> (<meaning>)``;
- ``held``: quarantined already (by this role or by anyone), and still unhealthy, or quarantined for another
  reason (an operator's quarantine is never released here);
- ``release``: quarantined by this role (its reason starts with :data:`REASON_PREFIX`) and healthy: no
  condition left and no Xid event for the module's ``window`` (the cooldown); the role runs the health command
  on the host and releases the device only when it exits 0;
- ``no_provider``: a current event the policy quarantines, but Placement has no provider for the device
  (it is not in Nova's ``[pci] device_spec``): nothing to take out of scheduling, reported;
- ``report``: anything else (the row says the state and the classes).

:func:`health_metrics` renders one host's GPUs for node_exporter's textfile collector, with the label names
of NVIDIA's dcgm-exporter (``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName``, ``Hostname``).
"""

from __future__ import annotations

import calendar
import shlex
import time
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_health as host_health
from ansible_collections.accel.openstack.plugins.module_utils._host import xid
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of
from ansible_collections.accel.openstack.plugins.module_utils._names import pci
from ansible_collections.accel.openstack.plugins.module_utils._placement.quarantine import quarantined_devices
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_metrics import _Families

REASON_PREFIX = "gpu_health: "
ACTIONS = ("report", "quarantine")
CLASSES = (
    "gpu_lost", "fell_off_bus", "uncorrectable_ecc", "row_remap_failure", "nvlink", "gsp", "microcontroller",
    "row_remap_pending", "retired_pages_pending", "contained_ecc", "high_sbe_rate", "dcgm_health", "xid_other",
    "application",
)  # fmt: skip
DEFAULT_POLICY = {
    **{kind: "quarantine" for kind in CLASSES[:7]},
    **{kind: "report" for kind in CLASSES[7:]},
}
PLACEHOLDERS = ("{address}", "{bus_id}")
MAX_REASON = 255
MAX_DEVICES = 4096  # GPUs of one host


class HealthPlanError(AccelError, ValueError):
    """Input the plan cannot use; the message names it and the fix."""


def check_policy(policy: object) -> dict[str, str]:
    """The policy over the defaults; refuses an unknown class or action."""
    if policy is None:
        return dict(DEFAULT_POLICY)
    if not isinstance(policy, Mapping):
        raise HealthPlanError(
            f"gpu_health_policy is {kind_of(policy)}; give a mapping of event class to report or quarantine, "
            "e.g. {fell_off_bus: quarantine, contained_ecc: report}"
        )
    merged = dict(DEFAULT_POLICY)
    for kind, action in policy.items():
        if kind not in CLASSES:
            raise HealthPlanError(
                f"gpu_health_policy names the event class {_word(kind)}, which gpu_health never reports; "
                f"the classes are {', '.join(CLASSES)}"
            )
        if action not in ACTIONS:
            raise HealthPlanError(f"gpu_health_policy {kind} is {_word(action)}; give report or quarantine")
        merged[kind] = action
    return merged


def _word(value: object) -> str:
    text = "".join(c if c.isprintable() else " " for c in str(value))
    return shlex.quote(text[:80])


def check_command(command: object) -> list[str]:
    example = '[nvidia-smi, -q, -i, "{bus_id}"]'
    if not isinstance(command, (list, tuple)) or not command or not all(isinstance(i, str) for i in command):
        raise HealthPlanError(f"gpu_health_health_command must be a command as a list of strings, e.g. {example}")
    if not command[0].strip() or any("\x00" in item for item in command):
        raise HealthPlanError(f"gpu_health_health_command's program is empty or an item holds a NUL; e.g. {example}")
    return list(command)


def _argv(command: list[str], address: str) -> list[str]:
    values = {"{address}": shlex.quote(address), "{bus_id}": shlex.quote(host_health.bus_id(address))}
    out = []
    for item in command:
        for mark, value in values.items():
            item = item.replace(mark, value)
        out.append(item)
    return out


def _devices(hosts: object) -> list[tuple[str, dict]]:
    """(inventory host, device) pairs, every field the plan uses checked."""
    if not isinstance(hosts, Mapping):
        raise HealthPlanError("the health must map each inventory hostname to its accel_gpu_health fact")
    found = []
    for host, health in sorted(hosts.items(), key=lambda item: str(item[0])):
        if health is None:
            continue  # a host the module did not run on (unreachable, or skipped)
        devices = health.get("devices") if isinstance(health, Mapping) else None
        if not isinstance(devices, list) or len(devices) > MAX_DEVICES:
            raise HealthPlanError(
                f"host {_word(host)}: accel_gpu_health must be the gpu_health module's fact with a list of at most "
                f"{MAX_DEVICES} devices"
            )
        for index, device in enumerate(devices):
            where = f"host {_word(host)} device {index + 1}"
            if not isinstance(device, Mapping):
                raise HealthPlanError(f"{where} is {kind_of(device)}, not a device of the gpu_health module")
            if not pci.is_normal_address(device.get("address")):
                raise HealthPlanError(f"{where}: address {_word(device.get('address'))} is not a PCI address")
            if device.get("state") not in xid.STATES:
                shown = _word(device.get("state"))
                raise HealthPlanError(f"{where}: state {shown} is not one of {', '.join(xid.STATES)}")
            classes = device.get("classes")
            if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
                raise HealthPlanError(f"{where}: classes must be a list of event classes")
            found.append((str(host), device))
    return found


def _reason(device: Mapping, classes: list[str]) -> str:
    meanings = []
    for event in device.get("events") or ():
        if isinstance(event, Mapping) and event.get("current") and event.get("class") in classes:
            number = event.get("xid")
            said = f"Xid {number}: " if isinstance(number, int) and not isinstance(number, bool) else ""
            text = f"{said}{event.get('meaning')}"
            if text not in meanings:
                meanings.append(text)
    reason = f"{REASON_PREFIX}{', '.join(classes)}" + (f" ({'; '.join(meanings)})" if meanings else "")
    reason = " ".join("".join(c if c.isprintable() else " " for c in reason).split())
    # Placement keeps 255 characters: without room for the meanings, the classes alone
    return reason if len(reason) <= MAX_REASON else f"{REASON_PREFIX}{', '.join(classes)}"[:MAX_REASON]


def _provider_names(nodename: str, address: str) -> set[str]:
    return {f"{nodename}_{address.upper()}", f"{nodename}_pci_{address.replace(':', '_').replace('.', '_')}"}


def health_plan(hosts, fleet, policy=None, hypervisor_hostnames=None, health_command=None) -> dict:
    """``{"devices": [row...], "quarantine": [...], "release": [...]}`` (see the module docstring)."""
    rules = check_policy(policy)
    command = check_command(health_command if health_command is not None else ["nvidia-smi", "-q", "-i", "{bus_id}"])
    names = hypervisor_hostnames or {}
    if not isinstance(names, Mapping):
        raise HealthPlanError("gpu_health_hypervisor_hostnames must map inventory hostnames to compute node names")
    if not isinstance(fleet, Mapping):
        raise HealthPlanError("the fleet must be placement_info's snapshot, read with quarantines: true")
    held = {(d["host"], d["address"]): d for d in quarantined_devices(dict(fleet)) if d.get("address")}
    providers = {str(p.get("name")) for p in fleet.get("resource_providers") or () if isinstance(p, Mapping)}
    rows = []
    for host, device in _devices(hosts):
        nodename = str(names.get(host) or host)
        address = device["address"]
        acting = [c for c in device["classes"] if rules.get(c) == "quarantine"]
        quarantine = held.get((nodename, address))
        ours = quarantine is not None and str(quarantine.get("reason") or "").startswith(REASON_PREFIX)
        row = {
            "host": nodename,
            "inventory_host": host,
            "address": address,
            "bus_id": host_health.bus_id(address),
            "state": device["state"],
            "classes": list(device["classes"]),
            "quarantine_reason": quarantine.get("reason") if quarantine else None,
            "reason": None,
            "argv": None,
        }
        if acting and quarantine is None:
            if _provider_names(nodename, address) & providers:
                row.update(action="quarantine", reason=_reason(device, acting))
            else:
                row["action"] = "no_provider"
        elif quarantine is not None and ours and device["state"] == "healthy":
            argv = _argv(command, address)
            row.update(action="release", argv=argv, command=shlex.join(argv))
        elif quarantine is not None:
            row["action"] = "held"
        else:
            row["action"] = "report"
        rows.append(row)
    return {
        "devices": rows,
        "quarantine": [r for r in rows if r["action"] == "quarantine"],
        "release": [r for r in rows if r["action"] == "release"],
    }


def health_table(plan: Mapping) -> list[str]:
    """The plan's rows a person reads: every GPU that is not healthy, quarantined, or acted on."""
    lines = ["host | address | state | classes | action"]
    for row in plan.get("devices") or ():
        if row["state"] == "healthy" and row["action"] == "report":
            continue
        lines.append(
            f"{row['inventory_host']} | {row['address']} | {row['state']} | {', '.join(row['classes']) or '-'} | "
            f"{row['action']}"
        )
    return lines


def health_metrics(health, hostname: str, quarantined=()) -> str:
    """One host's GPUs as Prometheus text: ``accel_gpu_health`` (1 for the GPU's state, 0 for the others),
    ``accel_gpu_health_events`` (current events per class), ``accel_gpu_health_quarantined`` and
    ``accel_gpu_health_last_event_timestamp_seconds``."""
    pairs = _devices({hostname: health})
    held = set(quarantined or ())
    out = _Families()
    out.declare("accel_gpu_health", "1 for the GPU's health state (healthy, degraded or failed) as gpu_health read it.")
    out.declare("accel_gpu_health_events", "Current health events of the GPU, per event class.")
    out.declare("accel_gpu_health_quarantined", "1 when the GPU is quarantined (out of scheduling in Placement).")
    out.declare("accel_gpu_health_last_event_timestamp_seconds", "When the GPU's most recent timed event happened.")
    for _host, device in pairs:
        labels = {
            "gpu": "" if device.get("gpu") is None else str(device.get("gpu")),
            "UUID": str(device.get("uuid") or ""),
            "pci_bus_id": host_health.bus_id(device["address"]),
            "device": str(device.get("device") or ""),
            "modelName": str(device.get("product_name") or ""),
            "Hostname": hostname,
        }
        for state in xid.STATES:
            out.add("accel_gpu_health", device["state"] == state, **labels, state=state)
        counts: dict[str, int] = {}
        for event in device.get("events") or ():
            if isinstance(event, Mapping) and event.get("current") and event.get("class") in device["classes"]:
                counts[event["class"]] = counts.get(event["class"], 0) + 1
        for kind in sorted(counts):
            out.add("accel_gpu_health_events", counts[kind], **labels, **{"class": kind})
        out.add("accel_gpu_health_quarantined", device["address"] in held, **labels)
        last = device.get("last_event")
        if isinstance(last, str):
            out.add("accel_gpu_health_last_event_timestamp_seconds", _epoch(last), **labels)
    return out.text()


def _epoch(text: str) -> int:
    try:
        return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        raise HealthPlanError(f"last_event {_word(text)} is not a time such as 2026-12-01T09:12:41Z") from None
