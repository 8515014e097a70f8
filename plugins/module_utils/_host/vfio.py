# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Persistent (and optionally immediate) binding of PCI devices to vfio-pci, by IOMMU group.

:func:`plan` reads the host and returns a :class:`VfioPlan`: the devices that end up on vfio-pci (the
requested ones and every endpoint of their IOMMU groups), the refusals, and the file contents. A
vendor:product goes into ``options vfio-pci ids=`` only when every device with that ID is selected;
when an ID is split (one GPU passed through, its twin kept for vGPU or MIG), the selected devices are
bound by address instead: a udev rule sets their ``driver_override`` to vfio-pci when they appear at
boot, so the other devices with the same ID stay on their driver.
:func:`configure` applies the plan's :class:`FileChange` list and nothing else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import iommu_safety as safety
from ansible_collections.accel.openstack.plugins.module_utils._host.commands import (
    MACHINE_SCOPE,
    ROOT_SCOPE,
    Command,
    Outcome,
    run_once,
)
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange, apply_all, diffs
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import split_lines
from ansible_collections.accel.openstack.plugins.module_utils._names.kernel import is_module_name
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_address, is_pci_id, normalize_address

MODPROBE_FILE = "/etc/modprobe.d/accel-openstack-vfio.conf"
MODULES_LOAD_FILE = "/etc/modules-load.d/accel-openstack-vfio.conf"
INITRAMFS_TOOLS_MODULES = "/etc/initramfs-tools/modules"
DRACUT_FILE = "/etc/dracut.conf.d/accel-openstack-vfio.conf"
# Before 80-drivers.rules, so driver_override is set before udev loads and probes the device's driver.
UDEV_RULES_FILE = "/etc/udev/rules.d/40-accel-openstack-vfio.rules"
SHARED_GPU_MODES = ("vgpu", "mig")
BLOCK_BEGIN = "# BEGIN accel.openstack vfio-pci (managed by accel.openstack.vfio_pci)"
BLOCK_END = "# END accel.openstack vfio-pci"
VFIO_MODULES = ("vfio", "vfio_iommu_type1", "vfio_pci")
HEADER = "# PCI devices handed to vfio-pci for passthrough; managed by accel.openstack.vfio_pci.\n"
# A driver's name in sysfs is not always its module's name.
DRIVER_MODULES = {"xhci_hcd": "xhci_pci", "nvidia-gpu": "i2c_nvidia_gpu", "ucsi_ccg": "ucsi_ccg"}
NOT_COMPETING = ("vfio_pci", "pci_stub", "pcieport")


class VfioInputError(AccelError, ValueError):
    pass


@dataclass
class VfioPlan:
    devices: list[dict]  # every device that ends up on vfio-pci
    ids: list[str]
    by_address: list[str]  # bound through driver_override because their ID is split
    groups: list[safety.GroupPlan]
    refusals: list[safety.SafetyRefusal]
    files: list[FileChange] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    runtime: list[dict] = field(default_factory=list)  # sysfs writes for bind: now
    warnings: list[str] = field(default_factory=list)


def _is_vendor_product(text: str) -> bool:
    vendor, sep, product = text.partition(":")
    return bool(sep) and is_pci_id(vendor) and is_pci_id(product)


def select(
    hardware, devices: list[str], policy_entries, requested_by: dict | None = None
) -> tuple[list[str], list[str]]:
    """Addresses asked for (by address, by ID, or by passthrough policy entries); and warnings."""
    requested_by = {} if requested_by is None else requested_by
    chosen: list[str] = []
    warnings: list[str] = []
    for item in devices or []:
        text = str(item)
        if _is_vendor_product(text):
            vendor, product = text.lower().split(":")
            matches = [
                a for a, d in sorted(hardware.devices.items()) if (d.vendor_id, d.product_id) == (vendor, product)
            ]
            if not matches:
                raise VfioInputError(
                    f"devices: no PCI device with the ID {text} on this host; check it with lspci -nn "
                    "or leave it out for this host"
                )
            for address in matches:
                requested_by.setdefault(address, f"devices item {text}")
            chosen += [a for a in matches if a not in chosen]
        elif is_address(text):
            address = normalize_address(text)
            if address not in hardware.devices:
                raise VfioInputError(
                    f"devices: {text} is not a PCI device on this host (no /sys/bus/pci/devices/{address}); "
                    "check the address with lspci -D"
                )
            requested_by.setdefault(address, f"devices item {text}")
            if address not in chosen:
                chosen.append(address)
        else:
            raise VfioInputError(
                f"devices: {text!r} is neither a PCI address (0000:41:00.0) nor a vendor:product ID of "
                "4+4 hex digits (10de:2330, as lspci -nn shows it)"
            )
    for entry in policy_entries or []:
        if entry.mode != "passthrough":
            continue
        if entry.device_type in ("type-VF", "type-PF"):
            # SR-IOV network functions: libvirt detaches them itself (managed hostdev); binding them by ID
            # at boot would take the VFs from the PF driver before Nova can use them.
            continue
        matches = [
            a
            for a, d in sorted(hardware.devices.items())
            if entry.matches_ids(d.vendor_id, d.product_id) and entry.matches_address(a)
        ]
        if not matches:
            warnings.append(f"{entry.label}: no {entry.vendor_id}:{entry.product_id} device on this host")
        for address in matches:
            requested_by.setdefault(address, entry.label)
        chosen += [a for a in matches if a not in chosen]
    return chosen, warnings


def expand(hardware, requested: list[str]) -> list[str]:
    """Requested devices plus every endpoint of their IOMMU groups (bridges excepted)."""
    selected = list(requested)
    for address in list(selected):
        device = hardware.devices[address]
        if device.iommu_group is None:
            continue
        for member in hardware.iommu_groups.get(device.iommu_group, []):
            peer = hardware.devices.get(member)
            if peer is not None and not peer.is_bridge and member not in selected:
                selected.append(member)
    return sorted(selected)


def split_ids(hardware, selected: list[str]) -> tuple[list[str], list[str]]:
    """(IDs every device of which is selected: bound with ``ids=``; addresses bound by driver_override)."""
    ids, by_address = set(), []
    for address in selected:
        device = hardware.devices[address]
        twins = [
            a
            for a, d in hardware.devices.items()
            if (d.vendor_id, d.product_id) == (device.vendor_id, device.product_id)
        ]
        if all(t in selected for t in twins):
            ids.add(f"{device.vendor_id}:{device.product_id}")
        else:
            by_address.append(address)
    return sorted(ids), sorted(by_address)


def shared_gpu_conflicts(hardware, selected: list[str], requested_by: dict, policy_entries) -> list[str]:
    """Messages for devices a vGPU or MIG entry keeps that this plan would hand to vfio-pci."""
    out = []
    for entry in policy_entries or []:
        if entry.mode not in SHARED_GPU_MODES:
            continue
        for address in selected:
            device = hardware.devices[address]
            if entry.matches_ids(device.vendor_id, device.product_id) and entry.matches_address(address):
                by = requested_by.get(address) or "the IOMMU group of a passthrough device"
                out.append(
                    f"{address} is kept for {entry.mode} by {entry.label}, but {by} would hand it to vfio-pci; "
                    "give the entries addresses so each card is in one entry, or move the card out of the "
                    "passthrough device's IOMMU group"
                )
    return out


def render_udev_rules(addresses: list[str]) -> str:
    lines = [
        "# PCI devices handed to vfio-pci by address (their vendor:product is shared with devices that stay",
        "# on their driver); managed by accel.openstack.vfio_pci.",
    ]
    lines += [f'ACTION=="add", SUBSYSTEM=="pci", KERNEL=="{a}", ATTR{{driver_override}}="vfio-pci"' for a in addresses]
    return "\n".join(lines) + "\n"


def iommu_needed(hardware, selected: list[str], policy_entries) -> bool:
    """Passthrough devices, or vGPU/MIG cards (SR-IOV vGPU and mdevs need the IOMMU too)."""
    if selected:
        return True
    for entry in policy_entries or []:
        if entry.mode in SHARED_GPU_MODES and any(
            entry.matches_ids(d.vendor_id, d.product_id) and entry.matches_address(a)
            for a, d in hardware.devices.items()
        ):
            return True
    return False


def _module_of(host, driver: str) -> str | None:
    """The kernel module behind a driver, or None (with a warning) when sysfs gives no usable name.

    Both the driver's name and its ``module`` link come from the host's sysfs; a name reaches a
    modprobe.d ``softdep`` line only when it matches the module name grammar.
    """
    if not is_module_name(driver):
        host.warn(
            f"a device's driver link names {driver[:60]!r}, which is not a kernel module name; "
            "no softdep is written for it"
        )
        return None
    link = host.readlink(f"/sys/bus/pci/drivers/{driver}/module")
    name = link.rstrip("/").rsplit("/", 1)[-1] if link else DRIVER_MODULES.get(driver, driver.replace("-", "_"))
    if not is_module_name(name):
        host.warn(
            f"/sys/bus/pci/drivers/{driver}/module names {name[:60]!r}, which is not a kernel module name; "
            "no softdep is written for it"
        )
        return None
    return name


def competing_modules(host, hardware, addresses: list[str]) -> list[str]:
    """Modules that could claim the devices before vfio-pci does: their current drivers and the usual ones."""
    modules: list[str] = []
    for address in addresses:
        device = hardware.devices[address]
        names = []
        if device.driver:
            module = _module_of(host, device.driver)
            if module:
                names.append(module)
        cls = device.class_code or ""
        if cls.startswith("03") and device.vendor_id == "10de":
            names += ["nvidia", "nouveau"]
        elif cls.startswith("03") and device.vendor_id == "1002":
            names += ["amdgpu", "radeon"]
        elif cls.startswith("0403"):
            names.append("snd_hda_intel")
        elif cls.startswith("0c03"):
            names.append("xhci_pci")
        for name in names:
            if name not in NOT_COMPETING and name not in modules:
                modules.append(name)
    return sorted(modules)


def render_modprobe(ids: list[str], softdeps: list[str], blacklist: list[str]) -> str:
    lines = [HEADER.rstrip("\n")] + ([f"options vfio-pci ids={','.join(ids)}"] if ids else [])
    lines += [f"softdep {m} pre: vfio-pci" for m in softdeps]
    lines += [f"blacklist {m}" for m in blacklist]
    return "\n".join(lines) + "\n"


def _with_block(text: str | None, body: list[str] | None, path: str = INITRAMFS_TOOLS_MODULES) -> str | None:
    """``text`` with our marked block set to ``body`` (or removed); lines outside it are kept as they are.

    The block is ours only when it is whole: one begin marker, one end marker after it, and nothing
    between them but module names this module writes. A damaged block (a marker missing, doubled or out
    of order, or foreign lines inside) is refused rather than guessed at, so no line of the operator's is
    ever deleted. The file keeps its line endings (``\r\n`` stays ``\r\n``).
    """
    lines, newline = split_lines(text or "", path)
    begins = [i for i, line in enumerate(lines) if line.strip() == BLOCK_BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == BLOCK_END]
    if begins or ends:
        damaged = len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]
        inside = [] if damaged else [line.strip() for line in lines[begins[0] + 1 : ends[0]]]
        foreign = [line for line in inside if line and line not in VFIO_MODULES]
        if damaged or foreign:
            what = (
                f"lines that are not ours inside it ({', '.join(repr(f) for f in foreign[:3])})"
                if foreign
                else f"{len(begins)} begin and {len(ends)} end markers"
            )
            raise VfioInputError(
                f"{path}: the block marked {BLOCK_BEGIN!r} is damaged ({what}); it is left untouched so "
                "none of your lines are deleted: remove the markers and the block's module lines by hand "
                "and run again",
                path=path,
            )
        lines = lines[: begins[0]] + lines[ends[0] + 1 :]
    if body:
        lines += [BLOCK_BEGIN] + body + [BLOCK_END]
    if text is None and not body:
        return None
    return newline.join(lines) + newline if lines else ""


def plan(host, hardware, finder, params: dict, policy_entries=None) -> VfioPlan:
    for name in params.get("blacklist") or []:
        if not is_module_name(name):
            raise VfioInputError(f"blacklist: {name!r} is not a kernel module name (letters, digits, '_', '-')")
    requested_by: dict = {}
    requested, warnings = select(hardware, params.get("devices") or [], policy_entries, requested_by)
    selected = expand(hardware, requested)
    conflicts = shared_gpu_conflicts(hardware, selected, requested_by, policy_entries)
    if conflicts:
        raise VfioRefused(" | ".join(conflicts))
    needs = safety.host_needs(host, hardware)
    groups = safety.plan_groups(hardware, selected, needs, params.get("allow_drivers"))
    refused = safety.refusals(groups)
    ids, by_address = split_ids(hardware, selected)
    devices = []
    for address in selected:
        device = hardware.devices[address]
        devices.append(
            {
                "address": address,
                "vendor_id": device.vendor_id,
                "product_id": device.product_id,
                "class_code": device.class_code,
                "iommu_group": device.iommu_group,
                "driver": device.driver,
                "requested": address in requested,
                "reason": "requested" if address in requested else "shares the IOMMU group",
                "bound_by": "address" if address in by_address else "id",
            }
        )
    if selected and not hardware.iommu_enabled:
        warnings.append(
            "the IOMMU is off on the running kernel, so the IOMMU groups are unknown: the configuration is "
            "written for the next boot, and the group check runs again once the IOMMU is on"
        )
    result = VfioPlan(devices, ids, by_address, groups, refused, warnings=warnings)
    softdeps = competing_modules(host, hardware, selected)
    blacklist = sorted(set(params.get("blacklist") or []))
    result.files.append(
        FileChange.of(host, MODPROBE_FILE, render_modprobe(ids, softdeps, blacklist) if selected else None)
    )
    result.files.append(FileChange.of(host, UDEV_RULES_FILE, render_udev_rules(by_address) if by_address else None))
    result.files.append(
        FileChange.of(host, MODULES_LOAD_FILE, (HEADER + "\n".join(VFIO_MODULES) + "\n") if selected else None)
    )
    initramfs = params.get("initramfs", True)
    rebuild = None
    if initramfs and (host.is_dir("/etc/initramfs-tools") or finder("update-initramfs")):
        old = host.read_existing(INITRAMFS_TOOLS_MODULES)
        new = _with_block(old, list(VFIO_MODULES) if selected else None)
        result.files.append(FileChange(INITRAMFS_TOOLS_MODULES, old, new))
        rebuild = Command(
            ["update-initramfs", "-u", "-k", "all"],
            ROOT_SCOPE,
            "put vfio-pci and its options into the initramfs",
            key="initramfs",
        )
    elif initramfs and (host.is_dir("/etc/dracut.conf.d") or finder("dracut")):
        body = f'force_drivers+=" {" ".join(VFIO_MODULES)} "\n'
        result.files.append(FileChange.of(host, DRACUT_FILE, HEADER + body if selected else None))
        rebuild = Command(
            ["dracut", "--regenerate-all", "--force"],
            ROOT_SCOPE,
            "put vfio-pci and its options into the initramfs",
            key="initramfs",
        )
    if rebuild is not None:
        result.commands.append(rebuild)
    if params.get("bind") == "now":
        for entry in devices:
            if entry["driver"] == "vfio-pci":
                continue
            result.runtime.append(entry)
        if result.runtime:
            result.commands.insert(
                0, Command(["modprobe", "vfio-pci"], MACHINE_SCOPE, "load vfio-pci to bind now", key="modprobe-vfio")
            )
    return result


def bind_now(host, entry: dict) -> None:
    """driver_override, unbind from the current driver, drivers_probe: the kernel's own binding path."""
    address = entry["address"]
    base = f"/sys/bus/pci/devices/{address}"
    host.write_attr(f"{base}/driver_override", "vfio-pci")
    if entry.get("driver"):
        host.write_attr(f"{base}/driver/unbind", address)
    host.write_attr("/sys/bus/pci/drivers_probe", address)


def current_driver(host, address: str) -> str | None:
    link = host.readlink(f"/sys/bus/pci/devices/{address}/driver")
    return os.path.basename(link) if link else None


class VfioRefused(AccelError, RuntimeError):
    pass


def configure(host, commands, hardware, params: dict, policy_entries=None) -> dict:
    """The whole vfio_pci change: plan, refuse or write, rebuild the initramfs, optionally bind now."""
    vfio_plan = plan(host, hardware, commands.find, params, policy_entries)
    warnings = list(vfio_plan.warnings)
    if vfio_plan.refusals:
        messages = [r.explain() for r in vfio_plan.refusals]
        if not params.get("force"):
            raise VfioRefused(" | ".join(messages))
        warnings += ["force: true: " + m for m in messages]
    files_changed = apply_all(host, vfio_plan.files, commands.check_mode)
    persistent = [c for c in vfio_plan.commands if c.key != "modprobe-vfio"]
    ran = commands.request(persistent, bool(files_changed)) if persistent else False
    bound = []
    if vfio_plan.runtime:
        loader = next(c for c in vfio_plan.commands if c.key == "modprobe-vfio")
        if run_once(commands, loader):
            for entry in vfio_plan.runtime:
                bind_now(host, entry)
                driver = current_driver(host, entry["address"])
                if driver != "vfio-pci":
                    raise VfioRefused(
                        f"{entry['address']} is on {driver or 'no driver'} after binding to vfio-pci; "
                        "see dmesg for why vfio-pci did not take it (is the IOMMU on?)"
                    )
                bound.append(entry["address"])
        else:
            for entry in vfio_plan.runtime:
                commands.outcomes.append(
                    Outcome(
                        f"bind {entry['address']} to vfio-pci (driver_override, unbind, drivers_probe)",
                        "would_run" if commands.check_mode and commands.is_running_system else "pending",
                        "bind now instead of at the next boot",
                        "" if commands.check_mode and commands.is_running_system else commands.outcomes[-1].reason,
                    )
                )
    for entry in vfio_plan.devices:
        if entry["address"] in bound:
            entry["driver"] = "vfio-pci"
    waiting = [e["address"] for e in vfio_plan.devices if e["driver"] != "vfio-pci"]
    return {
        "changed": bool(files_changed) or ran or bool(bound),
        "devices": vfio_plan.devices,
        "ids": vfio_plan.ids,
        "by_address": vfio_plan.by_address,
        "iommu_needed": iommu_needed(hardware, [d["address"] for d in vfio_plan.devices], policy_entries),
        "groups": [
            {"group": g.group, "members": [m.address for m in g.members], "refused": [m.address for m in g.refused]}
            for g in vfio_plan.groups
        ],
        "files": files_changed,
        "bound_now": bound,
        "reboot_required": bool(waiting),
        "waiting_for_reboot": waiting,
        "commands": commands.results(),
        "pending_commands": commands.pending_texts(),
        "warnings_list": warnings,
        "diff": diffs(vfio_plan.files),
    }
