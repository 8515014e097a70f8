# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters of the capacity stage: the plan as a table, as Prometheus metrics and as an HTML page."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import filter_errors
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import capacity_table
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_metrics import capacity_metrics
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_report import capacity_html


class FilterModule:
    def filters(self):
        return {
            "capacity_metrics": filter_errors(capacity_metrics),
            "capacity_table": filter_errors(capacity_table),
            "capacity_html": filter_errors(capacity_html),
        }
