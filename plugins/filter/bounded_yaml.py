# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bounded_yaml filter (documented in bounded_yaml.yml)."""

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors
from ansible_collections.accel.openstack.plugins.plugin_utils.yaml_bounds import check_document


@filter_errors
def bounded_yaml(text, where):
    check("bounded_yaml", "where", where, "string")
    check_document(text, where)
    return text


class FilterModule:
    def filters(self):
        return {"bounded_yaml": bounded_yaml}
