#!/usr/bin/python
# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: sriov_vfs
short_description: Set the number of SR-IOV VFs on PFs selected by PCI address, and keep it across reboots
version_added: 1.0.0
description:
  - Writes C(sriov_numvfs) of each selected physical function (zero first when it has a different non-zero
    count, as the kernel requires) and waits, polling until O(timeout), for the VFs to appear.
  - Keeps the count in C(/etc/accel-openstack/sriov/<address>.json) inside the root; the unit the
    C(host_gpu_sharing) role installs sets it again at boot, before libvirt and nova-compute start.
  - Refuses, before changing anything, to remove VFs while one is in use (bound to vfio-pci with its
    C(/dev/vfio/<group>) open, or a network interface with an address or a route), naming the VF and its user.
  - Works for NICs, NVIDIA vGPU 17+ GPUs and Intel Data Center GPUs (i915 and xe PF drivers), whose PF drivers
    make VFs through C(sriov_numvfs). AMD Instinct GPUs get VFs only from AMD's GIM host driver, which enables
    them itself when it loads (its C(vf_num) setting) and keeps the count; for such a PF (the device catalog's
    C(vf_creation=driver_parameter)) the module writes nothing and keeps no state file, reports the count as
    unchanged when the PF already has it, and otherwise fails naming the GIM setting to change.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  devices:
    description: PF PCI addresses (V(0000:3b:00.0)) or vendor:product IDs (V(15b3:101d)); each must match a device.
    type: list
    elements: str
    required: true
    aliases: [address]
  numvfs:
    description: VFs wanted on each selected PF; at most its C(sriov_totalvfs). V(0) removes them.
    type: int
    required: true
  timeout:
    description: Seconds to wait for the VFs to appear or go.
    type: int
    default: 60
attributes:
  check_mode:
    support: full
    description: Reports the VF counts it would set without writing anything.
  diff_mode:
    support: full
    description: Shows each PF's VF count and the state file before and after.
requirements:
  - netaddr (Python library, on the managed host, python3-netaddr on Debian, Ubuntu and EL) to change the
    count of a PF that has VFs; without it such a change fails rather than skip the in-use check.
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Eight VFs on the first ConnectX port
  accel.openstack.sriov_vfs:
    devices: ["0000:3b:00.0"]
    numvfs: 8

- name: Four VFs on every L40S (NVIDIA vGPU 17 host driver)
  accel.openstack.sriov_vfs:
    devices: ["10de:26b9"]
    numvfs: 4

- name: Four VFs on every Intel Data Center GPU Flex 170 (VFs carry the PF's ID, 8086:56c0)
  accel.openstack.sriov_vfs:
    devices: ["8086:56c0"]
    numvfs: 4
"""

RETURN = r"""
devices:
  description:
    - One entry per PF with C(address), C(numvfs_before), C(numvfs) and C(totalvfs).
    - C(persisted_by) (the PF's driver, V(gim)) where the driver makes and keeps the VFs itself.
  returned: always
  type: list
  elements: dict
state_files:
  description: State files the boot unit reads (none for a PF whose driver keeps its VFs itself).
  returned: always
  type: list
  elements: str
"""

from ansible_collections.accel.openstack.plugins.module_utils._host import sriov
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule


class SriovVfsModule(HostModule):
    argument_spec = {
        "devices": {"type": "list", "elements": "str", "required": True, "aliases": ["address"]},
        "numvfs": {"type": "int", "required": True},
        "timeout": {"type": "int", "default": 60},
    }

    def run(self) -> dict:
        changes = sriov.plan(self.host, self.params["devices"], self.params["numvfs"])
        if not self.check_mode:
            sriov.apply(self.host, changes, self.params["timeout"])
        for c in changes:
            if c.changed:
                self.diff.append(
                    {
                        "before": f"sriov_numvfs={c.before}\n{c.state_before or ''}",
                        "after": f"sriov_numvfs={c.after}\n{c.state_after}",
                        "before_header": c.address,
                        "after_header": c.address,
                    }
                )
        return {
            "changed": any(c.changed for c in changes),
            "devices": [c.as_dict() for c in changes],
            "state_files": [sriov.state_path(c.address) for c in changes if not c.persisted_by],
        }


def main():
    SriovVfsModule()()


if __name__ == "__main__":
    main()
