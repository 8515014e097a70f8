# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters of the capacity stage: the plan as a table, as Prometheus metrics and as an HTML page."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def _capacity_metrics(*args, **kwargs):
    from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_metrics import capacity_metrics

    return capacity_metrics(*args, **kwargs)


@filter_errors
def _capacity_table(*args, **kwargs):
    from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import capacity_table

    return capacity_table(*args, **kwargs)


@filter_errors
def _capacity_html(*args, **kwargs):
    from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_report import capacity_html

    return capacity_html(*args, **kwargs)


class FilterModule:
    def filters(self):
        return {
            "capacity_metrics": _capacity_metrics,
            "capacity_table": _capacity_table,
            "capacity_html": _capacity_html,
        }
