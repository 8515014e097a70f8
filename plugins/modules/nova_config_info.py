#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: nova_config_info
short_description: Read the Nova configuration a cloud runs today, per host and service
description:
  - Reads, never writes, the Nova configuration each service of each host gets, as the audit
    (P(accel.openstack.audit#role)) and the adoption filter
    (P(accel.openstack.device_policy_from_nova#filter)) take it.
  - O(layout=kolla) reads Kolla-Ansible's override files under O(config_dir) and merges them in
    Kolla-Ansible's precedence per service and host (C(global.conf), C(nova.conf),
    C(nova/nova-<service>.conf), C(nova/<host>/nova.conf), and C(nova/<host>/nova-<service>.conf) for
    nova-compute and nova-conductor); a key in a later file replaces the whole list of an earlier one.
    Values that still hold a Jinja expression are returned as written and listed in RV(templated). A
    O(config_dir) that cannot be read is named in RV(config_dir_problem).
  - O(layout=nova_conf_d) reads O(nova_conf) and every C(*.conf) of O(config_dir) in name order, as
    oslo.config reads them (multi-valued options such as C([pci] device_spec) and C([pci] alias)
    accumulate over the files, others take the last value).
  - C([pci] passthrough_whitelist) is joined to C([pci] device_spec), as Nova reads the deprecated name.
  - Each file is read as oslo.config reads it (continuation lines, C(=) or C(:), group names looked up in
    lower case so C([PCI]) is C([pci]) and C([ pci ]) is another group, every value of a repeated key);
    a file oslo.config refuses (an indented section header, a byte-order mark, a key before any section,
    a file that is not UTF-8, an empty key) fails the task with a message naming the file, the line and the fix.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  layout:
    description: Where the configuration lives.
    type: str
    choices: [kolla, nova_conf_d]
    default: kolla
  config_dir:
    description:
      - Kolla-Ansible's override directory (O(layout=kolla), default C(/etc/kolla/config)), or the
        C(nova.conf.d) directory (O(layout=nova_conf_d), default C(/etc/nova/nova.conf.d)).
    type: path
  nova_conf:
    description: The main Nova configuration file read before O(config_dir) with O(layout=nova_conf_d).
    type: path
    default: /etc/nova/nova.conf
  hosts:
    description:
      - The hosts to read for, each with the Nova services it runs. With O(layout=nova_conf_d) give the
        one host the module runs on.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The inventory hostname (a directory name of the kolla layout).
        type: str
        required: true
      services:
        description: The Nova services the host runs.
        type: list
        elements: str
        choices: [compute, api, scheduler, conductor, super-conductor]
        default: [compute]
  compute_hosts:
    description: Hosts that run nova-compute, added to O(hosts).
    type: list
    elements: str
    default: []
  control_hosts:
    description:
      - Hosts that run nova-api, nova-scheduler and nova-conductor (and nova-super-conductor with
        O(super_conductor=true)), added to O(hosts).
    type: list
    elements: str
    default: []
  super_conductor:
    description: Whether the O(control_hosts) also run Kolla-Ansible's nova-super-conductor.
    type: bool
    default: false
  placement:
    description:
      - Also read the settings of Placement that decide its answer (C([placement] max_allocation_candidates),
        C([placement] allocation_candidates_generation_strategy), C([workarounds] optimize_for_wide_provider_trees)),
        from Kolla-Ansible's overrides under O(config_dir) (C(global.conf), C(placement.conf),
        C(placement/placement-api.conf), in that precedence) or from O(placement_conf) with O(layout=nova_conf_d).
      - A value Placement would refuse to start with fails the task and names the file.
      - With no host given, only Placement's settings are read (on a host that runs placement-api).
    type: bool
    default: false
  placement_conf:
    description: Placement's configuration file for O(layout=nova_conf_d).
    type: path
    default: /etc/placement/placement.conf
extends_documentation_fragment:
  - accel.openstack.root
  - accel.openstack.read_only
notes:
  - The root of the host is given by O(root); nothing outside it is read.
  - With O(layout=kolla), O(root) is the root of the deploy host, which holds Kolla-Ansible's override files.
"""

EXAMPLES = r"""
- name: Read what Kolla-Ansible deploys for the compute hosts and the control hosts
  accel.openstack.nova_config_info:
    layout: kolla
    config_dir: /etc/kolla/config
    hosts:
      - {name: gpu-node-1, services: [compute]}
      - {name: control-1, services: [api, scheduler, conductor]}
  delegate_to: localhost
  run_once: true
  register: nova_deployed

- name: Read nova.conf and nova.conf.d on a host that is not deployed by Kolla
  accel.openstack.nova_config_info:
    layout: nova_conf_d
    hosts: [{name: "{{ inventory_hostname }}", services: [compute]}]
  register: nova_deployed
"""

RETURN = r"""
deployed:
  description:
    - Per host, per service, the configuration groups as Nova reads them (values as lists), under the
      names Nova looks them up by (lower case, C(DEFAULT) excepted).
  returned: success
  type: dict
  sample:
    gpu-node-1:
      compute:
        pci:
          device_spec: ['{"vendor_id": "10de", "product_id": "2330"}']
          alias: ['{"name": "h100", "vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI"}']
sources:
  description: Per host and service, the files read, lowest precedence first.
  returned: success
  type: dict
  sample: {gpu-node-1: {compute: [/etc/kolla/config/nova/gpu-node-1/nova.conf]}}
config_dir_problem:
  description:
    - With O(layout=kolla), why O(config_dir) cannot be read (it does not exist, is not a directory, or is not
      readable), else null. Every override file is optional, so a missing directory otherwise reads as a cloud
      with no override; the audit reports it as one finding instead.
  returned: with O(layout=kolla)
  type: str
  sample: /etc/kolla/config does not exist
templated:
  description: C(host/service section.key) of every value that still holds a Jinja expression.
  returned: success
  type: list
  elements: str
placement_config:
  description:
    - Placement's answer-deciding settings as placement-api reads them (its defaults where no file sets them),
      ready for the C(placement_config) option of P(accel.openstack.flavor_fit#lookup).
  returned: with O(placement=true)
  type: dict
  sample:
    max_allocation_candidates: 1000
    allocation_candidates_generation_strategy: breadth-first
    optimize_for_wide_provider_trees: true
placement_sources:
  description: The Placement files read, lowest precedence first.
  returned: with O(placement=true)
  type: list
  elements: str
"""

from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule
from ansible_collections.accel.openstack.plugins.module_utils._nova.deployed import read_configs


class NovaConfigInfoModule(HostModule):
    argument_spec = {
        "layout": {"type": "str", "choices": ["kolla", "nova_conf_d"], "default": "kolla"},
        "config_dir": {"type": "path"},
        "nova_conf": {"type": "path", "default": "/etc/nova/nova.conf"},
        "hosts": {
            "type": "list",
            "elements": "dict",
            "default": [],
            "options": {
                "name": {"type": "str", "required": True},
                "services": {
                    "type": "list",
                    "elements": "str",
                    "choices": ["compute", "api", "scheduler", "conductor", "super-conductor"],
                    "default": ["compute"],
                },
            },
        },
        "compute_hosts": {"type": "list", "elements": "str", "default": []},
        "control_hosts": {"type": "list", "elements": "str", "default": []},
        "super_conductor": {"type": "bool", "default": False},
        "placement": {"type": "bool", "default": False},
        "placement_conf": {"type": "path", "default": "/etc/placement/placement.conf"},
    }

    def run(self) -> dict:
        return {"changed": False, **read_configs(self.host, self.params)}


def main() -> None:
    NovaConfigInfoModule()()


if __name__ == "__main__":
    main()
