# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""IOMMU group safety: which devices must be bound together, and which groups must not be touched.

VFIO hands a guest a whole IOMMU group, so a device is bound only together with every endpoint of its
group (bridges excepted). A group is refused when one of its endpoints is something the host itself
needs: the boot VGA, a storage controller with mounted filesystems, a NIC with an address or a route,
or any device bound to a driver that is not on the allow list. The evidence comes from the same files
on a live host and in a fixture root: ``/proc/mounts`` + ``/sys/block``, ``/proc/net/route`` +
``/proc/net/if_inet6`` + ``/sys/class/net``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_normal_address

try:
    import netaddr
except ImportError:  # reported by the module with the package to install
    netaddr = None

VFIO_DRIVERS = ("vfio-pci",)
# Drivers that a passthrough candidate normally sits on before it is handed over: display, its audio
# and USB-C functions, and the stub drivers. Devices on any other driver are taken to be in use.
DEFAULT_ALLOW_DRIVERS = (
    "vfio-pci",
    "pci-stub",
    "nouveau",
    "nvidia",
    "amdgpu",
    "radeon",
    "snd_hda_intel",
    "xhci_hcd",
    "nvidia-gpu",
    "ucsi_ccg",
)


@dataclass
class DeviceCheck:
    address: str
    label: str  # vendor:product and class, for messages
    requested: bool
    driver: str | None
    reasons: list[str] = field(default_factory=list)


@dataclass
class GroupPlan:
    group: int | None
    members: list[DeviceCheck]

    @property
    def refused(self) -> list[DeviceCheck]:
        return [m for m in self.members if m.reasons]


class SafetyRefusal:
    """One refused group, with a message naming the device, the reason and the way out."""

    def __init__(self, group: GroupPlan, requested: list[str]):
        self.group = group
        self.requested = requested

    def explain(self) -> str:
        parts = []
        for member in self.group.refused:
            parts.append(f"{member.address} ({member.label}) {'; '.join(member.reasons)}")
        asked = ", ".join(self.requested)
        return (
            f"refusing to bind {asked} to vfio-pci: IOMMU group {self.group.group} also holds "
            + "; ".join(parts)
            + ". VFIO takes the whole group, so the host would lose that device. Move the card to another "
            "slot (or enable ACS) so the groups separate, leave this device out, or set force: true if the "
            "host really does not need it"
        )


# -- what the host needs --------------------------------------------------------------------------------
def _pci_address_of(host, sys_path: str) -> str | None:
    """The PCI function nearest to ``sys_path`` (a /sys path), resolved inside the root."""
    resolved = host.resolve(sys_path)
    for part in reversed(resolved.split("/")):
        if is_normal_address(part):
            return part
    return None


def mounted_storage(host) -> dict[str, list[str]]:
    """PCI address -> mounts ('/dev/nvme0n1p2 on /') of the controllers behind mounted filesystems."""
    found: dict[str, list[str]] = {}
    block_devices = host.listdir("/sys/block")
    for line in (host.read_text("/proc/mounts") or "").splitlines():
        fields = line.split()
        if len(fields) < 2 or not fields[0].startswith("/dev/"):
            continue
        source, mountpoint = fields[0], fields[1].replace("\\040", " ")
        for name in _block_names(host, source, block_devices):
            address = _pci_address_of(host, f"/sys/block/{name}")
            if address:
                entry = f"{source} on {mountpoint}"
                if entry not in found.setdefault(address, []):
                    found[address].append(entry)
    return found


def _block_names(host, source: str, block_devices: list[str], depth: int = 0) -> list[str]:
    """The whole-disk names under /sys/block behind a /dev path (partitions and dm/md slaves too)."""
    resolved = host.resolve(source) if host.exists(source) else source
    name = resolved.rsplit("/", 1)[-1]
    if name in block_devices:
        slaves = host.listdir(f"/sys/block/{name}/slaves")
        if slaves and depth < 8:
            out: list[str] = []
            for slave in slaves:
                out += _block_names(host, f"/dev/{slave}", block_devices, depth + 1)
            return out
        return [name]
    for disk in block_devices:
        if name.startswith(disk) and host.exists(f"/sys/block/{disk}/{name}"):
            return [disk]
    for disk in sorted(block_devices, key=len, reverse=True):
        if name.startswith(disk) and re.fullmatch(r"p?\d+", name[len(disk) :]):
            return [disk]
    return []


def network_in_use(host) -> dict[str, list[str]]:
    """PCI address -> what makes its NIC needed ('ens3f0np0 has 10.0.0.0/24', 'default route')."""
    usage: dict[str, list[str]] = {}
    by_interface: dict[str, list[str]] = {}
    lines = (host.read_text("/proc/net/route") or "").splitlines()[1:]
    for line in lines:
        fields = line.split()
        if len(fields) < 8:
            continue
        try:
            destination = netaddr.IPAddress(int.from_bytes(bytes.fromhex(fields[1]), "little"), 4)
            mask = netaddr.IPAddress(int.from_bytes(bytes.fromhex(fields[7]), "little"), 4)
        except (ValueError, netaddr.AddrFormatError):
            continue
        if not mask.is_netmask():
            # Not a route the kernel writes; the interface is still taken as in use, never as free.
            host.warn(f"/proc/net/route: {fields[0]} has netmask {mask}, which is not contiguous; read as in use")
            by_interface.setdefault(fields[0], []).append(f"a route to {destination} with netmask {mask}")
            continue
        network = netaddr.IPNetwork(f"{destination}/{mask}")
        what = "the default route" if network.prefixlen == 0 else f"a route to {network.cidr}"
        by_interface.setdefault(fields[0], []).append(what)
    for line in (host.read_text("/proc/net/if_inet6") or "").splitlines():
        fields = line.split()
        if len(fields) < 6:
            continue
        try:
            address = netaddr.IPAddress(int(fields[0], 16), 6)
            prefix = int(fields[2], 16)
        except (ValueError, netaddr.AddrFormatError):
            continue
        if address.is_link_local() or address.is_loopback():
            continue  # every interface that is up has one; it does not make the NIC needed
        by_interface.setdefault(fields[5], []).append(f"the address {address}/{prefix}")
    for interface in host.listdir("/sys/class/net"):
        reasons = list(by_interface.get(interface, []))
        master = host.readlink(f"/sys/class/net/{interface}/master")
        if master:
            master_name = master.rstrip("/").rsplit("/", 1)[-1]
            reasons += [f"{r} (through {master_name})" for r in by_interface.get(master_name, [])]
        if not reasons:
            continue
        address = _pci_address_of(host, f"/sys/class/net/{interface}")
        if address:
            usage.setdefault(address, []).append(f"is the NIC {interface} with {', '.join(reasons)}")
    return usage


def host_needs(host, hardware) -> dict[str, list[str]]:
    """Why the host needs each device it needs (boot display, mounted storage, addressed NIC)."""
    needs: dict[str, list[str]] = {}
    for device in hardware.devices.values():
        if device.is_boot_vga:
            needs.setdefault(device.address, []).append("is the boot VGA (the host's console)")
    for address, mounts in mounted_storage(host).items():
        needs.setdefault(address, []).append("holds mounted filesystems (" + ", ".join(mounts) + ")")
    for address, reasons in network_in_use(host).items():
        needs.setdefault(address, []).extend(reasons)
    return needs


# -- the group check --------------------------------------------------------------------------------------
def _label(device) -> str:
    return f"{device.vendor_id}:{device.product_id} class {device.class_code}"


def plan_groups(hardware, requested: list[str], needs: dict[str, list[str]], allow_drivers) -> list[GroupPlan]:
    """Every group touched by ``requested``, its endpoints, and why any of them must stay with the host."""
    allow = set(DEFAULT_ALLOW_DRIVERS) | set(allow_drivers or ())
    plans: list[GroupPlan] = []
    seen: set = set()
    for address in requested:
        device = hardware.devices[address]
        key = device.iommu_group if device.iommu_group is not None else ("none", address)
        if key in seen:
            continue
        seen.add(key)
        if device.iommu_group is None:
            members = [device]
        else:
            members = [
                hardware.devices[m]
                for m in hardware.iommu_groups.get(device.iommu_group, [address])
                if m in hardware.devices and not hardware.devices[m].is_bridge
            ]
        checks = []
        for member in members:
            check = DeviceCheck(member.address, _label(member), member.address in requested, member.driver)
            if member.driver not in VFIO_DRIVERS:
                check.reasons.extend(needs.get(member.address, []))
                if member.driver and member.driver not in allow:
                    check.reasons.append(
                        f"is in use by the {member.driver} driver, which is not on the allow list "
                        "(add it to allow_drivers if this device may be taken from the host)"
                    )
            checks.append(check)
        plans.append(GroupPlan(device.iommu_group, checks))
    return plans


def refusals(plans: list[GroupPlan]) -> list[SafetyRefusal]:
    out = []
    for group in plans:
        if group.refused:
            out.append(SafetyRefusal(group, [m.address for m in group.members if m.requested]))
    return out
