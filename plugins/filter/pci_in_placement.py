# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the move to PCI-in-Placement (thin wrappers over ``plugin_utils/pci_in_placement.py``)."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def pci_in_placement_precheck(hosts, aliases=None, fleet=None, deployed=None):
    """``hosts | accel.openstack.pci_in_placement_precheck(aliases, fleet, deployed)``: problems, healing,
    providers; the aliases of nova-api and nova-scheduler in ``deployed`` join ``aliases``."""
    from ansible_collections.accel.openstack.plugins.plugin_utils import pci_in_placement as migration

    hosts = list(check("pci_in_placement_precheck", "_input", hosts, "list"))
    aliases = list(check("pci_in_placement_precheck", "aliases", aliases if aliases is not None else [], "list"))
    if fleet is not None:
        fleet = check("pci_in_placement_precheck", "fleet", fleet, "mapping")
    deployed = check("pci_in_placement_precheck", "deployed", deployed if deployed is not None else {}, "mapping")
    return migration.precheck(hosts, aliases + migration.service_aliases(deployed), fleet)


@filter_errors
def pci_in_placement_hosts(compute, control=None):
    """``compute | accel.openstack.pci_in_placement_hosts(control)``: the hosts for nova_config_info."""
    from ansible_collections.accel.openstack.plugins.plugin_utils import pci_in_placement as migration

    compute = list(check("pci_in_placement_hosts", "_input", compute, "list"))
    control = list(check("pci_in_placement_hosts", "control", control if control is not None else [], "list"))
    return migration.hosts_to_read(compute, control)


@filter_errors
def pci_in_placement_progress(fleet, host, providers, healing=None):
    """``fleet | accel.openstack.pci_in_placement_progress(host, providers, healing)``: one host's progress."""
    from ansible_collections.accel.openstack.plugins.plugin_utils import pci_in_placement as migration

    fleet = check("pci_in_placement_progress", "_input", fleet, "mapping")
    host = check("pci_in_placement_progress", "host", host, "string")
    providers = check("pci_in_placement_progress", "providers", providers, "mapping")
    healing = list(check("pci_in_placement_progress", "healing", healing if healing is not None else [], "list"))
    return migration.progress(host, providers, healing, fleet)


@filter_errors
def pci_in_placement_reporting(names, fleet, deployed, hypervisor_hostnames=None):
    """``names | accel.openstack.pci_in_placement_reporting(fleet, deployed, hypervisor_hostnames)``: which
    compute hosts report."""
    from ansible_collections.accel.openstack.plugins.plugin_utils import pci_in_placement as migration

    names = list(check("pci_in_placement_reporting", "_input", names, "list"))
    fleet = check("pci_in_placement_reporting", "fleet", fleet, "mapping")
    deployed = check("pci_in_placement_reporting", "deployed", deployed, "mapping")
    hypervisors = check("pci_in_placement_reporting", "hypervisor_hostnames", hypervisor_hostnames or {}, "mapping")
    hosts = [
        {
            "name": name,
            "hypervisor_hostname": hypervisors.get(name) or name,
            "config": (deployed.get(name) or {}).get("compute") or {},
        }
        for name in names
    ]
    return migration.reporting(hosts, fleet)


@filter_errors
def pci_in_placement_scheduler_off(deployed):
    """``deployed | accel.openstack.pci_in_placement_scheduler_off``: the services without pci_in_placement."""
    from ansible_collections.accel.openstack.plugins.plugin_utils import pci_in_placement as migration

    return migration.scheduler_off(check("pci_in_placement_scheduler_off", "_input", deployed, "mapping"))


class FilterModule:
    """The move to PCI-in-Placement."""

    def filters(self):
        return {
            "pci_in_placement_hosts": pci_in_placement_hosts,
            "pci_in_placement_precheck": pci_in_placement_precheck,
            "pci_in_placement_progress": pci_in_placement_progress,
            "pci_in_placement_reporting": pci_in_placement_reporting,
            "pci_in_placement_scheduler_off": pci_in_placement_scheduler_off,
        }
