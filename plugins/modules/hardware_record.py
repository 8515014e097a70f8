#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: hardware_record
short_description: Recognise replaced and moved GPUs by comparing a host's devices with the last record
description:
  - Compares the devices M(accel.openstack.pci_facts) reports (O(devices)) with the record kept in the
    root at C(/var/lib/accel-openstack/devices.json) (address, vendor and product IDs, and the board serial
    and GPU UUID C(nvidia-smi -q -x) gives for NVIDIA GPUs) and reports RV(changes).
  - A GPU is known by its GPU UUID; where the record or the facts have none, by its board serial, but only
    when that serial names one device in the record and one now (the four GPUs of an A16 board share one
    serial and are told apart by their UUIDs).
  - A device is C(replaced) when its address holds another GPU (another UUID or serial) or another model,
    C(moved) when a recorded GPU is now at another address, C(added) or C(removed) otherwise.
  - With O(save=true) the record is rewritten to the devices given; run that only after the host's Nova
    config and Placement registration follow the new hardware, so a failed run reports the change again.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  devices:
    description:
      - The host's C(accel_pci_devices) fact; each device's C(address), C(vendor_id), C(product_id) and, when
        known, C(serial) and C(gpu_uuid) (C(GPU-) and a UUID) are read. A value of another kind, an address
        listed twice or a GPU UUID at two addresses fails the task and writes nothing.
    type: list
    elements: dict
    required: true
  save:
    description: Write the record (the first run on a host always reports no change).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reports the changes and whether the record would be written; writes nothing.
  diff_mode:
    support: full
    description: The record before and after.
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Read the host
  accel.openstack.pci_facts:

- name: What changed since the last run
  accel.openstack.hardware_record:
    devices: "{{ accel_pci_devices }}"
  register: hardware
"""

RETURN = r"""
changes:
  description: >-
    One dict per change, sorted by address, with C(change) (C(replaced), C(moved), C(added), C(removed)),
    C(address), C(device) (now), C(was) (recorded) and, for C(moved), C(from_address). C(device) and C(was) each
    hold C(address), C(vendor_id), C(product_id), C(serial) and C(gpu_uuid) (null where unknown).
  returned: always
  type: list
  elements: dict
first_run:
  description: No record existed (no change can be told).
  returned: always
  type: bool
record:
  description: The record's path inside the root.
  returned: always
  type: str
"""

from ansible_collections.accel.openstack.plugins.module_utils._host import hardware_record
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule


class HardwareRecordModule(HostModule):
    argument_spec = {
        "devices": {"type": "list", "elements": "dict", "required": True},
        "save": {"type": "bool", "default": False},
    }

    def run(self) -> dict:
        plan = hardware_record.plan(self.host, self.params["devices"])
        changed = bool(self.params["save"]) and plan.file.changed
        if changed:
            self.apply_files([plan.file])
        return dict(plan.result(), changed=changed)


def main() -> None:
    HardwareRecordModule()()


if __name__ == "__main__":
    main()
