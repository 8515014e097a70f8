# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: allocation_candidates
author: accel.openstack contributors (@accel-openstack)
short_description: Answer GET /allocation_candidates offline, exactly as Placement 1.39 does
description:
  - Computes the allocation candidates for a Placement query from a fleet snapshot, without contacting
    Placement, with the semantics of Placement 1.39 (openstack-placement 16.0.0).
  - Supports unsuffixed C(resources) spread over one provider tree and sharing providers
    (C(MISC_SHARES_VIA_AGGREGATE)), C(required) with C(!) and C(in:), C(member_of) with C(in:),
    C(!) and C(!in:) (repeatable), C(in_tree), numbered and named groups (C(resources1),
    C(resources_NIC)), C(group_policy), C(same_subtree), C(root_required) and C(limit).
  - Returns a one-element list whose element is what Placement returns, C(allocation_requests)
    (with C(allocations) and C(mappings)) and C(provider_summaries) (with C(resources), C(traits),
    C(parent_provider_uuid) and C(root_provider_uuid)). The order of candidates is stable; with
    C(limit) the first ones are kept (Placement keeps an arbitrary subset of that size).
  - A query that Placement answers with 400 Bad Request fails with Placement's message; unknown trait
    and resource class names get the closest existing names as a hint.
  - Use P(accel.openstack.placement_explain#lookup) to learn why a request has no candidates.
  - With O(placement_config), the answer is that of a Placement configured so (see that option).
options:
  _terms:
    description:
      - One or more queries, each a query string without the leading C(?) or a dict of its parameters
        (a list value repeats the parameter).
    required: true
    type: list
    elements: raw
  fleet:
    description:
      - The fleet snapshot, as M(accel.openstack.placement_info) returns it in
        RV(accel.openstack.placement_info#module:fleet)
        (C(resource_providers) with inventories, usages, traits and aggregates).
      - Optional top-level C(traits) and C(resource_classes) lists name custom names Placement knows
        although no provider uses them.
    required: true
    type: dict
extends_documentation_fragment:
  - accel.openstack.placement_settings
"""

EXAMPLES = r"""
- name: Where does a flavor with one vGPU fit?
  ansible.builtin.debug:
    msg: "{{ query('accel.openstack.allocation_candidates',
                   'resources=VCPU:4,MEMORY_MB:8192&resources1=VGPU:1&required1=CUSTOM_NVIDIA_A100',
                   fleet=fleet) }}"

- name: The same as a dict, with two isolated GPU groups on hosts that are not disabled
  ansible.builtin.set_fact:
    gpu_hosts: >-
      {{ query('accel.openstack.allocation_candidates',
               {'resources': 'VCPU:8', 'resources_A': 'VGPU:1', 'resources_B': 'VGPU:1',
                'group_policy': 'isolate', 'root_required': '!COMPUTE_STATUS_DISABLED'},
               fleet=fleet)[0].provider_summaries | dict2items
         | selectattr('value.parent_provider_uuid', 'none') | map(attribute='key') | list }}
"""

RETURN = r"""
_raw:
  description:
    - One element per query, each what Placement 1.39 returns for C(GET /allocation_candidates).
  type: list
  elements: dict
  contains:
    allocation_requests:
      description:
        - Candidates; C(allocations) maps provider uuid to C(resources), C(mappings) maps group suffix
          to provider uuids.
      type: list
      elements: dict
    provider_summaries:
      description:
        - Every provider of each tree used by a candidate, by uuid, with C(resources) (C(capacity),
          C(used)), C(traits), C(parent_provider_uuid) and C(root_provider_uuid).
      type: dict
    unclaimable:
      description:
        - Only with C(optimize_for_wide_provider_trees) true in O(placement_config), the positions in
          RV(_raw[].allocation_requests) of candidates Placement returns although their summed amounts exceed a
          provider's free capacity (Nova's claim of such a candidate fails, and Nova tries the next).
      type: list
      elements: int
      returned: when C(optimize_for_wide_provider_trees) is true in O(placement_config)
    determined:
      description:
        - Only with a bound or the workaround in O(placement_config), whether the answer is a function of the
          fleet. False where the roots Placement visits first follow its process's hash seed (an unsuffixed
          group first on a fleet with nested or sharing providers), or where C(limit) keeps part of more
          candidates (Placement keeps the first of a set); the number of candidates is Placement's either way.
      type: bool
      returned: when O(placement_config) sets a bound or the workaround
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.accel.openstack.plugins.plugin_utils import fleet_lookup
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        def answer(fleet, request, config):
            return allocation_candidates(fleet, request, config=config)

        return fleet_lookup.run(self, terms, variables, kwargs, answer)
