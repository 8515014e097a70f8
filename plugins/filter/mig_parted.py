# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters between NVIDIA mig-parted configs and the device policy (docs: mig_parted_*.yml)."""

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def mig_parted_to_policy(config, facts, config_name, name_prefix="mig"):
    from ansible_collections.accel.openstack.plugins.plugin_utils import mig_parted

    check("mig_parted_to_policy", "_input", config, "mapping")
    check("mig_parted_to_policy", "facts", facts, "mapping")
    check("mig_parted_to_policy", "config_name", config_name, "string")
    check("mig_parted_to_policy", "name_prefix", name_prefix, "string")
    return mig_parted.policy_from_mig_parted(config, facts, config_name, name_prefix)


@filter_errors
def mig_parted_from_policy(policy, facts, config_name):
    from ansible_collections.accel.openstack.plugins.plugin_utils import mig_parted

    check("mig_parted_from_policy", "_input", policy, "list")
    check("mig_parted_from_policy", "facts", facts, "mapping")
    check("mig_parted_from_policy", "config_name", config_name, "string")
    return mig_parted.mig_parted_from_policy(list(policy), facts, config_name)


class FilterModule:
    def filters(self):
        return {"mig_parted_to_policy": mig_parted_to_policy, "mig_parted_from_policy": mig_parted_from_policy}
