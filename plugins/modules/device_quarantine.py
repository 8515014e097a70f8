#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: device_quarantine
short_description: Take one failed device out of scheduling in Placement, or put it back
description:
  - Quarantines one device (a GPU, the VFs of a PF, a vGPU-capable GPU or VF) named by O(host) and O(address),
    or by its Placement O(provider), so that no new instance is scheduled to it, and records O(reason).
  - The quarantine is an allocation held on the device's provider by a consumer of its own (its UUID is
    derived from the provider's, its project is C(accel-openstack-quarantine), its user is the reason,
    its consumer type C(QUARANTINE)). Placement enforces it, and nova-compute's periodic update neither
    reads nor removes it. The provider's inventory, which nova-compute owns, is never written.
  - The quarantine holds every unit no other consumer holds. An instance already on the device keeps
    running and keeps its unit; when it leaves, that unit is schedulable again until the module runs
    again. A device every unit of which is held by instances cannot be quarantined; the task fails
    and names them.
  - O(state=released) removes the quarantine, after O(health_command) succeeds when one is given.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  host:
    description: The hypervisor hostname (the name of the compute node's provider). With O(address).
    type: str
  address:
    description: The device's PCI address (C(0000:41:00.0)); its provider is C(<host>_<ADDRESS>) or C(<host>_pci_...).
    type: str
  provider:
    description: The device provider's name or uuid, instead of O(host) and O(address).
    type: str
  state:
    description: V(quarantined) takes the device out of scheduling; V(released) puts it back.
    type: str
    choices: [quarantined, released]
    default: quarantined
  reason:
    description:
      - Why the device leaves scheduling (one line, at most 255 characters). Required with
        O(state=quarantined); a different reason updates the record.
    type: str
  health_command:
    description:
      - With O(state=released), a command (an argument list, run without a shell on the machine the task
        runs on) that must exit 0 before the device is released; for example C([nvidia-smi, -q, -i, BUS_ID]).
      - Not run in check mode.
    type: list
    elements: str
extends_documentation_fragment:
  - accel.openstack.openstack
attributes:
  check_mode:
    support: full
    description: Reads Placement and reports what would be held or released; writes nothing, runs nothing.
  diff_mode:
    support: full
    description: The quarantine (held units and reason) before and after.
notes:
  - Run the task on the GPU host itself when O(health_command) must see the device.
  - C(nova-manage placement audit --delete) deletes allocations of unknown consumers that hold C(VGPU)
    (not custom PCI classes); run the quarantine again after it.
  - A quarantined device must be released before it is removed from C([pci] device_spec) or from the
    host; otherwise Placement refuses to delete its provider and nova-compute's periodic update fails until
    the quarantine is released.
"""

EXAMPLES = r"""
- name: Take the GPU at 0000:41:00.0 of gpu-node-1 out of scheduling
  accel.openstack.device_quarantine:
    cloud: mycloud
    host: gpu-node-1
    address: "0000:41:00.0"
    reason: "Xid 79: GPU has fallen off the bus"

- name: Put it back once nvidia-smi sees it again (run on the host)
  accel.openstack.device_quarantine:
    cloud: mycloud
    host: gpu-node-1
    address: "0000:41:00.0"
    state: released
    health_command: [nvidia-smi, -q, -i, "00000000:41:00.0"]
"""

RETURN = r"""
provider:
  description: The device's provider.
  returned: success
  type: dict
  sample: {uuid: 0b0a6a2e-86c5-4a37-9a64-5ff1a2c0b4f2, name: gpu-node-1_0000:41:00.0, root_provider_uuid: 4e1b...}
consumer:
  description: The quarantine's consumer UUID (the same for this device on every run).
  returned: success
  type: str
state:
  description: The state asked for.
  returned: success
  type: str
reason:
  description: The recorded reason (null when released).
  returned: success
  type: str
held:
  description: Units the quarantine holds per resource class (empty when released).
  returned: success
  type: dict
  sample: {CUSTOM_PCI_10DE_2331: 1}
in_use_by:
  description: Other consumers (instances, migrations) that hold units of the device, per resource class.
  returned: success
  type: dict
health:
  description: The health command's exit status and output, when it ran.
  returned: when health_command ran
  type: dict
"""

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine
from ansible_collections.accel.openstack.plugins.module_utils._placement.openstack import OpenStackModule


class DeviceQuarantineModule(OpenStackModule):
    argument_spec = {
        "host": {"type": "str"},
        "address": {"type": "str"},
        "provider": {"type": "str"},
        "state": {"type": "str", "choices": list(quarantine.STATES), "default": "quarantined"},
        "reason": {"type": "str"},
        "health_command": {"type": "list", "elements": "str"},
    }
    module_kwargs = {
        "required_one_of": [("provider", "host")],
        "mutually_exclusive": [("provider", "host"), ("provider", "address")],
        "required_together": [("host", "address")],
        "required_if": [("state", "quarantined", ["reason"])],
    }

    def run(self) -> dict:
        params = self.params
        record = quarantine.resolve(self.placement, params["host"], params["address"], params["provider"])
        plan = quarantine.plan(self.placement, record, params["state"], params["reason"])
        result = {"changed": plan.changed, "diff": plan.diff(), **plan.result()}
        if plan.changed and params["state"] == "released" and params["health_command"] and not self.check_mode:
            result["health"] = self._health(params["health_command"])
        if not self.check_mode:
            quarantine.apply(self.placement, plan)
        return result

    def _health(self, argv: list[str]) -> dict:
        if not argv or not argv[0]:
            raise AccelError("health_command is empty; give the command as a list, e.g. [nvidia-smi, -q]")
        rc, out, err = self.ansible.run_command(argv, use_unsafe_shell=False)
        health = {"rc": rc, "stdout": out[-2000:], "stderr": err[-2000:]}
        if rc != 0:
            raise AccelError(
                f"health_command {argv[0]} exited {rc}; the device stays quarantined: {(err or out).strip()[-300:]}",
                health=health,
            )
        return health


def main() -> None:
    DeviceQuarantineModule()()


if __name__ == "__main__":
    main()
