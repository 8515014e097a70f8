# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: migration_targets
author: accel.openstack contributors (@accel-openstack)
version_added: 1.0.0
short_description: Which GPU and PCI instances Nova can live-migrate, to which hosts, and what draining a host moves
description:
  - For every consumer of the fleet snapshot's C(allocations) that holds a device (a vGPU, a PCI device, a Cyborg
    accelerator), decides whether Nova 34 can live-migrate it (device kind, the C(live_migratable) tag and alias,
    libvirt, QEMU and kernel versions, C([libvirt] live_migration_permit_post_copy)) and on which other hosts its
    exact resources fit now, answered from the snapshot with Placement 1.39 semantics.
  - Returns one dict (the lookup's one element) with C(instances) and C(drain). The rules and their sources in Nova's
    code are in the collection's docs/migration.md.
options:
  _terms:
    description: Not used, give the inputs as options.
    required: false
    type: list
    elements: raw
  fleet:
    description: Placement's snapshot with its allocations (M(accel.openstack.placement_info) with
      O(accel.openstack.placement_info#module:allocations=true)).
    required: true
    type: dict
  hosts:
    description: "Per inventory host its C(accel_*) facts (M(accel.openstack.pci_facts)); the versions are read from
      C(accel_kernel_release), C(accel_libvirt_version) and C(accel_qemu_version), which may also be inventory
      variables."
    type: dict
    default: {}
  deployed:
    description: "Per host the deployed Nova config, C({service: sections}) as M(accel.openstack.nova_config_info)
      returns it; C(compute)'s C([libvirt]), C([devices]) and C([mdev_*]) sections are read."
    type: dict
    default: {}
  hypervisor_hostnames:
    description: "C({inventory host: compute node name}) where they differ."
    type: dict
    default: {}
  servers:
    description: The servers (openstack.cloud.server_info's C(servers), each with C(id), C(name), C(flavor)) or their
      UUIDs; a server's flavor gives its PCI aliases and required traits.
    type: list
    elements: raw
    default: []
  pci_aliases:
    description: The C([pci] alias) entries of nova-api, each a dict or the JSON string nova.conf holds; null when not
      known (then a PCI instance is reported with blocker V(alias_unknown)).
    type: list
    elements: raw
"""

EXAMPLES = r"""
- name: Can the GPU instances of gpu-03 move away before its maintenance?
  ansible.builtin.debug:
    msg: "{{ query('accel.openstack.migration_targets', fleet=snapshot.fleet, hosts=host_facts,
                   deployed=nova_configs, servers=servers, pci_aliases=aliases)[0].drain['gpu-03'].summary }}"
"""

RETURN = r"""
_raw:
  description: One report.
  type: list
  elements: dict
  contains:
    instances:
      description:
        - "One entry per instance holding a device, sorted by host and name, with C(uuid), C(name), C(host),
          C(devices) (C(provider), C(provider_uuid), C(kind) V(vgpu), V(pci) or V(other), C(resources), C(mdev_type) for a vGPU),
          C(migratable) (no blocker and at least one target now),
          C(blockers) (C({code, detail, fix}); codes V(accelerator), V(version_too_old), V(version_unknown),
          V(post_copy_permitted), V(mdev_type_unknown), V(device_not_live_migratable), V(alias_not_live_migratable),
          V(alias_unknown), V(spread_over_hosts)), C(targets) (host names, the RAMWeigher's order), C(why_not)
          (C({host: reason}) for every host that is no target, all of a host's reasons) and C(query) (the Placement query for its resources)."
      type: list
      elements: dict
    drain:
      description: "Per source host C({moves: {instance: target}, cannot_move: {instance: why}, summary})."
      type: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.plugin_utils.migration import migration_targets


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        try:
            return [
                migration_targets(
                    self.get_option("fleet"),
                    hosts=self.get_option("hosts"),
                    deployed_config=self.get_option("deployed"),
                    hypervisor_hostnames=self.get_option("hypervisor_hostnames"),
                    servers=self.get_option("servers"),
                    pci_aliases=self.get_option("pci_aliases"),
                )
            ]
        except AccelError as exc:
            raise AnsibleLookupError(exc.msg) from None
