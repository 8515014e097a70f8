# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cleaning_commands filter (documented in cleaning_commands.yml)."""

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def cleaning_commands(devices, command, addresses=None):
    from ansible_collections.accel.openstack.plugins.plugin_utils.recycling import (
        cleaning_commands as _cleaning_commands,
    )

    check("cleaning_commands", "_input", devices, "list")
    return _cleaning_commands(list(devices), list(command) if isinstance(command, list | tuple) else command, addresses)


class FilterModule:
    def filters(self):
        return {"cleaning_commands": cleaning_commands}
