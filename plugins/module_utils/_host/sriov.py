# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SR-IOV VF counts on PFs selected by PCI address or vendor:product, applied safely and persisted.

A PF gets its count through ``sriov_numvfs`` (zero first when it already has a different non-zero
count, as the kernel requires); the module then waits, polling with a deadline, until the ``virtfn``
links exist (NVIDIA's ``sriov-manage`` and some drivers return before the VFs do). Removing VFs is
refused while one of them is in use: bound to vfio-pci with its group open (``/dev/vfio/<group>`` held
by a process), or a network interface that is up with an address or a route.

State file: ``/etc/accel-openstack/sriov/<pf>.json`` = ``{"address", "numvfs"}``; the boot unit
re-applies it (gpu_restore.py). A PF whose driver makes its VFs itself (the device catalog's
``vf_creation: driver_parameter``: AMD's GIM enables them from its ``vf_num`` setting when it loads) gets no
state file and no write: its count is accepted when it already holds it, and any other count is refused
with the driver's own way to change it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import device_catalog, gpu_restore, sysfs
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._names import pci

STATE_DIR = "/etc/accel-openstack/sriov"
PCI = "/sys/bus/pci/devices"
VENDOR_PRODUCT = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{4}\Z")
DRIVER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")


class SriovError(AccelError):
    """Bad input or a VF in use; nothing was changed."""


def state_path(address: str) -> str:
    return f"{STATE_DIR}/{address}.json"


def _hex(host: HostRoot, path: str) -> str:
    return (host.read_attr(path) or "").lower().replace("0x", "")


def select(host: HostRoot, selectors: list[str], label: str = "devices", need_sriov: bool = True) -> list[str]:
    """PCI addresses for ``selectors`` (addresses or vendor:product IDs); each must match something."""
    present = host.listdir(PCI)
    chosen: list[str] = []
    for index, raw in enumerate(selectors):
        value = str(raw).lower()  # the whole text is the selector: no space or newline is trimmed away
        if pci.is_address(value):
            value = pci.normalize_address(value)
            if value not in present:
                capable = [a for a in present if host.exists(f"{PCI}/{a}/sriov_totalvfs")]
                raise SriovError(
                    f"{label}[{index}] {raw!r}: no PCI device {value} on this host; "
                    f"SR-IOV capable devices here: {', '.join(capable) or 'none'}"
                )
            matches = [value]
        elif VENDOR_PRODUCT.match(value):
            vendor, product = value.split(":")
            matches = [
                a
                for a in present
                if _hex(host, f"{PCI}/{a}/vendor") == vendor
                and _hex(host, f"{PCI}/{a}/device") == product
                and not host.exists(f"{PCI}/{a}/physfn")
            ]
            if not matches:
                raise SriovError(f"{label}[{index}] {raw!r}: no device with this vendor:product on this host")
        else:
            raise SriovError(
                f"{label}[{index}] {raw!r} is neither a PCI address (0000:3b:00.0) nor a vendor:product ID (15b3:101d)"
            )
        for address in matches:
            if need_sriov and not host.exists(f"{PCI}/{address}/sriov_totalvfs"):
                raise SriovError(
                    f"{label}[{index}] {raw!r}: {address} has no SR-IOV capability (no sriov_totalvfs); "
                    "select the physical function"
                )
            if address not in chosen:
                chosen.append(address)
    return chosen


def open_vfio_groups(host: HostRoot) -> dict[str, list[str]]:
    """IOMMU group -> processes holding ``/dev/vfio/<group>`` open (``/proc/<pid>/fd``)."""
    users: dict[str, list[str]] = {}
    for pid in host.listdir("/proc"):
        if not pid.isdigit():
            continue
        name = (host.read_attr(f"/proc/{pid}/comm") or "?").strip()
        for fd in host.listdir(f"/proc/{pid}/fd"):
            target = host.readlink(f"/proc/{pid}/fd/{fd}") or ""
            if target.startswith("/dev/vfio/") and target[10:].isdigit():
                users.setdefault(target[10:], []).append(f"{name} (pid {pid})")
    return users


def vf_users(host: HostRoot, vf: str, groups: dict[str, list[str]], nets: dict[str, list[str]]) -> str | None:
    """Who uses a VF, as a phrase; None when it is free."""
    driver = os.path.basename(host.readlink(f"{PCI}/{vf}/driver") or "")
    group = os.path.basename(host.readlink(f"{PCI}/{vf}/iommu_group") or "")
    if driver == "vfio-pci" and group in groups:
        return f"bound to vfio-pci with /dev/vfio/{group} open by {', '.join(groups[group])}"
    if vf in nets:
        return "a network interface in use (" + "; ".join(nets[vf]) + ")"
    return None


def network_users(host: HostRoot) -> dict[str, list[str]]:
    """Network interfaces in use per PCI address; the check needs netaddr and is never skipped without it."""
    from ansible_collections.accel.openstack.plugins.module_utils._host import iommu_safety

    if iommu_safety.netaddr is None:
        raise SriovError(
            "changing a VF count removes VFs, and telling whether one is a network interface in use needs the "
            "Python library netaddr on the managed host, which is missing; install it (python3-netaddr on "
            "Debian, Ubuntu and EL, or pip install netaddr) and run again"
        )
    return iommu_safety.network_in_use(host)


@dataclass
class PfChange:
    address: str
    before: int
    after: int
    total: int
    state_before: str | None
    state_after: str | None
    # The host driver that makes and keeps the model's VFs itself (AMD: gim): no state file, nothing written
    persisted_by: str | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after or self.state_before != self.state_after

    def as_dict(self) -> dict:
        out = {"address": self.address, "numvfs_before": self.before, "numvfs": self.after, "totalvfs": self.total}
        if self.persisted_by:
            out["persisted_by"] = self.persisted_by
        return out


def plan(host: HostRoot, selectors: list[str], numvfs: int) -> list[PfChange]:
    if not selectors:
        raise SriovError("devices is empty; give the PF addresses or vendor:product IDs to set VFs on")
    if isinstance(numvfs, bool) or not isinstance(numvfs, int):
        raise SriovError(f"numvfs {numvfs!r} is not a whole number; give the count of VFs, e.g. 8")
    if numvfs < 0:
        raise SriovError(f"numvfs {numvfs} is negative; give 0 (no VFs) or more")
    problem = gpu_restore.state_dir_problem(host, STATE_DIR)
    if problem:
        raise SriovError(problem)
    changes = []
    groups = nets = None
    for address in select(host, selectors):
        total = sysfs.count_attr(host, f"{PCI}/{address}/sriov_totalvfs", SriovError) or 0
        if numvfs > total:
            raise SriovError(
                f"numvfs {numvfs} for {address}: the device supports at most {total} VFs (sriov_totalvfs); "
                f"give {total} or fewer"
            )
        before = sysfs.count_attr(host, f"{PCI}/{address}/sriov_numvfs", SriovError) or 0
        made_by = _driver_made_vfs(host, address)
        if made_by is not None:
            refusal, keeper = made_by
            if numvfs != before:
                raise SriovError(f"{address}: changing the VF count from {before} to {numvfs}: {refusal}")
            state = host.read_text(state_path(address))
            changes.append(PfChange(address, before, numvfs, total, state, state, persisted_by=keeper))
            continue
        vfs = gpu_restore.Sysfs.of(host).vfs(address)
        if vfs and before != numvfs:
            # a different count means zero first: every VF goes; a smaller count removes the tail
            if groups is None:
                groups, nets = open_vfio_groups(host), network_users(host)
            for vf in vfs:
                user = vf_users(host, vf, groups, nets)
                if user:
                    raise SriovError(
                        f"{address}: changing the VF count from {before} to {numvfs} removes VF {vf}, which is "
                        f"{user}; stop that user (shut down or migrate the instance, down the interface) and run again"
                    )
        stored = {"address": address, "numvfs": numvfs}
        problems = gpu_restore.state_problems("sriov", f"{address}.json", stored)
        if problems:  # the boot unit would refuse this file: never store it
            raise SriovError(f"{address}: {'; '.join(problems)}; the boot unit could not restore it")
        document = json.dumps(stored, indent=2, sort_keys=True) + "\n"
        changes.append(PfChange(address, before, numvfs, total, host.read_text(state_path(address)), document))
    return changes


def _driver_made_vfs(host: HostRoot, address: str) -> tuple[str, str] | None:
    """(why sriov_numvfs cannot change the count, the driver that keeps it) for a PF whose VFs its driver
    makes itself (the catalog's vf_creation: driver_parameter, AMD GIM); None where sriov_numvfs is the way."""
    vendor, product = _hex(host, f"{PCI}/{address}/vendor"), _hex(host, f"{PCI}/{address}/device")
    model = device_catalog.lookup(vendor, product)
    driver = os.path.basename(host.readlink(f"{PCI}/{address}/driver") or "")
    # a driver's name as the kernel writes it; anything else from the host never reaches the message
    refusal = device_catalog.vf_creation_refusal(model, driver if DRIVER_NAME.match(driver) else None)
    if refusal is None:
        return None
    return refusal, device_catalog.mechanism(model["sriov"])["pf_drivers"][0]


def apply(host: HostRoot, changes: list[PfChange], timeout: float) -> None:
    sysfs = gpu_restore.Sysfs.of(host)
    for change in changes:
        if change.persisted_by:
            continue  # its driver keeps the count; nothing to write (plan refused any other count)
        if change.before != change.after or len(sysfs.vfs(change.address)) != change.after:
            try:
                gpu_restore.set_numvfs(sysfs, change.address, change.after, timeout)
            except gpu_restore.RestoreError as exc:
                raise SriovError(
                    f"{change.address}: {exc}; check 'dmesg' for the driver's reason (firmware SR-IOV setting, "
                    "BIOS SR-IOV/ARI support) and run again",
                    changed=True,
                ) from exc
        if change.state_before != change.state_after:
            host.write_text(state_path(change.address), change.state_after)
