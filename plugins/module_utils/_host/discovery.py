# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Discovery: a host's accelerators as the ``accel_*`` facts that ``pci_facts`` sets (and documents)."""

from __future__ import annotations

import re

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.boot_state import read_boot_state
from ansible_collections.accel.openstack.plugins.module_utils._host.iommu import enable_advice
from ansible_collections.accel.openstack.plugins.module_utils._host.nvidia_smi import (
    Runner,
    query_xml,
    read_identities,
    read_mig_state,
)
from ansible_collections.accel.openstack.plugins.module_utils._host.pci_ids import lookup_names
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._host.sysfs import HostHardware, PciDevice, read_host

DEFAULT_DEVICE_CLASSES = ("03", "12")
CLASS_PREFIX_RE = re.compile(r"^[0-9a-f]{2}([0-9a-f]{2}){0,2}\Z")


class DiscoveryError(AccelError):
    """Bad input to discovery (not a host problem: those become warnings)."""


def normalize_device_classes(device_classes) -> tuple[str, ...] | None:
    """None means every device (`all`); otherwise lowercase class-code hex prefixes."""
    if device_classes is None:
        return DEFAULT_DEVICE_CLASSES
    values = [str(c).strip().lower() for c in device_classes]
    if values == ["all"]:
        return None
    for value in values:
        if value == "all":
            raise DiscoveryError("device_classes: 'all' must be the only value; drop the other entries")
        if not CLASS_PREFIX_RE.match(value.removeprefix("0x")):
            raise DiscoveryError(
                f"device_classes: {value!r} is not a PCI class-code prefix; give 2, 4 or 6 hex digits, "
                "e.g. '03' (display), '12' (processing accelerator), '0302' (3D controller), or 'all'"
            )
    return tuple(v.removeprefix("0x") for v in values)


def select_devices(hw: HostHardware, classes: tuple[str, ...] | None) -> list[PciDevice]:
    """The devices to report: by class prefix, plus SR-IOV capable devices and the VFs of reported PFs."""
    if classes is None:
        return sorted(hw.devices.values(), key=lambda d: d.address)
    chosen = {
        d.address
        for d in hw.devices.values()
        if (d.class_code and d.class_code.startswith(classes)) or d.sriov_totalvfs is not None
    }
    chosen |= {d.address for d in hw.devices.values() if d.physfn in chosen}
    return [hw.devices[a] for a in sorted(chosen)]


def passthrough_viability(hw: HostHardware, device: PciDevice) -> tuple[bool, str]:
    """Can this device go to a VM by itself (with only its own card's functions)?"""
    if not hw.iommu_enabled:
        return False, f"the IOMMU is off on this host; to turn it on, {enable_advice(hw.cpu_vendor, hw.kernel_cmdline)}"
    if device.is_boot_vga:
        return False, "it is the boot VGA device the host's console uses"
    if device.iommu_group is None:
        return False, "the device is in no IOMMU group"
    peers = hw.group_peers(device.address)
    foreign = [p for p in peers if p.slot != device.slot]
    if foreign:
        listed = ", ".join(f"{p.address} ({p.driver or 'no driver'})" for p in foreign)
        return False, f"IOMMU group {device.iommu_group} also holds other devices: {listed}"
    if peers:
        listed = ", ".join(p.address for p in peers)
        return (
            True,
            f"together with the other functions of its card in IOMMU group {device.iommu_group}: {listed}",
        )
    return True, f"alone in IOMMU group {device.iommu_group}"


def discover(root: str | HostRoot = "/", device_classes=None, run: Runner | None = None) -> tuple[dict, list[str]]:
    """Read the host under ``root`` (a path or a HostRoot); returns (facts, warnings).

    Raises HostRootError for an unusable root and DiscoveryError for bad ``device_classes``.
    """
    classes = normalize_device_classes(device_classes)
    host = root if isinstance(root, HostRoot) else HostRoot(root)
    hw = read_host(host)
    selected = select_devices(hw, classes)
    smi_xml = query_xml(host, run) if any(d.vendor_id == "10de" for d in selected) else None
    mig = read_mig_state(host, run, smi_xml) if smi_xml is not None else {}
    identities = read_identities(host, smi_xml)
    wanted = set()
    for dev in selected:
        for other in [dev] + hw.group_peers(dev.address):
            if other.vendor_id and other.product_id:
                wanted.add((other.vendor_id, other.product_id))
    names = lookup_names(host, wanted)

    def product_name(dev: PciDevice):
        return names.get((dev.vendor_id, dev.product_id))

    devices = []
    for dev in selected:
        viable, note = passthrough_viability(hw, dev)
        devices.append(
            {
                "address": dev.address,
                "vendor_id": dev.vendor_id,
                "product_id": dev.product_id,
                "subsystem_vendor_id": dev.subsystem_vendor_id,
                "subsystem_product_id": dev.subsystem_product_id,
                "class_code": dev.class_code,
                "vendor_name": names.get((dev.vendor_id, None)),
                "product_name": product_name(dev),
                "driver": dev.driver,
                "numa_node": dev.numa_node,
                "iommu_group": dev.iommu_group,
                "physfn": dev.physfn,
                "sriov_totalvfs": dev.sriov_totalvfs,
                "sriov_numvfs": dev.sriov_numvfs,
                "sriov_vf_product_id": dev.sriov_vf_product_id,
                "sriov_vfs": list(dev.virtfns),
                "mdev_types": [t.as_fact() for t in dev.mdev_types],
                "current_vgpu_type": dev.current_vgpu_type,
                "supported_vgpu_types": list(dev.supported_vgpu_types),
                "is_boot_vga": dev.is_boot_vga,
                "mig": mig.get(dev.address),
                "serial": (identities.get(dev.address) or {}).get("serial"),
                "gpu_uuid": (identities.get(dev.address) or {}).get("uuid"),
                "iommu_group_peers": [
                    {
                        "address": p.address,
                        "class_code": p.class_code,
                        "driver": p.driver,
                        "product_name": product_name(p),
                    }
                    for p in hw.group_peers(dev.address)
                ],
                "passthrough_viable": viable,
                "passthrough_note": note,
            }
        )
    reported_groups = {d.iommu_group for d in selected if d.iommu_group is not None}
    facts = {
        "accel_pci_devices": devices,
        "accel_iommu_groups": {str(g): sorted(hw.iommu_groups[g]) for g in sorted(reported_groups)},
        "accel_numa_nodes": [{"id": n.id, "cpus": n.cpus, "memory_mb": n.memory_mb} for n in hw.numa_nodes],
        "accel_cpu_vendor": hw.cpu_vendor,
        "accel_iommu_enabled": hw.iommu_enabled,
        "accel_kernel_cmdline": hw.kernel_cmdline,
        "accel_boot_state": read_boot_state(host),
    }
    return facts, list(host.warnings)
