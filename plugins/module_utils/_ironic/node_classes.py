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

Every entry makes two rules, both named under :data:`RULE_PREFIX` (the collection owns that prefix):

- ``accel-baremetal-<name>:reset`` (priority + 1, so it runs first): a node that holds the entry's
  ``resource_class`` when it is inspected is given the entry's ``fallback_resource_class`` (none
  without one) and loses the entry's traits. Ironic 39's rules run by priority, highest first, and
  have ``set-attribute`` and ``remove-trait`` actions, so the class and traits of a node that no
  longer matches are taken away;
- ``accel-baremetal-<name>`` (priority): a node that matches gets the class and the traits (back).

The inspection agent sends its PCI devices as a top-level ``pci_devices`` list of
``{vendor_id, product_id, class, revision, bus}``, which Ironic keeps in the node's plugin data and
interpolates into a condition as the list's text (``[{'vendor_id': '10de', ...}, {...}]``). No rule
operator of Ironic 39 tests list membership or counts, so one ``matches`` condition reads the whole
text as a sequence of device entries, each either one of the entry's GPUs or not (two complementary
lookaheads confined to one entry), with exactly ``count`` GPUs: every entry has one way to match, so
Ironic's regular expression engine does work linear in the number of devices, whatever the count
(no lazy ``.*?`` that backtracks over every choice of ``count`` devices). A second condition asks for
an NVSwitch bridge (or, inverted, for none). A node without PCI data, or with data that is not such a
list, matches no entry.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._ironic.inspection_rules import (
    MAX_PRIORITY,
    RuleError,
    declared_rule,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import normalize
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyEntry, baremetal_policy

PCI_DEVICES = "{plugin_data[pci_devices]}"
NODE_RESOURCE_CLASS = "{node.resource_class}"
NVIDIA = "10de"
# NVSwitch bridges: NVIDIA devices of PCI class 0680 (bridge, other).
NVSWITCH_CLASS = "0680"
RULE_PREFIX = "accel-baremetal-"
RESET_SUFFIX = ":reset"
DEFAULT_PRIORITY = 50
# The reset rules run at priority + 1, and Ironic takes 0 to 9999.
MAX_BASE_PRIORITY = MAX_PRIORITY - 1
MAX_DESCRIPTION = 255


def _device(
    vendor_id: str, product_id: str | None = None, class_prefix: str | None = None, negate: bool = False
) -> str:
    """A regular expression for one device entry of the list's text, whatever the order of its keys.

    The lookaheads cannot leave the entry (``[^{}]``); with ``negate`` the entry is any other device.
    """
    looks = [rf"(?=[^{{}}]*'vendor_id': '(?:0x)?{vendor_id}')"]
    if product_id:
        looks.append(rf"(?=[^{{}}]*'product_id': '(?:0x)?{product_id}')")
    if class_prefix:
        looks.append(rf"(?=[^{{}}]*'class': '(?:0x)?{class_prefix}[0-9a-f]*')")
    test = "".join(looks)
    return r"\{" + (f"(?!{test})" if negate else test) + r"[^{}]*\}"


def exactly(vendor_id: str, product_id: str, count: int) -> str:
    """A ``matches`` expression for the whole list's text holding exactly ``count`` (1 or more) such devices.

    ``[`` then: other devices, the first GPU; ``count - 1`` times: other devices, a GPU; other devices;
    ``]``. The list's items are joined by ``, ``. GPU and other entries exclude each other, so the
    expression matches one way only and fails after one pass.
    """
    gpu = _device(vendor_id, product_id)
    other = _device(vendor_id, product_id, negate=True)
    return rf"\[(?:{other}, )*{gpu}(?:, (?:{other}, )*{gpu}){{{count - 1}}}(?:, {other})*\]$"


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


def rule_name(entry: PolicyEntry) -> str:
    return RULE_PREFIX + entry.name


def reset_rule_name(entry: PolicyEntry) -> str:
    # ':' is not allowed in an entry name, so no entry's rule can take this name.
    return RULE_PREFIX + entry.name + RESET_SUFFIX


def entry_rule(entry: PolicyEntry, priority: int = DEFAULT_PRIORITY) -> dict:
    """The options of ``accel.openstack.ironic_inspection_rule`` for the rule that classes matching nodes."""
    nvswitch = _device(NVIDIA, class_prefix=NVSWITCH_CLASS)
    gpus = exactly(entry.vendor_id, entry.product_id, entry.count)
    conditions = [
        {"op": "matches", "args": {"value": PCI_DEVICES, "regex": gpus}},
        {
            "op": "contains" if entry.interconnect == "nvswitch" else "!contains",
            "args": {"value": PCI_DEVICES, "regex": nvswitch},
        },
    ]
    actions = [{"op": "set-attribute", "args": {"path": "resource_class", "value": entry.resource_class}}]
    actions += [{"op": "add-trait", "args": {"name": trait}} for trait in node_traits(entry)]
    name = rule_name(entry)
    return {
        "name": name,
        "description": _description(
            name,
            f"{entry.count} x {entry.vendor_id}:{entry.product_id} ({entry.interconnect}) -> resource class "
            f"{entry.resource_class}",
        ),
        "priority": priority,
        "conditions": conditions,
        "actions": actions,
    }


def reset_rule(entry: PolicyEntry, priority: int = DEFAULT_PRIORITY) -> dict:
    """The rule that takes the class and traits away from a node of the entry's class before it is matched again."""
    fallback = entry.fallback_resource_class
    actions = [{"op": "set-attribute", "args": {"path": "resource_class", "value": fallback}}]
    actions += [{"op": "remove-trait", "args": {"name": trait}} for trait in node_traits(entry)]
    name = reset_rule_name(entry)
    return {
        "name": name,
        "description": _description(
            name, f"a node of {entry.resource_class} falls back to {fallback or 'no class'} until it matches again"
        ),
        "priority": priority + 1,
        "conditions": [{"op": "eq", "args": {"values": [NODE_RESOURCE_CLASS, entry.resource_class]}}],
        "actions": actions,
    }


def _description(name: str, summary: str) -> str:
    """``<rule name>: <summary>``: the rule's name leads, so the rule is known as the collection's in Ironic."""
    text = f"{name}: accel.openstack baremetal, {summary}"
    return text if len(text) <= MAX_DESCRIPTION else name


def baremetal_rules(policy: object, priority: int = DEFAULT_PRIORITY) -> list[dict]:
    """Two rules per ``mode: baremetal`` entry of the (validated) device policy, in policy order: the reset
    rule (priority + 1) and the rule that classes matching nodes (priority)."""
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= MAX_BASE_PRIORITY:
        raise RuleError(f"priority is {priority}; give 0 to {MAX_BASE_PRIORITY} (the reset rules run at priority + 1)")
    rules = []
    for entry in baremetal_policy(policy, option="accel_device_policy"):
        rules += [reset_rule(entry, priority), entry_rule(entry, priority)]
    for rule in rules:
        # The module validates again; here a bad rule (an entry name too long for a rule name) fails the filter.
        declared_rule(rule["name"], rule["conditions"], rule["actions"], rule["description"], rule["priority"])
    return rules


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
