# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Materialise declarative hardware profiles into simulated host roots that mirror real Linux layouts.

A profile (roles/simulated_fleet/files/hardware/<name>.yml) says what a host has; :func:`build_root` writes the files
the kernel would show for it: ``/sys/bus/pci/devices`` links into ``/sys/devices/pci<domain>:<bus>/...``
(relative links, as the kernel makes them), ``0x10de``-style attribute files, ``numa_node`` of ``-1``,
``iommu_group`` and ``driver`` links, ``physfn``/``virtfn<N>`` links, ``mdev_supported_types``,
``/sys/class/mdev_bus``, ``/sys/kernel/iommu_groups``, ``/sys/devices/system/node``, ``/sys/class/iommu``,
``/sys/class/net``, ``/sys/block``, ``/proc/cmdline``, ``/proc/cpuinfo``, ``/proc/mounts``,
``/proc/net/route``, ``/proc/net/if_inet6``, the PCI ID database, and recorded ``nvidia-smi`` output at
the path discovery documents (``/var/lib/accel-openstack/nvidia-smi``).

:func:`plan_root` gives the same root as a :class:`RootTree` in memory (nothing written), which the
``accel.openstack.simulated_host`` module compares with what its ``dest`` holds; :func:`build_root` writes
it over a directory (tests build into existing Debian roots). Every host path is made absolute and
normalised (``..`` stops at the root), and a path that would pass through a link of the tree is refused, so
nothing is ever written outside the root.

Command line (used by ``make demo``, from a checkout)::

    python -m tests.support.fake_sysfs --all --dest .demo/roots [--inventory inventories/demo/hosts.yml]
"""

from __future__ import annotations

import argparse
import copy
import ipaddress
import json
import os
import posixpath
import shutil
import socket
import struct

from ansible_collections.accel.openstack.plugins.module_utils._simulate import nvidia_smi as fake_nvidia_smi

HERE = os.path.dirname(os.path.abspath(__file__))
# The collection's root (plugins/module_utils/_simulate/..): the profiles ship in the simulated_fleet role.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DEMO_INVENTORY = os.path.join(REPO, "inventories", "demo", "hosts.yml")
PROFILE_DIR = os.path.join(REPO, "roles", "simulated_fleet", "files", "hardware")
PCI_IDS = os.path.join(PROFILE_DIR, "pci.ids")
NVIDIA_SMI_DIR = "/var/lib/accel-openstack/nvidia-smi"
BRIDGE_CLASSES = ("0600", "0604")


def profile_names() -> list[str]:
    return sorted(f[:-4] for f in os.listdir(PROFILE_DIR) if f.endswith(".yml"))


def load_profile(name: str) -> dict:
    path = name if os.path.sep in name else os.path.join(PROFILE_DIR, name + ".yml")
    import yaml  # on the controller only: the module is given the profile as data

    with open(path) as handle:
        return expand_profile(yaml.safe_load(handle))


# -- address arithmetic ----------------------------------------------------------------------------
def split_address(address: str) -> tuple[int, int, int, int]:
    domain, bus, devfn = address.split(":")
    dev, fn = devfn.split(".")
    return int(domain, 16), int(bus, 16), int(dev, 16), int(fn, 16)


def join_address(domain: int, bus: int, dev: int, fn: int) -> str:
    return f"{domain:04x}:{bus:02x}:{dev:02x}.{fn:x}"


def vf_address(pf: str, offset: int, stride: int, index: int) -> str:
    domain, bus, dev, fn = split_address(pf)
    routing_id = (bus << 8 | dev << 3 | fn) + offset + index * stride
    return join_address(domain, routing_id >> 8, (routing_id >> 3) & 0x1F, routing_id & 0x7)


# -- profile expansion: VFs are generated from the PF's `sriov` block ---------------------------------
def expand_profile(profile: dict) -> dict:
    """Return a copy of ``profile`` whose device list includes generated SR-IOV VFs."""
    profile = copy.deepcopy(profile)
    devices = []
    groups = [d.get("iommu_group") for d in profile.get("devices", []) if d.get("iommu_group") is not None]
    next_group = (max(groups) + 1) if groups else 0
    for device in profile.get("devices", []):
        device["address"] = device["address"].lower()
        devices.append(device)
        sriov = device.get("sriov")
        if not sriov:
            continue
        vfs = []
        for index in range(int(sriov.get("numvfs", 0))):
            address = vf_address(device["address"], sriov.get("offset", 1), sriov.get("stride", 1), index)
            vf = {
                "address": address,
                "vendor_id": device["vendor_id"],
                "product_id": sriov["vf_product_id"],
                "class_code": sriov.get("vf_class_code", device["class_code"]),
                "subsystem_vendor_id": device.get("subsystem_vendor_id", "0000"),
                "subsystem_product_id": device.get("subsystem_product_id", "0000"),
                "parent": device.get("parent"),
                "driver": sriov.get("vf_driver"),
                "numa_node": device.get("numa_node", -1),
                "physfn": device["address"],
                "mdev_types": copy.deepcopy(sriov.get("vf_mdev_types", [])),
                "nvidia_vgpu_types": copy.deepcopy(sriov.get("vf_nvidia_vgpu_types", [])),
                "mig_enabled": ((device.get("mig") or {}).get("mode") or {}).get("current") == "Enabled",
            }
            if profile.get("iommu", "none") != "none" and device.get("iommu_group") is not None:
                vf["iommu_group"] = next_group
                next_group += 1
            vfs.append(vf)
        device["_vfs"] = [vf["address"] for vf in vfs]
        devices.extend(vfs)
    profile["devices"] = devices
    return profile


def initially_creatable(vf: dict) -> list[dict]:
    """The vGPU 17+ types a fresh VF lists: MIG-backed ones (``mig_profile``) need a free GPU instance,
    which a freshly built root has none of; time-sliced ones need MIG mode off. The fake kernel keeps the
    list up to date afterwards."""
    return [t for t in vf.get("nvidia_vgpu_types", []) if not t.get("mig_profile") and not vf.get("mig_enabled")]


def is_bridge(device: dict) -> bool:
    return device["class_code"][:4] in BRIDGE_CLASSES


# -- the builder ---------------------------------------------------------------------------------------
def host_path_of(path: str) -> str:
    """``path`` as an absolute, normalised host path: ``..`` never climbs above the root."""
    return posixpath.normpath("/" + str(path).lstrip("/")) if str(path).strip("/") else "/"


class _Tree:
    def __init__(self, dest: str):
        self.dest = os.path.abspath(dest)

    def real(self, host_path: str) -> str:
        return os.path.join(self.dest, host_path.lstrip("/"))

    def exists(self, host_path: str) -> bool:
        return os.path.exists(self.real(host_path))

    def write(self, host_path: str, content: str) -> None:
        real = self.real(host_path)
        os.makedirs(os.path.dirname(real), exist_ok=True)
        with open(real, "w") as handle:
            handle.write(content)

    def mkdir(self, host_path: str) -> None:
        os.makedirs(self.real(host_path), exist_ok=True)

    def link(self, host_path: str, target_host_path: str) -> None:
        """A relative symlink at ``host_path`` pointing to ``target_host_path``, as sysfs makes them."""
        real = self.real(host_path)
        os.makedirs(os.path.dirname(real), exist_ok=True)
        rel = os.path.relpath(target_host_path, os.path.dirname(host_path))
        if os.path.lexists(real):
            os.unlink(real)
        os.symlink(rel, real)


class RootTree:
    """A host root in memory: ``entries`` maps each host path to ``("dir",)``, ``("file", text)`` or
    ``("link", relative target)``, parents before children. The builder writes into it as into a
    :class:`_Tree`; :meth:`write_to` puts it on disk."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple] = {"/": ("dir",)}

    def _parents(self, host_path: str) -> None:
        parent = posixpath.dirname(host_path)
        if parent == host_path:
            return
        kind = self.entries.get(parent, (None,))[0]
        if kind == "dir":
            return
        if kind is not None:
            raise ValueError(f"{host_path}: its parent {parent} is a {kind} of the simulated root, not a directory")
        self._parents(parent)
        self.entries[parent] = ("dir",)

    def _claim(self, host_path: str) -> str:
        host_path = host_path_of(host_path)
        if host_path == "/":
            raise ValueError("the root itself cannot be a file or a link")
        self._parents(host_path)
        return host_path

    def write(self, host_path: str, content: str) -> None:
        host_path = self._claim(host_path)
        if self.entries.get(host_path, ("file",))[0] != "file":
            raise ValueError(f"{host_path} is already a {self.entries[host_path][0]} of the simulated root")
        self.entries[host_path] = ("file", str(content))

    def mkdir(self, host_path: str) -> None:
        host_path = host_path_of(host_path)
        if host_path != "/":
            self._parents(host_path)
            kind = self.entries.setdefault(host_path, ("dir",))[0]
            if kind != "dir":
                raise ValueError(f"{host_path} is already a {kind} of the simulated root")

    def link(self, host_path: str, target_host_path: str) -> None:
        host_path = self._claim(host_path)
        target = host_path_of(target_host_path)
        if self.entries.get(host_path, ("link",))[0] != "link":
            raise ValueError(f"{host_path} is already a {self.entries[host_path][0]} of the simulated root")
        self.entries[host_path] = ("link", posixpath.relpath(target, posixpath.dirname(host_path)))

    def exists(self, host_path: str) -> bool:
        return host_path_of(host_path) in self.entries

    def write_to(self, dest: str) -> None:
        """Write every entry under ``dest`` (a file or link already there is replaced)."""
        for host_path, entry in self.entries.items():
            real = os.path.join(dest, host_path.lstrip("/"))
            if entry[0] == "dir":
                os.makedirs(real, exist_ok=True)
                continue
            if os.path.lexists(real) and (os.path.islink(real) or not os.path.isdir(real)):
                os.unlink(real)
            if entry[0] == "link":
                os.symlink(entry[1], real)
            else:
                with open(real, "w", encoding="utf-8") as handle:
                    handle.write(entry[1])


def _device_paths(devices: list[dict]) -> dict[str, str]:
    by_address = {d["address"]: d for d in devices}
    paths: dict[str, str] = {}

    def path_of(address: str) -> str:
        if address in paths:
            return paths[address]
        device = by_address[address]
        parent = device.get("parent")
        if parent:
            if parent not in by_address:
                raise ValueError(f"device {address}: parent {parent} is not in the profile")
            base = path_of(parent)
        else:
            domain, bus, _unused, _unused = split_address(address)
            base = f"/sys/devices/pci{domain:04x}:{bus:02x}"
        paths[address] = f"{base}/{address}"
        return paths[address]

    for address in by_address:
        path_of(address)
    return paths


def build_root(profile: dict | str, dest: str) -> str:
    """Write the fake host root for ``profile`` (a name or a loaded profile) into ``dest``; return it."""
    if isinstance(profile, str):
        profile = load_profile(profile)
    dest = os.path.abspath(dest)
    with open(PCI_IDS) as handle:
        tree = plan_root(profile, handle.read())
    if os.path.exists(os.path.join(dest, "sys")):
        shutil.rmtree(os.path.join(dest, "sys"))
    tree.write_to(dest)
    return dest


def plan_root(profile: dict, pci_ids: str | None = None) -> RootTree:
    """The host root for a loaded ``profile`` as a :class:`RootTree` (nothing written); ``pci_ids`` is the
    text of the PCI ID database the root carries (none when None or when the profile says ``pci_ids: false``)."""
    if not any("_vfs" in d for d in profile.get("devices", [])):
        profile = expand_profile(profile)
    tree = RootTree()
    for base in (
        "/sys/bus/pci/devices",
        "/sys/bus/pci/drivers",
        "/sys/kernel/iommu_groups",
        "/sys/class/iommu",
    ):
        tree.mkdir(base)
    tree.write("/sys/bus/pci/drivers_probe", "")
    iommu = profile.get("iommu", "none")
    devices = profile.get("devices", [])
    paths = _device_paths(devices)
    routes: list[str] = []
    inet6: list[str] = []
    mounts: list[str] = ["proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0", "sysfs /sys sysfs rw 0 0"]
    for device in devices:
        _write_device(tree, profile, device, paths, routes, inet6, mounts)
    _write_iommu(tree, profile, iommu, devices)
    _write_numa(tree, profile)
    _write_proc(tree, profile, routes, inet6, mounts)
    _write_nvidia_smi(tree, profile, devices)
    _write_os(tree, profile)
    if profile.get("pci_ids", True) and pci_ids is not None:
        tree.write("/usr/share/misc/pci.ids", pci_ids)
    for host_path, content in (profile.get("files") or {}).items():
        tree.write(host_path, content)
    return tree


def _write_device(tree, profile, device, paths, routes, inet6, mounts) -> None:
    address = device["address"]
    path = paths[address]
    attrs = {
        "vendor": f"0x{device['vendor_id'].lower()}",
        "device": f"0x{device['product_id'].lower()}",
        "subsystem_vendor": f"0x{device.get('subsystem_vendor_id', '0000').lower()}",
        "subsystem_device": f"0x{device.get('subsystem_product_id', '0000').lower()}",
        "class": f"0x{device['class_code'].lower()}",
        "numa_node": str(device.get("numa_node", -1)),
        "driver_override": "(null)",
        "enable": "1",
    }
    if device["class_code"].startswith("0300"):
        attrs["boot_vga"] = "1" if device.get("boot_vga") else "0"
    sriov = device.get("sriov")
    if sriov:
        attrs.update(
            sriov_totalvfs=str(sriov.get("totalvfs", 0)),
            sriov_numvfs=str(sriov.get("numvfs", 0)),
            sriov_offset=str(sriov.get("offset", 1)),
            sriov_stride=str(sriov.get("stride", 1)),
            sriov_vf_device=sriov["vf_product_id"],
            sriov_drivers_autoprobe="1",
        )
    # files a driver adds to the device's directory (amdgpu's current_compute_partition, ...)
    attrs.update({str(k): str(v) for k, v in (device.get("attributes") or {}).items()})
    for name, value in attrs.items():
        tree.write(f"{path}/{name}", value + "\n")
    tree.link(f"/sys/bus/pci/devices/{address}", path)
    driver = device.get("driver")
    if driver:
        tree.link(f"{path}/driver", f"/sys/bus/pci/drivers/{driver}")
        tree.link(f"/sys/bus/pci/drivers/{driver}/{address}", path)
        for control in ("bind", "unbind", "new_id", "remove_id"):
            if not tree.exists(f"/sys/bus/pci/drivers/{driver}/{control}"):
                tree.write(f"/sys/bus/pci/drivers/{driver}/{control}", "")
    group = device.get("iommu_group")
    if group is not None and profile.get("iommu", "none") != "none":
        tree.link(f"{path}/iommu_group", f"/sys/kernel/iommu_groups/{group}")
        tree.link(f"/sys/kernel/iommu_groups/{group}/devices/{address}", path)
        if not tree.exists(f"/sys/kernel/iommu_groups/{group}/type"):
            tree.write(f"/sys/kernel/iommu_groups/{group}/type", "DMA\n")
        tree.link(f"{path}/iommu", _iommu_unit_path(profile))
    if device.get("physfn"):
        tree.link(f"{path}/physfn", paths[device["physfn"]])
    for index, vf in enumerate(device.get("_vfs", [])):
        tree.link(f"{path}/virtfn{index}", paths[vf])
    if device.get("mdev_types"):
        tree.link(f"/sys/class/mdev_bus/{address}", path)
        for mdev in device["mdev_types"]:
            base = f"{path}/mdev_supported_types/{mdev['type']}"
            tree.write(f"{base}/name", mdev.get("name", "") + "\n")
            tree.write(f"{base}/available_instances", f"{mdev.get('available_instances', 0)}\n")
            tree.write(f"{base}/device_api", mdev.get("device_api", "vfio-pci") + "\n")
            tree.write(f"{base}/description", mdev.get("description", "") + "\n")
            tree.write(f"{base}/create", "")
            tree.mkdir(f"{base}/devices")
    if device.get("nvidia_vgpu_types"):
        lines = ["ID    : vGPU Name"]
        lines += [f"{t['id']:<6}: {t['name']}" for t in initially_creatable(device)]
        tree.write(f"{path}/nvidia/creatable_vgpu_types", "\n".join(lines) + "\n")
        supported = ["ID    : vGPU Name"] + [f"{t['id']:<6}: {t['name']}" for t in device["nvidia_vgpu_types"]]
        tree.write(f"{path}/nvidia/supported_vgpu_types", "\n".join(supported) + "\n")
        tree.write(f"{path}/nvidia/current_vgpu_type", f"{device.get('current_vgpu_type', 0)}\n")
    net = device.get("net")
    if net:
        ifname = net["interface"]
        tree.write(f"{path}/net/{ifname}/operstate", net.get("operstate", "up") + "\n")
        tree.write(f"{path}/net/{ifname}/address", net.get("mac", "02:00:00:00:00:01") + "\n")
        tree.link(f"/sys/class/net/{ifname}", f"{path}/net/{ifname}")
        for cidr in net.get("addresses", []):
            iface = ipaddress.ip_interface(cidr)
            if iface.version == 4:
                routes.append(_route_line(ifname, iface.network))
            else:
                inet6.append(f"{iface.ip.exploded.replace(':', '')} 02 {iface.network.prefixlen:02x} 00 80 {ifname}")
        for route in net.get("routes", []):
            routes.append(_route_line(ifname, ipaddress.ip_network(route)))
    block = device.get("block")
    if block:
        name = block["name"]
        if name.startswith("nvme"):
            block_path = f"{path}/nvme/{name[:-2]}/{name}"
        else:
            block_path = f"{path}/host0/target0:0:0/0:0:0:0/block/{name}"
        tree.write(f"{block_path}/dev", "259:0\n")
        tree.link(f"/sys/block/{name}", block_path)
        for dev, mountpoint in (block.get("mounts") or {}).items():
            part = dev.rsplit("/", 1)[-1]
            if part != name:
                tree.write(f"{block_path}/{part}/partition", "1\n")
            mounts.append(f"{dev} {mountpoint} ext4 rw,relatime 0 0")


def _route_line(ifname: str, network) -> str:
    dest = struct.unpack("<I", socket.inet_aton(str(network.network_address)))[0]
    mask = struct.unpack("<I", socket.inet_aton(str(network.netmask)))[0]
    return f"{ifname}\t{dest:08X}\t00000000\t0001\t0\t0\t0\t{mask:08X}\t0\t0\t0"


def _iommu_unit_path(profile) -> str:
    if profile.get("iommu") == "amd":
        return "/sys/devices/pci0000:00/0000:00:00.2/iommu/ivhd0"
    return "/sys/devices/virtual/iommu/dmar0"


def _write_iommu(tree, profile, iommu, devices) -> None:
    if iommu == "none":
        return
    unit = _iommu_unit_path(profile)
    tree.mkdir(unit)
    tree.link(f"/sys/class/iommu/{unit.rsplit('/', 1)[-1]}", unit)


def _write_numa(tree, profile) -> None:
    nodes = profile.get("numa_nodes") or [{"id": 0, "cpus": "0-3", "memory_mb": 16384}]
    ids = sorted(n["id"] for n in nodes)
    tree.write("/sys/devices/system/node/online", _ranges(ids) + "\n")
    tree.write("/sys/devices/system/node/possible", _ranges(ids) + "\n")
    for node in nodes:
        base = f"/sys/devices/system/node/node{node['id']}"
        tree.write(f"{base}/cpulist", f"{node['cpus']}\n")
        kb = int(node["memory_mb"]) * 1024
        tree.write(
            f"{base}/meminfo",
            f"Node {node['id']} MemTotal:       {kb} kB\nNode {node['id']} MemFree:        {kb // 2} kB\n",
        )
        # huge page pools: {size in KiB: pages} or {size: {total, free}}, as the kernel lays them out
        for size, pool in (node.get("hugepages") or {}).items():
            total, free = (
                (pool.get("total", 0), pool.get("free", pool.get("total", 0)))
                if isinstance(pool, dict)
                else (pool, pool)
            )
            tree.write(f"{base}/hugepages/hugepages-{size}kB/nr_hugepages", f"{total}\n")
            tree.write(f"{base}/hugepages/hugepages-{size}kB/free_hugepages", f"{free}\n")
    # thread siblings when the profile's cpu says threads_per_core: a node's CPU list splits into that
    # many equal runs and a core holds the k-th CPU of each (the kernel's usual numbering, e.g. 0 and 192)
    per_core = int((profile.get("cpu") or {}).get("threads_per_core") or 0)
    if per_core:
        for node in nodes:
            cpus = _cpu_numbers(str(node["cpus"]))
            width = len(cpus) // per_core
            for k in range(width):
                core = [cpus[k + width * t] for t in range(per_core)]
                for cpu in core:
                    tree.write(
                        f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list", _ranges(sorted(core)) + "\n"
                    )


def _cpu_numbers(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        lo, _unused, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _ranges(ids: list[int]) -> str:
    out, start = [], None
    for i, value in enumerate(ids):
        if start is None:
            start = value
        if i + 1 == len(ids) or ids[i + 1] != value + 1:
            out.append(str(start) if start == value else f"{start}-{value}")
            start = None
    return ",".join(out)


def _cpu_count(profile) -> int:
    total = 0
    for node in profile.get("numa_nodes") or [{"cpus": "0-3"}]:
        for part in str(node["cpus"]).split(","):
            lo, _unused, hi = part.partition("-")
            total += int(hi or lo) - int(lo) + 1
    return total


def _write_proc(tree, profile, routes, inet6, mounts) -> None:
    tree.write("/proc/cmdline", profile.get("kernel_cmdline", "BOOT_IMAGE=/boot/vmlinuz ro quiet") + "\n")
    cpu = profile.get("cpu", {})
    vendor = {"intel": "GenuineIntel", "amd": "AuthenticAMD"}.get(cpu.get("vendor"), cpu.get("vendor", "unknown"))
    stanzas = []
    for index in range(_cpu_count(profile)):
        stanzas.append(
            f"processor\t: {index}\nvendor_id\t: {vendor}\ncpu family\t: {cpu.get('family', 6)}\n"
            f"model name\t: {cpu.get('model', 'Generic CPU')}\n"
        )
    tree.write("/proc/cpuinfo", "\n".join(stanzas) + "\n")
    header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"
    tree.write("/proc/net/route", "\n".join([header] + routes) + "\n")
    tree.write("/proc/net/if_inet6", "".join(line + "\n" for line in inet6))
    tree.write("/proc/mounts", "\n".join(mounts) + "\n")


def _write_os(tree, profile) -> None:
    """The boot configuration a Debian-family host has: /etc/default/grub with its drop-in directory.

    GRUB_CMDLINE_LINUX_DEFAULT holds what the running command line carries beyond the image, the root
    and ``ro``. ``boot: none`` in the profile leaves the root without any bootloader configuration.
    """
    if profile.get("boot", "grub") != "grub":
        return
    skip = ("BOOT_IMAGE=", "root=", "ro", "rw")
    args = [a for a in profile.get("kernel_cmdline", "").split() if not a.startswith(skip) and a not in skip]
    tree.write(
        "/etc/default/grub",
        "# If you change this file, run 'update-grub' afterwards to update /boot/grub/grub.cfg.\n"
        "GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\n"
        "GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`\n"
        f'GRUB_CMDLINE_LINUX_DEFAULT="{" ".join(args)}"\nGRUB_CMDLINE_LINUX=""\n',
    )
    tree.mkdir("/etc/default/grub.d")
    tree.write("/etc/os-release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n')


def _write_nvidia_smi(tree, profile, devices) -> None:
    """The stateful nvidia-smi double's state and the outputs it renders (nvidia_smi.py beside this file)."""
    gpus = [d for d in devices if d["vendor_id"] == "10de" and d["class_code"][:2] == "03" and not d.get("physfn")]
    owned = [g for g in gpus if g.get("driver") == "nvidia"]  # nvidia-smi only sees GPUs the driver owns
    if not owned:
        return  # no GPU on the nvidia driver: the host has no nvidia-smi to record
    state = fake_nvidia_smi.initial_state(owned, nvidia_drm_loaded=bool(profile.get("nvidia_drm_loaded")))
    tree.write(fake_nvidia_smi.STATE, json.dumps(state, indent=2, sort_keys=True))
    for host_path, text in fake_nvidia_smi.recorded_outputs(state).items():
        tree.write(host_path, text)
    log = fake_nvidia_smi.kernel_log(state, str(profile.get("name") or "localhost"))
    if log is not None:  # a GPU whose profile plants health events (Xid lines as the driver logs them)
        tree.write("/var/log/kern.log", log)


# -- command line --------------------------------------------------------------------------------------
def command_line(argv: list[str]) -> list[str]:
    """``tests/support/fake_sysfs.py``'s command line: build the roots ``argv`` names; one line per root built."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profiles", nargs="*", help="profile names (default with --all: every profile)")
    parser.add_argument("--all", action="store_true", help="build every profile")
    parser.add_argument("--dest", required=True, help="directory that receives one root per profile")
    parser.add_argument("--inventory", help="build the roots the hosts of this inventory name (accel_profile)")
    args = parser.parse_args(argv)
    names = list(args.profiles)
    mapping: dict[str, str] = {}
    if args.inventory:
        mapping = inventory_profiles(args.inventory)
    elif args.all:
        mapping = {name: name for name in profile_names()}
    for name in names:
        mapping[name] = name
    built = []
    for host, profile in sorted(mapping.items()):
        dest = os.path.join(args.dest, host)
        build_root(profile, dest)
        built.append(f"built {host} ({profile}) at {dest}")
    return built


def inventory_profiles(path: str) -> dict[str, str]:
    """Per host of an inventory file, the hardware profile it names (``accel_profile``, else its name)."""
    import yaml  # on the controller only

    with open(path) as handle:
        inventory = yaml.safe_load(handle)
    return {host: (hostvars or {}).get("accel_profile", host) for host, hostvars in _inventory_hosts(inventory)}


def build_inventory_roots(path: str, dest: str) -> str:
    """One root per host of an inventory file, under ``dest`` (what ``--inventory`` builds); returns ``dest``."""
    for host, profile in sorted(inventory_profiles(path).items()):
        build_root(profile, os.path.join(dest, host))
    return dest


def _inventory_hosts(node):
    for key, value in (node or {}).items():
        if key == "hosts":
            yield from (value or {}).items()
        elif isinstance(value, dict):
            yield from _inventory_hosts(value)
