#!/usr/bin/python
# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: gpu_boot_unit
short_description: Install the boot unit that restores shared GPUs before libvirt and nova-compute start
version_added: 1.0.0
description:
  - Installs, inside O(root), C(/usr/local/libexec/accel-openstack/gpu_restore.py) (the collection's own
    restore code, standard library only) and its command C(gpu-restore) (O(command)), the oneshot unit
    C(accel-openstack-gpu-restore.service), the target C(accel-openstack-ready.target) that requires it, a
    drop-in C(<unit>.d/accel-openstack-ready.conf) for each unit of O(required_by) that makes it require and
    start after the target, and the C(multi-user.target.wants) links that C(systemctl enable) makes.
  - At boot the unit turns MIG mode back on where a recorded layout needs it (with a GPU reset where the GPU
    allows one, otherwise it fails saying a reboot is needed), sets the SR-IOV VFs, creates the GPU instances,
    sets the vGPU types, recreates the mediated devices instances hold, compares the host with the record and
    writes the result to C(/var/lib/accel-openstack/boot-state.json) (reported by M(accel.openstack.pci_facts)
    as C(accel_boot_state)). When it fails, the target fails and the units of O(required_by) do not start.
  - Every file and link is written through the collection's confined file layer; a link on the way
    (C(<root>/etc/systemd/system), C(/usr/local), C(multi-user.target.wants)) is followed inside O(root),
    never out of it. Values that reach a unit file are checked first (unit names, an executable path,
    whole numbers of seconds).
author:
  - accel.openstack contributors (@accel-openstack)
options:
  state:
    description: V(present) installs the files and links; V(absent) removes them.
    type: str
    choices: [present, absent]
    default: present
  required_by:
    description:
      - Units that require C(accel-openstack-ready.target) and start after it (a drop-in each). Units the host
        does not have are harmless.
    type: list
    elements: str
    default:
      - libvirtd.service
      - virtqemud.service
      - nova-compute.service
      - kolla-nova_libvirt-container.service
      - kolla-nova_compute-container.service
  after:
    description: Units the restore unit starts after (the NVIDIA driver's daemons; absent ones are ignored by systemd).
    type: list
    elements: str
    default:
      - systemd-modules-load.service
      - nvidia-persistenced.service
      - nvidia-vgpud.service
      - nvidia-vgpu-mgr.service
  python:
    description: The host's Python 3 (an absolute path), which runs the restore command at boot.
    type: str
    default: /usr/bin/python3
  timeout:
    description: Seconds each readiness wait at boot lasts at most (1 to 3600).
    type: int
    default: 120
  deadline:
    description: Seconds the whole restore may last (1 to 86400); the unit's start timeout is 30 s longer.
    type: int
    default: 900
  command:
    description:
      - The text of the C(gpu-restore) command; the C(host_gpu_sharing) role passes its C(files/gpu_restore_cli.py).
      - Required with O(state=present).
    type: str
attributes:
  check_mode:
    support: full
    description: Reports the files and links it would change without writing anything.
  diff_mode:
    support: full
    description: Shows each changed file and link before and after.
notes:
  - The module does not reload systemd; run C(systemctl daemon-reload) (the role does) when it changed something
    on a running host.
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Install the boot unit (the host_gpu_sharing role does this)
  accel.openstack.gpu_boot_unit:
    command: "{{ lookup('ansible.builtin.file', 'gpu_restore_cli.py', rstrip=false) }}"

- name: Make a custom service wait for the GPUs too
  accel.openstack.gpu_boot_unit:
    command: "{{ lookup('ansible.builtin.file', 'gpu_restore_cli.py', rstrip=false) }}"
    required_by: [nova-compute.service, my-inference.service]
"""

RETURN = r"""
files:
  description: The paths (inside the root) of the files and links that changed, or would change in check mode.
  returned: always
  type: list
  elements: str
unit:
  description: The restore unit's name.
  returned: always
  type: str
  sample: accel-openstack-gpu-restore.service
target:
  description: The target that the units of O(required_by) require.
  returned: always
  type: str
  sample: accel-openstack-ready.target
"""

import inspect

from ansible_collections.accel.openstack.plugins.module_utils._host import boot_unit, gpu_restore
from ansible_collections.accel.openstack.plugins.module_utils._host.boot_unit import DEFAULT_AFTER, DEFAULT_REQUIRED_BY
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule


class GpuBootUnitModule(HostModule):
    argument_spec = {
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "required_by": {"type": "list", "elements": "str", "default": list(DEFAULT_REQUIRED_BY)},
        "after": {"type": "list", "elements": "str", "default": list(DEFAULT_AFTER)},
        "python": {"type": "str", "default": "/usr/bin/python3"},
        "timeout": {"type": "int", "default": 120},
        "deadline": {"type": "int", "default": 900},
        "command": {"type": "str"},
    }

    def run(self) -> dict:
        files, links, _options = boot_unit.plan(self.host, self.params, inspect.getsource(gpu_restore))
        changed = self.apply_files(files)
        for link in links:
            if link.changed:
                if not self.check_mode:
                    link.apply(self.host)
                self.diff.append(link.diff())
                changed.append(link.path)
        return {"changed": bool(changed), "files": changed, "unit": boot_unit.UNIT, "target": boot_unit.TARGET}


def main():
    GpuBootUnitModule()()


if __name__ == "__main__":
    main()
