# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Human-readable summaries of discovered facts (the lines ``make demo`` prints per host)."""

from __future__ import annotations


def _model(device: dict) -> str:
    name = device.get("product_name")
    ids = f"{device.get('vendor_id')}:{device.get('product_id')}"
    return f"{name} [{ids}]" if name else f"[{ids}] (no PCI ID database)"


def discovery_report(facts: dict) -> list[str]:
    """One line per reported device, VFs folded into their PF; facts as pci_facts sets them."""
    devices = facts.get("accel_pci_devices") or []
    iommu = "on" if facts.get("accel_iommu_enabled") else "OFF"
    numa = len(facts.get("accel_numa_nodes") or [])
    lines = [
        f"cpu {facts.get('accel_cpu_vendor', 'other')}, IOMMU {iommu}, {numa} NUMA node(s), {len(devices)} device(s)"
    ]
    vfs_by_pf: dict[str, list[dict]] = {}
    for device in devices:
        if device.get("physfn"):
            vfs_by_pf.setdefault(device["physfn"], []).append(device)
    for device in devices:
        if device.get("physfn") and device["physfn"] in {d["address"] for d in devices}:
            continue
        parts = [f"{device['address']} {_model(device)}"]
        parts.append(f"driver={device.get('driver') or 'none'}")
        parts.append(f"numa={device['numa_node'] if device.get('numa_node') is not None else '-'}")
        if device.get("is_boot_vga"):
            parts.append("BOOT VGA (the host's console: never offered)")
        model = _catalog_model(device)
        if model:
            parts.append(model)
        if device.get("sriov_totalvfs") is not None:
            parts.append(f"SR-IOV {device.get('sriov_numvfs') or 0}/{device['sriov_totalvfs']} VFs")
        vfs = vfs_by_pf.get(device["address"], [])
        types = {t["type"]: t for t in device.get("mdev_types") or []}
        for vf in vfs:
            for t in vf.get("mdev_types") or []:
                types.setdefault(t["type"], t)
        if types:
            mechanism = {t.get("mechanism", "mdev") for t in types.values()}
            names = ", ".join(f"{t['type']}={t.get('name')}" for t in list(types.values())[:4])
            more = f" +{len(types) - 4} more" if len(types) > 4 else ""
            where = " on VFs" if vfs and not device.get("mdev_types") else ""
            parts.append(f"vGPU ({'/'.join(sorted(mechanism))}{where}): {names}{more}")
        mig = device.get("mig")
        if mig:
            state = f"MIG {mig.get('mode_current')}"
            if mig.get("mode_pending") != mig.get("mode_current"):
                state += f" (pending {mig.get('mode_pending')}: needs a GPU reset)"
            if mig.get("gpu_instances"):
                state += ": " + ", ".join(f"{gi['profile']}@{gi['placement']['start']}" for gi in mig["gpu_instances"])
            parts.append(state)
        verdict = "passthrough OK" if device.get("passthrough_viable") else "passthrough NOT viable"
        parts.append(f"{verdict} ({device.get('passthrough_note')})")
        lines.append(" | ".join(parts))
    for unknown in facts.get("accel_unknown_accelerators") or []:
        if not isinstance(unknown, dict):
            continue
        numa = unknown.get("numa_node")
        group = unknown.get("iommu_group")
        lines.append(
            f"unknown accelerator {unknown.get('address')} {_model(unknown)} ({unknown.get('class_name')}) | "
            f"driver={unknown.get('driver') or 'none'} | numa={numa if numa is not None else '-'} | "
            f"iommu_group={group if group is not None else '-'} | {unknown.get('advice')}"
        )
    return lines


def _catalog_model(device: dict) -> str | None:
    """``AMD Instinct MI300X, 192 GB HBM3, SR-IOV amd_mxgpu_gim, partition CPX/NPS4 (vf_count: 8 VFs)``."""
    model = device.get("accelerator")
    if not isinstance(model, dict) or device.get("physfn"):
        return None
    text = f"{model.get('vendor')} {model.get('model')}"
    if model.get("memory_gb"):
        text += f", {model['memory_gb']} GB {model.get('memory_type') or ''}".rstrip()
    if model.get("sriov_mechanism"):
        text += f", SR-IOV {model['sriov_mechanism']}"
    partition = model.get("partition")
    if isinstance(partition, dict):
        mode = partition.get("profile") or "/".join(p for p in (partition.get("compute"), partition.get("memory")) if p)
        memory = f", {partition['vf_memory_mb']} MB per VF" if partition.get("vf_memory_mb") else ""
        text += f", partition {mode}{memory} ({partition.get('source')})"
    return text
