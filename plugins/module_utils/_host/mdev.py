# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mediated devices of one type on one parent, created and removed through sysfs, kept with mdevctl.

UUIDs are stable: the i-th mdev of a type on a parent always has ``uuid5(NAMESPACE, "<parent>/<type>/<i>")``,
so a run after a reboot (or on another host with the same layout) names the same devices. Only mdevs with
such a UUID are ever removed. With mdevctl installed in the root, each mdev is defined with
``mdevctl define --auto`` (libvirt and mdevctl then start it at boot) and undefined when removed.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore, sriov, sysfs
from ansible_collections.accel.openstack.plugins.module_utils._host.commands import ROOT_SCOPE, Command
from ansible_collections.accel.openstack.plugins.module_utils._names import pci

NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://galaxy.ansible.com/accel/openstack/mdev")
MDEV_BUS = "/sys/class/mdev_bus"
MDEV_DEVICES = "/sys/bus/mdev/devices"
MDEVCTL_DIR = "/etc/mdevctl.d"
OWNED_SCAN = 256  # indexes checked when looking for this collection's mdevs to remove


class MdevError(AccelError):
    """Bad input or an mdev in use; nothing was changed."""


def mdev_uuid(parent: str, mdev_type: str, index: int) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{parent}/{mdev_type}/{index}"))


@dataclass
class MdevPlan:
    parent: str
    mdev_type: str
    wanted: list[str]
    create: list[str]
    remove: list[str]
    commands: list[Command] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.create or self.remove or self.commands)

    def result(self) -> dict:
        return {
            "parent": self.parent,
            "type": self.mdev_type,
            "uuids": self.wanted,
            "created": self.create,
            "removed": self.remove,
        }


def plan(host, runner, parent: str, mdev_type: str, count: int) -> MdevPlan:
    parent = str(parent).lower()  # the whole text is the address: no space or newline is trimmed away
    if pci.is_address(parent):
        parent = pci.normalize_address(parent)
    parents = host.listdir(MDEV_BUS)
    if parent not in parents:
        raise MdevError(
            f"parent {parent}: not an mdev parent on this host (no {MDEV_BUS}/{parent}); mdev parents here: "
            f"{', '.join(parents) or 'none (is the vGPU host driver loaded, are its VFs enabled?)'}"
        )
    types_dir = f"{MDEV_BUS}/{parent}/mdev_supported_types"
    types = host.listdir(types_dir)
    if mdev_type not in types:
        named = {host.read_attr(f"{types_dir}/{t}/name"): t for t in types}
        hint = f"; {mdev_type!r} is the name of {named[mdev_type]}, give that" if mdev_type in named else ""
        raise MdevError(f"type {mdev_type!r} is not offered by {parent}; it offers {', '.join(types) or 'none'}{hint}")
    if count < 0:
        raise MdevError(f"count {count} is negative; give 0 or more")
    base = f"{types_dir}/{mdev_type}"
    existing = set(host.listdir(f"{base}/devices"))
    available = sysfs.count_attr(host, f"{base}/available_instances", MdevError) or 0
    if count > len(existing) + available:  # checked before any UUID is made: a huge count costs nothing
        raise MdevError(
            f"count {count}: {parent} has {len(existing)} {mdev_type} and can take {available} more now; lower "
            "count (other types or mdevs on the parent use its capacity)"
        )
    wanted = [mdev_uuid(parent, mdev_type, i) for i in range(count)]
    create = [u for u in wanted if u not in existing]
    if len(create) > available:
        raise MdevError(
            f"{parent} can take {available} more {mdev_type} now and {len(create)} are missing; lower count "
            "(other types or mdevs on the parent use its capacity)"
        )
    ours = {mdev_uuid(parent, mdev_type, i) for i in range(max(OWNED_SCAN, count))}
    remove = sorted(u for u in existing if u in ours and u not in wanted)
    groups = sriov.open_vfio_groups(host) if remove else {}
    for u in remove:
        group = os.path.basename(host.readlink(f"{MDEV_DEVICES}/{u}/iommu_group") or "")
        if group in groups:
            raise MdevError(
                f"mdev {u} on {parent} is in use by {', '.join(groups[group])}; stop the instance or raise count"
            )
    result = MdevPlan(parent, mdev_type, wanted, create, remove)
    mdevctl = runner.find("mdevctl") if runner is not None else None
    if mdevctl:
        for u in wanted:
            if not host.exists(f"{MDEVCTL_DIR}/{parent}/{u}"):
                result.commands.append(
                    Command(
                        ["mdevctl", "define", "--uuid", u, "--parent", parent, "--type", mdev_type, "--auto"],
                        ROOT_SCOPE,
                        "keep the mdev across reboots",
                    )
                )
        for u in remove:
            if host.exists(f"{MDEVCTL_DIR}/{parent}/{u}"):
                result.commands.append(
                    Command(["mdevctl", "undefine", "--uuid", u], ROOT_SCOPE, "forget the removed mdev")
                )
    return result


def apply(host, p: MdevPlan, timeout: float) -> None:
    sysfs = gpu_restore.Sysfs.of(host)
    base = f"{MDEV_BUS}/{p.parent}/mdev_supported_types/{p.mdev_type}"
    try:
        for u in p.remove:
            sysfs.write(f"{MDEV_DEVICES}/{u}/remove", "1")
            gpu_restore.wait_for(lambda u=u: not sysfs.exists(f"{MDEV_DEVICES}/{u}"), timeout, f"mdev {u} to go")
        for u in p.create:
            sysfs.write(f"{base}/create", u)
            gpu_restore.wait_for(lambda u=u: sysfs.exists(f"{MDEV_DEVICES}/{u}"), timeout, f"mdev {u} to appear")
    except gpu_restore.RestoreError as exc:
        raise MdevError(f"{p.parent} {p.mdev_type}: {exc}; see dmesg for the vGPU manager's reason") from exc
