# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA vGPU types per GPU, for both generations of the host driver.

- GPUs with an mdev bus (vGPU up to 16, and A16/A40/... VFs that carry ``mdev_supported_types``): the
  type must exist on the GPU or its VFs; nothing is written, Nova creates the mdevs
  (``[devices] enabled_mdev_types``).
- vGPU 17+ (Ada, Hopper, Blackwell; no mdev bus): the type is written to ``nvidia/current_vgpu_type`` of
  the first ``vfs`` VFs (virtfn order); the other VFs of the GPU are cleared. A type is given by ID
  (``1155``) or name (``NVIDIA L40S-4Q``) and must be in each VF's ``creatable_vgpu_types``; a VF in use
  (its vfio group open) is never changed. When a write is refused half-way, the VFs this run changed are
  set back, so a failure leaves the GPU as it was.

State file: ``/etc/accel-openstack/vgpu/<gpu>.json`` = ``{"address", "type_id", "type_name", "vfs"}``.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore, sriov
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot

STATE_DIR = "/etc/accel-openstack/vgpu"
PCI = "/sys/bus/pci/devices"


class VgpuError(AccelError):
    """Bad input, a type the GPU cannot take, or a VF in use; nothing was changed."""


def state_path(address: str) -> str:
    return f"{STATE_DIR}/{address}.json"


@dataclass
class GpuPlan:
    address: str
    mechanism: str  # mdev | vf
    type_id: str
    type_name: str | None
    vfs: list[str]  # VF mode: the VFs that get the type
    writes: list[tuple[str, int, int]]  # (vf, before, after)
    mdev_parents: list[str]  # mdev mode: devices offering the type
    state_before: str | None
    state_after: str | None

    @property
    def changed(self) -> bool:
        return bool(self.writes) or self.state_before != self.state_after

    def as_dict(self) -> dict:
        out = {"address": self.address, "mechanism": self.mechanism, "type": self.type_id, "type_name": self.type_name}
        if self.mechanism == "vf":
            out["vfs"] = self.vfs
            out["writes"] = [{"vf": vf, "before": b, "after": a} for vf, b, a in self.writes]
        else:
            out["mdev_parents"] = self.mdev_parents
        return out


def _mdev_types(host: HostRoot, address: str) -> dict[str, str]:
    base = f"{PCI}/{address}/mdev_supported_types"
    return {t: (host.read_attr(f"{base}/{t}/name") or "") for t in host.listdir(base)}


def _plan_mdev(host: HostRoot, address: str, wanted: str, parents: list[str]) -> GpuPlan:
    found = []
    offered: dict[str, str] = {}
    for parent in parents:
        types = _mdev_types(host, parent)
        offered.update(types)
        if any(wanted in (t, n) for t, n in types.items()):
            found.append(parent)
    if not found:
        raise VgpuError(
            f"{address}: vGPU type {wanted!r} is not offered here; the GPU offers "
            + ", ".join(f"{t} ({n})" for t, n in sorted(offered.items()))
            + "; give one of these"
        )
    type_id = next(t for t, n in offered.items() if wanted in (t, n))
    return GpuPlan(address, "mdev", type_id, offered[type_id], [], [], found, None, None)


def plan(host: HostRoot, selectors: list[str], wanted: str, vfs: int | None) -> list[GpuPlan]:
    if not selectors:
        raise VgpuError("devices is empty; give the GPU addresses or vendor:product IDs")
    wanted = str(wanted)  # the whole text names the type: no space or newline is trimmed away
    problem = gpu_restore.state_dir_problem(host, STATE_DIR)
    if problem:
        raise VgpuError(problem)
    sysfs = gpu_restore.Sysfs.of(host)
    groups = None
    plans = []
    for address in sriov.select(host, selectors, need_sriov=False):
        children = sysfs.vfs(address)
        mdev_parents = [a for a in [address] + children if host.listdir(f"{PCI}/{a}/mdev_supported_types")]
        if mdev_parents:
            plans.append(_plan_mdev(host, address, wanted, mdev_parents))
            continue
        if not children or gpu_restore.creatable_types(sysfs, children[0]) is None:
            raise VgpuError(
                f"{address}: no mdev bus and no VFs with nvidia/creatable_vgpu_types; install the NVIDIA vGPU host "
                "driver and enable the VFs first (sriov_vfs, or sriov_numvfs in the device policy)"
            )
        offered: dict[int, str] = {}
        for vf in children:
            offered.update(gpu_restore.creatable_types(sysfs, vf) or {})
        type_id = next((i for i, n in offered.items() if wanted in (str(i), n)), None)
        held = sorted({gpu_restore.current_type(sysfs, vf) for vf in children} - {0})
        if type_id is None and vfs == 0:
            type_id = 0  # clearing every VF needs no type
            offered[0] = None
        elif type_id is None and held:
            raise VgpuError(
                f"{address}: vGPU type {wanted!r} is not offered while VFs hold type "
                + ", ".join(f"{i} ({offered.get(i, '?')})" for i in held)
                + "; a GPU holds one vGPU type at a time: clear its VFs first (nvidia_vgpu with vfs: 0), then run again"
            )
        if type_id is None:
            raise VgpuError(
                f"{address}: vGPU type {wanted!r} is not in its VFs' creatable_vgpu_types; offered: "
                + (", ".join(f"{i} ({n})" for i, n in sorted(offered.items())) or "none (every VF is taken)")
            )
        count = len(children) if vfs is None else vfs
        if count < 0 or count > len(children):
            raise VgpuError(
                f"{address}: vfs {count} but the GPU has {len(children)} VFs; lower vfs or raise the VF count "
                "(sriov_vfs)"
            )
        targets = children[:count]
        writes = []
        for vf in children:
            before = gpu_restore.current_type(sysfs, vf)
            after = type_id if vf in targets else 0
            if before == after:
                continue
            if groups is None:
                groups = sriov.open_vfio_groups(host)
            user = sriov.vf_users(host, vf, groups, {})
            if user:
                raise VgpuError(
                    f"{address}: VF {vf} holds vGPU type {before} and is {user}; stop the instance using it, "
                    "or lower vfs so this VF keeps its type"
                )
            if after and not before and after not in (gpu_restore.creatable_types(sysfs, vf) or {}):
                can = gpu_restore.creatable_types(sysfs, vf) or {}
                raise VgpuError(
                    f"{address}: VF {vf} cannot take {offered[type_id]} ({type_id}) now; it can take "
                    + (", ".join(f"{i} ({n})" for i, n in sorted(can.items())) or "nothing")
                    + "; other VFs hold another type or the GPU's framebuffer is full: lower vfs or pick that type"
                )
            writes.append((vf, before, after))
        # clears first, so the type's capacity is free before it is taken
        writes.sort(key=lambda w: w[2] != 0)
        stored = {"address": address, "type_id": type_id, "type_name": offered[type_id], "vfs": targets}
        problems = gpu_restore.state_problems("vgpu", f"{address}.json", stored)
        if problems:  # the boot unit would refuse this file: never store it, never write the type
            raise VgpuError(
                f"{address}: {'; '.join(problems)}; the driver offers a type the boot unit could not restore, "
                "pick another type"
            )
        document = json.dumps(stored, indent=2, sort_keys=True) + "\n"
        plans.append(
            GpuPlan(
                address,
                "vf",
                str(type_id),
                offered[type_id],
                targets,
                writes,
                [],
                host.read_text(state_path(address)),
                document,
            )
        )
    return plans


def apply(host: HostRoot, plans: list[GpuPlan], timeout: float) -> None:
    sysfs = gpu_restore.Sysfs.of(host)
    for p in plans:
        done: list[tuple[str, int]] = []
        try:
            for vf, before, after in p.writes:
                gpu_restore.set_vgpu_type(sysfs, vf, after, timeout)
                done.append((vf, before))
        except gpu_restore.RestoreError as exc:
            for vf, before in reversed(done):
                with contextlib.suppress(gpu_restore.RestoreError):
                    gpu_restore.set_vgpu_type(sysfs, vf, before, timeout)
            raise VgpuError(
                f"{p.address}: {exc}; the VFs changed by this run were set back. The GPU cannot hold "
                f"{len(p.vfs)} x {p.type_name}: lower vfs or pick a smaller type"
            ) from exc
        if p.state_after is not None and p.state_before != p.state_after:
            host.write_text(state_path(p.address), p.state_after)
