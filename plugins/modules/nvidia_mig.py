#!/usr/bin/python
# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: nvidia_mig
short_description: Declarative NVIDIA MIG layout of one GPU, selected by PCI address
version_added: 1.0.0
description:
  - Brings a GPU to a MIG layout (MIG mode, GPU instances by profile and placement, one full compute
    instance in each) and keeps it across reboots. The GPU is selected by PCI address, never by index.
  - The layout is checked against NVIDIA's profile table and placement rules for the GPU's model before
    anything changes, in check mode too. The table is the one the GPU reports (C(nvidia-smi mig -lgip) and
    C(-lgipp), live or recorded) when it gives one, else the built-in table (A100 40GB and 80GB, A30, H100
    80GB and 94GB, H200, GB200, B200, B300, GH200, RTX PRO 6000 Blackwell).
  - The wanted layout is kept in C(/etc/accel-openstack/mig/<address>.json) inside the root; the unit the
    C(host_gpu_sharing) role installs recreates it at boot (GPU instances do not survive a reboot).
  - On the running system (O(root=/) with C(nvidia-smi) installed) the module runs C(nvidia-smi). On any
    other root it reads the recorded C(nvidia-smi) output under C(/var/lib/accel-openstack/nvidia-smi) (as
    M(accel.openstack.pci_facts) does), writes the state file and reports the commands as pending.
  - A MIG mode change that waits for a GPU reset is reported (RV(reset_required)), never forced; the
    instances are created at the next boot or on the next run after the reset.
  - Refuses, before changing anything, when processes use the GPU (they would lose their work) or when a
    mode change is needed and C(nvidia_drm) is loaded (it blocks the reset); the message says how to free it.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  address:
    description: PCI address of the GPU (V(0000:3b:00.0)).
    type: str
    required: true
  layout:
    description:
      - The GPU instances wanted, as a list of C(profile) (V(1g.10gb), as C(nvidia-smi mig -lgip) names it),
        C(count) (default 1) and optionally C(placement) (a start slot, or a list with one start per instance).
      - Instances without a placement take the first free allowed slot. An empty list keeps MIG mode on with
        no instances.
    type: list
    elements: dict
    required: true
  state:
    description:
      - V(present) makes the GPU match the layout.
      - V(assert) changes nothing and fails when the GPU differs from the layout, listing the drift.
    type: str
    choices: [present, assert]
    default: present
attributes:
  check_mode:
    support: full
    description: Returns the plan (the nvidia-smi commands) without running or writing anything.
  diff_mode:
    support: full
    description: Shows the instances and the state file before and after.
seealso:
  - module: accel.openstack.pci_facts
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Two 3g.20gb instances on the first A100
  accel.openstack.nvidia_mig:
    address: "0000:3b:00.0"
    layout:
      - {profile: 3g.20gb, count: 2}

- name: Pin a 2g.10gb at slot 0, the rest as 1g.5gb
  accel.openstack.nvidia_mig:
    address: "0000:3b:00.0"
    layout:
      - {profile: 2g.10gb, count: 1, placement: 0}
      - {profile: 1g.5gb, count: 5}

- name: Report drift only
  accel.openstack.nvidia_mig:
    address: "0000:3b:00.0"
    layout: [{profile: 7g.40gb, count: 1}]
    state: assert
"""

RETURN = r"""
address: {description: The GPU's PCI address., returned: always, type: str, sample: "0000:3b:00.0"}
model: {description: The profile table used., returned: always, type: str, sample: A100-40GB}
mode:
  description: MIG mode as read, with C(current) and C(pending).
  returned: always
  type: dict
reset_required:
  description: MIG mode is enabled but waits for a GPU reset (or a reboot) before instances can exist.
  returned: always
  type: bool
layout:
  description: The planned instances, each with C(profile), C(profile_id) and C(placement) (C(start), C(size)).
  returned: always
  type: list
  elements: dict
current_instances: {description: GPU instances found before any change., returned: always, type: list, elements: dict}
plan: {description: The nvidia-smi commands the layout needs., returned: always, type: list, elements: str}
commands:
  description: Each planned command with C(status) V(ran) or V(pending) (and C(reason)).
  returned: always
  type: list
  elements: dict
drift: {description: How the GPU differs from the layout (V(assert) and check mode)., returned: always, type: list, elements: str}
state_file: {description: The state file the boot unit reads., returned: always, type: str}
profile_table:
  description:
    - Where the MIG profile table came from. V(gpu) is the GPU's own C(nvidia-smi mig -lgip) and C(-lgipp)
      (live, or recorded in the root as C(/var/lib/accel-openstack/nvidia-smi/mig-lgip/<address>.txt) and
      C(mig-lgipp/<address>.txt)); V(built-in) is the collection's table for the model.
  returned: always
  type: str
"""

from ansible_collections.accel.openstack.plugins.module_utils._host import mig
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule


class NvidiaMigModule(HostModule):
    argument_spec = {
        "address": {"type": "str", "required": True},
        "layout": {"type": "list", "elements": "dict", "required": True},
        "state": {"type": "str", "default": "present", "choices": ["present", "assert"]},
    }

    def run(self) -> dict:
        # nvidia-smi runs only on the running system; any other root is read from its recorded output
        run = self.run_tool if self.host.is_live and self.ansible.get_bin_path("nvidia-smi") else None
        plan = mig.plan(self.host, self.params["address"], self.params["layout"], run)
        result = plan.result()
        result["drift"] = plan.drift()
        if self.params["state"] == "assert":
            if result["drift"]:
                raise mig.MigError(
                    f"GPU {plan.address} drifted: " + "; ".join(result["drift"]), changed=False, **result
                )
            return dict(result, changed=False, commands=[])
        reason = mig.refusal(plan)
        if reason:
            raise mig.MigError(reason, changed=False, **result)
        if self.check_mode:
            result["commands"] = [{"command": c, "status": "would_run"} for c in result["plan"]]
        else:
            result["commands"] = mig.apply(self.host, plan, run)
        if result["reset_required"]:
            self.warn(
                f"GPU {plan.address}: MIG mode waits for a GPU reset; reboot the host (the boot unit creates the "
                "instances) or stop every user of the GPU and run 'nvidia-smi -r -i "
                f"{mig.bus_id(plan.address)}', then run again"
            )
        if plan.changed:
            self.diff.append(plan.diff())
        return dict(result, changed=plan.changed)


def main():
    NvidiaMigModule()()


if __name__ == "__main__":
    main()
