# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cyborg's accelerator requests (ARQs), listed and classified; nothing here deletes anything.

Cyborg has no garbage collector, and Nova deletes a server's ARQs only when binding fails, so ARQs
outlive their instance when it is deleted uncleanly. :func:`arq_report` classifies each ARQ:

- ``orphaned``: bound to an instance (``instance_uuid`` set) that is not among the live instances;
- ``stale``: in ``Initial``, ``BindFailed`` or ``Unbound`` longer than ``stale_after`` (counted from its
  last update, or its creation when it was never updated);
- ``no_project``: no ``project_id`` (ARQs made before Cyborg recorded it, or by a caller without a
  project), which no project quota or cleanup by project ever reaches;
- ``ok``: none of these.

``classification`` is the first that applies in that order; ``problems`` lists all. Each orphan and each
stale ARQ carries the command a person runs to delete it (:func:`delete_command`): a ``curl`` call of
Cyborg's API, because Cyborg 17 deletes a bound ARQ only for a request that carries a service token (its
``[keystone_authtoken] service_token_roles``, ``service`` by default) next to the user's token, and
neither openstackclient nor python-cyborgclient can send one. Only values validated as UUIDs (and an
endpoint validated as an http(s) URL, shell-quoted) become part of a command.
:func:`arq_findings` turns a report into audit findings (area ``cyborg``), including one per thing the
credentials could not read (``not_read``: other projects' ARQs or servers).
"""

from __future__ import annotations

import datetime
import json
import re
import shlex
from typing import Any
from urllib.parse import urlsplit

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

CLASSES = ("orphaned", "stale", "no_project", "ok")
# States an ARQ should not stay in: created and never bound, bound and failed, unbound and never deleted.
STALE_STATES = ("Initial", "BindFailed", "Unbound")
UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\Z")
# The environment variables the delete command reads its two tokens from (never printed themselves).
USER_TOKEN = "USER_TOKEN"
SERVICE_TOKEN = "SERVICE_TOKEN"
ENDPOINT_VARIABLE = "CYBORG_ENDPOINT"
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
NOT_READ_CODE = "cyborg_arq_scope_limited"


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
    """A value for the report: text up to MAX_TEXT characters; a longer one is described, not cut."""
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= MAX_TEXT else f"(a value of {len(text)} characters, more than {MAX_TEXT})"


def _uuid(value: Any) -> str | None:
    return value.lower() if isinstance(value, str) and UUID.match(value) else None


def _shown(value: Any) -> str:
    """A value that failed validation, shown as a JSON string (quoted, control characters escaped)."""
    return json.dumps(_text(value) or "")


def usable_endpoint(endpoint: Any) -> str | None:
    """Cyborg's API endpoint (from the service catalog) when it is a plain http(s) URL, without a trailing
    slash; None otherwise."""
    if not isinstance(endpoint, str) or len(endpoint) > MAX_TEXT or any(c.isspace() for c in endpoint):
        return None
    try:
        parts = urlsplit(endpoint)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        return None
    return endpoint.rstrip("/")


def delete_command(arq_uuid: str, endpoint: str | None = None, service_token: bool = True) -> str:
    """The shell command that deletes ARQ ``arq_uuid`` (a validated UUID) through Cyborg's API.

    The tokens come from the environment (``$USER_TOKEN``: a token of a cloud administrator, who may
    delete any project's ARQ; ``$SERVICE_TOKEN``: a token of a user with Cyborg's service role, which
    Cyborg 17 requires for an ARQ bound to an instance). ``endpoint`` is Cyborg's v2 endpoint, validated
    and shell-quoted; without one the command reads ``$CYBORG_ENDPOINT``."""
    if not _uuid(arq_uuid):
        raise ArqReportError(f"{_shown(arq_uuid)} is not a UUID; no command is made from it")
    base = usable_endpoint(endpoint)
    url = (
        shlex.quote(f"{base}/accelerator_requests?arqs={arq_uuid.lower()}")
        if base
        else f'"${ENDPOINT_VARIABLE}/accelerator_requests?arqs={arq_uuid.lower()}"'
    )
    headers = [f'-H "X-Auth-Token: ${USER_TOKEN}"']
    if service_token:
        headers.append(f'-H "X-Service-Token: ${SERVICE_TOKEN}"')
    headers.append("-H 'OpenStack-API-Version: accelerator 2.0'")
    return f"curl -sS --fail-with-body -X DELETE {' '.join(headers)} {url}"


def token_steps(service_token: bool) -> str:
    """How a person sets the variables :func:`delete_command` reads."""
    steps = f"export {USER_TOKEN}=$(openstack token issue -f value -c id) as a cloud administrator (role admin)"
    if service_token:
        steps += (
            f" and export {SERVICE_TOKEN}=$(openstack --os-cloud nova-service token issue -f value -c id), "
            "nova-service being a clouds.yaml entry with the credentials of a user holding Cyborg's service role "
            "(Cyborg's [keystone_authtoken] service_token_roles, default service), e.g. Nova's [service_user] "
            "from nova.conf"
        )
    return steps


def _not_read(entries: Any) -> list[dict]:
    """What the credentials could not read: ``[{what, reason, needs}]``, each text bounded."""
    out = []
    for entry in entries or []:
        if isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("what", "reason", "needs")):
            out.append({k: _text(entry[k]) for k in ("what", "reason", "needs")})
    return out


def arq_report(
    arqs: Any,
    instances: Any,
    stale_after: Any = "1h",
    now: datetime.datetime | None = None,
    endpoint: str | None = None,
    not_read: Any = None,
) -> dict:
    """Classify every ARQ. ``instances``: the UUIDs of the live instances (servers), or None when they are
    unknown (then no ARQ can be called orphaned, and a warning says so). ``endpoint``: Cyborg's v2 endpoint
    for the delete commands. ``not_read``: what the credentials could not read (``[{what, reason,
    needs}]``), returned as is and turned into findings."""
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
    rows = [_row(arq, live, limit, now, usable_endpoint(endpoint)) for arq in arqs if isinstance(arq, dict)]
    rows.sort(key=lambda r: (CLASSES.index(r["classification"]), r["hostname"] or "", r["uuid"] or ""))
    summary = {c: sum(1 for r in rows if r["classification"] == c) for c in CLASSES}
    bound = sum(1 for r in rows if r["instance_uuid"])
    if live is not None and not live and bound:
        warnings.append(
            f"{bound} ARQ(s) are bound but no instance was found at all: if the servers were read with "
            "credentials that cannot list every project's servers, every bound ARQ looks orphaned; check "
            "before deleting anything"
        )
    return {
        "arqs": rows,
        "summary": summary,
        "stale_after": limit,
        "warnings": warnings,
        "not_read": _not_read(not_read),
    }


def _row(arq: dict, live: set | None, limit: int, now: datetime.datetime, endpoint: str | None) -> dict:
    arq_uuid = _uuid(arq.get("uuid"))
    state = _text(arq.get("state"))
    raw_instance = arq.get("instance_uuid")
    instance = _uuid(raw_instance)
    project = _text(arq.get("project_id"))
    created = parse_time(arq.get("created_at"))
    changed = parse_time(arq.get("updated_at")) or created
    problems: list[str] = []
    reasons: list[str] = []
    invalid: list[str] = []
    if arq_uuid is None:
        invalid.append(f"its uuid {_shown(arq.get('uuid'))} is not a UUID")
    if raw_instance not in (None, "") and instance is None:
        invalid.append(f"its instance_uuid {_shown(raw_instance)} is not a UUID")
    bound_to = instance or (_text(raw_instance) if raw_instance not in (None, "") else None)
    if bound_to and live is not None and bound_to.lower() not in live:
        problems.append("orphaned")
        where = instance or _shown(raw_instance)
        reasons.append(f"bound to instance {where}, which does not exist")
    if state in STALE_STATES and changed is not None and (now - changed).total_seconds() > limit:
        problems.append("stale")
        reasons.append(f"{state} since {changed.isoformat()}, longer than {limit} s")
    if not project:
        problems.append("no_project")
        reasons.append("no project_id: no project's quota or cleanup reaches it")
    group = arq.get("device_profile_group_id")
    row = {
        "uuid": arq_uuid or _text(arq.get("uuid")),
        "state": state,
        "device_profile_name": _text(arq.get("device_profile_name")),
        "device_profile_group_id": group if isinstance(group, int) and not isinstance(group, bool) else None,
        "instance_uuid": bound_to,
        "hostname": _text(arq.get("hostname")),
        "device_rp_uuid": _text(arq.get("device_rp_uuid")),
        "project_id": project,
        "created_at": created.isoformat() if created else None,
        "age_seconds": int((now - created).total_seconds()) if created else None,
        "classification": next((c for c in CLASSES if c in problems), "ok"),
        "problems": problems,
        "reasons": reasons,
    }
    if invalid:
        row["invalid"] = invalid
    if "orphaned" in problems or "stale" in problems:
        # Only well-formed UUIDs go into a command a person runs; a bound ARQ needs the service token.
        row["command"] = (
            delete_command(arq_uuid, endpoint, service_token=bool(bound_to)) if arq_uuid and not invalid else None
        )
    return row


def _fix(problem: str, row: dict) -> str:
    command = row.get("command")
    if row.get("invalid") and problem in ("orphaned", "stale"):
        return (
            f"no command is given because Cyborg's answer is not well formed ({'; '.join(row['invalid'])}); "
            "look at the ARQ in Cyborg's database before deleting anything"
        )
    if problem == "orphaned":
        return (
            f"check that the instance is gone (openstack server show {row['instance_uuid']} --all-projects answers "
            f"No Server found), then delete the ARQ through Cyborg's API: {token_steps(True)}; then run: {command}. "
            "Cyborg 17 refuses to unbind or delete a bound ARQ (HTTP 403) for any request without a service "
            "token, a cloud administrator's included"
        )
    if problem == "stale":
        return (
            f"find who created it (project {row['project_id'] or 'unknown'}); if no server build is waiting for it, "
            f"delete it: {token_steps(bool(row['instance_uuid']))}; then run: {command}"
        )
    return (
        "no project owns it, so per-project cleanup never sees it; an administrator checks its instance "
        f"({row['instance_uuid'] or 'none'}) and deletes it by hand when unused"
    )


def arq_findings(report: dict) -> list[dict]:
    """Audit findings ``{host, area, code, severity, message, fix}`` for every ARQ that is not ``ok``, and
    one for each thing the credentials could not read (``not_read``)."""
    findings = []
    for gap in _not_read(report.get("not_read")):
        findings.append(
            {
                "host": "cyborg",
                "area": "cyborg",
                "code": NOT_READ_CODE,
                "severity": "warning",
                "message": f"could not read {gap['what']}: {gap['reason']}",
                "fix": f"run the report with credentials that hold {gap['needs']}",
            }
        )
    for row in report.get("arqs") or []:
        if not isinstance(row, dict):
            continue
        for problem, reason in zip(row.get("problems") or [], row.get("reasons") or [], strict=False):
            if problem not in FINDINGS:
                continue
            code, severity = FINDINGS[problem]
            where = f"ARQ {row.get('uuid')} (profile {row.get('device_profile_name')}, state {row.get('state')})"
            findings.append(
                {
                    "host": row.get("hostname") or "cyborg",
                    "area": "cyborg",
                    "code": code,
                    "severity": severity,
                    "message": f"{where}: {reason}",
                    "fix": _fix(problem, row),
                }
            )
    return findings
