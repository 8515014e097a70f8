# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over what Cyborg reports: the device profile chain of flavors, ARQ reports as audit findings."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def device_profile_chain(flavors, cyborg, fleet):
    """``flavors | accel.openstack.device_profile_chain(cyborg_info, fleet)``: one finding per broken chain."""
    from ansible_collections.accel.openstack.plugins.module_utils._cyborg.chain import chain_findings

    flavors = list(check("device_profile_chain", "_input", flavors, "list"))
    cyborg = dict(check("device_profile_chain", "cyborg", cyborg, "mapping"))
    fleet = dict(check("device_profile_chain", "fleet", fleet, "mapping"))
    return chain_findings([f for f in flavors if isinstance(f, dict)], cyborg, fleet)


@filter_errors
def cyborg_arq_findings(report):
    """``arq_report | accel.openstack.cyborg_arq_findings``: audit findings of the ARQs that are not ok."""
    from ansible_collections.accel.openstack.plugins.module_utils._cyborg.arqs import arq_findings

    return arq_findings(dict(check("cyborg_arq_findings", "_input", report, "mapping")))


class FilterModule:
    """Cyborg: device profile chains and accelerator requests."""

    def filters(self):
        return {"device_profile_chain": device_profile_chain, "cyborg_arq_findings": cyborg_arq_findings}
