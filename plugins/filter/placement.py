# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over Placement's ownership rule (thin wrappers over ``_placement/ownership.py``)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def placement_ownership(providers, found=None, root_traits=None):
    """``providers | accel.openstack.placement_ownership(found)``: what a real cloud's stage does."""
    from ansible_collections.accel.openstack.plugins.module_utils._placement.ownership import (
        OwnershipError,
        split_ownership,
    )

    providers = list(check("placement_ownership", "_input", providers, "list"))
    found = list(check("placement_ownership", "found", found if found is not None else [], "list"))
    root_traits = list(check("placement_ownership", "root_traits", root_traits or [], "list"))
    try:
        return split_ownership(providers, found, root_traits)
    except OwnershipError as exc:
        raise AnsibleFilterError(f"placement_ownership: {exc}") from exc


class FilterModule:
    """Placement ownership."""

    def filters(self):
        return {"placement_ownership": placement_ownership}
