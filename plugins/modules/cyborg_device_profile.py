#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: cyborg_device_profile
short_description: Create or delete Cyborg device profiles, checked against the fleet
description:
  - Makes a Cyborg device profile exist with the given groups, or removes it.
  - Groups are validated as Cyborg validates them before any call; keys start with C(resources:),
    C(trait:) or C(accel:); traits are custom (C(CUSTOM_...)) and V(required) or V(forbidden);
    resource classes are C(FPGA), C(GPU), C(VGPU), C(PGPU) or custom; amounts are integers.
  - With O(fleet) (a snapshot from M(accel.openstack.placement_info)), every resource class and
    required trait a group asks for must exist on some provider and each group must fit on one
    provider; otherwise the task fails with the nearest names the fleet has (the profile asks
    C(CUSTOM_GPU_T4), the hosts report C(CUSTOM_NVIDIA_T4)), before Nova answers NoValidHost.
  - Cyborg cannot update a profile; a changed profile is deleted and created again (with a warning).
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  name:
    description: Name of the device profile (letters, digits, C(-) and C(_)).
    type: str
    required: true
  groups:
    description: The profile's groups, each a mapping of C(resources:<RC>), C(trait:<TRAIT>) and C(accel:<key>).
    type: list
    elements: dict
  description:
    description: Free text stored with the profile.
    type: str
  state:
    description: V(present) creates or replaces the profile; V(absent) deletes it.
    type: str
    choices: [present, absent]
    default: present
  fleet:
    description:
      - A fleet snapshot to check the profile against (the RV(accel.openstack.placement_info#module:fleet)
        that M(accel.openstack.placement_info) returns).
    type: dict
extends_documentation_fragment:
  - accel.openstack.openstack
attributes:
  check_mode:
    support: full
    description: Validates, checks against the fleet and reports; writes nothing.
  diff_mode:
    support: full
    description: The profile before and after.
notes:
  - Talks to Cyborg's v2 API (C(/v2/device_profiles)) with microversion 2.0.
"""

EXAMPLES = r"""
- name: Snapshot the fleet
  accel.openstack.placement_info:
    cloud: mycloud
  register: placement

- name: A profile for one T4, refused unless some provider offers it
  accel.openstack.cyborg_device_profile:
    cloud: mycloud
    name: t4-passthrough
    groups:
      - "resources:PGPU": "1"
        "trait:CUSTOM_NVIDIA_T4": required
    fleet: "{{ placement.fleet }}"
"""

RETURN = r"""
device_profile:
  description: The profile as declared (null when absent).
  returned: success
  type: dict
  sample: {name: t4-passthrough, groups: [{"resources:PGPU": "1", "trait:CUSTOM_NVIDIA_T4": required}], description: null}
actions:
  description: What was (or would be) done, in order.
  returned: success
  type: list
  elements: str
  sample: [create]
"""

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.device_profiles import (
    CyborgClient,
    converge_profile,
)
from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import OpenStackModule


class CyborgDeviceProfileModule(OpenStackModule):
    argument_spec = {
        "name": {"type": "str", "required": True},
        "groups": {"type": "list", "elements": "dict"},
        "description": {"type": "str"},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "fleet": {"type": "dict"},
    }
    module_kwargs = {"required_if": [("state", "present", ["groups"])]}

    def run(self) -> dict:
        client = CyborgClient(self.connection.accelerator, mask=self.mask)
        p = self.params
        return converge_profile(
            client, p["name"], p["groups"], p["description"], p["state"], self.check_mode, p["fleet"]
        )


def main() -> None:
    CyborgDeviceProfileModule()()


if __name__ == "__main__":
    main()
