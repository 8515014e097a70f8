# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small, counted client for the Placement API on top of an openstacksdk connection.

Every request carries a microversion (1.39 unless told otherwise) and goes through ``request()``,
which counts calls per method (the benchmark and the modules report these counts) and turns
Placement's error documents into ``PlacementError`` with the service's own words.
"""

from __future__ import annotations

import collections
import datetime
import email.utils
import fnmatch
import urllib.parse
from collections.abc import Callable
from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of
from ansible_collections.accel.openstack.plugins.module_utils._names.inventory import INVENTORY_FIELDS
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like
from ansible_collections.accel.openstack.plugins.module_utils._openstack.transport import Unanswered, bounded, send

MICROVERSION = "1.39"


class PlacementError(AccelError):
    """Placement refused a request or could not be reached."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code


class PlacementConflict(PlacementError):
    """HTTP 409: a generation conflict, a duplicate name, or something in use."""

    @property
    def is_generation_conflict(self) -> bool:
        return self.code == "placement.concurrent_update"


class PlacementUnreachable(PlacementError):
    """The service did not answer (connection refused, timeout)."""


def _detail(body: Any, fallback: str) -> tuple[str, str | None]:
    if isinstance(body, dict) and body.get("errors"):
        err = body["errors"][0]
        text = " ".join(str(err.get("detail") or err.get("title") or fallback).split())
        return text, err.get("code")
    return fallback, None


def query(params: dict[str, Any] | None) -> str:
    if not params:
        return ""
    return "?" + urllib.parse.urlencode(params, doseq=True, safe=":,!")


def http_date(value: Any) -> str | None:
    """An HTTP date (``Tue, 01 Dec 2026 17:51:31 GMT``) as ISO 8601 UTC (``2026-12-01T17:51:31Z``), else None."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment is None or moment.tzinfo is None:
        return None
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PlacementAnswerError(PlacementError):
    """Placement (or what answers at its endpoint) sent JSON of the wrong shape; the message names the call."""


_KINDS = {
    "list": (list, "a list"),
    "dict": (dict, "a mapping"),
    "str": (str, "a string"),
    "int": (int, "a whole number"),
    "number": ((int, float), "a number"),
}


def _expect(value: Any, kind: str, what: str, call: str, optional: bool = False) -> Any:
    """``value`` when it is of ``kind``; else PlacementAnswerError naming the call and the field."""
    expected, words = _KINDS[kind]
    if (value is None and optional) or (isinstance(value, expected) and not isinstance(value, bool)):
        return value
    raise PlacementAnswerError(
        f"Placement answered {call} with {what} as {kind_of(value)} where Placement gives {words}; "
        "check that the endpoint is a Placement API (the auth options or the cloud's catalog may point "
        "elsewhere)"
    )


def _names(body: Any, key: str, call: str) -> list[str]:
    items = _expect(_expect(body, "dict", "the body", call).get(key), "list", key, call)
    for index, item in enumerate(items):
        _expect(item, "str", f"{key}[{index}]", call)
    return items


class PlacementClient:
    """Placement calls used by the collection. ``adapter`` is ``conn.placement`` (a keystoneauth adapter)."""

    def __init__(
        self,
        adapter,
        microversion: str = MICROVERSION,
        endpoint_hint: str = "",
        mask: Callable[[str], str] | None = None,
    ):
        self.adapter = adapter
        self.microversion = microversion
        self.endpoint_hint = endpoint_hint
        # Replaces every credential in a text (a refusal may quote the token or the request's body).
        self.mask = mask or (lambda text: text)
        self.calls: collections.Counter = collections.Counter()

    # -- transport ----------------------------------------------------------------------------
    @property
    def call_count(self) -> int:
        return sum(self.calls.values())

    def request(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200,)):
        """Send one request; return (status, body). Raise PlacementError unless the status is in ``ok``."""
        status, data, _headers = self._send(method, path, body, ok)
        return status, data

    def read_dated(self, path: str) -> tuple[Any, str | None]:
        """GET one document and when it was last written: its body and the ``Last-Modified`` header
        (Placement sends it from microversion 1.15 on) as ISO 8601 UTC, or None when absent or unreadable."""
        _status, data, headers = self._send("GET", path, None, (200,))
        return data, http_date((headers or {}).get("Last-Modified"))

    def _send(self, method: str, path: str, body: Any, ok: tuple[int, ...]):
        self.calls[method] += 1
        try:
            answer = send(self.adapter, method, path, self.microversion, body, self.mask)
        except Unanswered as exc:
            where = f" at {self.endpoint_hint}" if self.endpoint_hint else ""
            raise PlacementUnreachable(
                f"Placement{where} did not answer {method} {path}: {exc}. Check that the service runs and "
                "that the auth options reach it, then run again: the modules converge from any partial state."
            ) from None
        if answer.status in ok:
            return answer.status, answer.data, answer.headers
        text, code = _detail(answer.data, bounded(answer.text))
        message = f"Placement answered {answer.status} to {method} {path}: {bounded(self.mask(text))}"
        if answer.status == 409:
            raise PlacementConflict(message, answer.status, code)
        raise PlacementError(message, answer.status, code)

    # -- resource classes ---------------------------------------------------------------------
    def resource_classes(self) -> list[str]:
        call = "GET /resource_classes"
        body = _expect(self.request("GET", "/resource_classes")[1], "dict", "the body", call)
        items = _expect(body.get("resource_classes"), "list", "resource_classes", call)
        return sorted(
            _expect(_expect(rc, "dict", f"resource_classes[{i}]", call).get("name"), "str", "a name", call)
            for i, rc in enumerate(items)
        )

    def custom_resource_classes(self) -> list[str]:
        """Every custom resource class that exists, whether or not a provider has inventory of it."""
        return [name for name in self.resource_classes() if name.startswith("CUSTOM_")]

    def custom_traits(self) -> list[str]:
        """Every custom trait that exists, whether or not a provider has it."""
        body = self.request("GET", "/traits" + query({"name": "startswith:CUSTOM_"}))[1]
        return sorted(_names(body, "traits", "GET /traits"))

    def _ensure(self, path: str) -> bool:
        """PUT a custom name (resource class, 1.7 semantics, or trait); True when it was created."""
        return self.request("PUT", path, ok=(201, 204))[0] == 201

    def _delete(self, path: str) -> bool:
        """DELETE a custom name; True when it existed."""
        return self.request("DELETE", path, ok=(204, 404))[0] == 204

    def ensure_resource_class(self, name: str) -> bool:
        """Create a custom resource class if missing. Return True when created."""
        return self._ensure(f"/resource_classes/{name}")

    def delete_resource_class(self, name: str) -> bool:
        return self._delete(f"/resource_classes/{name}")

    # -- traits -------------------------------------------------------------------------------
    def traits(self, names: list[str] | None = None, associated: bool | None = None) -> list[str]:
        params: dict[str, str] = {}
        if names is not None:
            if not names:
                return []
            params["name"] = "in:" + ",".join(sorted(names))
        if associated is not None:
            params["associated"] = "true" if associated else "false"
        body = self.request("GET", "/traits" + query(params))[1]
        return sorted(_names(body, "traits", "GET /traits"))

    def ensure_trait(self, name: str) -> bool:
        return self._ensure(f"/traits/{name}")

    def delete_trait(self, name: str) -> bool:
        return self._delete(f"/traits/{name}")

    # -- providers ----------------------------------------------------------------------------
    def providers(self, **filters: Any) -> list[dict]:
        """GET /resource_providers with Placement's filters (name, uuid, in_tree, required, member_of)."""
        params = {k: v for k, v in filters.items() if v is not None}
        call = "GET /resource_providers"
        body = _expect(self.request("GET", "/resource_providers" + query(params))[1], "dict", "the body", call)
        records = _expect(body.get("resource_providers"), "list", "resource_providers", call)
        for index, record in enumerate(records):
            where = f"resource_providers[{index}]"
            _expect(record, "dict", where, call)
            for key in ("uuid", "name"):
                _expect(record.get(key), "str", f"{where}.{key}", call)
            for key in ("parent_provider_uuid", "root_provider_uuid"):
                _expect(record.get(key), "str", f"{where}.{key}", call, optional=True)
        return records

    def provider(self, uuid: str) -> dict | None:
        status, body = self.request("GET", f"/resource_providers/{uuid}", ok=(200, 404))
        return body if status == 200 else None

    def create_provider(self, name: str, uuid: str | None = None, parent_uuid: str | None = None) -> dict:
        body: dict[str, Any] = {"name": name}
        if uuid:
            body["uuid"] = uuid
        if parent_uuid:
            body["parent_provider_uuid"] = parent_uuid
        created = self.request("POST", "/resource_providers", body, ok=(200,))[1]
        return created

    def update_provider(self, uuid: str, name: str, parent_uuid: str | None) -> dict:
        body = {"name": name, "parent_provider_uuid": parent_uuid}
        updated = self.request("PUT", f"/resource_providers/{uuid}", body)[1]
        return updated

    def delete_provider(self, uuid: str) -> bool:
        status = self.request("DELETE", f"/resource_providers/{uuid}", ok=(204, 404))[0]
        return status == 204

    def inventories(self, uuid: str) -> tuple[int, dict]:
        call = f"GET /resource_providers/{uuid}/inventories"
        body = _expect(self.request("GET", f"/resource_providers/{uuid}/inventories")[1], "dict", "the body", call)
        inventories = _expect(body.get("inventories"), "dict", "inventories", call)
        for rc, inventory in inventories.items():
            _expect(inventory, "dict", f"inventories.{rc}", call)
            for field in INVENTORY_FIELDS:
                kind = "number" if field == "allocation_ratio" else "int"
                _expect(inventory.get(field), kind, f"inventories.{rc}.{field}", call)
        generation = _expect(body.get("resource_provider_generation"), "int", "resource_provider_generation", call)
        return generation, inventories

    def put_inventories(self, uuid: str, generation: int, inventories: dict) -> int:
        body = {"resource_provider_generation": generation, "inventories": inventories}
        answer = self.request("PUT", f"/resource_providers/{uuid}/inventories", body)[1]
        return answer["resource_provider_generation"]

    def _name_set(self, uuid: str, key: str) -> tuple[int, list[str]]:
        """A provider's traits or aggregates (``key``), sorted, with the provider's generation."""
        call = f"GET /resource_providers/{uuid}/{key}"
        body = self.request("GET", f"/resource_providers/{uuid}/{key}")[1]
        names = _names(body, key, call)
        generation = _expect(body.get("resource_provider_generation"), "int", "resource_provider_generation", call)
        return generation, sorted(names)

    def _put_name_set(self, uuid: str, key: str, generation: int, names: list[str]) -> int:
        body = {"resource_provider_generation": generation, key: sorted(names)}
        answer = self.request("PUT", f"/resource_providers/{uuid}/{key}", body)[1]
        return answer["resource_provider_generation"]

    def provider_traits(self, uuid: str) -> tuple[int, list[str]]:
        return self._name_set(uuid, "traits")

    def put_provider_traits(self, uuid: str, generation: int, traits: list[str]) -> int:
        return self._put_name_set(uuid, "traits", generation, traits)

    def aggregates(self, uuid: str) -> tuple[int, list[str]]:
        return self._name_set(uuid, "aggregates")

    def put_aggregates(self, uuid: str, generation: int, aggregates: list[str]) -> int:
        return self._put_name_set(uuid, "aggregates", generation, aggregates)

    def usages(self, uuid: str) -> dict[str, int]:
        call = f"GET /resource_providers/{uuid}/usages"
        body = _expect(self.request("GET", f"/resource_providers/{uuid}/usages")[1], "dict", "the body", call)
        usages = _expect(body.get("usages"), "dict", "usages", call)
        for rc, used in usages.items():
            _expect(used, "int", f"usages.{rc}", call)
        return usages


# -- the fleet snapshot ---------------------------------------------------------------------------
_GLOB = set("*?[")


def _select(client: PlacementClient, names: list[str] | None, tree: str | None) -> tuple[list[dict], dict]:
    """The provider records the snapshot covers, and the filter that scopes per-trait lists."""
    scope: dict[str, str] = {}
    if tree:
        root = client.providers(uuid=tree) if is_uuid_like(tree) else client.providers(name=tree)
        if not root:
            raise PlacementError(f"no resource provider named or with uuid {tree!r}; give an existing tree root")
        scope = {"in_tree": root[0]["uuid"]}
        records = client.providers(**scope)
    elif names and not any(_GLOB & set(n) for n in names) and len(names) < 10:
        records = [r for n in names for r in client.providers(name=n)]
    else:
        records = client.providers()
    if names:
        records = [r for r in records if any(fnmatch.fnmatchcase(r["name"], n) for n in names)]
    return records, scope


def fleet_snapshot(
    client: PlacementClient,
    names: list[str] | None = None,
    tree: str | None = None,
    usages: bool = True,
    details: bool = True,
) -> dict:
    """The fleet snapshot (DESIGN section 3) of all providers, one tree, or providers matching ``names``.

    Calls: one provider list, then per provider one inventory read, one aggregate read and (when it has
    inventories and ``usages``) one usage read. Traits come from one list per associated trait when that
    is fewer calls than one read per provider. Two more reads give the custom resource classes and traits
    that exist in Placement, used or not (the snapshot's ``resource_classes`` and ``traits``): a query
    for one of them that no provider has is an empty answer, not Placement's 400 for an unknown name.
    Without ``details`` only the provider list is read and each provider has only its identity (``uuid``,
    ``name``, ``parent_provider_uuid``, ``root_provider_uuid``): which providers exist, not a snapshot for
    the solver.
    """
    records, scope = _select(client, names, tree)
    if not details:
        identity = ("uuid", "name", "parent_provider_uuid", "root_provider_uuid")
        ordered = sorted(records, key=lambda r: (r["root_provider_uuid"] != r["uuid"], r["name"]))
        return {"resource_providers": [{key: record.get(key) for key in identity} for record in ordered]}
    traits: dict[str, list[str]] = {r["uuid"]: [] for r in records}
    associated = client.traits(associated=True) if len(records) > 2 else None
    if associated is not None and len(associated) + 1 < len(records):
        for trait in associated:
            for record in client.providers(required=trait, **scope):
                if record["uuid"] in traits:
                    traits[record["uuid"]].append(trait)
    else:
        for record in records:
            traits[record["uuid"]] = client.provider_traits(record["uuid"])[1]
    providers = []
    for record in sorted(records, key=lambda r: (r["root_provider_uuid"] != r["uuid"], r["name"])):
        uuid = record["uuid"]
        inventories = client.inventories(uuid)[1]
        used = client.usages(uuid) if usages and inventories else {}
        providers.append(
            {
                "uuid": uuid,
                "name": record["name"],
                "parent_provider_uuid": record.get("parent_provider_uuid"),
                "root_provider_uuid": record.get("root_provider_uuid"),
                "inventories": {rc: {f: inv[f] for f in INVENTORY_FIELDS} for rc, inv in inventories.items()},
                "usages": {rc: used.get(rc, 0) for rc in inventories},
                "traits": sorted(traits[uuid]),
                "aggregates": client.aggregates(uuid)[1],
            }
        )
    return {
        "resource_providers": providers,
        "resource_classes": client.custom_resource_classes(),
        "traits": client.custom_traits(),
    }
