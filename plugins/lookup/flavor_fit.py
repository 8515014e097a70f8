# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: flavor_fit
author: accel.openstack contributors (@accel-openstack)
short_description: Where each flavor fits, as Nova and Placement would place it, from a fleet snapshot
description:
  - Translates each flavor as Nova 34 does (resources, traits, CPU policy, PCI aliases, Cyborg device
    profiles, image properties), answers every query Nova sends from the fleet snapshot with Placement
    1.39 semantics, merges the answers as Nova does, then applies the Nova host filters the collection
    models (ComputeFilter, PciPassthroughFilter, NUMATopologyFilter, AggregateInstanceExtraSpecsFilter).
  - Returns one dict per flavor, in order. A bad or unplaceable flavor is reported (C(outcome),
    C(reason)); it never hides the report on the other flavors. Only bad lookup options fail.
options:
  _terms:
    description: Flavors, each a dict with openstack.cloud.compute_flavor's keys C(name), C(vcpus), C(ram)
      (MB), C(disk) (GB), C(ephemeral) (GB), C(swap) (MB) and C(extra_specs).
    required: true
    type: list
    elements: dict
  count_limit:
    description: Stop counting instances per host at this number.
    type: int
    default: 64
extends_documentation_fragment:
  - accel.openstack.nova_scheduling
  - accel.openstack.placement_settings
  - accel.openstack.placement_settings.timeout
"""

EXAMPLES = r"""
- name: Where does the H100 flavor fit, and how many fit per host?
  ansible.builtin.debug:
    msg: "{{ query('accel.openstack.flavor_fit',
                   {'name': 'gpu.h100', 'vcpus': 16, 'ram': 131072, 'disk': 100,
                    'extra_specs': {'pci_passthrough:alias': 'h100:1'}},
                   fleet=fleet, pci_aliases=aliases, pci_in_placement=true) }}"
"""

RETURN = r"""
_raw:
  description: One report per flavor.
  type: list
  elements: dict
  contains:
    name:
      description: The flavor's name.
      type: str
    outcome:
      description: V(fits), V(no_host), V(rejected_by_placement), V(invalid_flavor) or V(scheduler_error).
      type: str
    status:
      description: Placement's HTTP status for Nova's query (200 or 400); null when Nova refuses first.
      type: int
    message:
      description: What Nova or Placement says.
      type: str
    queries:
      description: The query strings Nova sends, in order.
      type: list
      elements: str
    hosts:
      description: Sorted root provider names Placement returns for those queries, merged as Nova does.
      type: list
      elements: str
    max_instances:
      description: Per root of the fleet, how many copies fit one after another (capped at O(count_limit)).
      type: dict
    fleet_max_instances:
      description: The sum of RV(_raw[].max_instances).
      type: int
    why_not:
      description: Per root not in RV(_raw[].hosts), why not.
      type: dict
    reason:
      description: Null when it fits, else C(code), C(detail) and C(did_you_mean).
      type: dict
    after_filters:
      description: "C(hosts) and C(removed) (C({name: reason})) after the modelled Nova filters."
      type: dict
    placement:
      description:
        - One entry per query Placement answers (in RV(_raw[].queries) order), what Placement at
          O(placement_config) does with it. C(roots) (names, in the order Placement visits them) and C(per_root)
          give the hosts its candidates come from before Nova's C(limit); C(roots_determined) is false where that
          order depends on Placement's process (its hash seed) and a cut makes it matter; C(candidates) it
          collects, C(unclaimable) of those (with the workaround); C(truncated) when max_allocation_candidates
          stopped it; C(limited) when Nova's C(limit) keeps a part of them (which part follows Placement's
          process); C(examined) tuples of the plain product (or prefixes of the pruned one) it walks;
          C(collisions) the equality checks its candidate set makes; C(seconds) the predicted time (calibrated on
          the real Placement 16, see the collection's docs/solver.md); C(overload) when above
          O(placement_timeout); C(exact) false where a count could only be bounded.
        - A query with C(overload) makes the flavor's RV(_raw[].outcome) C(no_host) with reason code
          C(placement_overload), whose detail names the settings that fix it; RV(_raw[].max_instances) still
          counts what the hosts hold.
      type: list
      elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import FitOptionError, flavor_fit

_OPTIONS = (
    "pci_aliases",
    "pci_in_placement",
    "device_profiles",
    "image_properties",
    "boot_from_volume",
    "count_limit",
    "max_placement_results",
    "aggregates_metadata",
    "enabled_filters",
    "placement_config",
    "placement_timeout",
)


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        options = {name: self.get_option(name) for name in _OPTIONS}
        try:
            return flavor_fit(list(terms), self.get_option("fleet"), **options)
        except FitOptionError as exc:
            raise AnsibleLookupError(str(exc)) from exc
