#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: nova_flavor_info
short_description: Read Nova's flavors with their extra specs
description:
  - Returns the cloud's flavors, each with openstack.cloud.compute_flavor's keys C(name), C(vcpus),
    C(ram) (MB), C(disk) (GB), C(ephemeral) (GB), C(swap) (MB, 0 when Nova answers an empty string)
    and C(extra_specs), the input of P(accel.openstack.validate_flavors#filter) and
    P(accel.openstack.flavor_fit#lookup).
  - Uses openstacksdk and the collection's connection options, so the validate stage needs no other
    collection.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  names:
    description:
      - Flavor names to read, in this order; a name the cloud does not have fails the task with the names it
        has. Leave out to read every flavor, sorted by name.
    type: list
    elements: str
extends_documentation_fragment:
  - accel.openstack.openstack
  - accel.openstack.read_only
requirements:
  - openstacksdk (on the host that runs the module)
"""

EXAMPLES = r"""
- name: Read the cloud's flavors
  accel.openstack.nova_flavor_info:
    cloud: kolla-admin
  register: cloud

- name: Validate them against Placement's fleet
  ansible.builtin.set_fact:
    report: "{{ cloud.flavors | accel.openstack.validate_flavors(fleet) }}"
"""

RETURN = r"""
flavors:
  description: The flavors, sorted by name (or in the order of O(names)).
  returned: success
  type: list
  elements: dict
  sample:
    - id: 6d2b0c3f-2f0e-4a39-9d5c-8c0c2b5e3b1a
      name: g1.h100
      vcpus: 16
      ram: 65536
      disk: 80
      ephemeral: 0
      swap: 0
      extra_specs: {"pci_passthrough:alias": "h100:1"}
      is_public: true
      is_disabled: false
      description: null
"""

from ansible_collections.accel.openstack.plugins.module_utils._nova.flavor_api import read_flavors
from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import OpenStackModule


class NovaFlavorInfoModule(OpenStackModule):
    argument_spec = {"names": {"type": "list", "elements": "str"}}

    def doing(self) -> str:
        names = self.params["names"]
        if names:
            return f" while reading the flavor{'s' if len(names) > 1 else ''} {', '.join(map(repr, names))}"
        return " while reading every flavor of the cloud"

    def run(self) -> dict:
        return {"changed": False, "flavors": read_flavors(self.connection.compute, self.params["names"])}


def main() -> None:
    NovaFlavorInfoModule()()


if __name__ == "__main__":
    main()
