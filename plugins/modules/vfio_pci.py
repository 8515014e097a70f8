#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: vfio_pci
short_description: Bind PCI devices to vfio-pci, persistently and by IOMMU group
version_added: 1.0.0
description:
  - Hands PCI devices to C(vfio-pci) for full-device passthrough, persistently and per IOMMU group. Every
    endpoint sharing a group with a selected device (the HDMI audio, USB and USB-C functions of a GPU) is bound
    too. Bridges are never bound.
  - "A vendor:product goes into C(options vfio-pci ids=) only when every device with that ID on the host is
    selected. When an ID is split (one card passed through, its twin kept for vGPU or MIG, or only some of
    several identical cards asked for), the selected devices are bound by address instead, through a udev
    rule (C(/etc/udev/rules.d/40-accel-openstack-vfio.rules)) that sets their C(driver_override) when they
    appear at boot, so the other cards with the same ID stay on their driver."
  - A device that a C(mode=vgpu) or C(mode=mig) policy entry keeps is never handed to vfio-pci; the module
    fails, naming the entry and what would have taken the card.
  - "Writes C(/etc/modprobe.d/accel-openstack-vfio.conf) (C(options vfio-pci ids=...), a C(softdep ... pre: vfio-pci)
    for each driver that could claim the devices first, optional blacklists),
    C(/etc/modules-load.d/accel-openstack-vfio.conf), and the initramfs configuration (a marked block in
    C(/etc/initramfs-tools/modules), or C(/etc/dracut.conf.d/accel-openstack-vfio.conf)). The initramfs is
    rebuilt (C(update-initramfs -u -k all) or C(dracut --regenerate-all --force)) only when these changed."
  - "The module refuses, naming the device and the reason, when a group holds something the host needs: the
    boot VGA, a storage controller with mounted filesystems, a NIC with an address or a route, or a device
    bound to a driver that is not on the allow list. Nothing is written then. A device already on vfio-pci
    is left alone."
  - With no device selected the module removes its own files (the host goes back to its usual drivers at
    the next boot).
author:
  - accel.openstack contributors (@accel-openstack)
requirements:
  - netaddr (Python library, on the managed host; python3-netaddr on Debian, Ubuntu and EL)
options:
  devices:
    description:
      - PCI addresses (V(0000:18:00.0)) or vendor:product IDs (V(10de:1e30)) to hand to vfio-pci.
      - An unknown address, or an ID no device on the host has, is an error.
    type: list
    elements: str
    default: []
  policy:
    description:
      - The device policy (C(accel_device_policy)); entries with C(mode=passthrough) select the host's devices
        with their C(vendor_id)/C(product_id) (and C(addresses) when given). Entries matching nothing on this
        host are reported as warnings.
    type: list
    elements: raw
    default: []
  bind:
    description:
      - V(boot) writes the persistent configuration only (the devices move to vfio-pci at the next boot).
      - V(now) also binds them on the running system through C(driver_override), C(unbind) and
        C(drivers_probe).
    type: str
    choices: [boot, now]
    default: boot
  force:
    description: Bind even when a group holds a device the host needs (the refusal becomes a warning).
    type: bool
    default: false
  allow_drivers:
    description:
      - Drivers a device may be taken from, added to the built-in list (C(vfio-pci), C(pci-stub), C(nouveau),
        C(nvidia), C(amdgpu), C(radeon), C(snd_hda_intel), C(xhci_hcd), C(nvidia-gpu), C(ucsi_ccg)).
    type: list
    elements: str
    default: []
  blacklist:
    description: Kernel modules to blacklist in the same modprobe file (for example V(nouveau)).
    type: list
    elements: str
    default: []
  initramfs:
    description: Put vfio-pci into the initramfs and rebuild it when the configuration changed.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Reports what would change and which commands would run; writes nothing, runs nothing.
  diff_mode:
    support: full
    description: Shows the files as they are and as they would be.
seealso:
  - module: accel.openstack.kernel_cmdline
notes:
  - "With any O(root) other than the running system nothing runs on the machine executing the module:
    C(update-initramfs)/C(dracut) run inside a complete root through C(chroot); C(modprobe) and the runtime
    binding need the running kernel and are reported pending."
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Hand the Quadro and every function of its IOMMU group to vfio-pci at the next boot
  accel.openstack.vfio_pci:
    devices: ["0000:18:00.0"]

- name: Bind what the device policy marks for passthrough, now and at boot
  accel.openstack.vfio_pci:
    policy: "{{ accel_device_policy }}"
    bind: now

- name: Prepare an image (initramfs rebuilt inside it, binding left for its first boot)
  accel.openstack.vfio_pci:
    root: /mnt/image
    devices: ["10de:2330", "10de:22a3"]
"""

RETURN = r"""
devices:
  description:
    - Every device that ends up on vfio-pci, with C(address), C(vendor_id), C(product_id), C(class_code),
      C(iommu_group), C(driver) (now), C(requested), C(reason) (V(requested), V(shares the IOMMU group)) and
      C(bound_by) (V(id) or V(address)).
  returned: always
  type: list
  elements: dict
ids:
  description: The vendor:product IDs written to C(options vfio-pci ids=).
  returned: always
  type: list
  elements: str
  sample: ["10de:10f7", "10de:1ad6", "10de:1ad7", "10de:1e30"]
by_address:
  description: Devices bound through C(driver_override) (their vendor:product is split), not through C(ids=).
  returned: always
  type: list
  elements: str
iommu_needed:
  description: Whether the host needs the IOMMU on (devices for passthrough, or vGPU/MIG cards in the policy).
  returned: always
  type: bool
groups:
  description: The IOMMU groups involved, with their C(members) and the C(refused) ones (only with O(force)).
  returned: always
  type: list
  elements: dict
files:
  description: Files written or removed (paths inside the root).
  returned: always
  type: list
  elements: str
bound_now:
  description: Devices bound to vfio-pci on the running system by this run (O(bind=now)).
  returned: always
  type: list
  elements: str
reboot_required:
  description: Whether a selected device is not on vfio-pci yet (it will be after the next boot).
  returned: always
  type: bool
waiting_for_reboot:
  description: The selected devices not on vfio-pci yet.
  returned: always
  type: list
  elements: str
commands:
  description: Commands and runtime bindings considered, each with C(command), C(status) and C(reason).
  returned: always
  type: list
  elements: dict
pending_commands:
  description: Commands still to run on the host itself (or that would run, in check mode).
  returned: always
  type: list
  elements: str
  sample: ["modprobe vfio-pci"]
"""

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import iommu_safety
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule
from ansible_collections.accel.openstack.plugins.module_utils._host.sysfs import read_host
from ansible_collections.accel.openstack.plugins.module_utils._host.vfio import configure
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy


class VfioPciModule(HostModule):
    argument_spec = {
        "devices": {"type": "list", "elements": "str", "default": []},
        "policy": {"type": "list", "elements": "raw", "default": []},
        "bind": {"type": "str", "default": "boot", "choices": ["boot", "now"]},
        "force": {"type": "bool", "default": False},
        "allow_drivers": {"type": "list", "elements": "str", "default": []},
        "blacklist": {"type": "list", "elements": "str", "default": []},
        "initramfs": {"type": "bool", "default": True},
    }

    def run(self) -> dict:
        if iommu_safety.netaddr is None:
            raise AccelError(missing_required_lib("netaddr"))
        policy = parse_policy(self.params["policy"], "policy") if self.params["policy"] else []
        result = configure(self.host, self.commands, read_host(self.host), self.params, policy)
        for warning in result.pop("warnings_list"):
            self.warn(warning)
        return result


def main():
    VfioPciModule()()


if __name__ == "__main__":
    main()
