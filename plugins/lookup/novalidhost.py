# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: novalidhost
author: accel.openstack contributors (@accel-openstack)
short_description: Why a boot ended in NoValidHost, from Nova's logs and a replay on the fleet
description:
  - Reads the lines of one scheduling request from Nova 34's scheduler and conductor logs (Kolla's
    C(/var/log/kolla/nova/nova-scheduler.log) and C(nova-conductor.log), or C(journalctl -u) output saved to a
    file, C(short) or C(short-iso)), found by request id or by instance UUID, and says what Placement answered,
    which filters ran, where the hosts went to zero, and whether the conductor logged NoValidHost or
    MaxRetriesExceeded.
  - With O(flavor) and O(fleet) (or O(fleet_file)), replays the flavor on the fleet as it is now, as
    P(accel.openstack.flavor_fit#lookup) does, and names per host the constraint that fails there (a resource
    class exhausted, a trait missing or forbidden, a disabled compute service, a NUMA layout, a PCI pool, an
    aggregate) with the fix, and says when the replay and the log disagree (capacity freed or consumed since).
  - Nova's logs do not carry the flavor; without O(flavor) the answer is the log's evidence alone.
  - Each log is read up to 64 MiB and 1000000 lines; a line over 65536 characters is skipped and counted.
  - Runs on the controller; the log files must be there (fetch them first).
options:
  _terms:
    description: Request ids (C(req-) and a UUID) or instance UUIDs, one answer each.
    required: true
    type: list
    elements: str
  logs:
    description: Paths of the log files to read (scheduler and conductor), on the controller.
    required: true
    type: list
    elements: path
  flavor:
    description: The flavor of the failed boot, with openstack.cloud.compute_flavor's keys C(name), C(vcpus),
      C(ram), C(disk) and C(extra_specs) (C(openstack flavor show) gives them).
    type: dict
  fleet:
    description: The fleet snapshot, as M(accel.openstack.placement_info) returns it in
      RV(accel.openstack.placement_info#module:fleet). Mutually exclusive with O(fleet_file).
    type: dict
  fleet_file:
    description: A fleet snapshot saved as a JSON file (placement_info's C(fleet) through C(to_json)).
      Mutually exclusive with O(fleet).
    type: path
  pci_aliases:
    description: The C([pci] alias) entries, each a dict or the JSON string nova.conf holds.
    type: list
    elements: raw
    default: []
  pci_in_placement:
    description: C([filter_scheduler] pci_in_placement).
    type: bool
    default: false
  image_properties:
    description: Properties of the image booted (C(trait:*), C(hw_*)).
    type: dict
  aggregates_metadata:
    description: Host aggregates, each C({name, hosts, metadata}), for AggregateInstanceExtraSpecsFilter.
    type: list
    elements: dict
  enabled_filters:
    description: C([filter_scheduler] enabled_filters) among the filters the collection models.
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Why did the instance not boot?
  ansible.builtin.debug:
    msg: "{{ lookup('accel.openstack.novalidhost', '9a7b3c1e-5d2f-4e8a-9b6c-0d1e2f3a4b5c',
                    logs=['/tmp/nova-scheduler.log', '/tmp/nova-conductor.log'],
                    flavor=gpu_flavor, fleet=placement.fleet).summary }}"

- name: The same from a request id and a saved snapshot
  ansible.builtin.set_fact:
    why: "{{ lookup('accel.openstack.novalidhost', 'req-0b8c0b45-3f4e-4c55-9a57-6a3fe04f2a0e',
                    logs=['/tmp/nova-scheduler.log'], flavor=gpu_flavor, fleet_file='/tmp/fleet.json') }}"
"""

RETURN = r"""
_raw:
  description: One answer per term.
  type: list
  elements: dict
  contains:
    request:
      description: The request id of the scheduling request.
      type: str
    instances:
      description: The instance UUIDs the request's lines name.
      type: list
      elements: str
    failure:
      description: V(NoValidHost), V(MaxRetriesExceeded), or null when the lines show no failure.
      type: str
    log:
      description:
        - What the log says. C(placement) is V(no_candidates) or V(candidates); C(hosts_from_placement) the hosts
          the filters started with; C(filters) each filter's C(name), C(start) and C(end) host counts;
          C(zeroed_by) the filter that removed the last hosts; C(removed_last) those hosts (DEBUG only);
          C(host_reasons) what each filter said about a host (DEBUG only); C(queries) the allocation candidates
          queries Nova sent (only where keystoneauth logs at DEBUG); C(pcpu_fallback) whether Nova asked
          again with VCPU for PCPU; C(debug) whether DEBUG lines were found.
      type: dict
    flavor:
      description: The replayed flavor's name; null without O(flavor).
      type: str
    replay:
      description: C(outcome) (as P(accel.openstack.flavor_fit#lookup)), C(placement_hosts), C(hosts_after_filters),
        C(reason) and C(queries) (what the flavor translates to); null without O(flavor) and a fleet.
      type: dict
    constraints:
      description: Per host (C(host), null for the whole fleet), the C(kind) of constraint that fails (V(resource),
        V(trait), V(forbidden_trait), V(compute_disabled), V(limit), or a filter name), its C(detail) and the C(fix).
      type: list
      elements: dict
    agrees:
      description: Whether the replay tells the same story as the log (and, where the log holds Nova's queries,
        whether the flavor given translates to them); null without a replay.
      type: bool
    disagreement:
      description: How the replay and the log differ, or null.
      type: str
    summary:
      description: One paragraph for people.
      type: str
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import FitOptionError
from ansible_collections.accel.openstack.plugins.plugin_utils.forensics import (
    ForensicsError,
    novalidhost,
    read_fleet_file,
    read_logs,
)

_REPLAY_OPTIONS = ("pci_aliases", "pci_in_placement", "image_properties", "aggregates_metadata", "enabled_filters")


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        fleet, fleet_file = self.get_option("fleet"), self.get_option("fleet_file")
        try:
            if fleet is not None and fleet_file is not None:
                raise ForensicsError("give fleet or fleet_file, not both")
            if fleet_file is not None:
                fleet = read_fleet_file(fleet_file)
            texts = read_logs(self.get_option("logs"))
            options = {name: self.get_option(name) for name in _REPLAY_OPTIONS}
            return [novalidhost(term, texts, self.get_option("flavor"), fleet, **options) for term in terms]
        except (ForensicsError, FitOptionError) as exc:
            raise AnsibleLookupError(str(exc)) from exc
