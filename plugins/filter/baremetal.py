# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for bare-metal GPU nodes: Ironic inspection rules and node classes from the device policy."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import ArgumentTypeError, check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").

_DEFAULT_PRIORITY = object()  # node_classes.DEFAULT_PRIORITY, taken when the filter is called


@filter_errors
def baremetal_inspection_rules(policy, priority=_DEFAULT_PRIORITY):
    """``accel_device_policy | accel.openstack.baremetal_inspection_rules``: ironic_inspection_rule options."""
    from ansible_collections.accel.openstack.plugins.module_utils._ironic.node_classes import (
        DEFAULT_PRIORITY,
        MAX_BASE_PRIORITY,
        baremetal_rules,
    )

    if priority is _DEFAULT_PRIORITY:
        priority = DEFAULT_PRIORITY
    policy = list(check("baremetal_inspection_rules", "_input", policy, "list"))
    priority = check("baremetal_inspection_rules", "priority", priority, "integer", minimum=0)
    if priority > MAX_BASE_PRIORITY:
        raise ArgumentTypeError(
            f"baremetal_inspection_rules: priority is {priority}; give 0 to {MAX_BASE_PRIORITY} "
            "(the reset rules run at priority + 1)"
        )
    return baremetal_rules(policy, priority)


@filter_errors
def baremetal_node_classes(policy):
    """``accel_device_policy | accel.openstack.baremetal_node_classes``: class, traits and flavor keys."""
    from ansible_collections.accel.openstack.plugins.module_utils._ironic.node_classes import baremetal_summary

    return baremetal_summary(list(check("baremetal_node_classes", "_input", policy, "list")))


class FilterModule:
    """Bare-metal node classes from the device policy."""

    def filters(self):
        return {
            "baremetal_inspection_rules": baremetal_inspection_rules,
            "baremetal_node_classes": baremetal_node_classes,
        }
