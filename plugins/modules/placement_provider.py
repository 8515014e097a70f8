#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: placement_provider
short_description: Converge Placement resource providers (inventories, traits, aggregates) without fighting Nova
description:
  - Creates, updates or deletes one resource provider (O(name) / O(uuid)) or many (O(providers)).
  - Inventories, traits and aggregates are each converged with their own mode (O(inventories_mode),
    O(traits_mode), O(aggregates_mode)). V(merge), the default, adds what is missing and keeps what
    others set (such as Nova's C(COMPUTE_*) traits, C(OWNER_NOVA) and the compute node's C(VCPU)
    inventory); V(replace) makes the set exactly the declared one.
  - Custom traits and resource classes a declaration uses are created when Placement does not know them.
  - Every declaration is read and checked before anything is written. An inventory change that would
    leave less capacity than is allocated, or deleting a provider that has allocations or children, fails
    the whole task with the numbers and changes nothing.
  - A write that loses a race with another writer (HTTP 409 generation conflict) is retried with a fresh
    read, up to O(max_retries) times, so concurrent runs end with the union of their declarations.
  - With many providers (10 or more) the provider list is read once and traits and aggregates are
    checked with one filtered list per distinct declared set, so an unchanged provider costs one read.
  - Ownership. nova-compute owns the providers of its compute-node trees (the root named after the
    hypervisor hostname with trait C(COMPUTE_NODE), its PCI and vGPU children with C(OWNER_NOVA)).
    Unless O(simulate_compute=true), the task refuses, before any write, to create a provider in such
    a tree or a root that looks like a compute node (trait C(COMPUTE_NODE), or C(VCPU), C(PCPU),
    C(MEMORY_MB) or C(DISK_GB) inventory without C(MISC_SHARES_VIA_AGGREGATE)), and to rename,
    re-parent, delete or change the inventories of a Nova provider, remove its traits or aggregates,
    add standard traits to it, or add traits to a PCI provider (Nova replaces those with its
    C([pci] device_spec) tags at every update). Adding custom traits to a compute node root or a vGPU
    provider, where Nova keeps them, and adding aggregates are allowed. A declaration that matches
    what Nova reported writes nothing and is never refused.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  name:
    description: Name of the provider. With O(uuid) too, the provider with that uuid is renamed.
    type: str
  uuid:
    description: UUID of the provider; a new provider gets it.
    type: str
  parent:
    description: Name or uuid of the parent provider (it must exist or be declared earlier in O(providers)).
    type: str
  inventories:
    description:
      - Resource class to inventory record. A record has C(total) and optionally C(reserved),
        C(min_unit), C(max_unit), C(step_size), C(allocation_ratio); a bare integer means C(total).
      - Fields left out keep their current value with O(inventories_mode=merge) and take Placement's defaults
        (reserved 0, min_unit 1, max_unit total, step_size 1, allocation_ratio 1.0) otherwise.
      - Leave it out to not manage inventories at all.
    type: dict
  inventories_mode:
    description: V(merge) keeps classes that are not declared; V(replace) removes them.
    type: str
    choices: [merge, replace]
    default: merge
  traits:
    description: Trait names (custom C(CUSTOM_...) or standard). Leave it out to not manage traits.
    type: list
    elements: str
  traits_mode:
    description: V(merge) keeps traits others set; V(replace) makes the set exactly O(traits).
    type: str
    choices: [merge, replace]
    default: merge
  aggregates:
    description: Aggregate UUIDs. Leave it out to not manage aggregates.
    type: list
    elements: str
  aggregates_mode:
    description: V(merge) keeps aggregates others set; V(replace) makes the set exactly O(aggregates).
    type: str
    choices: [merge, replace]
    default: merge
  state:
    description: V(absent) deletes the provider (refused while it has allocations or child providers).
    type: str
    choices: [present, absent]
    default: present
  providers:
    description:
      - Many providers in one call, each a dict with the keys above (O(name), O(uuid), O(parent),
        O(inventories), O(inventories_mode), O(traits), O(traits_mode), O(aggregates),
        O(aggregates_mode), O(state)). Parents are written before their children and deleted after them.
      - C(parent_name) is accepted for O(parent), so the list P(accel.openstack.nova_providers#filter) predicts
        can be passed as it is.
      - Mutually exclusive with O(name) and O(uuid).
    type: list
    elements: dict
  max_retries:
    description: How many times a provider is re-read and rewritten after a generation conflict.
    type: int
    default: 5
  simulate_compute:
    description:
      - V(false) (a real cloud) refuses every write that would play nova-compute (see the ownership
        rule above); it costs one filtered provider list per task.
      - V(true) lets the task create and rewrite compute node providers and their children, for a
        Placement where no nova-compute runs (the demo, tests). Never set it against a cloud whose
        nova-compute reports to the same Placement.
    type: bool
    default: false
extends_documentation_fragment:
  - accel.openstack.openstack
attributes:
  check_mode:
    support: full
    description: Reads and reports what would change; writes nothing.
  diff_mode:
    support: full
    description: Before and after state of every provider that changes.
"""

EXAMPLES = r"""
- name: Add a GPU provider under the compute node, playing nova-compute on a Placement without it
  accel.openstack.placement_provider:
    auth_type: admin_token
    auth: {endpoint: "http://127.0.0.1:8778", token: "admin"}
    simulate_compute: true
    name: gpu-node-1_0000:41:00.0
    parent: gpu-node-1
    inventories:
      CUSTOM_PCI_10DE_1EB8: {total: 1, max_unit: 1}
    traits: [CUSTOM_NVIDIA_T4, COMPUTE_MANAGED_PCI_DEVICE]

- name: Tag a compute node without touching the traits Nova set
  accel.openstack.placement_provider:
    cloud: mycloud
    name: gpu-node-1
    traits: [CUSTOM_GPU_HOST]

- name: Register a whole simulated tree in one call (no nova-compute runs against this Placement)
  accel.openstack.placement_provider:
    cloud: lab
    simulate_compute: true
    providers:
      - name: gpu-node-2
        inventories: {VCPU: 64, MEMORY_MB: 515072, DISK_GB: 1800}
      - name: gpu-node-2_0000:41:00.0
        parent: gpu-node-2
        inventories: {CUSTOM_PCI_10DE_2331: 1}
        traits: [CUSTOM_NVIDIA_H100]

- name: Remove a simulated provider (refused while it has allocations)
  accel.openstack.placement_provider:
    cloud: lab
    simulate_compute: true
    name: retired-node_0000:41:00.0
    state: absent
"""

RETURN = r"""
providers:
  description: One entry per declared provider, in declaration order.
  returned: success
  type: list
  elements: dict
  sample:
    - name: gpu-node-1_0000:41:00.0
      uuid: 5b7c1c38-7a53-4f4b-9a5e-3d1b2f9f0a11
      state: present
      changed: true
      actions: [create, set inventories, set traits]
api_calls:
  description: Placement requests made, per HTTP method.
  returned: always
  type: dict
  sample: {GET: 2, POST: 1, PUT: 2}
"""

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._placement.module import PlacementModule
from ansible_collections.accel.openstack.plugins.module_utils._placement.provider import (
    MODES,
    ProviderSpec,
    converge,
)

SPEC_KEYS = (
    "name",
    "uuid",
    "parent",
    "inventories",
    "inventories_mode",
    "traits",
    "traits_mode",
    "aggregates",
    "aggregates_mode",
    "state",
)


MAX_RETRIES_ALLOWED = 100


class PlacementProviderModule(PlacementModule):
    argument_spec = {
        "name": {"type": "str"},
        "uuid": {"type": "str"},
        "parent": {"type": "str"},
        "inventories": {"type": "dict"},
        "inventories_mode": {"type": "str", "choices": list(MODES), "default": "merge"},
        "traits": {"type": "list", "elements": "str"},
        "traits_mode": {"type": "str", "choices": list(MODES), "default": "merge"},
        "aggregates": {"type": "list", "elements": "str"},
        "aggregates_mode": {"type": "str", "choices": list(MODES), "default": "merge"},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "providers": {"type": "list", "elements": "dict"},
        "max_retries": {"type": "int", "default": 5},
        "simulate_compute": {"type": "bool", "default": False},
    }
    module_kwargs = {
        "mutually_exclusive": [("providers", "name"), ("providers", "uuid")],
        "required_one_of": [("providers", "name", "uuid")],
    }

    def run(self) -> dict:
        if not 0 <= self.params["max_retries"] <= MAX_RETRIES_ALLOWED:
            raise AccelError(
                f"max_retries is {self.params['max_retries']}; give 0 to {MAX_RETRIES_ALLOWED} (0 converges once "
                "and fails on a concurrent change)"
            )
        if self.params["providers"] is not None:
            specs = [
                ProviderSpec.from_dict(entry, f"providers[{index}]")
                for index, entry in enumerate(self.params["providers"])
            ]
        else:
            specs = [ProviderSpec.from_dict({key: self.params[key] for key in SPEC_KEYS})]
        return converge(
            self.placement,
            specs,
            self.check_mode,
            self.params["max_retries"],
            simulate_compute=self.params["simulate_compute"],
        )


def main() -> None:
    PlacementProviderModule()()


if __name__ == "__main__":
    main()
