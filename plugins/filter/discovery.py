# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: discovery_report
short_description: Summarise discovered accelerator facts as readable lines
version_added: 1.0.0
description:
  - Turns the C(accel_*) facts set by M(accel.openstack.pci_facts) into one line per device (virtual
    functions folded into their physical function) saying model, driver, NUMA node, SR-IOV, vGPU and MIG
    state and whether the device's IOMMU group allows passthrough.
  - Devices the device catalog knows carry their model, memory, SR-IOV mechanism and partition mode; each
    accelerator the catalog does not know (C(accel_unknown_accelerators)) gets a line of its own that says
    which device policy and catalog entries to add.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  _input:
    description: A dict holding the C(accel_*) facts, such as C(hostvars[inventory_hostname]).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Print the discovery report
  ansible.builtin.debug:
    msg: "{{ hostvars[inventory_hostname] | accel.openstack.discovery_report }}"
"""

RETURN = r"""
_value:
  description: Report lines, the first a host summary.
  type: list
  elements: str
"""

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


def _discovery_report(facts):
    from ansible_collections.accel.openstack.plugins.plugin_utils.discovery_report import discovery_report

    if not isinstance(facts, Mapping):
        raise AnsibleFilterError("discovery_report expects a dict of accel_* facts, e.g. hostvars[inventory_hostname]")
    return discovery_report({k: facts[k] for k in facts if str(k).startswith("accel_")})


class FilterModule:
    def filters(self):
        return {"discovery_report": _discovery_report}
