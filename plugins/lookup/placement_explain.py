# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: placement_explain
author: accel.openstack contributors (@accel-openstack)
short_description: Say why a Placement query has no allocation candidates on a host
description:
  - Runs the same solver as P(accel.openstack.allocation_candidates#lookup) on a fleet snapshot and,
    for each root provider asked about, says whether a candidate uses its tree and, if not, the first
    constraint that fails, with numbers (for example C(group '1' needs VGPU:2; gpu0 has 1 free of 4)).
  - Also lists the traits and resource classes of the query that no provider has, with the closest
    existing names (a flavor asking C(CUSTOM_GPU_T4) where hosts report C(CUSTOM_NVIDIA_T4)).
options:
  _terms:
    description: One or more queries, each a query string without C(?) or a dict of its parameters.
    required: true
    type: list
    elements: raw
  fleet:
    description: The fleet snapshot, as M(accel.openstack.placement_info) returns it in
      RV(accel.openstack.placement_info#module:fleet).
    required: true
    type: dict
  roots:
    description:
      - Root providers (uuids or names) to explain. By default every root is explained when the query
        has no candidate at all, and none otherwise.
    type: list
    elements: str
extends_documentation_fragment:
  - accel.openstack.placement_settings
"""

EXAMPLES = r"""
- name: Why does the vGPU flavor not fit on compute07?
  ansible.builtin.debug:
    msg: "{{ query('accel.openstack.placement_explain', 'resources=VCPU:4&resources1=VGPU:2',
                   fleet=fleet, roots=['compute07'])[0].roots[0].reason }}"
"""

RETURN = r"""
_raw:
  description: One element per query.
  type: list
  elements: dict
  contains:
    candidates:
      description: How many allocation candidates the query has.
      type: int
    unknown:
      description:
        - Traits and resource classes of the query that no provider has, each with C(kind), C(name)
          and C(did_you_mean).
      type: list
      elements: dict
    roots:
      description: One entry per explained root provider with C(uuid), C(name), C(fits) and C(reason).
      type: list
      elements: dict
    placement:
      description:
        - What Placement at O(placement_config) does with the query, as the P(accel.openstack.flavor_fit#lookup)
          lookup's RV(accel.openstack.flavor_fit#lookup:_raw[].placement) entries say it.
      type: dict
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.accel.openstack.plugins.plugin_utils import fleet_lookup
from ansible_collections.accel.openstack.plugins.plugin_utils.explain import explain


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        def answer(fleet, request, config):
            # options are set before the first answer
            return explain(fleet, request, self.get_option("roots"), config=config)

        return fleet_lookup.run(self, terms, variables, kwargs, answer)
