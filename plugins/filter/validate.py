# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: validate_requests
short_description: Check declared Placement requests against a fleet snapshot
version_added: 1.0.0
description:
  - For each request (a flavor's or device profile's Placement query) says whether Placement would accept
    it, on which hosts (root providers) it fits, how many instances of it each host takes one after another,
    and for hosts where it does not fit, why not, with did-you-mean suggestions for unknown traits and
    resource classes.
  - Uses the same solver as P(accel.openstack.allocation_candidates#lookup), with Placement 1.39 semantics.
  - The instance count places copies one after another, each on the first candidate of its host; it is the
    capacity a scheduler filling that host would see, not an optimum over placements.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  _input:
    description: List of requests, each a dict with C(name), C(query) (a query string or a dict) and optional
      C(min_hosts) (default 1; the request fails validation when it fits on fewer hosts).
    type: list
    elements: dict
    required: true
  fleet:
    description: The fleet snapshot, as M(accel.openstack.placement_info) returns it in
      RV(accel.openstack.placement_info#module:fleet).
    type: dict
    required: true
  count_limit:
    description: Stop counting instances per host at this number.
    type: int
    default: 64
"""

EXAMPLES = r"""
- name: Check the GPU flavors
  ansible.builtin.set_fact:
    results: "{{ [{'name': 'gpu.h100', 'query': 'resources=VCPU:8,MEMORY_MB:65536,CUSTOM_PCI_10DE_2330:1'}]
                 | accel.openstack.validate_requests(fleet) }}"
"""

RETURN = r"""
_value:
  description: One result per request with C(name), C(query), C(ok), C(error), C(hosts) (host name to instance
    count), C(reasons) (host name to why not), C(unknown) (names no provider has, with C(did_you_mean)).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors
from ansible_collections.accel.openstack.plugins.plugin_utils.validation import (
    ValidationInputError,
    validate_requests,
    validation_report,
)


@filter_errors
def _validate_requests(requests, fleet, count_limit=64):
    requests = list(check("validate_requests", "requests", requests, "list", optional=True) or [])
    fleet = check("validate_requests", "fleet", fleet, "mapping")
    count_limit = check("validate_requests", "count_limit", count_limit, "integer", minimum=1)
    try:
        return validate_requests(fleet, requests, count_limit=count_limit)
    except ValidationInputError as exc:
        raise AnsibleFilterError(str(exc)) from exc


@filter_errors
def _validation_report(results):
    return validation_report(list(check("validation_report", "results", results, "list", optional=True) or []))


class FilterModule:
    def filters(self):
        return {"validate_requests": _validate_requests, "validation_report": _validation_report}
