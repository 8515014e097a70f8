# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the validate stage for flavors: the fleet from facts, the validation and its table."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


def _nova_fleet(hosts, policy=None, host_options=None, **options):
    from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import nova_fleet

    try:
        return nova_fleet(hosts, policy, host_options, **options)
    except AccelError as exc:
        raise AnsibleFilterError(f"nova_fleet: {exc}") from exc


def _validate_flavors(flavors, fleet, **options):
    from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_validation import validate_flavors

    try:
        return validate_flavors(fleet, list(flavors or []), **options)
    except AccelError as exc:
        raise AnsibleFilterError(f"validate_flavors: {exc}") from exc


def _compute_flavor_keys(flavor):
    from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_validation import compute_flavor_keys

    try:
        return compute_flavor_keys(inputs.plain(flavor, "compute_flavor_keys: flavor"))
    except AccelError as exc:
        raise AnsibleFilterError(f"compute_flavor_keys: {exc}") from exc


def _flavor_table(result):
    from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_validation import flavor_table

    try:
        return flavor_table(inputs.plain(result, "flavor_table: result") or {})
    except AccelError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule:
    def filters(self):
        return {
            "nova_fleet": _nova_fleet,
            "validate_flavors": _validate_flavors,
            "flavor_table": _flavor_table,
            "compute_flavor_keys": _compute_flavor_keys,
        }
