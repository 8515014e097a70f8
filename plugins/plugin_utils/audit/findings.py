# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit findings: one shape for every source, one list for the whole cloud, tables a person reads.

A finding is ``{host, area, code, severity, message, fix}``: ``host`` the inventory hostname (null for
the cloud as a whole), ``area`` one of ``host | nova | placement | flavor | cyborg | migration | health``,
``severity`` one of ``error | warning | info``. :data:`CODES` gives each code the collection reports its area and
severity; findings from other sources (a Cyborg ARQ report) join the list through :func:`checked` with
codes of their own.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

AREAS = ("host", "nova", "placement", "flavor", "cyborg", "migration", "health")
SEVERITIES = ("error", "warning", "info")
FAIL_ON = (*SEVERITIES, "never")
FIELDS = ("host", "area", "code", "severity", "message", "fix")
MAX_TEXT = 4000

CODES: dict[str, tuple[str, str]] = {
    # host state
    "iommu_off": ("host", "error"),
    "group_not_viable": ("host", "error"),
    "not_bound_vfio": ("host", "warning"),
    "vfs_missing": ("host", "error"),
    "device_missing": ("host", "error"),
    "vgpu_type_missing": ("host", "error"),
    "mig_layout_drift": ("host", "error"),
    "unknown_accelerator": ("host", "info"),
    # deployed Nova configuration
    "nova_config_drift": ("nova", "warning"),
    "nova_config_unreadable": ("nova", "error"),
    "nova_config_templated": ("nova", "info"),
    "alias_missing_on_service": ("nova", "error"),
    "alias_conflict": ("nova", "error"),
    "mdev_class_ignored": ("nova", "warning"),
    "mdev_type_ignored": ("nova", "warning"),
    "pci_in_placement_partial": ("nova", "error"),
    "scheduler_filter_missing": ("nova", "error"),
    "adopt_unexpressed": ("nova", "info"),
    # Placement
    "compute_node_missing": ("placement", "error"),
    "inventory_mismatch": ("placement", "error"),
    "provider_orphaned": ("placement", "error"),
    "one_time_use_stuck": ("placement", "warning"),
    "device_quarantined": ("placement", "info"),
    "quarantine_incomplete": ("placement", "warning"),
    "placement_overload": ("placement", "error"),
    "placement_narrow": ("placement", "warning"),
    "compute_node_gone": ("placement", "warning"),
    "allocation_leaked": ("placement", "warning"),
    # flavors
    "flavor_invalid": ("flavor", "error"),
    "flavor_unplaceable": ("flavor", "error"),
    "flavor_sold_out": ("flavor", "info"),
    "gpu_host_unreserved": ("flavor", "warning"),
    # live migration of GPU and PCI instances
    "migration_blocked": ("migration", "warning"),
    "migration_no_target": ("migration", "info"),
    # GPU health (the gpu_health module's fact)
    "gpu_failed": ("health", "error"),
    "gpu_degraded": ("health", "warning"),
    "gpu_healthy_quarantined": ("health", "info"),
}


class FindingError(AccelError, ValueError):
    """A finding that does not have the audit's shape; the message names the field."""


def finding(host: str | None, code: str, message: str, fix: str, severity: str | None = None) -> dict:
    area, default = CODES[code]
    return {"host": host, "area": area, "code": code, "severity": severity or default, "message": message, "fix": fix}


def checked(items: object, source: str = "extra findings") -> list[dict]:
    """Findings from another source, checked for the audit's shape (codes of their own are welcome)."""
    if items is None:
        return []
    if not isinstance(items, list | tuple):
        raise FindingError(f"{source} must be a list of findings ({', '.join(FIELDS)})")
    found = []
    for index, item in enumerate(items):
        where = f"{source}[{index}]"
        if not isinstance(item, Mapping):
            raise FindingError(f"{where} must be a dict with {', '.join(FIELDS)}")
        if item.get("area") not in AREAS:
            raise FindingError(f"{where}: area {item.get('area')!r} is not one of {', '.join(AREAS)}")
        if item.get("severity") not in SEVERITIES:
            raise FindingError(f"{where}: severity {item.get('severity')!r} is not one of {', '.join(SEVERITIES)}")
        for key in ("code", "message", "fix"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise FindingError(f"{where}: {key} must be a non-empty string")
        host = item.get("host")
        if host is not None and not isinstance(host, str):
            raise FindingError(f"{where}: host must be an inventory hostname or null")
        found.append({k: (item[k][:MAX_TEXT] if isinstance(item.get(k), str) else item.get(k)) for k in FIELDS})
    return found


def ordered(findings: list[dict]) -> list[dict]:
    """Areas in their order, errors first, then by host and code."""
    return sorted(
        findings,
        key=lambda f: (
            AREAS.index(f["area"]),
            SEVERITIES.index(f["severity"]),
            f["host"] or "",
            f["code"],
            f["message"],
        ),
    )


def counts(findings: list[dict]) -> dict[str, int]:
    return {s: sum(1 for f in findings if f["severity"] == s) for s in SEVERITIES}


def reached(findings: list[dict], fail_on: str) -> bool:
    """Whether a finding is at ``fail_on`` or worse (``never``: no finding fails the audit)."""
    if fail_on not in FAIL_ON:
        raise FindingError(f"fail_on {fail_on!r} is not one of {', '.join(FAIL_ON)}")
    if fail_on == "never":
        return False
    worst = SEVERITIES.index(fail_on)
    return any(SEVERITIES.index(f["severity"]) <= worst for f in findings)


def _cell(text: object) -> str:
    """One line, whole: a message or fix is never cut (the JSON report has the same text)."""
    return " ".join(str(text if text is not None else "-").split())


def tables(findings: list[dict]) -> dict[str, list[str]]:
    """One table per area that has findings: ``host | code | message | fix`` rows, severity first."""
    found: dict[str, list[str]] = {}
    for item in ordered(findings):
        rows = found.setdefault(item["area"], ["severity | host | code | message | fix"])
        rows.append(
            " | ".join(
                (
                    item["severity"],
                    _cell(item["host"]),
                    item["code"],
                    _cell(item["message"]),
                    _cell(item["fix"]),
                )
            )
        )
    return found
