#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: placement_info
short_description: Read Placement's providers as a fleet snapshot
description:
  - Returns the fleet snapshot (providers with inventories, usages, traits and aggregates) that the
    collection's solver lookups and filters take as their C(fleet) option (for example
    O(accel.openstack.allocation_candidates#lookup:fleet)).
  - Covers all providers, one tree (O(tree)), or the providers whose names match O(name).
  - Reads the provider list once, then per provider its inventories, aggregates and (when it has
    inventories) usages; traits come from one filtered list per trait in use when that is fewer calls.
  - The snapshot also lists every custom resource class and custom trait that exists in Placement, used
    by a provider or not (RV(fleet.resource_classes), RV(fleet.traits)). The solver answers a query for
    such a name with no candidate, as Placement does, instead of refusing an unknown name.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  name:
    description:
      - Provider names to include; shell-style patterns (C(gpu-node-*)) are allowed.
    type: list
    elements: str
  tree:
    description: Name or uuid of a provider; the snapshot covers the whole tree it belongs to.
    type: str
  usages:
    description: Whether to read usages (one call per provider that has inventories).
    type: bool
    default: true
  details:
    description:
      - V(false) reads only the provider list (one call, or one per exact O(name) when fewer than 10) and
        returns each provider's C(uuid), C(name), C(parent_provider_uuid) and C(root_provider_uuid) only,
        to see which providers exist (the placement role waits for nova-compute's providers this way).
        That is not a fleet snapshot; do not give it to the solver lookups.
    type: bool
    default: true
  quarantines:
    description:
      - Also read the device quarantines M(accel.openstack.device_quarantine) holds on the snapshot's providers
        and return them as RV(fleet.quarantines) (the audit reports each as a C(device_quarantined) finding).
      - One usage query for the quarantine project, and, only when it holds anything, one allocation read per
        device provider in use, plus, on a quarantined provider, one read of its allocations and one per further
        quarantine consumer. Needs O(usages) and O(details).
    type: bool
    default: false
  allocations:
    description:
      - Also read who holds what on the snapshot's providers and return it as RV(fleet.allocations) (the audit
        names the consumers of a compute node that is gone and finds leaked allocations with it).
      - One allocation read per provider that has usage. Needs O(usages) and O(details).
    type: bool
    default: false
  query:
    description:
      - A JMESPath expression applied to the snapshot (as C(community.general.json_query) does);
        its value is returned as RV(query_result).
    type: str
extends_documentation_fragment:
  - accel.openstack.openstack
  - accel.openstack.read_only
requirements:
  - jmespath (for O(query))
"""

EXAMPLES = r"""
- name: Snapshot the whole fleet for the solver
  accel.openstack.placement_info:
    auth_type: admin_token
    auth: {endpoint: "http://127.0.0.1:8778", token: "admin"}
  register: placement

- name: Snapshot with the quarantined devices (for the audit)
  accel.openstack.placement_info:
    cloud: mycloud
    quarantines: true
  register: placement

- name: Snapshot with every consumer's allocations (to find leaked ones)
  accel.openstack.placement_info:
    cloud: mycloud
    allocations: true
  register: placement

- name: Free GPUs per provider of one host
  accel.openstack.placement_info:
    cloud: mycloud
    tree: gpu-node-1
    query: >-
      resource_providers[?inventories.CUSTOM_PCI_10DE_2331].{name: name,
      free: inventories.CUSTOM_PCI_10DE_2331.total}
  register: gpus
"""

RETURN = r"""
fleet:
  description: The fleet snapshot.
  returned: success
  type: dict
  contains:
    resource_providers:
      description: >-
        Providers, roots first, each with uuid, name, parent_provider_uuid, root_provider_uuid,
        inventories, usages, traits and aggregates.
      type: list
      elements: dict
    resource_classes:
      description: Every custom resource class that exists in Placement, whether a provider has it or not.
      type: list
      elements: str
    traits:
      description: Every custom trait that exists in Placement, whether a provider has it or not.
      type: list
      elements: str
    quarantines:
      description:
        - The quarantines held on the snapshot's providers, by the UUID of each provider's first quarantine
          consumer; each is Placement's C(GET /allocations/<consumer>) answer for it (C(allocations), C(project_id),
          C(user_id) the reason, C(consumer_generation), C(consumer_type)) plus C(last_modified), when Placement
          last wrote it (ISO 8601 UTC, null when Placement does not say), and C(consumers), every consumer of the
          quarantine on that provider; C(allocations) adds up the units all of them hold there (one consumer
          holds at most the inventory's C(max_unit)).
        - The snapshot's optional key of the same name, which the audit reads.
      returned: when O(quarantines=true)
      type: dict
      sample:
        7c1d2f0a-4a5e-5b3c-9d1e-0f2a3b4c5d6e:
          allocations:
            0b0a6a2e-86c5-4a37-9a64-5ff1a2c0b4f2: {generation: 3, resources: {CUSTOM_PCI_10DE_2331: 1}}
          project_id: accel-openstack-quarantine
          user_id: "Xid 79: GPU has fallen off the bus"
          consumer_generation: 1
          consumer_type: QUARANTINE
          last_modified: "2026-12-01T17:51:31Z"
          consumers: [7c1d2f0a-4a5e-5b3c-9d1e-0f2a3b4c5d6e]
    allocations:
      description:
        - Every consumer that holds resources on the snapshot's providers, by consumer UUID, in the shape of
          Placement's C(GET /allocations/<consumer>) (C(allocations) by provider UUID, each with C(resources)).
      returned: when O(allocations=true)
      type: dict
      sample:
        3f2a9c1e-7b4d-4e8a-9c0f-1d2e3f4a5b6c:
          allocations:
            8c0c2b5e-2f0e-4a39-9d5c-6d2b0c3f3b1a: {resources: {VCPU: 4, MEMORY_MB: 8192}}
            0b0a6a2e-86c5-4a37-9a64-5ff1a2c0b4f2: {resources: {CUSTOM_NVIDIA_T4: 1}}
  sample:
    resource_providers:
      - uuid: 8c0c2b5e-2f0e-4a39-9d5c-6d2b0c3f3b1a
        name: gpu-node-1
        parent_provider_uuid: null
        root_provider_uuid: 8c0c2b5e-2f0e-4a39-9d5c-6d2b0c3f3b1a
        inventories:
          VCPU: {total: 64, reserved: 0, min_unit: 1, max_unit: 64, step_size: 1, allocation_ratio: 4.0}
        usages: {VCPU: 8}
        traits: [COMPUTE_NODE]
        aggregates: []
    resource_classes: [CUSTOM_NVIDIA_H100, CUSTOM_VGPU_A16_4Q]
    traits: [CUSTOM_GPU_HOST, CUSTOM_GPU_NVLINK]
query_result:
  description: The value of O(query) applied to the snapshot.
  returned: when query is given
  type: raw
api_calls:
  description: Placement requests made, per HTTP method.
  returned: always
  type: dict
  sample: {GET: 7}
"""

import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._placement.allocations import read_allocations
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import fleet_snapshot
from ansible_collections.accel.openstack.plugins.module_utils._placement.module import PlacementModule
from ansible_collections.accel.openstack.plugins.module_utils._placement.quarantine import read_quarantines

try:
    import jmespath

    JMESPATH_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - depends on the controller
    jmespath = None
    JMESPATH_IMPORT_ERROR = traceback.format_exc()


class PlacementInfoModule(PlacementModule):
    argument_spec = {
        "name": {"type": "list", "elements": "str"},
        "tree": {"type": "str"},
        "usages": {"type": "bool", "default": True},
        "details": {"type": "bool", "default": True},
        "quarantines": {"type": "bool", "default": False},
        "allocations": {"type": "bool", "default": False},
        "query": {"type": "str"},
    }
    module_kwargs = {"mutually_exclusive": [("name", "tree")]}

    def run(self) -> dict:
        query = None
        if self.params["query"]:
            if jmespath is None:
                self.ansible.fail_json(msg=missing_required_lib("jmespath"), exception=JMESPATH_IMPORT_ERROR)
            try:
                query = jmespath.compile(self.params["query"])
            except jmespath.exceptions.JMESPathError as exc:
                raise AccelError(
                    f"query {self.params['query']!r} is not valid JMESPath ({exc}); fix the expression"
                ) from exc
        for option in ("quarantines", "allocations"):
            if self.params[option] and not (self.params["usages"] and self.params["details"]):
                raise AccelError(
                    f"{option}: true reads the {option} on the providers that have usage; leave usages and "
                    "details at true (their default)"
                )
        fleet = fleet_snapshot(
            self.placement, self.params["name"], self.params["tree"], self.params["usages"], self.params["details"]
        )
        if self.params["quarantines"]:
            fleet["quarantines"] = read_quarantines(self.placement, fleet)
        if self.params["allocations"]:
            fleet["allocations"] = read_allocations(self.placement, fleet)
        result = {"changed": False, "fleet": fleet}
        if query is not None:
            result["query_result"] = query.search(fleet)
        return result


def main() -> None:
    PlacementInfoModule()()


if __name__ == "__main__":
    main()
