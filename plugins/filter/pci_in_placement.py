# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the move to PCI-in-Placement (thin wrappers over ``plugin_utils/pci_in_placement.py``)."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils import pci_in_placement as migration
from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors


@filter_errors
def pci_in_placement_precheck(hosts, aliases=None, fleet=None):
    """``hosts | accel.openstack.pci_in_placement_precheck(aliases, fleet)``: problems, healing, providers."""
    hosts = list(check("pci_in_placement_precheck", "_input", hosts, "list"))
    aliases = list(check("pci_in_placement_precheck", "aliases", aliases if aliases is not None else [], "list"))
    if fleet is not None:
        fleet = check("pci_in_placement_precheck", "fleet", fleet, "mapping")
    return migration.precheck(hosts, aliases, fleet)


@filter_errors
def pci_in_placement_progress(fleet, host, providers, healing=None):
    """``fleet | accel.openstack.pci_in_placement_progress(host, providers, healing)``: one host's progress."""
    fleet = check("pci_in_placement_progress", "_input", fleet, "mapping")
    host = check("pci_in_placement_progress", "host", host, "string")
    providers = check("pci_in_placement_progress", "providers", providers, "mapping")
    healing = list(check("pci_in_placement_progress", "healing", healing if healing is not None else [], "list"))
    return migration.progress(host, providers, healing, fleet)


@filter_errors
def pci_in_placement_reporting(hosts, fleet):
    """``hosts | accel.openstack.pci_in_placement_reporting(fleet)``: which compute hosts report."""
    hosts = list(check("pci_in_placement_reporting", "_input", hosts, "list"))
    fleet = check("pci_in_placement_reporting", "fleet", fleet, "mapping")
    return migration.reporting(hosts, fleet)


class FilterModule:
    """The move to PCI-in-Placement."""

    def filters(self):
        return {
            "pci_in_placement_precheck": pci_in_placement_precheck,
            "pci_in_placement_progress": pci_in_placement_progress,
            "pci_in_placement_reporting": pci_in_placement_reporting,
        }
