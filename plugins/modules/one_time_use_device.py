#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: one_time_use_device
short_description: Return a cleaned one-time-use device to Nova's pool in Placement
description:
  - Nova reserves a device tagged C(one_time_use) in its C(device_spec) (its provider has the
    C(HW_PCI_ONE_TIME_USE) trait) once an instance has used it, by setting the inventory's C(reserved) to
    its C(total), and leaves the return to the operator. This module does the return that Nova's documentation
    prescribes (C(openstack resource provider inventory set --amend --resource RC:reserved=0)); it sets
    C(reserved) of that one inventory to 0 and leaves every other field as it is.
  - It refuses a provider without the trait, a device still in use, and a C(reserved) value Nova would not
    have set (neither 0 nor the total); nothing changes then.
  - Run it only after the device is cleaned; the C(accel.openstack.recycle_devices) role runs the cleaning
    command on the host first, with the device's validated PCI address, and calls this module only when it
    succeeded; a device whose address it cannot resolve is left reserved.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  provider:
    description: The device provider's name (C(<host>_<ADDRESS>)) or uuid.
    type: str
    required: true
  resource_class:
    description: The inventory to return; needed only when the provider has more than one.
    type: str
  state:
    description: V(available) sets C(reserved) to 0 (Nova alone sets it back to the total, when the device is next used).
    type: str
    choices: [available]
    default: available
extends_documentation_fragment:
  - accel.openstack.openstack
attributes:
  check_mode:
    support: full
    description: Reads Placement and reports whether the device would be returned; writes nothing.
  diff_mode:
    support: full
    description: The inventory's C(reserved) before and after.
"""

EXAMPLES = r"""
- name: Return a wiped NVMe drive to the pool
  accel.openstack.one_time_use_device:
    cloud: mycloud
    provider: "compute-3_0000:81:00.0"
"""

RETURN = r"""
provider:
  description: The provider's uuid and name.
  returned: success
  type: dict
resource_class:
  description: The inventory returned.
  returned: success
  type: str
reserved_before:
  description: C(reserved) as read.
  returned: success
  type: int
reserved_after:
  description: C(reserved) after the run (0).
  returned: success
  type: int
"""

from ansible_collections.accel.openstack.plugins.module_utils._placement import one_time_use
from ansible_collections.accel.openstack.plugins.module_utils._placement.module import PlacementModule


class OneTimeUseDeviceModule(PlacementModule):
    argument_spec = {
        "provider": {"type": "str", "required": True},
        "resource_class": {"type": "str"},
        "state": {"type": "str", "choices": ["available"], "default": "available"},
    }

    def run(self) -> dict:
        plan = one_time_use.plan_return(self.placement, self.params["provider"], self.params["resource_class"])
        if not self.check_mode:
            one_time_use.apply_return(self.placement, plan)
        result = plan.result()
        diff = {
            "before": f"{plan.resource_class} reserved: {result['reserved_before']}\n",
            "after": f"{plan.resource_class} reserved: {result['reserved_after']}\n",
        }
        return dict(result, changed=plan.changed, diff=diff)


def main() -> None:
    OneTimeUseDeviceModule()()


if __name__ == "__main__":
    main()
