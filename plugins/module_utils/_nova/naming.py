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

from ansible_collections.accel.openstack.plugins.module_utils._names.custom import (
    custom_name_problem,
    is_custom,
    is_standard_form,
    normalize,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._names.standard import (
    OS_TRAITS_VERSION,
    STANDARD_RESOURCE_CLASSES,
    STANDARD_TRAITS,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import did_you_mean

# Standard resource classes that make sense for a passed-through or mediated device.
DEVICE_RESOURCE_CLASSES = frozenset({"PCI_DEVICE", "SRIOV_NET_VF", "VGPU", "PGPU", "FPGA"})

# Traits Nova itself puts on the providers it manages.
TRAIT_COMPUTE_NODE = "COMPUTE_NODE"
TRAIT_OWNER_NOVA = "OWNER_NOVA"
TRAIT_MANAGED_PCI = "COMPUTE_MANAGED_PCI_DEVICE"
TRAIT_LIVE_MIGRATABLE = "HW_PCI_LIVE_MIGRATABLE"
TRAIT_ONE_TIME_USE = "HW_PCI_ONE_TIME_USE"


# PCI device types as Nova names them.
TYPE_PCI = "type-PCI"
TYPE_PF = "type-PF"
TYPE_VF = "type-VF"
DEVICE_TYPES = (TYPE_PCI, TYPE_PF, TYPE_VF)
NUMA_POLICIES = ("legacy", "preferred", "required", "socket")


def default_pci_resource_class(vendor_id: str, product_id: str) -> str:
    """The resource class Nova counts a PCI device as when its device_spec sets none."""
    return f"CUSTOM_PCI_{vendor_id}_{product_id}".upper()


def resource_class_problem(name: object) -> str | None:
    """Why Placement (or Nova's normaliser) would not keep ``name`` as given; None when it is fine."""
    if isinstance(name, str) and name in STANDARD_RESOURCE_CLASSES:
        if name not in DEVICE_RESOURCE_CLASSES:
            return (
                f"is a standard resource class for host resources, not devices; use one of "
                f"{', '.join(sorted(DEVICE_RESOURCE_CLASSES))} or a CUSTOM_ name such as {normalize(name)}"
            )
        return None
    problem = custom_name_problem(name)
    return f"is neither a standard resource class nor a valid custom one: it {problem}" if problem else None


def trait_problem(name: object) -> str | None:
    """Why ``name`` is not a custom trait that Nova passes to Placement unchanged; None when it is fine."""
    problem = custom_name_problem(name)
    return f"is not a valid custom trait (standard traits are set by Nova itself): it {problem}" if problem else None


def mdev_class_problem(name: object) -> str | None:
    """Why ``name`` cannot be the resource class of a vGPU type (VGPU or a custom name); None when fine."""
    if name == "VGPU":
        return None
    problem = custom_name_problem(name)
    return f"is not VGPU or a valid custom resource class: it {problem}" if problem else None


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
# custom one (upper-cased, CUSTOM_ prefixed, normalised).
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

    Custom traits and standard os-traits names are both kept by Nova as written; any other name Nova
    turns into a custom one, which the policy asks to be written as such.
    """
    if isinstance(name, str) and name in NOVA_SET_TRAITS:
        return f"is set by Nova, not by the device policy: {NOVA_SET_TRAITS[name]}"
    if isinstance(name, str) and name in STANDARD_TRAITS:
        return None
    if is_custom(name):
        return trait_problem(name)
    if is_standard_form(name):
        return (
            f"is neither a custom trait nor a standard trait of os-traits {OS_TRAITS_VERSION}"
            f"{did_you_mean(name, STANDARD_TRAITS)}; Nova would report it as "
            f"{normalize(name, keep_custom_word=True)!r}: write that"
        )
    proposal = normalize(name) if isinstance(name, str) and name else ""
    suggestion = f"e.g. {proposal!r}, " if proposal and proposal != "CUSTOM_" else ""
    return (
        "is neither a custom trait (CUSTOM_[A-Z0-9_]+) nor a standard os-traits name; write a custom trait, "
        f"{suggestion}or a standard one such as 'HW_GPU_API_VULKAN'"
    )
