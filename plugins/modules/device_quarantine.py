#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: device_quarantine
short_description: Take one failed device out of scheduling in Placement, or put it back
description:
  - Quarantines one device (a GPU, the VFs of a PF, a vGPU-capable GPU or VF) named by O(host) and O(address),
    or by its Placement O(provider), so that no new instance is scheduled to it, and records O(reason).
  - A device has one provider or more in Placement, Nova's PCI provider (C(<host>_<ADDRESS>)) and, for a
    vGPU-capable GPU or VF, its vGPU provider (C(<host>_pci_<address>)). The quarantine holds every unit
    no other consumer holds on every provider of the device, whichever of them O(address) or O(provider)
    names.
  - The quarantine is held by allocations of consumers of its own (their UUIDs are derived from the
    provider's, their project is C(accel-openstack-quarantine), their user is the reason, their consumer
    type C(QUARANTINE)). Placement refuses one allocation above the inventory's C(max_unit), so the free
    units are held in pieces of at most C(max_unit) (multiples of C(step_size), at least C(min_unit)),
    one consumer per piece; all of them are written in one request. Placement enforces them, and
    nova-compute's periodic update neither reads nor removes them. The provider's inventory, which
    nova-compute owns, is never written.
  - After writing, the module asks Placement's allocation candidates for each inventory of the device
    (the smallest amount a request may ask, within the device's tree) and fails when one of the device's
    providers is still offered (RV(candidates) shows the questions and answers).
  - An instance already on the device keeps running and keeps its unit; when it leaves, that unit is
    schedulable again until the module runs again. A device every unit of which is held by instances
    cannot be quarantined; the task fails and names them.
  - O(state=released) removes the quarantine, only after O(health_command) exits 0 within
    O(health_timeout) seconds, or without a check when O(health_check=false) says so.
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
      - Required to release while O(health_check=true); an empty list is refused.
      - Not run in check mode, nor when there is nothing to release.
      - When it fails, the message gives the command (shell-quoted), its exit status (or that it was killed
        at O(health_timeout)) and the end of its stderr and stdout, with the secrets of O(auth) and O(cloud)
        masked; the device stays quarantined.
    type: list
    elements: str
  health_timeout:
    description:
      - Seconds O(health_command) may run (1 to 3600). A command still running then is killed with every
        process it started and counts as failed health; the device stays quarantined.
    type: int
    default: 60
  health_check:
    description:
      - V(true) (the default) releases only after O(health_command) succeeds, and refuses a release without one.
      - V(false) releases without any check; O(health_command) must not be given then.
    type: bool
    default: true
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
  - An SR-IOV GPU whose VFs carry vGPU types has one vGPU provider per VF, named by the VF's address; name
    each VF's address (or provider) in a task of its own.
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
    health_timeout: 30

- name: Put back a device whose repair was checked by hand
  accel.openstack.device_quarantine:
    cloud: mycloud
    provider: "gpu-node-1_0000:41:00.0"
    state: released
    health_check: false
"""

RETURN = r"""
provider:
  description: The device's first provider (its PCI provider when it has one).
  returned: success
  type: dict
  sample: {uuid: 0b0a6a2e-86c5-4a37-9a64-5ff1a2c0b4f2, name: gpu-node-1_0000:41:00.0, root_provider_uuid: 4e1b...}
providers:
  description: Every provider of the device, each with C(uuid), C(name), C(root_provider_uuid), C(held) (units
    per resource class) and C(consumers) (the quarantine's consumers on it; empty when released).
  returned: success
  type: list
  elements: dict
consumer:
  description: The first consumer of the quarantine on RV(provider) (the same for this device on every run).
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
  description: Units the quarantine holds per resource class, all providers together (empty when released).
  returned: success
  type: dict
  sample: {CUSTOM_PCI_10DE_2331: 1}
in_use_by:
  description: Other consumers (instances, migrations) that hold units of the device, per resource class.
  returned: success
  type: dict
health:
  description: >-
    The health command's C(command) (shell-quoted), C(rc) (null when it was killed or did not start),
    C(timed_out), C(timeout), and the last 2000 characters of C(stdout) and C(stderr), secrets masked.
  returned: when health_command ran
  type: dict
candidates:
  description: >-
    The allocation candidates questions asked after writing, each C(provider), C(resource_class), C(query)
    and C(offered) (false for every provider of a quarantined device).
  returned: when O(state=quarantined), not in check mode
  type: list
  elements: dict
"""

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import health_check
from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine
from ansible_collections.accel.openstack.plugins.module_utils._placement.module import PlacementModule


class DeviceQuarantineModule(PlacementModule):
    argument_spec = {
        "host": {"type": "str"},
        "address": {"type": "str"},
        "provider": {"type": "str"},
        "state": {"type": "str", "choices": list(quarantine.STATES), "default": "quarantined"},
        "reason": {"type": "str"},
        "health_command": {"type": "list", "elements": "str"},
        "health_timeout": {"type": "int", "default": health_check.DEFAULT_TIMEOUT},
        "health_check": {"type": "bool", "default": True},
    }
    module_kwargs = {
        "required_one_of": [("provider", "host")],
        "mutually_exclusive": [("provider", "host"), ("provider", "address")],
        "required_together": [("host", "address")],
        "required_if": [("state", "quarantined", ["reason"])],
    }

    def run(self) -> dict:
        params = self.params
        self._check_health_options()
        records = quarantine.resolve(self.placement, params["host"], params["address"], params["provider"])
        plan = quarantine.plan(self.placement, records, params["state"], params["reason"])
        result = {"changed": plan.changed, "diff": plan.diff(), **plan.result()}
        releasing = plan.changed and params["state"] == "released"
        if releasing and params["health_check"] and not self.check_mode:
            result["health"] = self._health(params["health_command"], params["health_timeout"])
        if not self.check_mode:
            quarantine.apply(self.placement, plan)
            if params["state"] == "quarantined":
                result["candidates"] = quarantine.prove(self.placement, plan)
        return result

    def _check_health_options(self) -> None:
        """Refuse health options that cannot mean what they say, before anything is read or changed."""
        params = self.params
        command = params["health_command"]
        if not params["health_check"]:
            if command is not None:
                raise AccelError(
                    "health_check is false but health_command is given; remove health_command to release without "
                    "a check, or remove health_check: false to release only when the command succeeds"
                )
            return
        if command is not None or params["state"] == "released":
            problem = health_check.command_problem(command, params["health_timeout"])
            if problem and command is None:
                problem = (
                    "state=released needs health_command, the command that proves the device healthy (e.g. "
                    "[nvidia-smi, -q, -i, '00000000:41:00.0']); or set health_check: false to release without a check"
                )
            if problem:
                raise AccelError(problem)

    def _health(self, argv: list[str], timeout: int) -> dict:
        outcome = health_check.run(argv, timeout, self.redactor.secrets())
        if not outcome.healthy:
            raise AccelError(f"{outcome.explain()}; the device stays quarantined", health=outcome.result())
        return outcome.result()


def main() -> None:
    DeviceQuarantineModule()()


if __name__ == "__main__":
    main()
