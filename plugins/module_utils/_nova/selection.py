# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which devices of one host each device policy entry selects, and the checks that need the host.

Input: the host's discovery facts (``accel_pci_devices`` and friends, as ``pci_facts`` sets them) and
the parsed policy. Output: a :class:`HostSelection` that the Nova config renderer and the provider
prediction both read, so the config Nova gets and the providers we predict can never disagree.

A host whose facts say the IOMMU is off (``accel_iommu_enabled: false``) offers nothing: no device
reaches a VM without it, passed through or as a vGPU (VFs and mediated devices alike). What the policy
selects there is kept in ``withheld`` instead, with one warning per entry that names the host, the
devices and how to turn the IOMMU on; device_spec, the vGPU types, the predicted providers and the PCI
pools all read ``passthrough`` and ``vgpu`` only, so none of them counts those devices.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._host.iommu import enable_advice
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._nova import naming
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyEntry

VFIO_DRIVER = "vfio-pci"
# How discovery marks vGPU types offered per SR-IOV VF by the NVIDIA vGPU 17+ host driver (no mdev bus).
VF_VGPU_MECHANISM = "nvidia_vgpu_vf"
# NVIDIA names a MIG-backed vGPU type <GPU>-<compute slices>-<framebuffer GB>C (CME: with the media
# extensions); it runs on one GPU instance of profile <slices>g.<framebuffer>gb (+me).
MIG_BACKED_NAME = re.compile(r"-(\d+)-(\d+)C(ME)?\Z")


@dataclass
class PassthroughSelection:
    entry: PolicyEntry
    devices: list[dict]
    by_address: bool  # True when the entry does not take every device of its model on this host
    vgpu_vf: bool = False  # a vGPU entry served as VFs that carry the vGPU type (vGPU 17+, no mdev bus)

    @property
    def resource_class(self) -> str | None:
        """The resource class set in device_spec; None means Nova's CUSTOM_PCI_<VENDOR>_<PRODUCT>."""
        if self.vgpu_vf:
            return self.entry.mdev_class or "VGPU"
        return self.entry.resource_class

    @property
    def managed(self) -> bool | None:
        if self.vgpu_vf and self.entry.managed is None:
            return False  # the VF stays on the vGPU host driver; libvirt must not rebind it
        return self.entry.managed

    @property
    def in_placement(self) -> bool:
        """Nova's translator skips devices whose device_spec has a physical_network (Neutron's devices)."""
        return not self.entry.physical_network

    @property
    def device_type(self) -> str | None:
        types = {naming.nova_device_type(d) for d in self.devices}
        return types.pop() if len(types) == 1 else None


@dataclass
class VgpuSelection:
    entry: PolicyEntry
    parents: list[dict]  # mdev-capable devices that offer entry.mdev_type

    @property
    def mdev_class(self) -> str:
        return self.entry.mdev_class or "VGPU"

    def available_instances(self, device: dict) -> int:
        for mdev in device.get("mdev_types") or []:
            if mdev.get("type") == self.entry.mdev_type:
                return int(mdev.get("available_instances") or 0)
        return 0


@dataclass
class HostSelection:
    hostname: str
    passthrough: list[PassthroughSelection] = field(default_factory=list)
    vgpu: list[VgpuSelection] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    matched_entries: set[int] = field(default_factory=set)
    physical_functions: frozenset = frozenset()  # the host's SR-IOV PFs (Nova extends a PF's address to its VFs)
    # What the policy selects but Nova is not given: the IOMMU is off (see iommu_off)
    withheld: list[PassthroughSelection | VgpuSelection] = field(default_factory=list)
    iommu_off: bool = False

    def withheld_addresses(self) -> list[str]:
        """The addresses of the withheld devices (a vGPU entry's parents), sorted."""
        return sorted(
            {
                normalize_address(d["address"])
                for item in self.withheld
                for d in (item.parents if isinstance(item, VgpuSelection) else item.devices)
            }
        )


def host_devices(facts: dict) -> list[dict]:
    devices = facts.get("accel_pci_devices") or []
    return sorted(devices, key=lambda d: normalize_address(d["address"]))


def _parent(device: dict, by_address: dict[str, dict]) -> dict | None:
    physfn = device.get("physfn")
    return by_address.get(normalize_address(physfn)) if physfn else None


def _physical_functions(by_address: dict[str, dict]) -> frozenset:
    """The SR-IOV physical functions of the host, as Nova tells them (sriov_totalvfs above 0)."""
    return frozenset(a for a, d in by_address.items() if (d.get("sriov_totalvfs") or 0) > 0)


def _selects(entry: PolicyEntry, device: dict, by_address: dict[str, dict], pfs: frozenset) -> bool:
    """Whether ``entry`` takes ``device``: by IDs (and address when listed); vGPU also takes VFs of a PF."""
    physfn = normalize_address(device["physfn"]) if device.get("physfn") else None
    if entry.matches_ids(device.get("vendor_id"), device.get("product_id")) and entry.matches_address(
        device["address"], physfn, pfs
    ):
        return True
    if entry.is_vgpu:
        parent = _parent(device, by_address)
        return bool(
            parent
            and entry.matches_ids(parent.get("vendor_id"), parent.get("product_id"))
            and entry.matches_address(parent["address"])
        )
    return False


def _offers(device: dict, mdev_type: str) -> bool:
    return any(m.get("type") == mdev_type for m in device.get("mdev_types") or [])


def _offers_on_vf(device: dict, mdev_type: str) -> bool:
    return any(
        m.get("type") == mdev_type and m.get("mechanism") == VF_VGPU_MECHANISM for m in device.get("mdev_types") or []
    )


def mig_profile_of(type_name: str | None) -> str | None:
    """The GPU instance profile a MIG-backed vGPU type runs on: ``NVIDIA A100-3-20C`` -> ``3g.20gb``."""
    match = MIG_BACKED_NAME.search(str(type_name or "").strip())
    if not match:
        return None
    return f"{match.group(1)}g.{match.group(2)}gb" + ("+me" if match.group(3) else "")


def _type_name(device: dict, mdev_type: str) -> str | None:
    return next((m.get("name") for m in device.get("mdev_types") or [] if m.get("type") == mdev_type), None)


def _one_per_gpu_instance(
    selection: HostSelection, entry: PolicyEntry, chosen: list[dict], by_address: dict[str, dict]
) -> list[dict]:
    """A MIG-backed type: at most as many devices per GPU as the GPU has instances of its profile.

    Every free VF of a GPU offers the type while one instance is free, but each vGPU takes one
    instance, so Nova gets the first N of them (N = the GPU's instances of the type's profile).
    """
    kept: list[dict] = []
    per_gpu: dict[str, int] = {}
    for device in chosen:
        gpu = _parent(device, by_address) or device
        profile = mig_profile_of(_type_name(device, entry.mdev_type))
        if profile is None:
            selection.warnings.append(
                f"{selection.hostname}: {entry.label}: mdev_type {entry.mdev_type} "
                f"({_type_name(device, entry.mdev_type)}) is not named as a MIG-backed type "
                "(<GPU>-<slices>-<GB>C); its devices are given to Nova without checking the GPU instances"
            )
            return chosen
        instances = ((gpu.get("mig") or {}).get("gpu_instances")) or []
        wanted = sum(1 for gi in instances if gi.get("profile") == profile)
        address = normalize_address(gpu["address"])
        if per_gpu.get(address, 0) < wanted:
            per_gpu[address] = per_gpu.get(address, 0) + 1
            kept.append(device)
    gpus = sorted({normalize_address((_parent(d, by_address) or d)["address"]) for d in chosen} - set(per_gpu))
    if gpus:
        selection.warnings.append(
            f"{selection.hostname}: {entry.label}: GPU {', '.join(gpus)} has no GPU instance of the profile "
            f"mdev_type {entry.mdev_type} runs on; run the prepare stage (playbooks/prepare_hosts.yml), "
            "which applies mig_layout, then discover again"
        )
    return kept


def select(
    hostname: str,
    facts: dict,
    policy: list[PolicyEntry],
    report_in_placement: bool,
    withhold_without_iommu: bool = True,
) -> HostSelection:
    """Match the policy against one host's devices and run the checks that need the host.

    ``withhold_without_iommu=False`` models what nova-compute does with a config as deployed (it lists
    the devices whatever the IOMMU): the audit predicts Nova's report from the deployed config that way.
    """
    iommu_off = withhold_without_iommu and facts.get("accel_iommu_enabled") is False
    selection = HostSelection(hostname=hostname, iommu_off=iommu_off)
    devices = host_devices(facts)
    by_address = {normalize_address(d["address"]): d for d in devices}
    taken: dict[str, PolicyEntry] = {}
    pfs = _physical_functions(by_address)
    selection.physical_functions = pfs

    for entry in policy:
        chosen = [d for d in devices if _selects(entry, d, by_address, pfs)]
        if entry.device_type == naming.TYPE_VF and not entry.is_vgpu:
            # VFs that carry their PF's own IDs (Intel, NVIDIA): the entry takes the VFs, never the PF
            chosen = [d for d in chosen if naming.nova_device_type(d) == naming.TYPE_VF]
        if entry.is_vgpu:
            parents = [d for d in chosen if _offers(d, entry.mdev_type)]
            if chosen and not parents:
                offered = sorted({m.get("type") for d in chosen for m in d.get("mdev_types") or []} - {None})
                selection.warnings.append(
                    f"{hostname}: {entry.label} selects {len(chosen)} device(s) but none offers mdev_type "
                    f"{entry.mdev_type} (offered: {', '.join(offered) or 'none'}); run the prepare "
                    "stage (playbooks/prepare_hosts.yml) with sriov_numvfs and vfs in the entry, which "
                    "creates the VFs and gives them the type once the vGPU host driver is installed, "
                    "or fix mdev_type"
                )
            chosen = parents
            # VFs that already hold the type (set by nvidia_vgpu): Nova gets exactly those
            holding = [d for d in chosen if str(d.get("current_vgpu_type") or "0") == entry.mdev_type]
            if holding:
                chosen = holding
            if entry.mode == "mig":
                chosen = _one_per_gpu_instance(selection, entry, chosen, by_address)
        chosen = _without_console(selection, entry, chosen)
        if not chosen:
            continue
        selection.matched_entries.add(entry.index)
        for device in chosen:
            address = normalize_address(device["address"])
            other = taken.setdefault(address, entry)
            if other is entry:
                continue
            if entry.is_vgpu and other.is_vgpu and other.mdev_type != entry.mdev_type:
                selection.errors.append(
                    f"{hostname}: device {address} would get two vGPU types, {other.mdev_type} from "
                    f"{other.label} and {entry.mdev_type} from {entry.label}; Nova allows one type per "
                    "physical device: list the device under addresses of one entry only"
                )
            elif entry.mode != "none" and other.mode != "none":
                selection.errors.append(
                    f"{hostname}: device {address} is selected by {other.label} and by {entry.label}; "
                    "give each entry addresses so a device belongs to one entry"
                )
        if entry.mode == "passthrough":
            same_model = [
                d for d in devices if d.get("vendor_id") == entry.vendor_id and d.get("product_id") == entry.product_id
            ]
            by_addr = len(same_model) != len(chosen)
            selection.passthrough.append(PassthroughSelection(entry, chosen, by_addr))
            # Neutron's SR-IOV ports use VFs on their NIC's own driver: only Nova's own passthrough needs vfio-pci.
            if entry.managed is not False and not selection.iommu_off and not entry.for_neutron:
                _warn_not_vfio(selection, entry, chosen)
        elif entry.is_vgpu and all(_offers_on_vf(d, entry.mdev_type) for d in chosen):
            selection.passthrough.append(PassthroughSelection(entry, chosen, by_address=True, vgpu_vf=True))
        elif entry.is_vgpu:
            selection.vgpu.append(VgpuSelection(entry, chosen))

    _check_nova_tags(selection, report_in_placement)
    if report_in_placement:
        _check_placement_reporting(selection, by_address)
    if selection.iommu_off:
        _withhold_without_iommu(selection, facts)
    return selection


def _without_console(selection: HostSelection, entry: PolicyEntry, chosen: list[dict]) -> list[dict]:
    """The host's boot VGA device (its console) is never offered, whatever the policy selects."""
    consoles = [d for d in chosen if d.get("is_boot_vga") is True]
    if not consoles:
        return chosen
    selection.warnings.append(
        f"{selection.hostname}: {entry.label} selects {_device_names(consoles)}, the boot VGA device the host's "
        "console uses; it is never offered to instances (no device_spec, no provider). To offer this GPU, make "
        "another display device the primary one (the BIOS setting for the primary display) and discover again; "
        "otherwise give the entry addresses that leave it out"
    )
    return [d for d in chosen if d.get("is_boot_vga") is not True]


def _device_names(devices: list[dict]) -> str:
    """``0000:04:00.0 (Tesla T4, 10de:1eb8)``, the first four, for a message."""
    shown = []
    for device in devices[:4]:
        ids = f"{device.get('vendor_id')}:{device.get('product_id')}"
        name = device.get("product_name")
        label = f"{name}, {ids}" if isinstance(name, str) and name else ids
        shown.append(f"{normalize_address(device['address'])} ({label[:80]})")
    more = f" and {len(devices) - 4} more" if len(devices) > 4 else ""
    return ", ".join(shown) + more


def _withhold_without_iommu(selection: HostSelection, facts: dict) -> None:
    """The IOMMU is off: Nova gets none of the selected devices, and the warning says how to change that.

    The policy checks above have run on the full selection, so a policy error still shows on this host
    before its IOMMU is turned on, not after."""
    items: list[tuple[PassthroughSelection | VgpuSelection, list[dict]]] = [
        (item, item.devices) for item in selection.passthrough
    ] + [(item, item.parents) for item in selection.vgpu]
    if not items:
        return
    advice = enable_advice(facts.get("accel_cpu_vendor"), facts.get("accel_kernel_cmdline"))
    for item, devices in items:
        kind = "as vGPUs" if isinstance(item, VgpuSelection) or item.vgpu_vf else "for passthrough"
        selection.withheld.append(item)
        selection.warnings.append(
            f"{selection.hostname}: {item.entry.label} selects {_device_names(devices)}, but the IOMMU is off on "
            f"this host, so they are not offered {kind} (no device_spec or vGPU type for Nova, no provider in "
            "Placement): no device reaches a VM without the IOMMU. To offer them, "
            f"{advice}; then run the pipeline again (site.yml), which finds the IOMMU on and offers them"
        )
    selection.passthrough = []
    selection.vgpu = []


def _check_nova_tags(selection: HostSelection, report_in_placement: bool) -> None:
    """What Nova refuses about one_time_use and remote_managed once the devices are known."""
    for item in selection.passthrough:
        entry = item.entry
        if entry.one_time_use and not report_in_placement:
            selection.errors.append(
                f"{selection.hostname}: {entry.label} sets one_time_use, which Nova refuses without [pci] "
                "report_in_placement (the device is reserved in Placement after its first use): set "
                "accel_nova_report_in_placement: true or remove one_time_use"
            )
        if entry.one_time_use:
            vfs = [d["address"] for d in item.devices if naming.nova_device_type(d) == naming.TYPE_VF]
            if vfs:
                selection.errors.append(
                    f"{selection.hostname}: {entry.label} sets one_time_use on VF(s) {_shown(vfs)}; Nova allows "
                    "one_time_use only on type-PCI and type-PF devices: select whole devices (their PF "
                    "product_id or addresses) or remove one_time_use"
                )
        if entry.remote_managed:
            others = [d["address"] for d in item.devices if naming.nova_device_type(d) != naming.TYPE_VF]
            if others:
                selection.errors.append(
                    f"{selection.hostname}: {entry.label} sets remote_managed on {_shown(others)}, which "
                    "are not VFs; only VFs are remote managed (Nova refuses remote_managed on a PF): select "
                    "the VFs (their product_id or addresses) or remove remote_managed"
                )


def _shown(addresses: list[str]) -> str:
    return ", ".join(addresses[:4]) + (f" and {len(addresses) - 4} more" if len(addresses) > 4 else "")


def _warn_not_vfio(selection: HostSelection, entry: PolicyEntry, devices: list[dict]) -> None:
    by_driver: dict[str, list[str]] = {}
    for device in devices:
        if device.get("driver") != VFIO_DRIVER:
            by_driver.setdefault(device.get("driver") or "none", []).append(device["address"])
    for driver, addresses in sorted(by_driver.items()):
        shown = ", ".join(addresses[:4]) + (f" and {len(addresses) - 4} more" if len(addresses) > 4 else "")
        selection.warnings.append(
            f"{selection.hostname}: {entry.label} selects {shown} on driver {driver}, not {VFIO_DRIVER}; "
            "Nova can pass them through only after the prepare stage (playbooks/prepare_hosts.yml) binds "
            "them to vfio-pci"
        )


def _check_placement_reporting(selection: HostSelection, by_address: dict[str, dict]) -> None:
    """Nova refuses a PF and its VFs both in device_spec, and VFs of one PF with different names."""
    selected: dict[str, PassthroughSelection] = {}
    for item in selection.passthrough:
        if not item.in_placement:
            continue  # Nova never reports them, so they cannot clash with what it does report
        for device in item.devices:
            selected[normalize_address(device["address"])] = item
    vf_groups: dict[str, list[tuple[dict, PassthroughSelection]]] = {}
    clashes: dict[tuple[str, str], list[str]] = {}
    for address, item in selected.items():
        device = by_address[address]
        physfn = device.get("physfn")
        if not physfn:
            continue
        pf_address = normalize_address(physfn)
        if pf_address in selected:
            clashes.setdefault((pf_address, item.entry.label), []).append(address)
        vf_groups.setdefault(pf_address, []).append((device, item))
    for (pf_address, vf_label), vfs in clashes.items():
        pf_item = selected[pf_address]
        same_ids = pf_item.entry.matches_ids(by_address[vfs[0]].get("vendor_id"), by_address[vfs[0]].get("product_id"))
        hint = (
            "; the VFs have the PF's own vendor/product IDs, so Nova's device_spec for the PF's address claims "
            "them too: disable the PF's VFs (sriov_numvfs 0) before passing it through whole"
            if same_ids and pf_item.entry is selected[vfs[0]].entry
            else " (give the entries addresses or drop one)"
        )
        selection.errors.append(
            f"{selection.hostname}: PF {pf_address} ({pf_item.entry.label}) and its VF(s) {_shown(vfs)} "
            f"({vf_label}) are both selected while report_in_placement is on; Nova cannot report a PF and its "
            f"VFs together: pass through either the PF or its VFs{hint}"
        )
    for pf_address, members in vf_groups.items():
        names = {(item.resource_class, item.entry.traits, item.entry.live_migratable) for _dev, item in members}
        if len(names) > 1:
            labels = sorted({item.entry.label for _dev, item in members})
            selection.errors.append(
                f"{selection.hostname}: the VFs of PF {pf_address} are selected by {', '.join(labels)} with "
                "different resource_class, traits or live_migratable; Nova reports all VFs of one PF as one "
                "provider, so they must be named alike: make those fields equal"
            )
