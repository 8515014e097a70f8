# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who holds what: every consumer's allocations on a fleet snapshot's providers, read only where used."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import PlacementError


def read_allocations(client, fleet: dict) -> dict[str, dict]:
    """``{consumer: {"allocations": {provider uuid: {"resources": {class: amount}}}}}``, the shape of Placement's
    ``GET /allocations/<consumer>``, assembled from one ``GET /resource_providers/<uuid>/allocations`` per
    provider of the snapshot that has usage (nothing is read for a provider nobody uses)."""
    found: dict[str, dict] = {}
    for provider in fleet.get("resource_providers") or []:
        if not any((provider.get("usages") or {}).values()):
            continue
        call = f"GET /resource_providers/{provider['uuid']}/allocations"
        body = client.request("GET", f"/resource_providers/{provider['uuid']}/allocations")[1]
        held = body.get("allocations") if isinstance(body, dict) else None
        if not isinstance(held, dict):
            raise PlacementError(f"{call} answered without an allocations object; is this Placement?")
        for consumer, allocation in held.items():
            if not is_uuid_like(consumer) or not isinstance(allocation, dict):
                raise PlacementError(f"{call}: consumer {str(consumer)[:64]!r} is not a UUID with its resources")
            resources = allocation.get("resources")
            if not isinstance(resources, dict) or not all(isinstance(n, int) for n in resources.values()):
                raise PlacementError(f"{call}: consumer {consumer} has no resources as whole numbers")
            entry = found.setdefault(consumer, {"allocations": {}})
            entry["allocations"][provider["uuid"]] = {"resources": dict(resources)}
    return found
