#!/usr/bin/python
# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: nvidia_vgpu
short_description: Give NVIDIA GPUs selected by PCI address their vGPU type (mdev bus or vGPU 17+ VFs)
version_added: 1.0.0
description:
  - "On a GPU with an mdev bus (on the GPU or on its VFs), checks that the type exists and returns it for
    Nova (C(enabled_mdev_types)); nothing is written, Nova creates the mediated devices."
  - "On NVIDIA vGPU 17 and later (Ada, Hopper, Blackwell: no mdev bus), writes the type to
    C(nvidia/current_vgpu_type) of the first O(vfs) VFs of the GPU (in C(virtfn) order) and clears it on the
    others. The type is given by ID (V(1155)) or name (V(NVIDIA L40S-4Q)) and must be listed in each VF's
    C(creatable_vgpu_types). A VF in use (its vfio group open) is never changed. When the driver refuses a
    write half-way, the VFs changed by the run are set back."
  - Keeps the VF assignment in C(/etc/accel-openstack/vgpu/<address>.json); the unit the C(host_gpu_sharing)
    role installs sets it again at boot, after the VFs exist.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  devices:
    description: GPU (PF) PCI addresses or vendor:product IDs.
    type: list
    elements: str
    required: true
    aliases: [address]
  type:
    description: The vGPU type, by ID or name (V(1155), V(NVIDIA L40S-4Q)), or the mdev type (V(nvidia-735)).
    type: str
    required: true
  vfs:
    description: vGPU 17+ only, how many VFs of each GPU get the type (default all of them).
    type: int
  timeout:
    description: Seconds to wait for the VFs' vGPU files.
    type: int
    default: 60
attributes:
  check_mode:
    support: full
    description: Reports the vGPU type writes it would make without writing anything.
  diff_mode:
    support: full
    description: Shows each VF's vGPU type and the state file before and after.
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Four L40S-4Q vGPUs on each L40S
  accel.openstack.nvidia_vgpu:
    devices: ["10de:26b9"]
    type: NVIDIA L40S-4Q
    vfs: 4

- name: Check an A16's mdev type before handing it to Nova
  accel.openstack.nvidia_vgpu:
    devices: ["0000:84:00.0"]
    type: nvidia-735
"""

RETURN = r"""
gpus:
  description:
    - One entry per GPU with C(address), C(mechanism) (V(mdev) or V(vf)), C(type), C(type_name), and C(vfs) and
      C(writes) (VF mode) or C(mdev_parents) (mdev mode).
  returned: always
  type: list
  elements: dict
enabled_mdev_types: {description: The mdev types Nova should enable (mdev mode)., returned: always, type: list, elements: str}
"""

from ansible_collections.accel.openstack.plugins.module_utils._host import vgpu
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule


class NvidiaVgpuModule(HostModule):
    argument_spec = {
        "devices": {"type": "list", "elements": "str", "required": True, "aliases": ["address"]},
        "type": {"type": "str", "required": True},
        "vfs": {"type": "int"},
        "timeout": {"type": "int", "default": 60},
    }

    def run(self) -> dict:
        plans = vgpu.plan(self.host, self.params["devices"], self.params["type"], self.params["vfs"])
        if not self.check_mode:
            vgpu.apply(self.host, plans, self.params["timeout"])
        for p in plans:
            if p.changed:
                self.diff.append(
                    {
                        "before": "".join(f"{vf} current_vgpu_type={b}\n" for vf, b, _a in p.writes)
                        + (p.state_before or ""),
                        "after": "".join(f"{vf} current_vgpu_type={a}\n" for vf, _b, a in p.writes)
                        + (p.state_after or ""),
                        "before_header": p.address,
                        "after_header": p.address,
                    }
                )
        return {
            "changed": any(p.changed for p in plans),
            "gpus": [p.as_dict() for p in plans],
            "enabled_mdev_types": sorted({p.type_id for p in plans if p.mechanism == "mdev"}),
        }


def main():
    NvidiaVgpuModule()()


if __name__ == "__main__":
    main()
