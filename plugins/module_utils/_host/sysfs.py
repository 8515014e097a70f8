# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One reader for a host's PCI, IOMMU, NUMA, SR-IOV and mediated-device state, following the Linux layout.

It reads only through :class:`HostRoot`, so it works the same on ``/``, a chroot, a mounted image or a
fixture. It never raises for a bad attribute: what it cannot read becomes a warning naming the path, and
the rest of the host is still reported. Links are read with ``readlink`` and resolved inside the root;
their targets need not exist (a ``driver`` link names the driver even when the driver directory is absent).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._inputs import shown
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_normal_address
from ansible_collections.accel.openstack.plugins.module_utils._names.text import is_decimal

# The most CPUs a list may name (the kernel's NR_CPUS tops out at 8192); a hostile ``0-4294967295``
# is refused instead of being expanded.
MAX_CPUS = 1 << 16

HEX16_RE = re.compile(r"^0x([0-9a-fA-F]{4})\Z")
CLASS_RE = re.compile(r"^0x([0-9a-fA-F]{6})\Z")
# sriov_vf_device is printed with "%x": no 0x, no leading zeros
VF_DEVICE_RE = re.compile(r"^([0-9a-fA-F]{1,4})\Z")
BRIDGE_CLASS_PREFIXES = ("0600", "0604", "0609")
VFIO_DRIVERS = ("vfio-pci", "pci-stub")


@dataclass
class MdevType:
    type: str
    name: str | None
    available_instances: int | None
    device_api: str | None
    description: str | None
    mechanism: str = "mdev"  # "mdev" (mdev bus) or "nvidia_vgpu_vf" (vGPU 17+ on SR-IOV VFs)

    def as_fact(self) -> dict:
        return asdict(self)  # the fact's keys are the fields' names


@dataclass
class PciDevice:
    address: str
    sysfs_path: str
    vendor_id: str | None = None
    product_id: str | None = None
    subsystem_vendor_id: str | None = None
    subsystem_product_id: str | None = None
    class_code: str | None = None
    driver: str | None = None
    numa_node: int | None = None
    iommu_group: int | None = None
    physfn: str | None = None
    virtfns: list[str] = field(default_factory=list)
    sriov_totalvfs: int | None = None
    sriov_numvfs: int | None = None
    # the device ID of the VFs this PF makes (the kernel's sriov_vf_device), 4 lowercase hex
    sriov_vf_product_id: str | None = None
    mdev_types: list[MdevType] = field(default_factory=list)
    is_boot_vga: bool = False
    current_vgpu_type: str | None = None
    supported_vgpu_types: list[dict] = field(default_factory=list)  # [{type, name}] the GPU supports at all
    # amdgpu's partition files (current_compute_partition, current_memory_partition and their available_*)
    compute_partition: str | None = None
    memory_partition: str | None = None
    available_compute_partitions: list[str] = field(default_factory=list)
    available_memory_partitions: list[str] = field(default_factory=list)

    @property
    def is_bridge(self) -> bool:
        return bool(self.class_code) and self.class_code.startswith(BRIDGE_CLASS_PREFIXES)

    @property
    def slot(self) -> str:
        """domain:bus:device, the physical card a function belongs to."""
        return self.address.rsplit(".", 1)[0]


@dataclass
class NumaNode:
    id: int
    cpus: list[int]
    memory_mb: int | None
    # huge page pools: page size in KiB (text) -> {"total": nr_hugepages, "free": free_hugepages}
    hugepages: dict[str, dict[str, int]] = field(default_factory=dict)
    # the node's CPUs by physical core (thread_siblings_list), cores in order of their first CPU
    siblings: list[list[int]] = field(default_factory=list)


@dataclass
class HostHardware:
    devices: dict[str, PciDevice]
    iommu_groups: dict[int, list[str]]
    numa_nodes: list[NumaNode]
    cpu_vendor: str
    iommu_enabled: bool
    kernel_cmdline: str
    warnings: list[str]

    def group_peers(self, address: str) -> list[PciDevice]:
        """The other endpoints (bridges excepted) that share ``address``'s IOMMU group."""
        device = self.devices[address]
        if device.iommu_group is None:
            return []
        members = self.iommu_groups.get(device.iommu_group, [])
        return [
            self.devices[m] for m in members if m != address and m in self.devices and not self.devices[m].is_bridge
        ]


# -- small parsers ---------------------------------------------------------------------------------
def parse_int_list(text: str, limit: int = MAX_CPUS) -> list[int]:
    """``0-3,8,10-11`` -> [0, 1, 2, 3, 8, 10, 11]; raises ValueError on garbage or more than ``limit``."""
    out: list[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        if not is_decimal(lo) or (sep and not is_decimal(hi)):
            raise ValueError(f"{part[:40]!r} is not a number or a range of numbers")
        if len(lo) > 9 or len(hi) > 9:
            raise ValueError(f"{part[:40]!r} names a CPU number of more than 9 digits")
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first or len(out) + last - first + 1 > limit:
            raise ValueError(f"{part!r} is a reversed range or names more than {limit} CPUs")
        out.extend(range(first, last + 1))
    return out


def _hex_attr(host: HostRoot, path: str, pattern: re.Pattern) -> str | None:
    value = host.read_attr(path)
    if value is None:
        return None
    match = pattern.match(value)
    if not match:
        host.warn(f"{path}: unexpected content {value[:40]!r}")
        return None
    return match.group(1).lower()


# The sysfs numbers read (NUMA node, VF counts, IOMMU group ids) fit 32 bits; past that a value is damage.
MAX_SYSFS_INT = 0x7FFFFFFF


def small_int(text: str | None) -> int | None:
    """A decimal whole number of at most 10 digits and at most MAX_SYSFS_INT, or None (checked on the
    text: a 5,000-digit number is never converted)."""
    if not is_decimal(text) or len(text) > 10:
        return None
    number = int(text)
    return number if number <= MAX_SYSFS_INT else None


def count_attr(host: HostRoot, path: str, error: type[AccelError] = AccelError) -> int | None:
    """A count the kernel writes in sysfs (``sriov_totalvfs``, ``sriov_numvfs``, ``available_instances``):
    None when the file is absent; ``error`` naming the file when it holds anything but a whole number up
    to MAX_SYSFS_INT (checked on the text: ``abc`` and a 5,000-digit number are refused alike)."""
    value = host.read_attr(path)
    if value is None:
        return None
    number = small_int(value)
    if number is None:
        raise error(
            f"{path} holds {shown(value)}, not a count (a whole number from 0 to {MAX_SYSFS_INT:,}); the kernel "
            "never writes that: check the device and its driver (or the recorded sysfs tree), then run again"
        )
    return number


def _int_attr(host: HostRoot, path: str) -> int | None:
    value = host.read_attr(path)
    if value is None:
        return None
    text = value[1:] if value.startswith("-") else value
    if len(text) > 18:
        host.warn(f"{path}: a number of {len(text):,} characters ({value[:20]!r}...); ignored")
        return None
    try:
        number = int(value, 0)
    except ValueError:
        host.warn(f"{path}: not an integer ({value[:40]!r})")
        return None
    if abs(number) > MAX_SYSFS_INT:
        host.warn(f"{path}: {number} is out of range (at most {MAX_SYSFS_INT}); ignored")
        return None
    return number


def _link_name(host: HostRoot, path: str) -> str | None:
    target = host.readlink(path)
    return target.rstrip("/").rsplit("/", 1)[-1] if target else None


# -- the reader ------------------------------------------------------------------------------------
def read_device(host: HostRoot, address: str) -> PciDevice | None:
    link = f"/sys/bus/pci/devices/{address}"
    path = host.resolve(link)
    if not host.is_dir(path):
        host.warn(f"{link}: device vanished or link is broken (points to {path})")
        return None
    dev = PciDevice(address=address, sysfs_path=path)
    dev.vendor_id = _hex_attr(host, f"{path}/vendor", HEX16_RE)
    dev.product_id = _hex_attr(host, f"{path}/device", HEX16_RE)
    dev.subsystem_vendor_id = _hex_attr(host, f"{path}/subsystem_vendor", HEX16_RE)
    dev.subsystem_product_id = _hex_attr(host, f"{path}/subsystem_device", HEX16_RE)
    dev.class_code = _hex_attr(host, f"{path}/class", CLASS_RE)
    if dev.vendor_id is None or dev.product_id is None:
        host.warn(f"{path}: vendor or device ID unreadable; device {address} reported without them")
    dev.driver = _link_name(host, f"{path}/driver")
    numa = _int_attr(host, f"{path}/numa_node")
    dev.numa_node = numa if numa is not None and numa >= 0 else None
    group = _link_name(host, f"{path}/iommu_group")
    if group is not None:
        dev.iommu_group = small_int(group)
        if dev.iommu_group is None:
            host.warn(f"{path}/iommu_group: link target {group[:40]!r} is not a group number")
    physfn = _link_name(host, f"{path}/physfn")
    dev.physfn = physfn if physfn and is_normal_address(physfn) else None
    entries = host.listdir(path)
    virtfns = sorted((small_int(e[6:]), e) for e in entries if e.startswith("virtfn") and small_int(e[6:]) is not None)
    for _unused, entry in virtfns:
        vf = _link_name(host, f"{path}/{entry}")
        if vf and is_normal_address(vf):
            dev.virtfns.append(vf)
    if "sriov_totalvfs" in entries:
        dev.sriov_totalvfs = _int_attr(host, f"{path}/sriov_totalvfs")
        dev.sriov_numvfs = _int_attr(host, f"{path}/sriov_numvfs")
        vf_device = _hex_attr(host, f"{path}/sriov_vf_device", VF_DEVICE_RE)
        dev.sriov_vf_product_id = vf_device.zfill(4) if vf_device else None
    if "boot_vga" in entries:
        dev.is_boot_vga = host.read_attr(f"{path}/boot_vga") == "1"
    _read_partitions(host, path, entries, dev)
    if "mdev_supported_types" in entries:
        dev.mdev_types.extend(_read_mdev_types(host, f"{path}/mdev_supported_types"))
    if "nvidia" in entries:
        dev.mdev_types.extend(_read_nvidia_vf_types(host, f"{path}/nvidia"))
        dev.current_vgpu_type = host.read_attr(f"{path}/nvidia/current_vgpu_type")
        dev.supported_vgpu_types = [
            {"type": t.type, "name": t.name}
            for t in _read_nvidia_vf_types(host, f"{path}/nvidia", "supported_vgpu_types")
        ]
    return dev


PARTITION_RE = re.compile(r"^[A-Z][A-Z0-9]{1,7}\Z")


def _partition_names(host: HostRoot, path: str, many: bool) -> list[str]:
    """amdgpu's partition files: ``SPX`` (current) or ``SPX, DPX, QPX, CPX`` (available); anything else
    is a warning naming the file."""
    value = host.read_attr(path)
    if value is None:
        return []
    names = [n.strip() for n in value.split(",")] if many else [value]
    if not names or not all(PARTITION_RE.match(n) for n in names) or len(names) > 16:
        host.warn(f"{path}: unexpected content {value[:40]!r}; a partition mode such as SPX, CPX or NPS4 expected")
        return []
    return names


def _read_partitions(host: HostRoot, path: str, entries: list[str], dev: PciDevice) -> None:
    """The compute and memory partition modes amdgpu shows in the device directory (MI300 series)."""
    if "current_compute_partition" in entries:
        dev.compute_partition = next(iter(_partition_names(host, f"{path}/current_compute_partition", False)), None)
        dev.available_compute_partitions = _partition_names(host, f"{path}/available_compute_partition", True)
    if "current_memory_partition" in entries:
        dev.memory_partition = next(iter(_partition_names(host, f"{path}/current_memory_partition", False)), None)
        dev.available_memory_partitions = _partition_names(host, f"{path}/available_memory_partition", True)


def _read_mdev_types(host: HostRoot, base: str) -> list[MdevType]:
    out = []
    for name in host.listdir(base):
        type_dir = f"{base}/{name}"
        out.append(
            MdevType(
                type=name,
                name=host.read_attr(f"{type_dir}/name"),
                available_instances=_int_attr(host, f"{type_dir}/available_instances"),
                device_api=host.read_attr(f"{type_dir}/device_api"),
                description=(host.read_text(f"{type_dir}/description") or "").strip() or None,
            )
        )
    return out


_VGPU_LINE = re.compile(r"^\s*(\d+)\s*:\s*(.+?)\s*\Z")


def _read_nvidia_vf_types(host: HostRoot, base: str, table: str = "creatable_vgpu_types") -> list[MdevType]:
    """NVIDIA vGPU 17+ on SR-IOV VFs: ``creatable_vgpu_types`` (what the VF can take now) and
    ``supported_vgpu_types`` (every type the GPU supports) are tables of ``ID : name`` lines."""
    text = host.read_text(f"{base}/{table}")
    if text is None:
        return []
    out = []
    for line in text.splitlines()[1:]:
        match = _VGPU_LINE.match(line)
        if not match:
            if line.strip():
                host.warn(f"{base}/{table}: cannot parse line {line[:60]!r}")
            continue
        out.append(
            MdevType(
                type=match.group(1),
                name=match.group(2),
                available_instances=1,
                device_api="vfio-pci",
                description=None,
                mechanism="nvidia_vgpu_vf",
            )
        )
    return out


def read_numa_nodes(host: HostRoot) -> list[NumaNode]:
    nodes = []
    for entry in host.listdir("/sys/devices/system/node"):
        if not (entry.startswith("node") and is_decimal(entry[4:])):
            continue
        if small_int(entry[4:]) is None:
            host.warn(f"/sys/devices/system/node/{entry[:24]}...: a node number out of range; skipped")
            continue
        base = f"/sys/devices/system/node/{entry}"
        cpulist = host.read_attr(f"{base}/cpulist")
        try:
            cpus = parse_int_list(cpulist) if cpulist else []
        except ValueError:
            host.warn(f"{base}/cpulist: cannot parse {cpulist[:40]!r}")
            cpus = []
        memory_mb = None
        meminfo = host.read_text(f"{base}/meminfo")
        if meminfo:
            match = re.search(r"MemTotal:\s+(\d+)\s*kB", meminfo)
            if match and len(match.group(1)) > 18:
                host.warn(f"{base}/meminfo: MemTotal is a number of {len(match.group(1)):,} digits; ignored")
            elif match:
                memory_mb = int(match.group(1)) // 1024
            else:
                host.warn(f"{base}/meminfo: no MemTotal line")
        nodes.append(
            NumaNode(
                id=small_int(entry[4:]),
                cpus=cpus,
                memory_mb=memory_mb,
                hugepages=read_hugepages(host, base),
                siblings=read_siblings(host, cpus),
            )
        )
    return sorted(nodes, key=lambda n: n.id)


_HUGEPAGES_DIR = re.compile(r"hugepages-([0-9]{1,10})kB")


def read_hugepages(host: HostRoot, base: str) -> dict[str, dict[str, int]]:
    """The node's huge page pools (``hugepages/hugepages-<size>kB/nr_hugepages`` and ``free_hugepages``):
    ``{size in KiB: {"total", "free"}}``; a pool whose counts are not numbers is left out with a warning."""
    pools: dict[str, dict[str, int]] = {}
    for entry in host.listdir(f"{base}/hugepages", limit=64):
        match = _HUGEPAGES_DIR.fullmatch(entry)
        size = small_int(match.group(1)) if match else None
        if not size:
            continue
        counts = {}
        for key, name in (("total", "nr_hugepages"), ("free", "free_hugepages")):
            counts[key] = small_int(host.read_attr(f"{base}/hugepages/{entry}/{name}"))
        if counts["total"] is None or counts["free"] is None:
            host.warn(f"{base}/hugepages/{entry}: nr_hugepages or free_hugepages is not a whole number; pool skipped")
            continue
        pools[str(size)] = {"total": counts["total"], "free": min(counts["free"], counts["total"])}
    return dict(sorted(pools.items(), key=lambda kv: int(kv[0])))


def read_siblings(host: HostRoot, cpus: list[int]) -> list[list[int]]:
    """The node's CPUs grouped by core (``/sys/devices/system/cpu/cpuN/topology/thread_siblings_list``),
    each core's CPUs within the node; empty when a CPU's siblings cannot be read (then nothing is known)."""
    inside = set(cpus)
    cores: dict[int, list[int]] = {}
    for cpu in cpus:
        text = host.read_attr(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
        try:
            threads = sorted(set(parse_int_list(text)) & inside) if text else []
        except ValueError:
            host.warn(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list: cannot parse {text[:40]!r}")
            return []
        if cpu not in threads:
            return []
        cores.setdefault(threads[0], threads)
    listed = [cpu for core in cores.values() for cpu in core]
    if len(listed) != len(set(listed)) or set(listed) != inside:
        first = ",".join(str(cpu) for cpu in cpus[:8])
        more = f" and {len(cpus) - 8:,} more" if len(cpus) > 8 else ""
        host.warn(f"the thread siblings of the NUMA node with CPUs {first}{more} do not form cores; cores left unknown")
        return []
    return [cores[first] for first in sorted(cores)]


def read_cpu_vendor(host: HostRoot) -> str:
    cpuinfo = host.read_text("/proc/cpuinfo")
    if cpuinfo:
        match = re.search(r"^vendor_id\s*:\s*(\S+)", cpuinfo, re.MULTILINE)
        if match:
            return {"GenuineIntel": "intel", "AuthenticAMD": "amd", "HygonGenuine": "amd"}.get(match.group(1), "other")
    # No /proc/cpuinfo (an offline image): the IOMMU units still tell the vendor.
    units = host.listdir("/sys/class/iommu")
    if any(u.startswith("dmar") for u in units):
        return "intel"
    if any(u.startswith("ivhd") for u in units):
        return "amd"
    return "other"


def read_host(host: HostRoot) -> HostHardware:
    devices: dict[str, PciDevice] = {}
    for address in host.listdir("/sys/bus/pci/devices", missing_ok=False):
        if not is_normal_address(address):
            host.warn(f"/sys/bus/pci/devices/{address}: not a PCI address, skipped")
            continue
        device = read_device(host, address)
        if device is not None:
            devices[address] = device
    groups: dict[int, list[str]] = {}
    for name in host.listdir("/sys/kernel/iommu_groups"):
        if small_int(name) is None:
            continue
        members = [m for m in host.listdir(f"/sys/kernel/iommu_groups/{name}/devices") if is_normal_address(m)]
        if members:
            groups[small_int(name)] = sorted(members)
    # A device whose iommu_group link exists but whose group directory was not listed still counts.
    for device in devices.values():
        if device.iommu_group is not None:
            members = groups.setdefault(device.iommu_group, [])
            if device.address not in members:
                members.append(device.address)
                members.sort()
    cmdline = (host.read_text("/proc/cmdline") or "").strip()
    iommu_enabled = bool(groups) or bool(host.listdir("/sys/class/iommu"))
    return HostHardware(
        devices=devices,
        iommu_groups=groups,
        numa_nodes=read_numa_nodes(host),
        cpu_vendor=read_cpu_vendor(host),
        iommu_enabled=iommu_enabled,
        kernel_cmdline=cmdline,
        warnings=host.warnings,
    )
