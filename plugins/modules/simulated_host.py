#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: simulated_host
short_description: Write a simulated host root from a hardware profile, to try the collection without hardware
description:
  - Writes into O(dest) the files the Linux kernel would show for the host a hardware profile declares
    (C(/sys/bus/pci/devices) and the links sysfs makes, IOMMU groups, SR-IOV, mdev and vGPU types, NUMA
    nodes, C(/proc/cmdline), C(/proc/cpuinfo), the PCI ID database, recorded C(nvidia-smi) output with MIG
    state, C(/etc/default/grub)), so every stage of the collection can run against it with C(accel_root)
    pointing at O(dest).
  - The collection ships profiles in its role C(simulated_fleet) (C(files/hardware/<name>.yml)); the role
    reads the profile a host names and passes it here. A profile written by the role's C(capture_host.py)
    from a real host works the same way.
  - The module compares what O(dest) holds with the root the profile gives; when they differ it empties
    O(dest) and writes the whole root, so a root the pipeline changed is rebuilt as the profile says.
  - O(dest) must be absent (its parent directory must exist), an empty directory, or a directory this module
    wrote before (it holds C(.accel-simulated-host.json)); anything else is refused and nothing is written.
    Every path of the profile is kept inside O(dest) (C(..) stops at O(dest)) and no link is followed.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  dest:
    description: The directory that receives the simulated root (an absolute path).
    type: path
    required: true
  profile:
    description:
      - The hardware profile, as a mapping (the content of a profile file read with C(from_yaml)).
    type: dict
    required: true
  name:
    description: The profile's name, recorded in O(dest) and used in messages.
    type: str
    default: profile
  pci_ids:
    description:
      - The text of the PCI ID database written at C(/usr/share/misc/pci.ids) in the root (the role passes
        its C(files/hardware/pci.ids)); none is written when omitted or when the profile sets C(pci_ids) to false.
    type: str
attributes:
  check_mode:
    support: full
    description: Reports whether the root would change and the diff; writes nothing.
  diff_mode:
    support: full
    description: One line per path that differs, before and after (kind, size and digest of a file, a link's target).
"""

EXAMPLES = r"""
- name: A simulated HGX H100 host
  accel.openstack.simulated_host:
    dest: /tmp/roots/hgx-01
    name: hgx-h100
    profile: "{{ lookup('ansible.builtin.file', 'hardware/hgx-h100.yml') | from_yaml }}"
    pci_ids: "{{ lookup('ansible.builtin.file', 'hardware/pci.ids') }}"

- name: Discover it as a real host
  accel.openstack.pci_facts:
    root: /tmp/roots/hgx-01
"""

RETURN = r"""
dest:
  description: The root's directory.
  returned: success
  type: str
profile:
  description: The profile's name (O(name)).
  returned: success
  type: str
changed_paths:
  description: How many paths of the root differ from the profile's (0 when unchanged).
  returned: success
  type: int
files:
  description: How many files the root holds.
  returned: success
  type: int
links:
  description: How many symbolic links the root holds.
  returned: success
  type: int
"""

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._module import CollectionModule
from ansible_collections.accel.openstack.plugins.module_utils._simulate import simulated_root


class SimulatedHostModule(CollectionModule):
    argument_spec = {
        "dest": {"type": "path", "required": True},
        "profile": {"type": "dict", "required": True},
        "name": {"type": "str", "default": "profile"},
        "pci_ids": {"type": "str"},
    }

    def __init__(self) -> None:
        super().__init__(self.argument_spec)

    def run(self) -> dict:
        params = self.params
        plan = simulated_root.plan(params["dest"], params["name"], params["profile"], params["pci_ids"])
        if not self.check_mode:
            simulated_root.apply(plan)
        result = dict(plan.result(), changed=plan.changed)
        if plan.changed:
            result["diff"] = plan.diff()
        return result

    def __call__(self) -> None:
        try:
            result = self.run()
        except AccelError as exc:
            self.ansible.fail_json(**exc.result())
        self.ansible.exit_json(**result)


def main() -> None:
    SimulatedHostModule()()


if __name__ == "__main__":
    main()
