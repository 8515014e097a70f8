#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: kernel_cmdline
short_description: Ensure kernel arguments are present or absent without touching any other argument
version_added: 1.0.0
description:
  - Ensures kernel command line arguments (C(intel_iommu=on), C(iommu=pt), C(vfio-pci.ids=10de:2330,10de:22a3))
    are present or absent, by key and value. Arguments the module is not told about are never changed.
  - "The bootloader is detected from the files under O(root), in this order: C(kernelstub)
    (C(/etc/kernelstub/configuration)), C(grubby) with BLS entries (C(/boot/loader/entries)), C(systemd-boot)
    (C(/etc/kernel/cmdline) and C(loader/entries) on the ESP), and GRUB whose C(grub-mkconfig) sources
    C(/etc/default/grub.d/*.cfg) (Debian, Ubuntu)."
  - On GRUB the arguments live in one drop-in, C(/etc/default/grub.d/99-accel-openstack.cfg); it removes the
    absent arguments and other values of a present key from C(GRUB_CMDLINE_LINUX) and
    C(GRUB_CMDLINE_LINUX_DEFAULT) as grub-mkconfig reads them, and appends the present ones once. Later calls
    add to what earlier calls put there.
  - A key is never duplicated; C(-) and C(_) in keys are the same, as the kernel reads them.
  - RV(reboot_required) compares the configured arguments with the running kernel's C(/proc/cmdline).
  - The bootloader update (C(update-grub), C(grub2-mkconfig), C(grubby), C(kernelstub)) runs only when the
    configuration changed, and only where it is safe; see O(root). A command that could not run is recorded
    in C(/var/lib/accel-openstack/pending-commands.json) inside the root and reported on every run until it ran.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  present:
    description:
      - Arguments that must be on the command line, C(key) or C(key=value), one per item, without quotes
        or spaces. A present C(key=value) replaces every other value of C(key).
      - "A key is letters, digits, C(_), C(-) and C(.); a value is letters, digits and C(. _ , : = + / @ % ~ ! -).
        Anything else (whitespace, quotes, shell syntax, control characters) is refused."
    type: list
    elements: str
    default: []
  absent:
    description:
      - Arguments that must not be on the command line. C(key) removes the key with any value, C(key=value)
        only that value.
    type: list
    elements: str
    default: []
  bootloader:
    description: The bootloader to configure; V(auto) detects it from the files under O(root).
    type: str
    choices: [auto, grub, grubby, systemd-boot, kernelstub]
    default: auto
  update_bootloader:
    description:
      - Run (or record as pending) the bootloader update when the configuration changed. With V(false) only
        the configuration files are written; C(grubby) still runs, as it is how that configuration is written.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Reports what would change and which commands would run; writes nothing, runs nothing.
  diff_mode:
    support: full
    description: Shows the files as they are and as they would be.
notes:
  - Nothing is written when any argument is invalid or appears in both O(present) and O(absent).
  - With any O(root) other than the running system nothing runs on the machine executing the module.
    C(update-grub) and C(kernelstub) probe the machine's disks, so they run only on the running system;
    C(grubby) runs inside a complete root through C(chroot). What cannot run is reported pending.
seealso:
  - module: accel.openstack.vfio_pci
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Turn the IOMMU on for passthrough (Intel)
  accel.openstack.kernel_cmdline:
    present: [intel_iommu=on, iommu=pt]
  register: cmdline

- name: Reboot when the running kernel does not have them yet
  ansible.builtin.reboot:
  when: cmdline.reboot_required

- name: Hand two GPU functions to vfio-pci at boot and drop nomodeset, in an image
  accel.openstack.kernel_cmdline:
    root: /mnt/image
    present: ["vfio-pci.ids=10de:2330,10de:22a3"]
    absent: [nomodeset]
"""

RETURN = r"""
bootloader:
  description: The backend that was configured.
  returned: always
  type: str
  sample: grub
files:
  description: Files written or removed (paths inside the root).
  returned: always
  type: list
  elements: str
  sample: [/etc/default/grub.d/99-accel-openstack.cfg]
configured:
  description: The arguments the host boots with after this run (as far as the module manages them).
  returned: always
  type: list
  elements: str
  sample: [root=/dev/sda1, ro, quiet, intel_iommu=on, iommu=pt]
previous:
  description: The configured arguments before this run.
  returned: always
  type: list
  elements: str
running:
  description: The running kernel's arguments (C(/proc/cmdline) under the root).
  returned: always
  type: list
  elements: str
managed:
  description: Every argument this module manages on the host (O(present) and O(absent)), from all calls.
  returned: always
  type: dict
  sample: {"present": ["intel_iommu=on", "iommu=pt"], "absent": []}
reboot_required:
  description: Whether the running kernel differs from the configuration in a managed argument.
  returned: always
  type: bool
reboot_reasons:
  description: What differs, one sentence per argument.
  returned: always
  type: list
  elements: str
  sample: ["iommu=pt is configured but the running kernel has not got it"]
commands:
  description:
    - The bootloader commands this run considered, each with C(command), C(status) (V(ran), V(failed),
      V(pending), V(would_run)), C(purpose) and C(reason) when pending.
  returned: always
  type: list
  elements: dict
  sample: [{"command": "update-grub", "status": "pending", "purpose": "regenerate grub.cfg"}]
pending_commands:
  description: The commands still to run on the host itself (or that would run, in check mode).
  returned: always
  type: list
  elements: str
  sample: [update-grub]
"""

from ansible_collections.accel.openstack.plugins.module_utils._host.bootloader import configure
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule


class KernelCmdlineModule(HostModule):
    argument_spec = {
        "present": {"type": "list", "elements": "str", "default": []},
        "absent": {"type": "list", "elements": "str", "default": []},
        "bootloader": {
            "type": "str",
            "default": "auto",
            "choices": ["auto", "grub", "grubby", "systemd-boot", "kernelstub"],
        },
        "update_bootloader": {"type": "bool", "default": True},
    }

    def run(self) -> dict:
        return configure(self.host, self.commands, self.params)


def main():
    KernelCmdlineModule()()


if __name__ == "__main__":
    main()
