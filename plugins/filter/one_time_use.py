# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: one_time_use_stuck
short_description: The one-time-use devices a fleet snapshot shows waiting to be cleaned and returned
version_added: 1.0.0
description:
  - Lists the providers with the C(HW_PCI_ONE_TIME_USE) trait whose inventory has C(reserved) equal to
    C(total) and no usage, that is, devices Nova reserved after an instance used them and that no instance
    holds now.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  _input:
    description: A fleet snapshot (RV(accel.openstack.placement_info#module:fleet)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Devices waiting for cleaning
  ansible.builtin.debug:
    msg: "{{ placement.fleet | accel.openstack.one_time_use_stuck }}"
"""

RETURN = r"""
_value:
  description: >-
    One dict per device, sorted by host: C(host), C(provider), C(provider_uuid), C(address),
    C(resource_class), C(total).
  type: list
  elements: dict
"""

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def one_time_use_stuck(fleet):
    from ansible_collections.accel.openstack.plugins.module_utils._placement.one_time_use import stuck_devices

    check("one_time_use_stuck", "_input", fleet, "mapping")
    return stuck_devices(dict(fleet))


class FilterModule:
    def filters(self):
        return {"one_time_use_stuck": one_time_use_stuck}
