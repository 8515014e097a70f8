# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ironic inspection rules from the device policy's ``mode: baremetal`` entries.

Each entry says: a node whose inspected PCI devices hold exactly ``count`` GPUs ``vendor_id:product_id``
(with ``interconnect: nvswitch``: and NVIDIA NVSwitch bridges; otherwise: and none) is a node of
``resource_class`` with these traits:

- ``CUSTOM_GPU_<MODEL>`` (the entry's ``model``, normalised as Placement names are),
- ``CUSTOM_GPU_COUNT_<count>``,
- ``CUSTOM_GPU_NVLINK`` with ``nvlink`` or ``nvswitch``, ``CUSTOM_GPU_NVSWITCH`` with ``nvswitch``,
- the entry's own ``traits``.

The inspection agent sends its PCI devices as a top-level ``pci_devices`` list of
``{vendor_id, product_id, class, revision, bus}``, which Ironic keeps in the node's plugin data. No
rule operator of Ironic 39 tests list membership or counts, so the conditions match the list's text
(``{plugin_data[pci_devices]}``) with regular expressions: one matches a device entry carrying both IDs
(in any key order, with or without ``0x``), the first condition asks for at least ``count`` of them, the
second (inverted) for no more. A node without PCI data, with another model or another number of GPUs
matches no condition and is left untouched: the rule is scoped by what the node holds.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._names.custom import normalize
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyEntry, baremetal_policy

PCI_DEVICES = "{plugin_data[pci_devices]}"
NVIDIA = "10de"
# NVSwitch bridges: NVIDIA devices of PCI class 0680 (bridge, other).
NVSWITCH_CLASS = "0680"
RULE_PREFIX = "accel-baremetal-"
DEFAULT_PRIORITY = 50


def _device(vendor_id: str, product_id: str | None = None, class_prefix: str | None = None) -> str:
    """A regular expression for one device entry of the list's text, whatever the order of its keys."""
    looks = [rf"(?=[^{{}}]*'vendor_id': '(?:0x)?{vendor_id}')"]
    if product_id:
        looks.append(rf"(?=[^{{}}]*'product_id': '(?:0x)?{product_id}')")
    if class_prefix:
        looks.append(rf"(?=[^{{}}]*'class': '(?:0x)?{class_prefix}[0-9a-f]*')")
    return r"\{" + "".join(looks) + r"[^{}]*\}"


def at_least(device: str, count: int) -> str:
    """A regular expression that finds ``count`` or more entries matching ``device``."""
    return "(?s)(?:" + device + ".*?){" + str(count) + "}"


def model_trait(model: str) -> str:
    return "CUSTOM_GPU_" + normalize(model)[len("CUSTOM_") :]


def placement_resource_class(ironic_class: str) -> str:
    """The resource class Nova reports for a node of ``ironic_class`` (os-resource-classes' normaliser)."""
    return normalize(ironic_class, keep_custom_word=True)


def node_traits(entry: PolicyEntry) -> list[str]:
    traits = [model_trait(entry.model or entry.name), f"CUSTOM_GPU_COUNT_{entry.count}"]
    if entry.interconnect in ("nvlink", "nvswitch"):
        traits.append("CUSTOM_GPU_NVLINK")
    if entry.interconnect == "nvswitch":
        traits.append("CUSTOM_GPU_NVSWITCH")
    traits += [t for t in entry.traits if t not in traits]
    return traits


def entry_rule(entry: PolicyEntry, priority: int = DEFAULT_PRIORITY) -> dict:
    """The options of ``accel.openstack.ironic_inspection_rule`` for one baremetal entry."""
    gpu = _device(entry.vendor_id, entry.product_id)
    nvswitch = _device(NVIDIA, class_prefix=NVSWITCH_CLASS)
    conditions = [
        {"op": "contains", "args": {"value": PCI_DEVICES, "regex": at_least(gpu, entry.count)}},
        {"op": "!contains", "args": {"value": PCI_DEVICES, "regex": at_least(gpu, entry.count + 1)}},
        {
            "op": "contains" if entry.interconnect == "nvswitch" else "!contains",
            "args": {"value": PCI_DEVICES, "regex": at_least(nvswitch, 1)},
        },
    ]
    actions = [{"op": "set-attribute", "args": {"path": "resource_class", "value": entry.resource_class}}]
    actions += [{"op": "add-trait", "args": {"name": trait}} for trait in node_traits(entry)]
    return {
        "name": RULE_PREFIX + entry.name,
        "description": (
            f"accel.openstack baremetal {entry.name}: {entry.count} x {entry.vendor_id}:{entry.product_id} "
            f"({entry.interconnect}) -> resource class {entry.resource_class}"
        ),
        "priority": priority,
        "conditions": conditions,
        "actions": actions,
    }


def baremetal_rules(policy: object, priority: int = DEFAULT_PRIORITY) -> list[dict]:
    """One rule per ``mode: baremetal`` entry of the (validated) device policy, in policy order."""
    return [entry_rule(entry, priority) for entry in baremetal_policy(policy, option="accel_device_policy")]


def baremetal_summary(policy: object) -> list[dict]:
    """What each baremetal entry makes of a node: Ironic class, Placement class, traits, the flavor keys."""
    out = []
    for entry in baremetal_policy(policy, option="accel_device_policy"):
        rc = placement_resource_class(entry.resource_class)
        out.append(
            {
                "name": entry.name,
                "ironic_resource_class": entry.resource_class,
                "placement_resource_class": rc,
                "traits": node_traits(entry),
                "flavor_extra_specs": {
                    f"resources:{rc}": "1",
                    "resources:VCPU": "0",
                    "resources:MEMORY_MB": "0",
                    "resources:DISK_GB": "0",
                },
            }
        )
    return out
