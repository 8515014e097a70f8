# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The names Nova and Placement give to PCI devices, resource classes, traits and providers.

Pure functions: the renderer, the provider prediction and the device policy validation all use
these, so one rule produces one name everywhere. The rules follow Nova 34 and Placement 16:

- a PCI device without a configured ``resource_class`` is counted as ``CUSTOM_PCI_<VENDOR>_<PRODUCT>``;
- PCI providers are named ``<hypervisor hostname>_<ADDRESS upper-cased>``;
- vGPU (mdev parent) providers are named ``<hypervisor hostname>_pci_<address with _>``;
- custom resource classes and custom traits must match ``CUSTOM_[A-Z0-9_]+`` (at most 255 characters).
"""

from __future__ import annotations

import re

# Standard resource classes a device may be counted as (os-resource-classes 1.1).
STANDARD_RESOURCE_CLASSES = frozenset(
    {
        "VCPU",
        "MEMORY_MB",
        "DISK_GB",
        "PCI_DEVICE",
        "SRIOV_NET_VF",
        "NUMA_SOCKET",
        "NUMA_CORE",
        "NUMA_THREAD",
        "NUMA_MEMORY_MB",
        "IPV4_ADDRESS",
        "VGPU",
        "VGPU_DISPLAY_HEAD",
        "NET_BW_EGR_KILOBIT_PER_SEC",
        "NET_BW_IGR_KILOBIT_PER_SEC",
        "PCPU",
        "MEM_ENCRYPTION_CONTEXT",
        "FPGA",
        "PGPU",
        "NET_PACKET_RATE_KILOPACKET_PER_SEC",
        "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC",
        "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC",
    }
)
# Standard resource classes that make sense for a passed-through or mediated device.
DEVICE_RESOURCE_CLASSES = frozenset({"PCI_DEVICE", "SRIOV_NET_VF", "VGPU", "PGPU", "FPGA"})

# Traits Nova itself puts on the providers it manages.
TRAIT_COMPUTE_NODE = "COMPUTE_NODE"
TRAIT_OWNER_NOVA = "OWNER_NOVA"
TRAIT_MANAGED_PCI = "COMPUTE_MANAGED_PCI_DEVICE"
TRAIT_LIVE_MIGRATABLE = "HW_PCI_LIVE_MIGRATABLE"
TRAIT_ONE_TIME_USE = "HW_PCI_ONE_TIME_USE"

CUSTOM_NAME = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
MAX_NAME_LENGTH = 255
HEX4 = re.compile(r"^[0-9a-fA-F]{4}$")
ADDRESS = re.compile(r"^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")
MDEV_CLASS = re.compile(r"^(VGPU|CUSTOM_[A-Z0-9_]+)$")

# PCI device types as Nova names them.
TYPE_PCI = "type-PCI"
TYPE_PF = "type-PF"
TYPE_VF = "type-VF"
DEVICE_TYPES = (TYPE_PCI, TYPE_PF, TYPE_VF)
NUMA_POLICIES = ("legacy", "preferred", "required", "socket")


def custom_name(text: str) -> str:
    """``text`` turned into a valid custom name: upper-cased, every other character ``_``, ``CUSTOM_``."""
    body = re.sub(r"[^A-Z0-9_]", "_", text.upper())
    return body if body.startswith("CUSTOM_") else f"CUSTOM_{body}"


def default_pci_resource_class(vendor_id: str, product_id: str) -> str:
    """The resource class Nova counts a PCI device as when its device_spec sets none."""
    return f"CUSTOM_PCI_{vendor_id}_{product_id}".upper()


def resource_class_problem(name: object) -> str | None:
    """Why Placement (or Nova's normaliser) would not keep ``name`` as given; None when it is fine."""
    if not isinstance(name, str) or not name:
        return "must be a non-empty string"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long; Placement allows at most {MAX_NAME_LENGTH}"
    if name in STANDARD_RESOURCE_CLASSES:
        if name not in DEVICE_RESOURCE_CLASSES:
            return (
                f"is a standard resource class for host resources, not devices; use one of "
                f"{', '.join(sorted(DEVICE_RESOURCE_CLASSES))} or a CUSTOM_ name such as {custom_name(name)}"
            )
        return None
    if not CUSTOM_NAME.match(name):
        return (
            "is neither a standard resource class nor a custom one; Placement accepts custom names "
            f"matching CUSTOM_[A-Z0-9_]+, e.g. {custom_name(name)!r}"
        )
    return None


def trait_problem(name: object) -> str | None:
    """Why ``name`` is not a custom trait that Nova passes to Placement unchanged; None when it is fine."""
    if not isinstance(name, str) or not name:
        return "must be a non-empty string"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long; Placement allows at most {MAX_NAME_LENGTH}"
    if not CUSTOM_NAME.match(name):
        return (
            "is not a custom trait; Placement accepts custom traits matching CUSTOM_[A-Z0-9_]+ "
            f"(standard traits are set by Nova itself), e.g. {custom_name(name)!r}"
        )
    return None


def normalize_address(address: str) -> str:
    """A PCI address in the form Nova and sysfs use: ``0000:84:00.0`` (lowercase)."""
    return address.strip().lower()


def pci_provider_name(hostname: str, address: str) -> str:
    """The provider Nova creates for a PCI device (or for the PF that holds matched VFs)."""
    return f"{hostname}_{normalize_address(address).upper()}"


def libvirt_device_name(address: str) -> str:
    """libvirt's node device name for a PCI address: ``pci_0000_84_00_0``."""
    return "pci_" + re.sub(r"[:.]", "_", normalize_address(address))


def vgpu_provider_name(hostname: str, address: str) -> str:
    """The child provider Nova's libvirt driver creates for an mdev-capable device."""
    return f"{hostname}_{libvirt_device_name(address)}"


def nova_device_type(device: dict) -> str:
    """How Nova classifies a device from its facts: VF when it has a PF, PF when SR-IOV capable."""
    if device.get("physfn"):
        return TYPE_VF
    if (device.get("sriov_totalvfs") or 0) > 0:
        return TYPE_PF
    return TYPE_PCI


# -- standard traits beside custom ones in [pci] device_spec ------------------------------------------
# Nova's PCI placement translator keeps a name os-traits knows as it is and turns any other into a
# custom one (upper-cased, CUSTOM_ prefixed). Every os-traits name lies in one of these namespaces; a
# name outside them can only ever become CUSTOM_<name>, so it is refused with that suggestion.
STANDARD_TRAIT_NAMESPACES = ("COMPUTE_", "HW_", "MISC_", "OWNER_", "STORAGE_")
STANDARD_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
# Traits Nova sets itself from other settings: listing them would claim what the device is not.
NOVA_SET_TRAITS = {
    TRAIT_MANAGED_PCI: "Nova puts it on every PCI provider itself",
    TRAIT_OWNER_NOVA: "Nova puts it on every provider it manages",
    TRAIT_COMPUTE_NODE: "Nova puts it on the compute node provider",
    TRAIT_LIVE_MIGRATABLE: "set live_migratable: true instead",
    TRAIT_ONE_TIME_USE: "set one_time_use: true instead",
}


def device_trait_problem(name: object) -> str | None:
    """Why ``name`` cannot be a trait of a passed-through device's provider; None when it is fine.

    Custom traits and standard os-traits names are both kept by Nova as written. Standard names are
    checked by form and namespace here: whether os-traits knows the name is for the Placement stage.
    """
    if isinstance(name, str) and name in NOVA_SET_TRAITS:
        return f"is set by Nova, not by the device policy: {NOVA_SET_TRAITS[name]}"
    if isinstance(name, str) and not name.startswith("CUSTOM_") and STANDARD_NAME.match(name):
        if len(name) > MAX_NAME_LENGTH:
            return f"is {len(name)} characters long; Placement allows at most {MAX_NAME_LENGTH}"
        if name.startswith(STANDARD_TRAIT_NAMESPACES):
            return None
        return (
            f"is neither a custom trait nor in a standard os-traits namespace "
            f"({', '.join(n.rstrip('_') for n in STANDARD_TRAIT_NAMESPACES)}); Nova would report it as "
            f"{custom_name(name)!r}: write that"
        )
    if isinstance(name, str) and name.startswith("CUSTOM_"):
        return trait_problem(name)
    suggestion = f"e.g. {custom_name(name)!r}, " if isinstance(name, str) and name else ""
    return (
        "is neither a custom trait (CUSTOM_[A-Z0-9_]+) nor a standard os-traits name; write a custom trait, "
        f"{suggestion}or a standard one such as 'HW_GPU_API_VULKAN'"
    )
