# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bounded_yaml filter (documented in bounded_yaml.yml)."""

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def bounded_yaml(text, where):
    from ansible_collections.accel.openstack.plugins.plugin_utils.yaml_bounds import check_document

    check("bounded_yaml", "where", where, "string")
    check_document(text, where)
    return text


class FilterModule:
    def filters(self):
        return {"bounded_yaml": bounded_yaml}
