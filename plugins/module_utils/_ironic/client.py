# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ironic's inspection rule API (``/v1/inspection_rules``, microversion 1.96) through an openstacksdk adapter.

The adapter is ``conn.baremetal``; every call sends the microversion explicitly and turns whatever
Ironic answers into a value or an :class:`IronicError` whose message says what to check.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable
from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._openstack.transport import Unanswered, error_text, send

# Inspection rules exist from 1.96 on.
MICROVERSION = "1.96"
# A fleet has a handful of rules; a listing longer than this is not something to compare against.
MAX_RULES = 10000
PAGE = 1000
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


class IronicError(AccelError):
    """Ironic refused a request or did not answer; the message names the call and the fix."""


# Where Ironic's error documents carry the reason, and how much of it a message quotes.
ERROR_KEYS = ("error_message", "faultstring", "description")
MAX_DETAIL = 500


class IronicClient:
    """The inspection rule calls of Ironic's v1 API."""

    def __init__(self, adapter, microversion: str = MICROVERSION, mask: Callable[[str], str] | None = None):
        self.adapter = adapter
        self.microversion = microversion
        # Replaces every credential in a text (a refusal may quote the token or a sensitive rule's values).
        self.mask = mask or (lambda text: text)
        self.calls: collections.Counter = collections.Counter()

    def request(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200,)):
        self.calls[method] += 1
        try:
            answer = send(self.adapter, method, path, self.microversion, body, self.mask)
        except Unanswered as exc:
            raise IronicError(
                f"Ironic did not answer {method} {path}: {exc}; check that the service runs and that the cloud "
                "options reach it (standalone: auth_type none and baremetal_endpoint_override)"
            ) from None
        if answer.status in ok:
            return answer.status, answer.data
        text = error_text(answer.data, ERROR_KEYS, answer.text, self.mask, MAX_DETAIL)
        hint = ""
        if answer.status == 406 or "version" in text.lower():
            hint = "; inspection rules need Ironic API microversion 1.96 or newer"
        raise IronicError(f"Ironic answered {answer.status} to {method} {path}: {text}{hint}")

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
