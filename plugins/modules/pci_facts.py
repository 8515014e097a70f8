#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: pci_facts
short_description: Discover accelerators, IOMMU groups, NUMA, SR-IOV, vGPU and MIG state as facts
version_added: 1.0.0
description:
  - Reads the host's PCI devices from sysfs under O(root) (C(/sys/bus/pci/devices) and the links the
    kernel makes from there), its IOMMU groups, NUMA nodes, SR-IOV state, mediated-device (vGPU) types,
    the kernel command line and the CPU vendor, and returns them as C(accel_*) facts.
  - Device names come from the host's PCI ID database (C(pci.ids)) when it has one; otherwise they are null.
  - NVIDIA vGPU 17 and newer on SR-IOV virtual functions (Ada, Hopper) has no mdev bus; the types a VF can
    take (C(nvidia/creatable_vgpu_types)) are reported in C(mdev_types) with C(mechanism=nvidia_vgpu_vf).
  - NVIDIA MIG state (mode current and pending, GPU instances with profile and placement) is added per GPU
    and matched by PCI bus id, never by GPU index. On a live host (O(root=/)) it comes from C(nvidia-smi -q -x)
    and C(nvidia-smi mig -lgi -i <bus id>) when C(nvidia-smi) exists. With any other root nothing is run on
    the machine executing the module; recorded outputs inside the root stand in for the tool
    (C(/var/lib/accel-openstack/nvidia-smi/q-x.xml) and C(/var/lib/accel-openstack/nvidia-smi/mig-lgi/<address>.txt)).
  - What cannot be read (a broken link, a truncated or unreadable attribute, a device that vanishes during the
    read) is reported as a warning naming the path; the rest of the host is still reported.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  device_classes:
    description:
      - PCI class-code hex prefixes of the devices to report (2, 4 or 6 hex digits).
      - Devices with SR-IOV capability and the virtual functions of reported devices are always reported.
      - The single value V(all) reports every PCI device.
    type: list
    elements: str
    default: ["03", "12"]
attributes:
  check_mode:
    support: full
    description: The module only reads; it runs the same in check mode.
  diff_mode:
    support: none
    description: Nothing changes, so there is no diff.
  facts:
    support: full
    description: Sets the C(accel_*) facts.
notes:
  - The module never changes the host.
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Discover accelerators on the live host
  accel.openstack.pci_facts:

- name: Discover every PCI device in a mounted image
  accel.openstack.pci_facts:
    root: /mnt/image
    device_classes: [all]

- name: Show the GPUs that can be passed through on their own
  ansible.builtin.debug:
    msg: "{{ accel_pci_devices | selectattr('passthrough_viable') | map(attribute='address') | list }}"
"""

RETURN = r"""
ansible_facts:
  description: The discovered facts.
  returned: always
  type: dict
  contains:
    accel_pci_devices:
      description:
        - Reported devices sorted by address. Each has C(address), C(vendor_id), C(product_id),
          C(subsystem_vendor_id), C(subsystem_product_id) (4 lowercase hex), C(class_code) (6 lowercase hex),
          C(vendor_name), C(product_name) (null without a PCI ID database), C(driver), C(numa_node)
          (null when the kernel reports -1), C(iommu_group), C(physfn) (the PF of a VF), C(sriov_totalvfs),
          C(sriov_numvfs), C(sriov_vf_product_id) (the device ID of the VFs a PF makes, from C(sriov_vf_device)),
          C(sriov_vfs), C(mdev_types) (each with C(type), C(name), C(available_instances),
          C(device_api), C(description), C(mechanism)), C(current_vgpu_type), C(supported_vgpu_types) (every vGPU
          type the GPU supports, C(type) and C(name), from a VF's C(nvidia/supported_vgpu_types)), C(is_boot_vga),
          C(mig) (null, or C(mode_current), C(mode_pending), C(gpu_instances)), C(serial) and C(gpu_uuid) (the
          board serial and GPU UUID C(nvidia-smi -q -x) gives, null otherwise), C(iommu_group_peers) (the other
          endpoints of the
          IOMMU group), C(passthrough_viable) and C(passthrough_note).
        - C(accelerator) is what the device catalog knows of the model (null when it does not know it), with
          C(vendor), C(model), C(role) (V(pf) for a whole device or an SR-IOV PF, V(vf) for a VF), C(memory_gb),
          C(memory_type), C(vf_product_id), C(sriov_mechanism) (V(amd_mxgpu_gim), V(intel_i915_sriov),
          V(intel_xe_sriov), V(nvidia_vgpu_sriov)), C(vf_creation) (V(sriov_numvfs), or V(driver_parameter) where
          the PF driver makes the VFs itself), C(resource_class) (the class the catalog suggests), C(partition_modes)
          (published compute and memory modes) and, for a PF, C(partition) (null, or C(compute), C(memory),
          C(profile), C(vf_memory_mb), C(source), which is V(driver) when amdgpu shows C(current_compute_partition) and
          C(current_memory_partition), else C(vf_count) and the count of VFs, from the VF count the vendor ties to a mode).
          A VF has C(memory_gb) null and C(vf_memory_mb), its share of its PF's memory in that partition (null when
          none is published).
      type: list
      elements: dict
      sample:
        - address: "0000:3b:00.0"
          vendor_id: "10de"
          product_id: "20f1"
          class_code: "030200"
          product_name: "GA100 [A100 PCIe 40GB]"
          driver: nvidia
          numa_node: 0
          iommu_group: 31
          passthrough_viable: true
    accel_unknown_accelerators:
      description:
        - Devices of an accelerator class (V(0300) VGA, V(0302) 3D controller, V(0380) display controller,
          V(1200) processing accelerator) that the device catalog does not know, whatever O(device_classes)
          selects; VFs and the boot VGA device (the host's console, never offered) are left out.
        - Each has C(kind) (V(unknown_accelerator)), C(address), C(vendor_id), C(product_id), C(class_code),
          C(class_name), C(vendor_name), C(product_name) (null without a name in C(pci.ids)), C(driver), C(numa_node),
          C(iommu_group), C(sriov_totalvfs) and C(advice) (the device policy entry and the catalog entry to add).
      type: list
      elements: dict
      sample:
        - {kind: unknown_accelerator, address: "0000:41:00.0", vendor_id: "abcd", product_id: "0302",
           class_code: "030200", class_name: 3D controller, driver: vfio-pci, numa_node: 1, iommu_group: 41}
    accel_iommu_groups:
      description: Every IOMMU group holding a reported device, with all its members sorted.
      type: dict
      sample: {"17": ["0000:17:00.0", "0000:18:00.0", "0000:18:00.1"]}
    accel_numa_nodes:
      description:
        - NUMA nodes with C(id), C(cpus) (list of CPU numbers) and C(memory_mb).
        - C(hugepages) maps each huge page size in KiB to its pool on the node, C({total, free}) (the
          node's C(hugepages/hugepages-<size>kB/nr_hugepages) and C(free_hugepages)); empty without pools.
        - C(siblings) lists the node's CPUs by physical core (C(thread_siblings_list)), cores in order of
          their first CPU; empty when the CPU topology cannot be read.
      type: list
      elements: dict
      sample:
        - {id: 0, cpus: [0, 1, 2, 3], memory_mb: 65536, hugepages: {"2048": {total: 1024, free: 1024}},
           siblings: [[0, 2], [1, 3]]}
    accel_cpu_vendor:
      description: V(intel), V(amd) or V(other).
      type: str
    accel_iommu_enabled:
      description: Whether the kernel runs with an IOMMU (IOMMU groups or IOMMU units exist).
      type: bool
    accel_kernel_cmdline:
      description: The running kernel's command line (C(/proc/cmdline)).
      type: str
    accel_kernel_release:
      description: The running kernel's release (C(/proc/sys/kernel/osrelease), what C(uname -r) prints); left out
        when the root has none, so that an inventory variable of the same name stands in.
        The live-migration rules read it (P(accel.openstack.migration_targets#lookup)).
      type: str
    accel_boot_state:
      description:
        - What the shared-GPU restore unit (M(accel.openstack.gpu_boot_unit)) found at the last boot, from
          C(/var/lib/accel-openstack/boot-state.json); null when the unit has not run on this root.
        - C(status) is V(ok) when the host matched its recorded state (VFs, MIG mode and instances, vGPU types,
          the mediated devices instances hold), V(failed) when something is missing or the restore stopped,
          V(unknown) when the file is not a boot state; C(missing) lists one sentence per missing item,
          C(message) says why the restore stopped, C(time) when it ran (UTC).
      type: dict
      sample: {status: ok, missing: [], message: null, time: "2026-01-01T06:00:00Z"}
"""

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule


class PciFactsModule(HostModule):
    argument_spec = {"device_classes": {"type": "list", "elements": "str", "default": ["03", "12"]}}

    def run(self) -> dict:
        facts, _warnings = discover(self.host, self.params["device_classes"], run=self.run_tool)
        return {"changed": False, "ansible_facts": facts}


def main():
    PciFactsModule()()


if __name__ == "__main__":
    main()
