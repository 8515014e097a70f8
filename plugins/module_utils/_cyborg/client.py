# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cyborg's v2 API through an openstacksdk adapter (``conn.accelerator``): device profiles, accelerator
requests (ARQs), devices and deployables. Every call sends the microversion; every answer is checked
for its shape, since an API answer is input like any other."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._openstack.transport import Unanswered, bounded, send

MICROVERSION = "2.0"
# Devices show their status (enabled / disabled) from 2.3 on (Cyborg 2023.1 and later).
DEVICE_STATUS_MICROVERSION = "2.3"
# More records than this in one listing is not a cloud this report can reason about safely.
MAX_RECORDS = 100000


class CyborgError(AccelError):
    """Cyborg refused a request, or a profile cannot work; the message names the fix."""


class CyborgClient:
    """The Cyborg calls the collection makes."""

    def __init__(self, adapter, microversion: str = MICROVERSION, mask: Callable[[str], str] | None = None):
        self.adapter = adapter
        self.microversion = microversion
        # Replaces every credential in a text (a refusal may quote the token or the password).
        self.mask = mask or (lambda text: text)

    def _call(self, method: str, path: str, ok: tuple[int, ...], microversion: str | None = None, **kwargs):
        try:
            answer = send(self.adapter, method, path, microversion or self.microversion, kwargs.get("json"), self.mask)
        except Unanswered as exc:
            raise CyborgError(f"Cyborg did not answer {method.upper()} {path}: {exc}; check it runs") from None
        if answer.status not in ok:
            hint = " (check the credentials)" if answer.status == 401 else ""
            body = bounded(answer.text)
            raise CyborgError(f"Cyborg answered {answer.status} to {method.upper()} {path}{hint}: {body}")
        if not answer.parsed:
            raise CyborgError(f"Cyborg's answer to {method.upper()} {path} is not JSON")
        return answer.data

    def _list(self, path: str, key: str, microversion: str | None = None) -> list[dict]:
        body = self._call("get", path, (200,), microversion)
        items = body.get(key) if isinstance(body, dict) else None
        if not isinstance(items, list) or len(items) > MAX_RECORDS:
            raise CyborgError(f"Cyborg's answer to GET {path} holds no usable {key!r} list")
        return [item for item in items if isinstance(item, dict)]

    # -- device profiles ------------------------------------------------------------------------
    def find(self, name: str) -> dict | None:
        found = [
            p for p in self._list(f"/device_profiles?name={quote(name)}", "device_profiles") if p.get("name") == name
        ]
        return found[0] if found else None

    def profiles(self) -> list[dict]:
        return self._list("/device_profiles", "device_profiles")

    def create(self, name: str, groups: list[dict], description: str | None) -> dict:
        profile: dict[str, Any] = {"name": name, "groups": groups}
        if description is not None:
            profile["description"] = description
        return self._call("post", "/device_profiles", (200, 201), json=[profile])

    def delete(self, uuid: str) -> None:
        self._call("delete", f"/device_profiles/{uuid}", (204, 404))

    # -- what the agent reports, and the requests ---------------------------------------------------
    def arqs(self) -> list[dict]:
        return self._list("/accelerator_requests", "arqs")

    def devices(self) -> list[dict]:
        """Devices with their status where Cyborg reports it (2.3); an older Cyborg lists them without."""
        try:
            return self._list("/devices", "devices", DEVICE_STATUS_MICROVERSION)
        except CyborgError as exc:
            if " 406 " not in str(exc):
                raise
        return self._list("/devices", "devices")

    def deployables(self) -> list[dict]:
        return self._list("/deployables", "deployables")
