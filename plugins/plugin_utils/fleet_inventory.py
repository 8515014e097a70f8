# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Groups and host variables of the ``accel.openstack.fleet`` inventory, from facts and Placement.

Pure functions: the inventory plugin reads its sources (the discovery facts of each host, a fleet
snapshot from Placement) and hands them to :func:`build`, which returns one :class:`HostView` per
host: the groups it belongs to and the variables it gets. Nothing here talks to Ansible or Placement.

Definitions (docs/inventory.md repeats them for users):

- An *accelerator* is a device of ``accel_pci_devices``, except the boot VGA when no policy entry
  selects it (the console display).
- Its *mode* is the mode of the first device policy entry that selects it (by IDs and addresses; a
  ``vgpu`` or ``mig`` entry also selects the VFs of a PF it selects); without one, the facts decide:
  ``mig`` when MIG mode is enabled now, ``vgpu`` when the device or one of its VFs offers vGPU types
  (mdev types or NVIDIA vGPU 17 VF types), ``passthrough`` when it is bound to vfio-pci, else ``none``.
- A host *waits for a reboot* when a GPU's MIG mode is pending (pending differs from current), or when
  the policy passes a device of the host through and the running kernel command line lacks an IOMMU
  argument that the prepare stage sets for the host's CPU vendor, or (``vfio_ids_on_cmdline``) lacks
  the device's ``vendor:product`` in ``vfio-pci.ids``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.iommu import IOMMU_KERNEL_ARGS
from ansible_collections.accel.openstack.plugins.module_utils._host.kernel_cmdline import KernelArg, parse_cmdline
from ansible_collections.accel.openstack.plugins.module_utils._inputs import InputError, kind_of
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import (
    PolicyEntry,
    PolicyError,
    parse_policy,
)

MODES = ("passthrough", "vgpu", "mig")
VFIO_DRIVER = "vfio-pci"
SHARING_TRAIT = "MISC_SHARES_VIA_AGGREGATE"
# The compute node's own classes: every host has them, so they make no group by default.
COMPUTE_RESOURCE_CLASSES = ("VCPU", "PCPU", "MEMORY_MB", "DISK_GB", "MEM_ENCRYPTION_CONTEXT")
MODEL_NAMES = ("ids", "names")
FACT_KEYS = (
    "accel_pci_devices",
    "accel_iommu_groups",
    "accel_numa_nodes",
    "accel_cpu_vendor",
    "accel_iommu_enabled",
    "accel_kernel_cmdline",
)
VARIABLE_PREFIX = "accel_fleet_"


class InventoryError(AccelError):
    """The sources or the options cannot make an inventory; the message names the setting and the fix."""


def group_name(prefix: str, *parts: object) -> str:
    """A group name Ansible accepts: lower case, runs of anything but letters and digits become ``_``."""
    text = "_".join(str(p) for p in parts if p is not None and str(p) != "")
    text = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return prefix + text


@dataclass
class Settings:
    prefix: str = "accel_"
    model_names: str = "ids"
    trait_patterns: tuple[str, ...] = ("CUSTOM_*",)
    skip_resource_classes: tuple[str, ...] = COMPUTE_RESOURCE_CLASSES
    kernel_args: Mapping[str, list[str]] = field(default_factory=lambda: dict(IOMMU_KERNEL_ARGS))
    vfio_ids_on_cmdline: bool = True

    def __post_init__(self) -> None:
        if self.model_names not in MODEL_NAMES:
            raise InventoryError(f"model_group_names is {self.model_names!r}; give one of {', '.join(MODEL_NAMES)}")
        if not isinstance(self.kernel_args, Mapping) or not all(
            isinstance(v, list) and all(isinstance(a, str) for a in v) for v in self.kernel_args.values()
        ):
            raise InventoryError(
                "reboot_kernel_args must map a CPU vendor (intel, amd, other) to a list of kernel arguments, "
                "e.g. {intel: [intel_iommu=on, iommu=pt], amd: [iommu=pt]}"
            )


@dataclass
class HostView:
    name: str
    groups: list[str]
    hostvars: dict


def load_policy(raw: object) -> list[PolicyEntry]:
    """The device policy given to the plugin, validated by the collection's one policy parser."""
    if raw is None or raw == []:
        return []
    try:
        return parse_policy(raw)
    except PolicyError as exc:
        raise InventoryError("device_policy: " + "; ".join(exc.errors)) from exc


# -- facts -----------------------------------------------------------------------------------------
def _offers_vgpu(device: Mapping) -> bool:
    return bool(device.get("mdev_types"))


def mode_from_facts(device: Mapping, vfs: list[Mapping]) -> str:
    """What a device is used as today, judged from the discovery facts alone."""
    mig = device.get("mig") or {}
    if mig.get("mode_current") == "enabled":
        return "mig"
    if _offers_vgpu(device) or any(_offers_vgpu(vf) for vf in vfs):
        return "vgpu"
    if device.get("driver") == VFIO_DRIVER:
        return "passthrough"
    return "none"


def _policy_entry(policy: list[PolicyEntry], device: Mapping, parent: Mapping | None) -> PolicyEntry | None:
    for entry in policy:
        if entry.matches_ids(device.get("vendor_id"), device.get("product_id")) and entry.matches_address(
            device["address"]
        ):
            return entry
        if (
            entry.mode != "passthrough"
            and parent is not None
            and entry.matches_ids(parent.get("vendor_id"), parent.get("product_id"))
            and entry.matches_address(parent["address"])
        ):
            return entry
    return None


@dataclass
class Device:
    address: str
    record: Mapping
    mode: str
    mode_from: str  # "policy" or "facts"
    entry: PolicyEntry | None
    model: str
    is_vf: bool


def _model_key(device: Mapping, settings: Settings) -> str:
    if settings.model_names == "names" and device.get("product_name"):
        vendor = (device.get("vendor_name") or device.get("vendor_id") or "").split()[0]
        return group_name("", vendor, device["product_name"])
    return group_name("", device.get("vendor_id"), device.get("product_id"))


def accelerators(facts: Mapping, policy: list[PolicyEntry], settings: Settings) -> list[Device]:
    """The host's accelerators with their mode, in address order."""
    records = [d for d in facts.get("accel_pci_devices") or [] if isinstance(d, Mapping) and d.get("address")]
    by_address = {normalize_address(d["address"]): d for d in records}
    vfs: dict[str, list[Mapping]] = {}
    for record in records:
        if record.get("physfn"):
            vfs.setdefault(normalize_address(record["physfn"]), []).append(record)
    devices = []
    for record in sorted(records, key=lambda d: normalize_address(d["address"])):
        address = normalize_address(record["address"])
        parent = by_address.get(normalize_address(record["physfn"])) if record.get("physfn") else None
        entry = _policy_entry(policy, record, parent)
        if entry is None and record.get("is_boot_vga"):
            continue
        if entry is not None:
            mode, mode_from = entry.mode, "policy"
        else:
            mode, mode_from = mode_from_facts(record, vfs.get(address, [])), "facts"
        model = _model_key(record, settings)
        devices.append(Device(address, record, mode, mode_from, entry, model, is_vf=parent is not None))
    return devices


def _has_arg(running: list[KernelArg], wanted: KernelArg) -> bool:
    return any(arg.same_key(wanted) and arg.value == wanted.value for arg in running)


def reboot_reasons(facts: Mapping, devices: list[Device], settings: Settings) -> list[str]:
    """Why the host waits for a reboot (empty when it does not); one sentence per reason."""
    reasons = []
    for device in devices:
        mig = device.record.get("mig") or {}
        current, pending = mig.get("mode_current"), mig.get("mode_pending")
        if current and pending and current != pending:
            reasons.append(
                f"MIG mode of {device.address} is {current} and becomes {pending} after a GPU reset or a reboot"
            )
    passthrough = [d for d in devices if d.mode == "passthrough" and d.mode_from == "policy"]
    if not passthrough:
        return reasons
    running = parse_cmdline(str(facts.get("accel_kernel_cmdline") or ""))
    vendor = facts.get("accel_cpu_vendor") or "other"
    wanted = [KernelArg(*(a.split("=", 1) if "=" in a else (a, None))) for a in settings.kernel_args.get(vendor, [])]
    missing = [str(a) for a in wanted if not _has_arg(running, a)]
    if settings.vfio_ids_on_cmdline:
        given = {
            value.lower()
            for arg in running
            if arg.same_key(KernelArg("vfio_pci.ids"))
            for value in (arg.value or "").split(",")
        }
        ids = sorted({f"{d.record.get('vendor_id')}:{d.record.get('product_id')}" for d in passthrough})
        lacking = [i for i in ids if i not in given]
        if lacking:
            missing.append("vfio-pci.ids with " + ",".join(lacking))
    if missing:
        shown = ", ".join(d.address for d in passthrough[:4]) + (
            f" and {len(passthrough) - 4} more" if len(passthrough) > 4 else ""
        )
        reasons.append(
            f"the running kernel command line lacks {'; '.join(missing)}, which passthrough of {shown} needs"
        )
    return reasons


def device_summary(devices: list[Device]) -> list[dict]:
    """One record per model, mode and policy entry: names, count, VFs among them, addresses, NUMA nodes."""
    buckets: dict[tuple, dict] = {}
    for device in devices:
        key = (device.model, device.mode, device.entry.name if device.entry else None)
        record = device.record
        bucket = buckets.setdefault(
            key,
            {
                "model": device.model,
                "vendor_id": record.get("vendor_id"),
                "product_id": record.get("product_id"),
                "vendor_name": record.get("vendor_name"),
                "product_name": record.get("product_name"),
                "mode": device.mode,
                "mode_from": device.mode_from,
                "policy_entry": device.entry.name if device.entry else None,
                "count": 0,
                "virtual_functions": 0,
                "addresses": [],
                "numa_nodes": [],
            },
        )
        bucket["count"] += 1
        bucket["virtual_functions"] += int(device.is_vf)
        bucket["addresses"].append(device.address)
        numa = record.get("numa_node")
        if isinstance(numa, int) and numa not in bucket["numa_nodes"]:
            bucket["numa_nodes"].append(numa)
    for bucket in buckets.values():
        bucket["numa_nodes"].sort()
    return [buckets[k] for k in sorted(buckets, key=lambda k: (k[0], k[1], k[2] or ""))]


# -- Placement -------------------------------------------------------------------------------------
def placement_trees(snapshot: Mapping | None) -> dict[str, list[dict]]:
    """The providers of each host's tree, keyed by the root provider's name (the hypervisor hostname).

    Sharing providers (``MISC_SHARES_VIA_AGGREGATE`` on a root) are not hosts and are left out.
    """
    if not snapshot:
        return {}
    providers = list(snapshot.get("resource_providers") or [])
    by_uuid = {p["uuid"]: p for p in providers}

    def root_of(provider: dict) -> dict:
        seen = set()
        while provider.get("parent_provider_uuid") and provider["uuid"] not in seen:
            seen.add(provider["uuid"])
            parent = by_uuid.get(provider["parent_provider_uuid"])
            if parent is None:
                break
            provider = parent
        return provider

    trees: dict[str, list[dict]] = {}
    for provider in providers:
        root = by_uuid.get(provider.get("root_provider_uuid") or "") or root_of(provider)
        if SHARING_TRAIT in (root.get("traits") or []):
            continue
        trees.setdefault(root["name"], []).append(provider)
    for members in trees.values():
        members.sort(key=lambda p: (p.get("parent_provider_uuid") is not None, p["name"]))
    return trees


def resource_summary(tree: list[dict], settings: Settings) -> dict[str, dict]:
    """Per resource class of the tree (compute classes skipped): totals, reserved, used, providers."""
    summary: dict[str, dict] = {}
    for provider in tree:
        usages = provider.get("usages") or {}
        for resource_class, inventory in sorted((provider.get("inventories") or {}).items()):
            if resource_class in settings.skip_resource_classes:
                continue
            row = summary.setdefault(resource_class, {"total": 0, "reserved": 0, "used": 0, "providers": 0})
            row["total"] += int(inventory.get("total") or 0)
            row["reserved"] += int(inventory.get("reserved") or 0)
            row["used"] += int(usages.get(resource_class) or 0)
            row["providers"] += 1
    return dict(sorted(summary.items()))


def tree_traits(tree: list[dict], settings: Settings) -> list[str]:
    names = {t for p in tree for t in p.get("traits") or []}
    return sorted(t for t in names if any(fnmatch.fnmatchcase(t, pat) for pat in settings.trait_patterns))


# -- the whole inventory ---------------------------------------------------------------------------
def host_view(
    name: str,
    facts: Mapping | None,
    tree: list[dict] | None,
    policy: list[PolicyEntry],
    settings: Settings,
) -> HostView:
    """The groups and variables of one host from its facts (or None) and its Placement tree (or None)."""
    prefix = settings.prefix
    groups: set[str] = set()
    hostvars: dict = {}
    if facts is not None:
        devices = accelerators(facts, policy, settings)
        reasons = reboot_reasons(facts, devices, settings)
        summary = device_summary(devices)
        for device in devices:
            groups.add(group_name(prefix, "model", device.model))
            if device.mode in MODES:
                groups.add(group_name(prefix, "mode", device.mode))
            numa = device.record.get("numa_node")
            if isinstance(numa, int):
                groups.add(group_name(prefix, "numa", numa))
        if reasons:
            groups.add(group_name(prefix, "reboot_pending"))
        hostvars.update(
            {
                VARIABLE_PREFIX + "devices": summary,
                VARIABLE_PREFIX + "device_count": len(devices),
                VARIABLE_PREFIX + "modes": sorted({d.mode for d in devices}),
                VARIABLE_PREFIX + "reboot_pending": bool(reasons),
                VARIABLE_PREFIX + "reboot_reasons": reasons,
            }
        )
    if tree is not None:
        resources = resource_summary(tree, settings)
        traits = tree_traits(tree, settings)
        groups.update(group_name(prefix, "rc", rc) for rc in resources)
        groups.update(group_name(prefix, "trait", t) for t in traits)
        hostvars.update(
            {
                VARIABLE_PREFIX + "provider_uuid": tree[0]["uuid"],
                VARIABLE_PREFIX + "providers": [p["name"] for p in tree],
                VARIABLE_PREFIX + "resource_classes": resources,
                VARIABLE_PREFIX + "traits": traits,
            }
        )
    hostvars[VARIABLE_PREFIX + "sources"] = [s for s, v in (("facts", facts), ("placement", tree)) if v is not None]
    return HostView(name=name, groups=sorted(groups), hostvars=hostvars)


def build(
    facts_by_host: Mapping[str, Mapping] | None,
    snapshot: Mapping | None,
    policy: list[PolicyEntry],
    settings: Settings,
    host_patterns: list[str] | None = None,
) -> list[HostView]:
    """Every host of either source (matched by name: inventory hostname = root provider name), sorted."""
    facts_by_host = facts_by_host or {}
    trees = placement_trees(snapshot)
    names = set(facts_by_host) | set(trees)
    if host_patterns:
        names = {n for n in names if any(fnmatch.fnmatchcase(n, p) for p in host_patterns)}
    return [host_view(name, facts_by_host.get(name), trees.get(name), policy, settings) for name in sorted(names)]


def discovery_facts(cached: object, where: str = "a fact cache entry") -> dict | None:
    """The discover stage's facts out of one host's fact cache entry; None when it holds none (a host the
    discover stage never ran on). An entry that is not a mapping of facts, or whose ``accel_pci_devices``
    is not a list, is refused (InputError naming ``where``) rather than skipped: the host would vanish
    from the inventory without a word."""
    if not isinstance(cached, Mapping):
        raise InputError(f"{where} is {kind_of(cached)}; a fact cache entry is a mapping of fact names to values")
    if "accel_pci_devices" not in cached:
        return None
    if not isinstance(cached["accel_pci_devices"], list):
        raise InputError(
            f"{where}: accel_pci_devices is {kind_of(cached['accel_pci_devices'])}; the discover stage writes a list"
        )
    return {key: cached[key] for key in FACT_KEYS if key in cached}
