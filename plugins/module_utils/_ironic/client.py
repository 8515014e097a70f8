# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ironic's inspection rule API (``/v1/inspection_rules``, microversion 1.96) through an openstacksdk adapter.

The adapter is ``conn.baremetal``; every call sends the microversion explicitly and turns whatever
Ironic answers into a value or an :class:`IronicError` whose message says what to check.
"""

from __future__ import annotations

import collections
import re
from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

# Inspection rules exist from 1.96 on.
MICROVERSION = "1.96"
# A fleet has a handful of rules; a listing longer than this is not something to compare against.
MAX_RULES = 10000
PAGE = 1000
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


class IronicError(AccelError):
    """Ironic refused a request or did not answer; the message names the call and the fix."""


def _detail(data: Any, fallback: str) -> str:
    if isinstance(data, dict):
        text = data.get("error_message") or data.get("faultstring") or data.get("description")
        if isinstance(text, str):
            return text[:500]
    return fallback[:500]


class IronicClient:
    """The inspection rule calls of Ironic's v1 API."""

    def __init__(self, adapter, microversion: str = MICROVERSION):
        self.adapter = adapter
        self.microversion = microversion
        self.calls: collections.Counter = collections.Counter()

    def request(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200,)):
        self.calls[method] += 1
        kwargs: dict[str, Any] = {"microversion": self.microversion, "raise_exc": False}
        if body is not None:
            kwargs["json"] = body
        try:
            resp = getattr(self.adapter, method.lower())(path, **kwargs)
        except Exception as exc:  # keystoneauth's ConnectFailure, timeouts, endpoint lookups
            raise IronicError(
                f"Ironic did not answer {method} {path}: {exc}; check that the service runs and that the cloud "
                "options reach it (standalone: auth_type none and baremetal_endpoint_override)"
            ) from exc
        try:
            data = resp.json() if resp.content else None
        except ValueError:
            data = None
        if resp.status_code in ok:
            return resp.status_code, data
        text = _detail(data, resp.text or resp.reason or "")
        hint = ""
        if resp.status_code == 406 or "version" in text.lower():
            hint = "; inspection rules need Ironic API microversion 1.96 or newer"
        raise IronicError(f"Ironic answered {resp.status_code} to {method} {path}: {text}{hint}")

    def list_rules(self) -> list[dict]:
        """Every rule, page by page (Ironic says ``next`` while more follow)."""
        out: list[dict] = []
        marker = ""
        while True:
            _status, body = self.request("GET", f"/inspection_rules?detail=true&limit={PAGE}{marker}")
            rules = body.get("inspection_rules") if isinstance(body, dict) else None
            if not isinstance(rules, list) or len(out) + len(rules) > MAX_RULES:
                raise IronicError(
                    "Ironic's answer to GET /inspection_rules holds no usable inspection_rules list "
                    f"(a list of at most {MAX_RULES} rules in all)"
                )
            out += [r for r in rules if isinstance(r, dict)]
            last = out[-1].get("uuid") if out else None
            if not body.get("next") or not rules or not isinstance(last, str) or not UUID.match(last):
                return out
            if marker == f"&marker={last}":
                raise IronicError(f"Ironic answered GET /inspection_rules after rule {last} with the same page again")
            marker = f"&marker={last}"

    def get_rule(self, uuid: str) -> dict | None:
        status, body = self.request("GET", f"/inspection_rules/{uuid}", ok=(200, 404))
        return body if status == 200 and isinstance(body, dict) else None

    def create_rule(self, rule: dict) -> dict:
        _status, body = self.request("POST", "/inspection_rules", rule, ok=(200, 201))
        return body or {}

    def update_rule(self, uuid: str, changes: dict) -> dict:
        patch = [{"op": "replace", "path": f"/{key}", "value": value} for key, value in sorted(changes.items())]
        _status, body = self.request("PATCH", f"/inspection_rules/{uuid}", patch)
        return body or {}

    def delete_rule(self, uuid: str) -> None:
        self.request("DELETE", f"/inspection_rules/{uuid}", ok=(204, 404))
