# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cyborg's accelerator requests (ARQs), listed and classified; nothing here deletes anything.

Cyborg has no garbage collector, and Nova deletes a server's ARQs only when binding fails, so ARQs
outlive their instance when it is deleted uncleanly. :func:`arq_report` classifies each ARQ:

- ``orphaned``: bound to an instance (``instance_uuid`` set) that is not among the live instances;
- ``stale``: in ``Initial`` or ``BindFailed`` longer than ``stale_after`` (counted from its last update,
  or its creation when it was never updated);
- ``no_project``: no ``project_id`` (ARQs made before Cyborg recorded it, or by a caller without a
  project), which no project quota or cleanup by project ever reaches;
- ``ok``: none of these.

``classification`` is the first that applies in that order; ``problems`` lists all. Each orphan carries
the command a person runs after checking that the instance is really gone.
:func:`arq_findings` turns a report into audit findings (area ``cyborg``).
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

CLASSES = ("orphaned", "stale", "no_project", "ok")
STALE_STATES = ("Initial", "BindFailed")
UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\Z")
DURATION = re.compile(r"^\s*(\d{1,9})\s*([smhdw]?)\s*\Z")
UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_STALE_AFTER = 10 * 365 * 86400
# What a report shows of any text an API answer holds.
MAX_TEXT = 255
FINDINGS = {
    "orphaned": ("cyborg_arq_orphaned", "error"),
    "stale": ("cyborg_arq_stale", "warning"),
    "no_project": ("cyborg_arq_no_project", "warning"),
}


class ArqReportError(AccelError):
    """An option of the ARQ report is not usable; the message names it and the fix."""


def parse_duration(value: Any, option: str = "stale_after") -> int:
    """Seconds from ``3600``, ``"90m"``, ``"2h"``, ``"7d"`` or ``"1w"`` (bounded to ten years)."""
    if isinstance(value, bool):
        value = None
    if isinstance(value, int):
        seconds = value
    else:
        match = DURATION.match(str(value)) if isinstance(value, str) else None
        if not match:
            raise ArqReportError(
                f"{option} {value!r} is not a duration; give seconds or a number with s, m, h, d or w, e.g. '24h'"
            )
        seconds = int(match.group(1)) * UNITS[match.group(2)]
    if not 0 <= seconds <= MAX_STALE_AFTER:
        raise ArqReportError(f"{option} {value!r} must be between 0 and 10 years")
    return seconds


def parse_time(value: Any) -> datetime.datetime | None:
    """An ISO 8601 time from Cyborg (``2026-01-02T03:04:05+00:00``, fractions or ``Z`` allowed); naive
    times are UTC; anything else is None."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def _uuid(value: Any) -> str | None:
    return value.lower() if isinstance(value, str) and UUID.match(value) else None


def delete_command(arq_uuid: str) -> str:
    return f"openstack accelerator arq delete {arq_uuid}"


def arq_report(
    arqs: Any,
    instances: Any,
    stale_after: Any = "1h",
    now: datetime.datetime | None = None,
) -> dict:
    """Classify every ARQ. ``instances``: the UUIDs of the live instances (servers), or None when they are
    unknown (then no ARQ can be called orphaned, and a warning says so)."""
    if not isinstance(arqs, list):
        raise ArqReportError("arqs must be the list Cyborg returns for GET /v2/accelerator_requests")
    limit = parse_duration(stale_after)
    now = now or datetime.datetime.now(datetime.UTC)
    live = None
    warnings: list[str] = []
    if instances is not None:
        if not isinstance(instances, list | tuple | set):
            raise ArqReportError("instances must be a list of instance (server) UUIDs")
        live = {str(i).lower() for i in instances}
    else:
        warnings.append("the live instances are unknown: no ARQ is called orphaned; give instances or read servers")
    rows = []
    for arq in arqs:
        if not isinstance(arq, dict):
            continue
        arq_uuid = _uuid(arq.get("uuid"))
        state = _text(arq.get("state"))
        instance = _text(arq.get("instance_uuid"))
        project = _text(arq.get("project_id"))
        created = parse_time(arq.get("created_at"))
        changed = parse_time(arq.get("updated_at")) or created
        problems: list[str] = []
        reasons: list[str] = []
        if instance and live is not None and instance.lower() not in live:
            problems.append("orphaned")
            reasons.append(f"bound to instance {instance}, which does not exist")
        if state in STALE_STATES and changed is not None and (now - changed).total_seconds() > limit:
            problems.append("stale")
            reasons.append(f"{state} since {changed.isoformat()}, longer than {limit} s")
        if not project:
            problems.append("no_project")
            reasons.append("no project_id: no project's quota or cleanup reaches it")
        row = {
            "uuid": arq_uuid or _text(arq.get("uuid")),
            "state": state,
            "device_profile_name": _text(arq.get("device_profile_name")),
            "device_profile_group_id": arq.get("device_profile_group_id")
            if isinstance(arq.get("device_profile_group_id"), int)
            else None,
            "instance_uuid": instance,
            "hostname": _text(arq.get("hostname")),
            "device_rp_uuid": _text(arq.get("device_rp_uuid")),
            "project_id": project,
            "created_at": created.isoformat() if created else None,
            "age_seconds": int((now - created).total_seconds()) if created else None,
            "classification": next((c for c in CLASSES if c in problems), "ok"),
            "problems": problems,
            "reasons": reasons,
        }
        if "orphaned" in problems:
            # Only a well-formed UUID goes into a command a person copies.
            row["command"] = delete_command(arq_uuid) if arq_uuid else None
        rows.append(row)
    rows.sort(key=lambda r: (CLASSES.index(r["classification"]), r["hostname"] or "", r["uuid"] or ""))
    summary = {c: sum(1 for r in rows if r["classification"] == c) for c in CLASSES}
    bound = sum(1 for r in rows if r["instance_uuid"])
    if live is not None and not live and bound:
        warnings.append(
            f"{bound} ARQ(s) are bound but no instance was found at all: if the servers were read with "
            "credentials that cannot list every project's servers, every bound ARQ looks orphaned; check "
            "before deleting anything"
        )
    return {"arqs": rows, "summary": summary, "stale_after": limit, "warnings": warnings}


def arq_findings(report: dict) -> list[dict]:
    """Audit findings ``{host, area, code, severity, message, fix}`` for every ARQ that is not ``ok``."""
    findings = []
    for row in report.get("arqs") or []:
        for problem, reason in zip(row.get("problems") or [], row.get("reasons") or [], strict=False):
            code, severity = FINDINGS[problem]
            where = f"ARQ {row['uuid']} (profile {row['device_profile_name']}, state {row['state']})"
            if problem == "orphaned":
                fix = (
                    "check that the instance is gone (openstack server show "
                    f"{row['instance_uuid']} --all-projects), then run: {row.get('command') or 'the delete by hand'}"
                    "; Cyborg accepts deleting a bound ARQ only from a request with a service token (Nova's "
                    "service user)"
                )
            elif problem == "stale":
                fix = (
                    "find who created it (project "
                    f"{row['project_id'] or 'unknown'}); if no server build is waiting for it, delete it: "
                    f"{delete_command(row['uuid'])}"
                )
            else:
                fix = (
                    "no project owns it, so per-project cleanup never sees it; an administrator checks its "
                    f"instance ({row['instance_uuid'] or 'none'}) and deletes it by hand when unused"
                )
            findings.append(
                {
                    "host": row["hostname"] or "cyborg",
                    "area": "cyborg",
                    "code": code,
                    "severity": severity,
                    "message": f"{where}: {reason}",
                    "fix": fix,
                }
            )
    return findings
