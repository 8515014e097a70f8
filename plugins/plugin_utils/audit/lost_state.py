# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host state lost at a reboot while Nova's config and Placement still count on it.

Two kinds, both judged against what the cloud recorded, not only against the device policy:

- VFs lost: a PF whose provider in Placement still holds the inventory of its VFs (the resource class the
  deployed ``[pci] device_spec`` gives them) while the host now has fewer VFs than that inventory.
- vGPU type lost: a VF of a vGPU 17+ GPU (``nvidia/current_vgpu_type``) that the deployed device_spec hands
  out, whose type went back to 0.

Restarting nova-compute, or rendering the Nova config again from today's host state, would make Nova drop
that capacity; the host state must be restored instead. The host findings report them once; the drift and
Placement checks leave the devices concerned to them.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_address, normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._nova import deployed, device_ids
from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import nova_resource_class
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import host_devices
from ansible_collections.accel.openstack.plugins.module_utils._placement.quarantine import address_of

MAX_VGPU_TYPE = 10**6


def _spec_classes(compute: dict, pf: dict) -> set[str]:
    """Resource classes the deployed device_spec gives to devices other than the PF itself."""
    classes = set()
    pf_address = normalize_address(pf["address"])
    for spec in deployed.device_specs(compute)[0]:  # as nova-compute reads them (IDs as Nova parses them)
        vendor, product = device_ids.spec_ids(spec)
        if vendor not in (device_ids.ANY, pf.get("vendor_id")):
            continue
        address = spec.get("address")
        if isinstance(address, str) and is_address(address) and normalize_address(address) == pf_address:
            continue  # the PF itself
        if product == pf.get("product_id") and not address:
            continue  # the PF's own model, matched by ID
        if spec.get("resource_class"):
            classes.add(nova_resource_class(str(spec["resource_class"])))
        elif device_ids.ANY not in (vendor, product):
            classes.add(f"CUSTOM_PCI_{vendor}_{product}".upper())
    return classes


def lost_vfs(cloud, host: str) -> dict[str, dict]:
    """``{PF address: {have, recorded, provider, provider_uuid, resource_class}}``."""
    nodename = cloud.nodename(host)
    root = cloud.roots.get(nodename)
    if root is None:
        return {}
    compute = cloud.compute_config(host)
    devices = host_devices(cloud.hosts.get(host) or {})
    by_address = {normalize_address(d["address"]): d for d in devices}
    claimed = {normalize_address(a) for a in deployed.claims(compute, devices)}
    found = {}
    for provider in cloud.children.get(root["uuid"], []):
        address = address_of(str(provider.get("name")), nodename)
        pf = by_address.get(address) if address else None
        if pf is None or pf.get("physfn") or not pf.get("sriov_totalvfs") or address in claimed:
            continue
        classes = _spec_classes(compute, pf)
        for rc, inventory in sorted((provider.get("inventories") or {}).items()):
            recorded = int(inventory.get("total") or 0)
            have = sum(1 for d in devices if d.get("physfn") and normalize_address(d["physfn"]) == address)
            if rc in classes and have < recorded:
                found[address] = {
                    "have": have,
                    "recorded": recorded,
                    "provider": str(provider["name"]),
                    "provider_uuid": provider.get("uuid"),
                    "resource_class": rc,
                }
                break
    return found


def _type_id(value: object) -> int | None:
    text = str(value if value is not None else "").strip()
    if not text.isdigit() or int(text) >= MAX_VGPU_TYPE:
        return None
    return int(text)


def lost_vgpu_types(cloud, host: str) -> dict[str, dict]:
    """``{PF address: {vfs: [VF addresses without a type], vgpu_type: the type its other VFs hold or None,
    holding: how many of its handed-out VFs still hold a type}}``."""
    compute = cloud.compute_config(host)
    devices = host_devices(cloud.hosts.get(host) or {})
    claimed = {normalize_address(a) for a in deployed.claims(compute, devices)}
    found: dict[str, dict] = {}
    for device in devices:
        address = normalize_address(device["address"])
        if not device.get("physfn") or address not in claimed or device.get("current_vgpu_type") is None:
            continue
        if not (device.get("supported_vgpu_types") or device.get("mdev_types")):
            continue
        pf = normalize_address(device["physfn"])
        entry = found.setdefault(pf, {"vfs": [], "types": {}, "holding": 0})
        current = _type_id(device.get("current_vgpu_type"))
        if current == 0:
            entry["vfs"].append(address)
        elif current is not None:
            entry["holding"] += 1
            entry["types"][current] = entry["types"].get(current, 0) + 1
    lost = {}
    for pf, entry in sorted(found.items()):
        if not entry["vfs"]:
            continue
        types = sorted(entry["types"].items(), key=lambda item: (-item[1], item[0]))
        vgpu_type = str(types[0][0]) if types else _policy_type(cloud, pf, devices)
        lost[pf] = {"vfs": sorted(entry["vfs"]), "vgpu_type": vgpu_type, "holding": entry["holding"]}
    return lost


def _policy_type(cloud, pf: str, devices: list[dict]) -> str | None:
    """The vGPU type the operator's policy gives the GPU, when every other VF lost it too."""
    device = next((d for d in devices if normalize_address(d["address"]) == pf), None)
    for entry in cloud.policy_entries if device is not None else []:
        matches = entry.is_vgpu and entry.matches_ids(device.get("vendor_id"), device.get("product_id"))
        if matches and _type_id(entry.mdev_type) is not None:
            return str(_type_id(entry.mdev_type))
    return None


def lost(cloud, host: str) -> dict:
    """Both kinds for one host, read once per audit."""
    cache = cloud.__dict__.setdefault("_lost_state", {})
    if host not in cache:
        cache[host] = {"vfs": lost_vfs(cloud, host), "vgpu": lost_vgpu_types(cloud, host)}
    return cache[host]


def lost_addresses(cloud, host: str) -> set[str]:
    """The PFs and VFs whose state was lost: drift and Placement checks leave them to the host findings."""
    state = lost(cloud, host)
    addresses = set(state["vfs"]) | set(state["vgpu"])
    for entry in state["vgpu"].values():
        addresses |= set(entry["vfs"])
    return addresses
