"""A stateful stand-in for the kernel side of a fake sysfs tree: it answers writes the way the PCI core
and NVIDIA's vGPU manager do, a moment later, from a polling thread.

- ``sriov_numvfs`` on a PF: the VFs appear (device directory, ``virtfn<N>``/``physfn`` links, bus link,
  driver, IOMMU group, ``nvidia/`` files) after ``delay`` seconds, as ``sriov-manage`` returns before they
  exist; a count above ``sriov_totalvfs`` or a change between two non-zero counts is refused (the file goes
  back to the old count, as the write would fail with EINVAL/EBUSY), and so is any write on a PF whose
  driver makes its VFs itself (``vfs_by_driver`` in the profile's ``sriov``: AMD GIM has no
  ``sriov_configure``, and the kernel answers such a write with ENOENT).
- ``nvidia/current_vgpu_type`` on a VF (vGPU 17+): taken only when the type is in the VF's
  ``creatable_vgpu_types``; then every VF of that GPU lists only the types it can still take. The rule is
  NVIDIA's default (equal-size) mode: all vGPUs on a GPU share one type, and a type of F GB fits
  ``framebuffer_gb // F`` times (``framebuffer_gb`` from the profile; the L40S has 48 GB, NVIDIA vGPU
  software user guide, "Virtual GPU Types for Supported GPUs").
- MIG-backed vGPU types (a ``mig_profile`` in the profile's type list): with MIG mode on, a free VF offers
  such a type only while the GPU has a GPU instance of that profile that no other VF's vGPU uses (one
  vGPU per GPU instance; the instances are read from the nvidia-smi double's state in the root), and
  time-sliced types are not offered at all; with MIG mode off only time-sliced types are. This holds for
  ``creatable_vgpu_types`` (vGPU 17+) and for ``available_instances`` of the mdev types of VFs on the
  mdev bus (a VF holds one mdev; the vGPU 16 A100).

What a reader sees is never half-made, as with the kernel: every file the kernel side writes is replaced
whole (a new file renamed over the old one), never truncated and refilled; a new VF's ``virtfn`` link
appears only once its device and its ``nvidia/`` files are complete and its type list is final; a write
answered at once (``answer_writes``) and its answer happen under the kernel's lock, so the polling thread
never sees the write without its answer.

Use ``with FakeKernel(root, profile): ...`` in tests, or ``python -m tests.support.fake_kernel ROOT PROFILE``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time

from tests.support import fake_nvidia_smi, fake_sysfs

PCI = "/sys/bus/pci/devices"


class FakeKernel:
    def __init__(self, root: str, profile: dict | str, delay: float = 0.05, interval: float = 0.005):
        self.root = root
        self.profile = fake_sysfs.load_profile(profile) if isinstance(profile, str) else profile
        self.delay = delay
        self.interval = interval
        self.events: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pending: dict[str, float] = {}
        self.pfs = {d["address"]: d for d in self.profile["devices"] if d.get("sriov")}
        self.vf_types: dict[str, int] = {}
        self._lock = threading.RLock()

    # -- file helpers ------------------------------------------------------------------------------
    def real(self, host_path: str) -> str:
        return os.path.join(self.root, host_path.lstrip("/"))

    def read(self, host_path: str) -> str | None:
        try:
            with open(self.real(host_path)) as handle:
                return handle.read().strip()
        except OSError:
            return None

    def write(self, host_path: str, value: str) -> None:
        """Replace the file whole: a concurrent reader gets the old text or the new, never an empty file."""
        real = self.real(host_path)
        fd, temp = tempfile.mkstemp(dir=os.path.dirname(real), prefix=".fake-kernel-")
        with os.fdopen(fd, "w") as handle:
            handle.write(value + "\n")
        os.replace(temp, real)

    def vfs(self, pf: str) -> list[str]:
        base = self.real(f"{PCI}/{pf}")
        names = sorted((n for n in os.listdir(base) if n.startswith("virtfn")), key=lambda n: int(n[6:]))
        return [os.path.basename(os.readlink(os.path.join(base, n))) for n in names]

    # -- one pass ----------------------------------------------------------------------------------
    def step(self) -> None:
        with self._lock:
            now = time.monotonic()
            for pf, device in self.pfs.items():
                self._sriov(pf, device, now)
                self._vgpu(pf, device)
            self._mdevs()
            for pf, device in self.pfs.items():
                self._mig_mdev_types(pf, device)

    def answer_writes(self, monkeypatch) -> None:
        """Make sysfs writes through gpu_restore.Sysfs answered at once, as the kernel answers a write.

        VF creation still comes ``delay`` seconds later from the thread (the sriov-manage race).
        """
        from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore

        def write(sysfs, host_path, value):
            # the kernel takes the value of one write(2) and answers it before the write returns: the
            # write and its answer hold the lock, so the thread's pass never runs between them
            with self._lock:
                with open(sysfs.path(host_path), "w") as handle:
                    handle.write(value + "\n")
                self.step()

        monkeypatch.setattr(gpu_restore.Sysfs, "write", write)

    def _sriov(self, pf: str, device: dict, now: float) -> None:
        text = self.read(f"{PCI}/{pf}/sriov_numvfs")
        if text is None or not text.isdigit():
            return
        wanted, have = int(text), self.vfs(pf)
        if wanted == len(have):
            self._pending.pop(pf, None)
            return
        total = int(device["sriov"].get("totalvfs", 0))
        if device["sriov"].get("vfs_by_driver"):
            # the PF driver has no sriov_configure (AMD GIM enables VFs itself): the kernel refuses the write
            self.events.append(f"refused sriov_numvfs={wanted} on {pf} (its driver makes the VFs itself)")
            self.write(f"{PCI}/{pf}/sriov_numvfs", str(len(have)))
            return
        if wanted > total or (wanted and have):
            self.events.append(f"refused sriov_numvfs={wanted} on {pf} (have {len(have)}, total {total})")
            self.write(f"{PCI}/{pf}/sriov_numvfs", str(len(have)))
            return
        due = self._pending.setdefault(pf, now + self.delay)
        if now < due:
            return
        self._pending.pop(pf, None)
        if wanted == 0:
            self._remove_vfs(pf, have)
        else:
            links = self._add_vfs(pf, device, wanted)
            self._type_lists(device, [vf for _link, vf in links])  # final before any VF is visible
            tree = fake_sysfs._Tree(self.root)
            for link, vf in links:
                tree.link(link, vf)
        self.events.append(f"{pf}: {wanted} VFs")

    def _remove_vfs(self, pf: str, vfs: list[str]) -> None:
        base = self.real(f"{PCI}/{pf}")
        for index, vf in enumerate(vfs):
            real = os.path.realpath(self.real(f"{PCI}/{vf}"))
            for link in (os.path.join(base, f"virtfn{index}"), self.real(f"{PCI}/{vf}")):
                if os.path.lexists(link):
                    os.unlink(link)
            for driver in os.listdir(self.real("/sys/bus/pci/drivers")):
                link = self.real(f"/sys/bus/pci/drivers/{driver}/{vf}")
                if os.path.lexists(link):
                    os.unlink(link)
            shutil.rmtree(real, ignore_errors=True)
            self.vf_types.pop(vf, None)

    def _add_vfs(self, pf: str, device: dict, count: int) -> list[tuple[str, str]]:
        """Write the VFs' devices; returns the (``virtfn`` link, VF path) pairs still to be made."""
        one = dict(device, sriov=dict(device["sriov"], numvfs=count))
        expanded = fake_sysfs.expand_profile({"iommu": self.profile.get("iommu", "none"), "devices": [one]})
        vfs = [d for d in expanded["devices"] if d.get("physfn")]
        groups = [int(n) for n in os.listdir(self.real("/sys/kernel/iommu_groups")) if n.isdigit()]
        next_group = max(groups, default=0) + 1
        pf_path = self.real(f"{PCI}/{pf}")
        parent_host = self._host(os.path.dirname(os.path.realpath(pf_path)))
        tree = fake_sysfs._Tree(self.root)
        paths = {pf: self._host(os.path.realpath(pf_path))}
        links = []
        for index, vf in enumerate(vfs):
            paths[vf["address"]] = f"{parent_host}/{vf['address']}"
            if vf.get("iommu_group") is not None:
                vf["iommu_group"] = next_group + index
            vf.pop("parent", None)
            fake_sysfs._write_device(tree, self.profile, vf, paths, [], [], [])
            links.append((f"{paths[pf]}/virtfn{index}", paths[vf["address"]]))
        return links

    def _host(self, real: str) -> str:
        return "/" + os.path.relpath(real, os.path.abspath(self.root))

    def _vgpu(self, pf: str, device: dict) -> None:
        types = device["sriov"].get("vf_nvidia_vgpu_types") or []
        if not types:
            return
        vfs = self.vfs(pf)
        changed = False
        for vf in vfs:
            text = self.read(f"{PCI}/{vf}/nvidia/current_vgpu_type")
            if text is None or not text.isdigit():
                continue
            value, known = int(text), self.vf_types.get(vf, 0)
            if value == known:
                continue
            if value and (known or value not in self._creatable(device, vfs, vf)):
                self.events.append(f"refused current_vgpu_type={value} on {vf}")
                self.write(f"{PCI}/{vf}/nvidia/current_vgpu_type", str(known))
                continue
            self.vf_types[vf] = value
            changed = True
        mig = _mig_backed(types)  # MIG-backed lists also follow the GPU instances the double holds
        if changed or mig or any(v not in self.vf_types for v in vfs):
            self._type_lists(device, vfs)

    def _type_lists(self, device: dict, vfs: list[str]) -> None:
        """Write each VF's ``nvidia/creatable_vgpu_types`` from the types its GPU's VFs hold (when it differs)."""
        types = device["sriov"].get("vf_nvidia_vgpu_types") or []
        if not types:
            return
        vfs = [os.path.basename(vf) for vf in vfs]
        for vf in vfs:
            self.vf_types.setdefault(vf, 0)
            allowed = self._creatable(device, vfs, vf)
            lines = ["ID    : vGPU Name"] + [f"{t['id']:<6}: {t['name']}" for t in types if t["id"] in allowed]
            if self.read(f"{PCI}/{vf}/nvidia/creatable_vgpu_types") != "\n".join(lines):
                self.write(f"{PCI}/{vf}/nvidia/creatable_vgpu_types", "\n".join(lines))

    def _creatable(self, device: dict, vfs: list[str], vf: str) -> set[int]:
        types = device["sriov"].get("vf_nvidia_vgpu_types") or []
        if self.vf_types.get(vf):
            return {self.vf_types[vf]}  # a VF that holds a type lists only that type
        in_use = [self.vf_types.get(v, 0) for v in vfs if self.vf_types.get(v)]
        if _mig_backed(types):
            by_id = {t["id"]: t for t in types}
            used = [by_id[i].get("mig_profile") for i in in_use if i in by_id]
            free = self._free_gpu_instances(device, used)
            if free is not None:  # MIG mode on: MIG-backed types on free GPU instances only
                return {t["id"] for t in types if free.get(t.get("mig_profile"), 0) > 0}
            types = [t for t in types if not t.get("mig_profile")]
        total = int(device["sriov"].get("framebuffer_gb", 48))
        out = set()
        for t in types:
            if in_use and t["id"] != in_use[0]:
                continue  # equal-size mode: one type per GPU
            if (len(in_use) + 1) * _framebuffer_gb(t["name"]) <= total:
                out.add(t["id"])
        return out

    def _free_gpu_instances(self, device: dict, used: list[str | None]) -> dict[str, int] | None:
        """{profile: GPU instances no vGPU uses} of the PF ``device``; None when MIG mode is off."""
        try:
            with open(self.real(fake_nvidia_smi.STATE)) as handle:
                gpus = json.load(handle)["gpus"]
        except (OSError, ValueError, KeyError):
            return None
        gpu = next((g for g in gpus if g["address"] == device["address"]), None)
        if gpu is None or (gpu.get("mig") or {}).get("current") != "Enabled":
            return None
        free: dict[str, int] = {}
        for instance in gpu.get("instances", []):
            free[instance["profile"]] = free.get(instance["profile"], 0) + 1
        for profile in used:
            if profile:
                free[profile] = free.get(profile, 0) - 1
        return free

    def _mig_mdev_types(self, pf: str, device: dict) -> None:
        """``available_instances`` of each mdev type on each VF of a GPU whose types include MIG-backed ones."""
        types = device["sriov"].get("vf_mdev_types") or []
        if not _mig_backed(types) or not os.path.isdir(self.real(f"{PCI}/{pf}")):
            return
        profiles = {t["type"]: t.get("mig_profile") for t in types}
        held: dict[str, str] = {}  # VF -> the mdev type of the mdev it holds
        for vf in self.vfs(pf):
            for mdev_type in profiles:
                devices = self.real(f"{PCI}/{vf}/mdev_supported_types/{mdev_type}/devices")
                if os.path.isdir(devices) and os.listdir(devices):
                    held[vf] = mdev_type
        free = self._free_gpu_instances(device, [profiles[t] for t in held.values()])
        total = int(device["sriov"].get("framebuffer_gb", 40))
        sliced = [t for t in held.values() if not profiles[t]]
        for vf in self.vfs(pf):
            for t in types:
                if vf in held:
                    available = 0  # a VF holds one vGPU
                elif free is not None:
                    available = 1 if t.get("mig_profile") and free.get(t["mig_profile"], 0) > 0 else 0
                elif t.get("mig_profile") or (sliced and sliced[0] != t["type"]):
                    available = 0  # MIG mode off; time-sliced: one type per GPU
                else:
                    available = 1 if (len(sliced) + 1) * _framebuffer_gb(t["name"]) <= total else 0
                path = f"{PCI}/{vf}/mdev_supported_types/{t['type']}/available_instances"
                if self.read(path) not in (None, str(available)):
                    self.write(path, str(available))

    def _mdevs(self) -> None:
        """``create`` of an mdev type makes the mdev (one fewer available); its ``remove`` takes it away."""
        bus = self.real("/sys/class/mdev_bus")
        if not os.path.isdir(bus):
            return
        tree = fake_sysfs._Tree(self.root)
        for parent in os.listdir(bus):
            types = os.path.join(bus, parent, "mdev_supported_types")
            for mdev_type in os.listdir(types) if os.path.isdir(types) else []:
                base = f"/sys/class/mdev_bus/{parent}/mdev_supported_types/{mdev_type}"
                wanted = self.read(f"{base}/create")
                if not wanted:
                    continue
                self.write(f"{base}/create", "")
                available = int(self.read(f"{base}/available_instances") or 0)
                if available < 1 or not re.match(r"^[0-9a-f-]{36}$", wanted):
                    self.events.append(f"refused mdev {wanted} of {mdev_type} on {parent}")
                    continue
                parent_path = self._host(os.path.realpath(self.real(f"/sys/class/mdev_bus/{parent}")))
                device = f"{parent_path}/{wanted}"
                tree.write(f"{device}/remove", "")
                tree.link(f"{device}/mdev_type", f"{parent_path}/mdev_supported_types/{mdev_type}")
                tree.link(f"/sys/bus/mdev/devices/{wanted}", device)
                tree.link(f"{parent_path}/mdev_supported_types/{mdev_type}/devices/{wanted}", device)
                self.write(f"{base}/available_instances", str(available - 1))
        devices = self.real("/sys/bus/mdev/devices")
        for name in os.listdir(devices) if os.path.isdir(devices) else []:
            if self.read(f"/sys/bus/mdev/devices/{name}/remove") != "1":
                continue
            device = os.path.realpath(os.path.join(devices, name))
            type_dir = os.path.realpath(os.path.join(device, "mdev_type"))
            os.unlink(os.path.join(type_dir, "devices", name))
            os.unlink(os.path.join(devices, name))
            shutil.rmtree(device)
            with open(os.path.join(type_dir, "available_instances")) as handle:
                available = int(handle.read().strip() or 0)
            with open(os.path.join(type_dir, "available_instances"), "w") as handle:
                handle.write(f"{available + 1}\n")

    # -- thread --------------------------------------------------------------------------------------
    def __enter__(self):
        self.step()  # the first answer (the VFs' type lists) before anyone reads, as at driver load
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _loop(self):
        while not self._stop.is_set():
            self.step()
            time.sleep(self.interval)


def _mig_backed(types: list[dict]) -> bool:
    return any(t.get("mig_profile") for t in types)


def _framebuffer_gb(name: str) -> int:
    match = re.search(r"-(\d+)[A-Z]$", name)
    return int(match.group(1)) if match else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.support.fake_kernel ROOT PROFILE``: answer the root's sysfs writes until killed."""
    root, profile = (sys.argv[1:] if argv is None else argv)[:2]
    kernel = FakeKernel(root, profile, delay=0.5, interval=0.02)
    kernel._loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
