#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: cyborg_arq_info
short_description: Report Cyborg's accelerator requests and classify the leaked ones; never deletes
description:
  - Lists every accelerator request (ARQ) Cyborg holds with its state, device profile, instance, host,
    project and age, and classifies each one.
  - V(orphaned) - bound to an instance that does not exist (the live instances are O(instances), or the
    servers of all projects read from the cloud's compute API when O(instances) is not given).
  - V(stale) - in C(Initial) or C(BindFailed) for longer than O(stale_after), counted from its last update.
  - V(no_project) - no C(project_id), so no project's quota or cleanup reaches it.
  - V(ok) - none of these. The classification is the first that applies, in that order; C(problems)
    lists all.
  - Each orphan carries the exact C(openstack accelerator arq delete) command a person runs after checking
    that the instance is really gone. The module changes nothing, in Cyborg or anywhere else.
  - RV(findings) holds the same as audit findings (area C(cyborg)).
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  instances:
    description:
      - UUIDs of the instances that exist. When not given, the servers of all projects are read through the
        cloud's compute API (the credentials must be allowed to list all projects' servers, or every bound
        ARQ looks orphaned; a warning says so when no server is found at all).
    type: list
    elements: str
  stale_after:
    description: How long an ARQ may stay C(Initial) or C(BindFailed); seconds, or a number with C(s), C(m), C(h), C(d) or C(w).
    type: str
    default: 1h
  with_arqs:
    description:
      - Read and classify the ARQs. V(false) skips them (and the servers), for a caller that wants only
        O(with_inventory).
    type: bool
    default: true
  with_inventory:
    description:
      - Also return Cyborg's device profiles, devices and deployables (RV(device_profiles), RV(devices),
        RV(deployables)), which the validate stage needs to walk a flavor's device profile chain.
    type: bool
    default: false
extends_documentation_fragment:
  - accel.openstack.openstack
attributes:
  check_mode:
    support: full
    description: The module only reads.
  diff_mode:
    support: none
    description: The module changes nothing, so there is no difference to show.
notes:
  - Talks to Cyborg's v2 API (C(/v2/accelerator_requests)) with microversion 2.0.
  - Cyborg 17 deletes a bound ARQ only for a request that carries a service token; the finding's fix says so.
"""

EXAMPLES = r"""
- name: Report the ARQs, checked against the servers of all projects
  accel.openstack.cyborg_arq_info:
    cloud: mycloud-admin
    stale_after: 24h
  register: arqs

- name: Show the orphans and the command for each
  ansible.builtin.debug:
    msg: "{{ arqs.arqs | selectattr('classification', 'equalto', 'orphaned') | map(attribute='command') }}"
"""

RETURN = r"""
arqs:
  description: Every ARQ, orphans first, then stale, no project, ok.
  returned: success
  type: list
  elements: dict
  sample:
    - uuid: 6c7c1f7e-8d7e-4b4b-9a3c-2f2d6c1e5a10
      state: Bound
      device_profile_name: gpu-h100
      device_profile_group_id: 0
      instance_uuid: 0a3f5b1c-2d4e-4f60-8a9b-0c1d2e3f4a5b
      hostname: gpu-host-1
      device_rp_uuid: 9d3c7b1a-0e2f-4a5b-8c6d-7e8f9a0b1c2d
      project_id: 0d4c0d6a8e4b4f0c9a1d7b1e2f3a4b5c
      created_at: "2026-01-02T03:04:05+00:00"
      age_seconds: 86400
      classification: orphaned
      problems: [orphaned]
      reasons: ["bound to instance 0a3f5b1c-2d4e-4f60-8a9b-0c1d2e3f4a5b, which does not exist"]
      command: openstack accelerator arq delete 6c7c1f7e-8d7e-4b4b-9a3c-2f2d6c1e5a10
summary:
  description: How many ARQs fall in each class.
  returned: success
  type: dict
  sample: {orphaned: 1, stale: 0, no_project: 0, ok: 4}
findings:
  description: The ARQs that are not ok as audit findings C({host, area, code, severity, message, fix}).
  returned: success
  type: list
  elements: dict
device_profiles:
  description: Cyborg's device profiles (with O(with_inventory)).
  returned: when O(with_inventory) is true
  type: list
  elements: dict
devices:
  description: Cyborg's devices (with O(with_inventory)).
  returned: when O(with_inventory) is true
  type: list
  elements: dict
deployables:
  description: Cyborg's deployables, each with its C(rp_uuid) and C(attributes_list) (with O(with_inventory)).
  returned: when O(with_inventory) is true
  type: list
  elements: dict
"""

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.arqs import arq_findings, arq_report
from ansible_collections.accel.openstack.plugins.module_utils._cyborg.client import CyborgClient, CyborgError
from ansible_collections.accel.openstack.plugins.module_utils._nova.server_api import ServerListError, server_ids
from ansible_collections.accel.openstack.plugins.module_utils._placement.openstack import OpenStackModule


class CyborgArqInfoModule(OpenStackModule):
    argument_spec = {
        "instances": {"type": "list", "elements": "str"},
        "stale_after": {"type": "str", "default": "1h"},
        "with_arqs": {"type": "bool", "default": True},
        "with_inventory": {"type": "bool", "default": False},
    }

    def _servers(self) -> list[str]:
        try:
            return server_ids(self.connection.compute, purpose="find orphaned ARQs")
        except ServerListError as exc:
            raise CyborgError(str(exc)) from exc

    def run(self) -> dict:
        p = self.params
        client = CyborgClient(self.connection.accelerator)
        if p["with_arqs"]:
            instances = p["instances"] if p["instances"] is not None else self._servers()
            report = arq_report(client.arqs(), instances, p["stale_after"])
        else:
            report = arq_report([], [], p["stale_after"])
        for warning in report.pop("warnings"):
            self.ansible.warn(warning)
        result = {"changed": False, **report, "findings": arq_findings(report)}
        if p["with_inventory"]:
            result.update(device_profiles=client.profiles(), devices=client.devices(), deployables=client.deployables())
        return result


def main() -> None:
    CyborgArqInfoModule()()


if __name__ == "__main__":
    main()
