"""Load a fleet snapshot into the real Placement over its HTTP API.

Creates the custom resource classes and traits, the providers (parents first), their inventories,
traits and aggregates, and the usages as real allocations: from ``fleet["consumers"]`` when the
snapshot lists them (the fleet generator does), else one consumer per provider and class (which needs
every usage to be a valid single allocation).
"""

from __future__ import annotations

import uuid

PROJECT = "6b4a3c2e-0000-4000-8000-000000000001"
USER = "6b4a3c2e-0000-4000-8000-000000000002"


class LoadError(RuntimeError):
    pass


def _check(result, what: str):
    status, body = result
    if status >= 400:
        raise LoadError(f"{what}: HTTP {status}: {body}")
    return body


def load_fleet(server, fleet: dict) -> None:
    providers = fleet["resource_providers"]
    standard_classes = {
        rc["name"] for rc in _check(server.request("GET", "/resource_classes"), "classes")["resource_classes"]
    }
    classes = {rc for p in providers for rc in p.get("inventories") or {}} | set(fleet.get("resource_classes") or ())
    for rc in sorted(classes - standard_classes):
        _check(server.request("PUT", f"/resource_classes/{rc}"), f"resource class {rc}")
    traits = {t for p in providers for t in p.get("traits") or ()} | set(fleet.get("traits") or ())
    for trait in sorted(t for t in traits if t.startswith("CUSTOM_")):
        _check(server.request("PUT", f"/traits/{trait}"), f"trait {trait}")
    by_uuid = {p["uuid"]: p for p in providers}
    done: set[str] = set()

    def create(provider):
        parent = provider.get("parent_provider_uuid")
        if parent and parent not in done:
            create(by_uuid[parent])
        if provider["uuid"] in done:
            return
        body = {"uuid": provider["uuid"], "name": provider.get("name") or provider["uuid"]}
        if parent:
            body["parent_provider_uuid"] = parent
        _check(server.request("POST", "/resource_providers", body), f"provider {body['name']}")
        generation = 0
        for key in ("inventories", "traits", "aggregates"):
            if provider.get(key):
                result = _check(
                    server.request(
                        "PUT",
                        f"/resource_providers/{provider['uuid']}/{key}",
                        {"resource_provider_generation": generation, key: provider[key]},
                    ),
                    f"{key} of {body['name']}",
                )
                generation = result["resource_provider_generation"]
        done.add(provider["uuid"])

    for provider in providers:
        create(provider)
    consumers = fleet.get("consumers")
    if consumers is None:
        # One consumer per batch of providers; each usage must be a valid single allocation.
        consumers = []
        for start in range(0, len(providers), 100):
            allocations = {
                p["uuid"]: {"resources": {rc: used for rc, used in p["usages"].items() if used}}
                for p in providers[start : start + 100]
                if any((p.get("usages") or {}).values())
            }
            if allocations:
                consumers.append({"uuid": str(uuid.uuid4()), "allocations": allocations})
    for consumer in consumers:
        _check(
            server.request(
                "PUT",
                f"/allocations/{consumer['uuid']}",
                {
                    "allocations": consumer["allocations"],
                    "project_id": PROJECT,
                    "user_id": USER,
                    "consumer_generation": None,
                    "consumer_type": "INSTANCE",
                },
            ),
            f"allocation {consumer['uuid']}",
        )


def allocate(server, allocations: dict) -> tuple[str, int]:
    """PUT ``allocations`` for a new instance consumer of the loader's project and user: (consumer, status)."""
    consumer = str(uuid.uuid4())
    body = {
        "allocations": allocations,
        "project_id": PROJECT,
        "user_id": USER,
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    status, _body = server.request("PUT", f"/allocations/{consumer}", body)
    return consumer, status
