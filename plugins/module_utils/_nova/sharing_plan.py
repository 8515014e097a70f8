# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the device policy asks of one host's shared GPUs and SR-IOV devices, as module arguments.

:func:`host_plan` matches the policy against the host's discovery facts (``accel_pci_devices``) and
returns the calls the ``host_gpu_sharing`` role makes: ``sriov`` (sriov_vfs), ``vgpu`` (nvidia_vgpu)
and ``mig`` (nvidia_mig, one per GPU address, never by index), and ``boot_unit``: whether the host
needs the restore unit at boot (it shares a GPU or VF, or Nova makes mediated devices on it).

It lives beside the policy it reads: the host layer (``_host/``) knows nothing of Nova or its policy.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._nova import naming
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy


def _selected(entry, devices: list[dict]) -> list[str]:
    """PF addresses the entry takes on this host (VFs are never selected here)."""
    return sorted(
        naming.normalize_address(d["address"])
        for d in devices
        if not d.get("physfn")
        and entry.matches_ids(d.get("vendor_id"), d.get("product_id"))
        and entry.matches_address(d["address"])
    )


def _vf_makers(entry, devices: list[dict]) -> list[str]:
    """For an entry that describes VFs (``device_type: type-VF``): the PFs whose VFs it describes, by the
    VF device ID each PF reports (``sriov_vf_product_id``), so ``sriov_numvfs`` can create them."""
    if entry.device_type != "type-VF":
        return []
    return sorted(
        naming.normalize_address(d["address"])
        for d in devices
        if not d.get("physfn")
        and d.get("vendor_id") == entry.vendor_id
        and d.get("sriov_vf_product_id") == entry.product_id
        and entry.matches_address(d["address"])
    )


def host_plan(devices: list[dict], policy_raw: object) -> dict:
    """``{"sriov": [{devices, numvfs, entry}], "vgpu": [{devices, type, vfs, entry}], "mig": [{address,
    layout, entry}], "boot_unit": bool}`` for one host; raises PolicyError for an invalid policy."""
    plan: dict = {"sriov": [], "vgpu": [], "mig": [], "boot_unit": False}
    for entry in parse_policy(policy_raw, option="accel_device_policy"):
        addresses = _selected(entry, devices or [])
        makers = _vf_makers(entry, devices or []) if entry.sriov_numvfs is not None else []
        if entry.sriov_numvfs is not None and (addresses or makers):
            pfs = sorted(set(addresses) | set(makers))
            plan["sriov"].append({"devices": pfs, "numvfs": entry.sriov_numvfs, "entry": entry.name})
            plan["boot_unit"] = True  # VFs to bring back at boot
        if not addresses:
            continue
        if entry.mode in ("vgpu", "mig"):
            plan["boot_unit"] = True  # types, MIG instances or Nova's mdevs to bring back at boot
        if entry.vfs is not None and entry.mdev_type:
            plan["vgpu"].append({"devices": addresses, "type": entry.mdev_type, "vfs": entry.vfs, "entry": entry.name})
        if entry.mode == "mig":
            for address in addresses:
                plan["mig"].append(
                    {"address": address, "layout": [dict(i) for i in entry.mig_layout], "entry": entry.name}
                )
    return plan
