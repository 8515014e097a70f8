#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: nova_server_info
short_description: Read the UUIDs of the servers of all projects
description:
  - Returns the UUIDs of every project's servers, read through the compute API (one paginated list without
    details), so that a report can tell a live instance from a leftover. The audit gives them to
    P(accel.openstack.audit_cloud#filter) as C(instances); a Placement consumer that holds resources and is
    none of them is reported as C(allocation_leaked).
  - The credentials must be allowed to list all projects' servers (C(admin)); otherwise every consumer of
    another project would look leaked.
  - Uses openstacksdk and the collection's connection options, as M(accel.openstack.nova_flavor_info) does.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  limit:
    description: The most servers read; a larger cloud fails the task, and the live UUIDs are given to the audit instead.
    type: int
    default: 200000
extends_documentation_fragment:
  - accel.openstack.openstack
  - accel.openstack.read_only
requirements:
  - openstacksdk (on the host that runs the module)
"""

EXAMPLES = r"""
- name: Read the live servers
  accel.openstack.nova_server_info:
    cloud: kolla-admin
  register: servers

- name: Audit the allocations against them
  ansible.builtin.debug:
    msg: "{{ servers.servers | length }} servers"
"""

RETURN = r"""
servers:
  description: The UUIDs of the servers of all projects, in the order the compute API lists them.
  returned: success
  type: list
  elements: str
  sample: [3f2a9c1e-7b4d-4e8a-9c0f-1d2e3f4a5b6c]
"""

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._nova.server_api import MAX_SERVERS, server_ids
from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import OpenStackModule


class NovaServerInfoModule(OpenStackModule):
    argument_spec = {"limit": {"type": "int", "default": MAX_SERVERS}}

    def run(self) -> dict:
        limit = self.params["limit"]
        if limit < 1:
            raise AccelError(f"limit is {limit}; give the most servers to read, at least 1")
        return {"changed": False, "servers": server_ids(self.connection.compute, limit)}


def main() -> None:
    NovaServerInfoModule()()


if __name__ == "__main__":
    main()
