# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the gpu_health role: the plan (quarantine, release, report), its table and the metrics."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def _gpu_health_plan(*args, **kwargs):
    from ansible_collections.accel.openstack.plugins.plugin_utils.gpu_health import health_plan

    return health_plan(*args, **kwargs)


@filter_errors
def _gpu_health_table(*args, **kwargs):
    from ansible_collections.accel.openstack.plugins.plugin_utils.gpu_health import health_table

    return health_table(*args, **kwargs)


@filter_errors
def _gpu_health_metrics(*args, **kwargs):
    from ansible_collections.accel.openstack.plugins.plugin_utils.gpu_health import health_metrics

    return health_metrics(*args, **kwargs)


class FilterModule:
    def filters(self):
        return {
            "gpu_health_plan": _gpu_health_plan,
            "gpu_health_table": _gpu_health_table,
            "gpu_health_metrics": _gpu_health_metrics,
        }
