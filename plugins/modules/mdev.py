#!/usr/bin/python
# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: mdev
short_description: Mediated devices of one type on one parent, with stable UUIDs, kept with mdevctl
version_added: 1.0.0
description:
  - Makes the parent (a GPU or VF, by PCI address) hold O(count) mediated devices of O(type). The i-th
    mdev always has the same UUID (derived from parent, type and index), so runs are idempotent and the
    devices keep their names across reboots. Only mdevs with such UUIDs are removed.
  - Creates through C(mdev_supported_types/<type>/create) and removes through the mdev's C(remove),
    waiting (polling until O(timeout)) for each to appear or go. An mdev in use (its vfio group open) is
    never removed.
  - "With C(mdevctl) installed in the root, each mdev is defined with C(mdevctl define --auto), so it is
    started again at boot, and undefined when removed."
  - Nova creates the mdevs of its C([devices] enabled_mdev_types) itself; this module is for mdevs that must
    survive a reboot on libvirt older than 7.3, and for mdevs used outside Nova.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  parent:
    description: PCI address of the parent device (V(0000:84:00.4)).
    type: str
    required: true
    aliases: [address]
  type:
    description: The mdev type (V(nvidia-735)), as in C(mdev_supported_types).
    type: str
    required: true
  count:
    description: How many mdevs of the type the parent should hold; V(0) removes this module's mdevs.
    type: int
    required: true
  timeout:
    description: Seconds to wait for each mdev to appear or go.
    type: int
    default: 30
attributes:
  check_mode:
    support: full
    description: Reports the mdevs it would create or remove, and the mdevctl commands, without writing anything.
  diff_mode:
    support: full
    description: Shows the mdev UUIDs before and after.
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: One A16-4Q mdev on the first VF, kept by mdevctl
  accel.openstack.mdev:
    parent: "0000:84:00.4"
    type: nvidia-735
    count: 1
"""

RETURN = r"""
uuids: {description: The UUIDs of the wanted mdevs., returned: always, type: list, elements: str}
created: {description: UUIDs created by this run., returned: always, type: list, elements: str}
removed: {description: UUIDs removed by this run., returned: always, type: list, elements: str}
commands:
  description: The mdevctl commands run or pending, each with C(command) and C(status).
  returned: always
  type: list
  elements: dict
"""

from ansible_collections.accel.openstack.plugins.module_utils._host import mdev
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule


class MdevModule(HostModule):
    argument_spec = {
        "parent": {"type": "str", "required": True, "aliases": ["address"]},
        "type": {"type": "str", "required": True},
        "count": {"type": "int", "required": True},
        "timeout": {"type": "int", "default": 30},
    }

    def run(self) -> dict:
        plan = mdev.plan(self.host, self.commands, self.params["parent"], self.params["type"], self.params["count"])
        if not self.check_mode:
            mdev.apply(self.host, plan, self.params["timeout"])
        ran = self.commands.request(plan.commands, bool(plan.commands)) if plan.commands else False
        if plan.create or plan.remove:
            self.diff.append(
                {
                    "before_header": plan.parent,
                    "after_header": plan.parent,
                    "before": "".join(
                        f"{u}\n" for u in sorted(set(plan.remove) | (set(plan.wanted) - set(plan.create)))
                    ),
                    "after": "".join(f"{u}\n" for u in sorted(plan.wanted)),
                }
            )
        return dict(plan.result(), changed=bool(plan.create or plan.remove) or ran, commands=self.commands.results())


def main():
    MdevModule()()


if __name__ == "__main__":
    main()
