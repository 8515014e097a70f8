# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Discovery: a host's accelerators as the ``accel_*`` facts that ``pci_facts`` sets (and documents)."""

from __future__ import annotations

import re

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import device_catalog
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
    unknown = unknown_accelerators(hw)
    wanted |= {(d.vendor_id, d.product_id) for d in unknown if d.vendor_id and d.product_id}
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
                "accelerator": accelerator_fact(dev, hw),
            }
        )
    reported_groups = {d.iommu_group for d in selected if d.iommu_group is not None}
    facts = {
        "accel_pci_devices": devices,
        "accel_iommu_groups": {str(g): sorted(hw.iommu_groups[g]) for g in sorted(reported_groups)},
        "accel_numa_nodes": [
            {"id": n.id, "cpus": n.cpus, "memory_mb": n.memory_mb, "hugepages": n.hugepages, "siblings": n.siblings}
            for n in hw.numa_nodes
        ],
        "accel_cpu_vendor": hw.cpu_vendor,
        "accel_iommu_enabled": hw.iommu_enabled,
        "accel_kernel_cmdline": hw.kernel_cmdline,
        "accel_boot_state": read_boot_state(host),
        "accel_unknown_accelerators": [unknown_fact(d, names) for d in unknown],
    }
    release = kernel_release(host)
    if release is not None:  # left out when unreadable, so an inventory variable of the name stands in
        facts["accel_kernel_release"] = release
    return facts, list(host.warnings)


def kernel_release(host: HostRoot) -> str | None:
    """The running kernel's release (``/proc/sys/kernel/osrelease``, as ``uname -r`` gives it); null when the
    root has none or it does not look like a release."""
    text = (host.read_text("/proc/sys/kernel/osrelease", limit=256) or "").strip()
    return text if _RELEASE.fullmatch(text) else None


_RELEASE = re.compile(r"\d{1,4}\.\d{1,4}[0-9A-Za-z.+_~-]{0,120}")


# -- what the catalog knows, and what it does not -----------------------------------------------------
CATALOG_FILE = "plugins/module_utils/_host/device_catalog.yml"


def _partition(dev: PciDevice) -> dict | None:
    model = device_catalog.lookup(dev.vendor_id, dev.product_id)
    if model is None:
        return None
    return device_catalog.partition_of(model, dev.sriov_numvfs, dev.compute_partition, dev.memory_partition)


def accelerator_fact(dev: PciDevice, hw: HostHardware) -> dict | None:
    """The catalog's model of ``dev`` (None when unknown): name, role (pf or vf), memory, SR-IOV mechanism,
    the class the catalog suggests, and for a PF the partition mode it runs in (null when unpublished); a
    VF's memory is its share in its PF's partition (``vf_memory_mb``), null where none is published."""
    model = device_catalog.lookup(dev.vendor_id, dev.product_id, is_vf=dev.physfn is not None)
    if model is None:
        return None
    fact = device_catalog.describe(model)
    fact["partition"] = None
    fact["vf_memory_mb"] = None
    if model["role"] == "vf":
        fact["memory_gb"] = None  # the GPU's memory is the PF's; a VF has its share
        pf = hw.devices.get(dev.physfn or "")
        partition = _partition(pf) if pf is not None else None
        fact["vf_memory_mb"] = partition["vf_memory_mb"] if partition else None
    else:
        fact["partition"] = device_catalog.partition_of(
            model, dev.sriov_numvfs, dev.compute_partition, dev.memory_partition
        )
        if fact["partition"] is not None and dev.available_compute_partitions:
            fact["partition"]["available_compute"] = list(dev.available_compute_partitions)
        if fact["partition"] is not None and dev.available_memory_partitions:
            fact["partition"]["available_memory"] = list(dev.available_memory_partitions)
    return fact


def unknown_accelerators(hw: HostHardware) -> list[PciDevice]:
    """Devices of an accelerator class (VGA, 3D, other display, processing accelerator) the catalog does not
    know, whatever ``device_classes`` selects: they are reported, never dropped. Left out: VFs (their PF
    stands for them) and the boot VGA device, which is the host's own console and never offered."""
    return [
        d
        for d in sorted(hw.devices.values(), key=lambda d: d.address)
        if device_catalog.is_accelerator_class(d.class_code)
        and d.physfn is None
        and not d.is_boot_vga
        and device_catalog.lookup(d.vendor_id, d.product_id) is None
    ]


def unknown_advice(vendor_id: str | None, product_id: str | None) -> str:
    """What to do with an accelerator the catalog does not know (IDs are 4 hex digits or None)."""
    if not (vendor_id and product_id):
        return (
            "its vendor or device ID is unreadable, so no policy entry can select it; check the device "
            "(lspci -nn) and its sysfs files, then discover again"
        )
    return (
        f'to offer it to instances, add a device policy entry with vendor_id "{vendor_id}" and product_id '
        f'"{product_id}" (accel_device_policy, docs/device-policy.md); to have it recognised by model (memory, '
        f"SR-IOV, partition modes), add {vendor_id}:{product_id} to the device catalog ({CATALOG_FILE})"
    )


def unknown_fact(dev: PciDevice, names: dict) -> dict:
    return {
        "kind": "unknown_accelerator",
        "address": dev.address,
        "vendor_id": dev.vendor_id,
        "product_id": dev.product_id,
        "class_code": dev.class_code,
        "class_name": device_catalog.class_name(dev.class_code),
        "vendor_name": names.get((dev.vendor_id, None)),
        "product_name": names.get((dev.vendor_id, dev.product_id)),
        "driver": dev.driver,
        "numa_node": dev.numa_node,
        "iommu_group": dev.iommu_group,
        "sriov_totalvfs": dev.sriov_totalvfs,
        "advice": unknown_advice(dev.vendor_id, dev.product_id),
    }
