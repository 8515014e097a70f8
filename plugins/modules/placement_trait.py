#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: placement_trait
short_description: Create or delete custom Placement traits, many per call
description:
  - Makes the listed custom traits (C(CUSTOM_...)) exist in Placement, or removes them.
  - Standard names (from os-traits) are accepted and checked against the
    service, but never created or deleted.
  - Names are validated before any call; an invalid name fails the task and changes nothing.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  names:
    description:
      - The trait names. Custom names match C(^CUSTOM_[A-Z0-9_]+$).
    type: list
    elements: str
    required: true
    aliases: [name]
  state:
    description:
      - V(present) creates missing custom names; V(absent) deletes existing custom names.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - accel.openstack.openstack
attributes:
  check_mode:
    support: full
    description: Reports what would be created or deleted without writing.
  diff_mode:
    support: full
    description: Shows the custom names before and after.
"""

EXAMPLES = r"""
- name: Declare the traits the device policy uses
  accel.openstack.placement_trait:
    auth_type: admin_token
    auth:
      endpoint: http://127.0.0.1:8778
      token: "admin"
    names:
      - CUSTOM_NVIDIA_T4
      - HW_GPU_API_VULKAN

- name: Remove a trait nothing uses any more
  accel.openstack.placement_trait:
    cloud: mycloud
    names: [CUSTOM_NVIDIA_T4]
    state: absent
"""

RETURN = r"""
created:
  description: Custom names created (or that would be, in check mode).
  returned: state is present
  type: list
  elements: str
  sample: [CUSTOM_NVIDIA_T4]
deleted:
  description: Custom names deleted (or that would be, in check mode).
  returned: state is absent
  type: list
  elements: str
  sample: [CUSTOM_NVIDIA_T4]
standard:
  description: Standard names that were checked and left alone.
  returned: success
  type: list
  elements: str
  sample: [HW_GPU_API_VULKAN]
api_calls:
  description: Placement requests made, per HTTP method.
  returned: always
  type: dict
  sample: {GET: 1, PUT: 1}
"""

from ansible_collections.accel.openstack.plugins.module_utils._placement.module import NamesModule


class PlacementTraitModule(NamesModule):
    kind = "trait"


def main() -> None:
    PlacementTraitModule()()


if __name__ == "__main__":
    main()
