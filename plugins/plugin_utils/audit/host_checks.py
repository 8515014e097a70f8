# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host findings: what the host's state (pci_facts) says about the devices its Nova config hands out."""

from __future__ import annotations

from collections import Counter

from ansible_collections.accel.openstack.plugins.module_utils._host import device_catalog
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import unknown_advice
from ansible_collections.accel.openstack.plugins.module_utils._host.iommu import enable_advice
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_address, is_pci_id, normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._nova import deployed, naming
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import host_devices
from ansible_collections.accel.openstack.plugins.plugin_utils.audit import lost_state
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding

PREPARE = "run playbooks/prepare_hosts.yml for this host"


def _shown(addresses: list[str], most: int = 6) -> str:
    return ", ".join(addresses[:most]) + (f" and {len(addresses) - most} more" if len(addresses) > most else "")


def check_host(cloud, host: str) -> list[dict]:
    facts = cloud.hosts.get(host) or {}
    compute = cloud.compute_config(host)
    devices = host_devices(facts)
    by_address = {normalize_address(d["address"]): d for d in devices}
    claimed = deployed.claims(compute, devices)
    found: list[dict] = []
    passthrough = [a for a in claimed if naming.nova_device_type(by_address[a]) != naming.TYPE_VF]
    if facts.get("accel_iommu_enabled") is False:
        found += _iommu_off(cloud, host, facts, claimed, _vgpu_parents(compute, by_address))
    if facts.get("accel_iommu_enabled"):
        for address in sorted(claimed):
            device = by_address[address]
            if device.get("passthrough_viable") is False:
                found.append(
                    finding(
                        host,
                        "group_not_viable",
                        f"{address} is handed out by device_spec but cannot go to a VM alone: "
                        f"{device.get('passthrough_note') or 'its IOMMU group is shared'}",
                        "bind every device of the IOMMU group to vfio-pci and hand them out together, move the card "
                        "to a slot with its own group (ACS), or remove the device from [pci] device_spec",
                    )
                )
    # One row per model, driver and managed tag on a host: eight GPUs on the wrong driver are one finding.
    unbound: dict[tuple, list[str]] = {}
    for address in passthrough:
        device = by_address[address]
        tags = claimed[address]
        unmanaged = str(tags.get("managed", "yes")).lower() in ("no", "false", "0", "off")
        if device.get("driver") != "vfio-pci" and not device.get("mdev_types"):
            model = device.get("product_name") or device.get("product_id")
            unbound.setdefault((str(model), device.get("driver") or "no driver", unmanaged), []).append(address)
    for (model, driver, unmanaged), addresses in sorted(unbound.items()):
        which = (
            f"{addresses[0]} ({model}) is"
            if len(addresses) == 1
            else f"{len(addresses)} devices ({model}: {', '.join(addresses)}) are"
        )
        found.append(
            finding(
                host,
                "not_bound_vfio",
                f"{which} handed out for passthrough but bound to {driver}"
                + (" and device_spec says managed: no, so libvirt will not rebind it" if unmanaged else ""),
                f"bind {'it' if len(addresses) == 1 else 'them'} to vfio-pci at boot (vfio-pci.ids, driver blacklist): "
                f"{PREPARE}, then reboot (accel_reboot: allowed) if the stage has already set that up",
                severity="error" if unmanaged else None,
            )
        )
    found += _lost_vfs(cloud, host)
    found += _lost_vgpu_types(cloud, host)
    found += _vfs(cloud, host, compute, devices, by_address)
    found += _vgpu(host, compute, by_address)
    found += _mig(cloud, host, devices)
    found += _unknown_accelerators(host, facts, claimed)
    return found


def _unknown_accelerators(host: str, facts: dict, claimed: dict) -> list[dict]:
    """Accelerators the catalog does not know and Nova's config does not hand out. The facts may come from
    a fact cache: only IDs that are 4 hex digits and a 6-hex-digit class reach the message and the fix."""
    found = []
    for item in facts.get("accel_unknown_accelerators") or []:
        if not isinstance(item, dict) or not is_address(item.get("address")):
            continue
        address = normalize_address(item["address"])
        if address in claimed:
            continue
        vendor, product = item.get("vendor_id"), item.get("product_id")
        known = is_pci_id(vendor) and is_pci_id(product)
        class_code = item.get("class_code")
        kind = (
            device_catalog.class_name(class_code) if device_catalog.is_accelerator_class(class_code) else "accelerator"
        )
        found.append(
            finding(
                host,
                "unknown_accelerator",
                f"{address} ({f'{vendor}:{product}' if known else 'IDs unreadable'}, {kind}) is an accelerator the "
                "device catalog does not know, and Nova's config does not hand it out",
                unknown_advice(vendor if known else None, product if known else None),
            )
        )
    return found


def _vgpu_parents(compute: dict, by_address: dict) -> list[str]:
    """The devices the deployed ``[devices]`` config gives Nova for vGPUs on this host."""
    parents: set[str] = set()
    for mdev_type, addresses, _mdev_class in deployed.mdev_types(compute):
        if addresses:
            parents |= {normalize_address(a) for a in addresses if is_address(a)}
        else:  # no device_addresses: Nova takes every device that offers the type
            parents |= {a for a, d in by_address.items() if _offers(d, mdev_type)}
    return sorted(parents)


def _iommu_off(cloud, host: str, facts: dict, claimed: dict, vgpu_parents: list[str]) -> list[dict]:
    """An IOMMU that is off: an error where Nova's config still hands devices out, a warning where the
    device policy selects devices that the Nova config stage therefore keeps from Nova."""
    advice = enable_advice(facts.get("accel_cpu_vendor"), facts.get("accel_kernel_cmdline"))
    if claimed or vgpu_parents:
        given = []
        if claimed:
            given.append(f"[pci] device_spec hands out {len(claimed)} device(s) ({_shown(sorted(claimed))})")
        if vgpu_parents:
            given.append(f"[devices] gives {len(vgpu_parents)} device(s) to vGPUs ({_shown(vgpu_parents)})")
        return [
            finding(
                host,
                "iommu_off",
                f"the IOMMU is off, yet {' and '.join(given)}; no instance can get them",
                f"{advice}; until then run playbooks/nova_config.yml, which takes them out of Nova's config",
            )
        ]
    selection = cloud.rendering.selections.get(host) if cloud.rendering is not None else None
    withheld = selection.withheld_addresses() if selection is not None else []
    if not withheld:
        return []
    return [
        finding(
            host,
            "iommu_off",
            f"the IOMMU is off, so the {len(withheld)} device(s) the device policy selects here "
            f"({_shown(withheld)}) are not offered: they are kept out of Nova's config and Placement",
            advice,
            severity="warning",
        )
    ]


def _vfs(cloud, host: str, compute: dict, devices: list[dict], by_address: dict) -> list[dict]:
    found = []
    expected: dict[str, int] = {}
    for entry in cloud.policy_entries:
        if entry.sriov_numvfs:
            for device in devices:
                if not device.get("sriov_totalvfs") or device.get("physfn"):
                    continue
                if entry.matches_ids(device.get("vendor_id"), device.get("product_id")) and entry.matches_address(
                    device["address"]
                ):
                    expected[normalize_address(device["address"])] = entry.sriov_numvfs
    for spec in deployed.device_specs(compute)[0]:  # the specs nova-compute reads (refused ones are reported)
        address = spec.get("address")
        if not isinstance(address, str) or not is_address(address):
            continue
        address = normalize_address(address)
        if address in by_address:
            continue
        pfs = [
            d
            for d in devices
            if d["address"].rsplit(":", 1)[0] == address.rsplit(":", 1)[0]
            and (d.get("sriov_totalvfs") or 0) > (d.get("sriov_numvfs") or 0)
        ]
        if pfs:
            pf = normalize_address(pfs[0]["address"])
            expected.setdefault(pf, pfs[0].get("sriov_totalvfs") or 0)
            expected[pf] = max(expected[pf], (pfs[0].get("sriov_numvfs") or 0) + 1)
        else:
            found.append(
                finding(
                    host,
                    "device_missing",
                    f"[pci] device_spec names {address}, which the host does not have",
                    "check the card (lspci, dmesg), or correct the address in device_spec",
                )
            )
    lost = lost_state.lost(cloud, host)["vfs"]
    for address, wanted in sorted(expected.items()):
        if address in lost:
            continue  # reported with Placement's recorded inventory (_lost_vfs)
        device = by_address.get(address)
        have = (device or {}).get("sriov_numvfs") or 0
        if device is not None and have < wanted:
            found.append(
                finding(
                    host,
                    "vfs_missing",
                    f"{address} has {have} VF(s); the policy or the deployed device_spec expects {wanted} "
                    "(VFs are lost on reboot unless they are recreated at boot)",
                    f"create the VFs and make them come back at boot: {PREPARE} (sriov_numvfs in the policy)",
                )
            )
    return found


def _lost_vfs(cloud, host: str) -> list[dict]:
    found = []
    for pf, item in sorted(lost_state.lost(cloud, host)["vfs"].items()):
        wanted = item["recorded"]
        found.append(
            finding(
                host,
                "vfs_missing",
                f"{pf} has {item['have']} VF(s), yet Placement's {item['provider']} still holds {wanted} "
                f"{item['resource_class']} for its VFs, which the deployed [pci] device_spec hands out: the VFs were "
                "lost (a reboot without the VFs recreated at boot)",
                f"restore the {wanted} VFs before nova-compute restarts (a restart now would remove the capacity "
                f"from Placement): accel.openstack.sriov_vfs with devices: [{pf}] and numvfs: {wanted}, or {PREPARE} "
                f"(sriov_numvfs: {wanted} in the policy also brings them back at boot), or at once: "
                f"echo {wanted} > /sys/bus/pci/devices/{pf}/sriov_numvfs",
            )
        )
    return found


def _lost_vgpu_types(cloud, host: str) -> list[dict]:
    found = []
    for pf, item in sorted(lost_state.lost(cloud, host)["vgpu"].items()):
        vfs = item["vfs"]
        vgpu_type = item["vgpu_type"]
        held = f"; its other {item['holding']} VF(s) hold type {vgpu_type}" if item["holding"] else ""
        if vgpu_type is not None:
            module = (
                f"accel.openstack.nvidia_vgpu with devices: [{pf}], type: {vgpu_type} and vfs: "
                f"{len(vfs) + item['holding']}"
            )
        else:
            module = f"accel.openstack.nvidia_vgpu with devices: [{pf}] and the type the GPU had"
        found.append(
            finding(
                host,
                "vgpu_type_missing",
                f"{len(vfs)} VF(s) of {pf} ({_shown(vfs)}) have no vGPU type (nvidia/current_vgpu_type is 0) while "
                f"the deployed [pci] device_spec hands them out{held}: the type was reset (a reboot without the "
                "type set again at boot)",
                f"restore the vGPU type before nova-compute restarts: {module}, or {PREPARE} (the host_gpu_sharing "
                "role, whose boot unit sets the type at every boot); do not render the Nova config again from "
                "today's state, which would take the VFs away from Nova",
            )
        )
    return found


def _offers(device: dict, mdev_type: str) -> bool:
    return str(device.get("current_vgpu_type") or "") == mdev_type or any(
        t.get("type") == mdev_type for t in device.get("mdev_types") or []
    )


def _vgpu(host: str, compute: dict, by_address: dict) -> list[dict]:
    found = []
    for mdev_type, addresses, _mdev_class in deployed.mdev_types(compute):
        if addresses:
            lacking = [
                a
                for a in addresses
                if not is_address(a) or normalize_address(a) not in by_address
                or not _offers(by_address[normalize_address(a)], mdev_type)
            ]  # fmt: skip
        else:
            lacking = [] if any(_offers(d, mdev_type) for d in by_address.values()) else ["any device"]
        if lacking:
            found.append(
                finding(
                    host,
                    "vgpu_type_missing",
                    f"[devices] enables vGPU type {mdev_type}, which {_shown(lacking)} does not offer "
                    "(vGPU host driver missing, VFs not created, or the type reset after a reboot)",
                    f"install the vGPU host driver and set the type per device: {PREPARE}, then restart nova-compute",
                )
            )
    return found


def _mig(cloud, host: str, devices: list[dict]) -> list[dict]:
    found = []
    for entry in cloud.policy_entries:
        if entry.mode != "mig" or not entry.mig_layout:
            continue
        wanted = Counter({str(i["profile"]): int(i["count"]) for i in entry.mig_layout})
        for device in devices:
            if device.get("physfn") or not entry.matches_ids(device.get("vendor_id"), device.get("product_id")):
                continue
            if not entry.matches_address(device["address"]):
                continue
            mig = device.get("mig") or {}
            have = Counter(str(i.get("profile")) for i in mig.get("gpu_instances") or [])
            if mig.get("mode_current") != "enabled" or have != wanted:
                shown = ", ".join(f"{n}x {p}" for p, n in sorted(have.items())) or "none"
                found.append(
                    finding(
                        host,
                        "mig_layout_drift",
                        f"{device['address']}: MIG mode {mig.get('mode_current') or 'unknown'}, instances {shown}; "
                        f"the policy ({entry.name}) wants " + ", ".join(f"{n}x {p}" for p, n in sorted(wanted.items())),
                        f"drain the GPU, then {PREPARE} (accel.openstack.nvidia_mig restores the layout, also at boot)",
                    )
                )
    return found
