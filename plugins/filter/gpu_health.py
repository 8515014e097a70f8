# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the gpu_health role: the plan (quarantine, release, report), its table and the metrics."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import filter_errors
from ansible_collections.accel.openstack.plugins.plugin_utils.gpu_health import (
    health_metrics,
    health_plan,
    health_table,
)


class FilterModule:
    def filters(self):
        return {
            "gpu_health_plan": filter_errors(health_plan),
            "gpu_health_table": filter_errors(health_table),
            "gpu_health_metrics": filter_errors(health_metrics),
        }
