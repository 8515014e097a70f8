#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: nova_config
short_description: Write Nova's PCI passthrough and vGPU configuration rendered from facts and the device policy
version_added: 1.0.0
description:
  - Renders, for every host given in O(hosts), the C([pci] device_spec), C([pci] alias),
    C([pci] report_in_placement), C([devices] enabled_mdev_types) and C([mdev_<type>]) keys nova-compute
    needs, its C([libvirt]) options (O(hosts[].libvirt)), the aliases, C([filter_scheduler] enabled_filters)
    and C([filter_scheduler] pci_in_placement) nova-api and nova-scheduler need, and a Nova provider config file where the policy asks for custom traits on vGPU
    providers or the host for custom compute node traits or inventories.
  - The device policy is validated first; every bad field is reported at once, naming the entry, the field
    and the fix, and nothing is written.
  - Only the keys the module writes are owned. A header comment in each INI file lists them; keys owned
    before and no longer wanted are removed, every other line is left as it was. Multi-valued keys are
    written as repeated lines in a fixed order, so a second run changes nothing.
  - O(layout=kolla) writes on the deploy host, under O(config_dir), C(nova/<host>/nova.conf) and
    C(nova/<host>/provider_config.yaml) per compute host, and C(nova/nova-api.conf),
    C(nova/nova-scheduler.conf), C(nova/nova-conductor.conf) and C(nova/nova-super-conductor.conf); each
    file that sets C([pci] alias) holds the complete list, because Kolla-Ansible's merge replaces a
    multi-valued key from a later file. Kolla-Ansible reads the provider config through
    C(nova_cell_compute_provider_config) (docs/kolla.md).
  - O(layout=nova_conf_d) writes one file, O(config_dir)/O(file_name), on the host O(host), with the parts
    of the O(services) that host runs.
author:
  - accel.openstack contributors (@accel-openstack)
options:
  layout:
    description: Where the files go; see the description.
    type: str
    required: true
    choices: [kolla, nova_conf_d]
  hosts:
    description:
      - Every host of the fleet that runs nova-compute. Aliases are rendered for the whole fleet, so give all
        of them even when writing one host's file.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The inventory hostname.
        type: str
        required: true
      facts:
        description:
          - The host's discovery facts (RV(accel.openstack.pci_facts#module:ansible_facts.accel_pci_devices),
            RV(accel.openstack.pci_facts#module:ansible_facts.accel_numa_nodes), ...).
          - With RV(accel.openstack.pci_facts#module:ansible_facts.accel_iommu_enabled) false the host offers no
            device (no device reaches a VM without the IOMMU) and a warning says how to turn the IOMMU on, from
            RV(accel.openstack.pci_facts#module:ansible_facts.accel_cpu_vendor) and
            RV(accel.openstack.pci_facts#module:ansible_facts.accel_kernel_cmdline) when given.
        type: dict
        required: true
      hypervisor_hostname:
        description: The name nova-compute reports (provider names start with it); defaults to O(hosts[].name).
        type: str
      compute_node_traits:
        description: Custom traits (C(CUSTOM_*)) to add to the compute node provider through the provider config.
        type: list
        elements: str
      provider_config:
        description:
          - The operator's own provider entries for this host (Nova's provider config schema, the items
            of C(providers)). They go into the same document as the collection's; a provider identified
            twice (same C(uuid) or C(name)) is refused, as Nova refuses it.
        type: list
        elements: dict
      compute_node_inventories:
        description:
          - Custom resource classes to add to the compute node provider, as C(CUSTOM_X=total) entries or with
            a mapping of C(total), C(reserved) and the other inventory fields.
        type: dict
      libvirt:
        description:
          - Nova's C([libvirt]) options for this host's nova-compute (C(accel_nova_libvirt)), such as
            C(live_migration_permit_post_copy), C(live_migration_downtime) or C(live_migration_timeout_action).
          - Each name must be a C([libvirt]) option of Nova 34 and each value what Nova reads for it (a boolean,
            a whole number within its bounds and choices, a string among its choices, a list of strings, an IP
            address or host name); anything else fails the task, naming the host, the option and the fix, and
            nothing is written. C(connection_uri), C(live_migration_uri), C(rbd_user) and C(rbd_secret_uuid)
            are refused (the deployment owns them). A null value writes nothing for that option.
          - On a host whose config enables a vGPU type, C(live_migration_permit_post_copy) is written V(false)
            unless given here (Nova's vGPU documentation requires it for live migration); V(true) is written
            with a warning.
        type: dict
  policy:
    description: The device policy (C(accel_device_policy)); see docs/device-policy.md.
    type: list
    elements: dict
    required: true
  host:
    description: With O(layout=nova_conf_d), the inventory hostname whose file to write.
    type: str
  services:
    description: With O(layout=nova_conf_d), the Nova services the host runs; their parts go into its file.
    type: list
    elements: str
    choices: [compute, api, scheduler, conductor]
    default: [compute, api, scheduler, conductor]
  report_in_placement:
    description: Set C([pci] report_in_placement) on compute hosts, so PCI devices become Placement providers.
      Nova cannot turn it off again once it was on; a run that would turn it off in a file that has it on
      fails and writes nothing.
    type: bool
    default: false
  pci_in_placement:
    description: Set C([filter_scheduler] pci_in_placement) for nova-api, nova-scheduler and every conductor
      (cell conductors and the super conductor); needs O(report_in_placement).
    type: bool
    default: false
  enabled_filters:
    description:
      - Scheduler filters to add. The written C([filter_scheduler] enabled_filters) extends the list the
        scheduler already runs and never drops a filter; C(PciPassthroughFilter) is always added.
      - With O(layout=kolla) that list is what Kolla-Ansible's template sets for O(kolla_globals) (the
        Blazar filter with C(enable_blazar)), replaced by C(global.conf), C(nova.conf) or
        C(nova/nova-scheduler.conf) where the operator set it there; otherwise Nova's default list.
    type: list
    elements: str
    default: []
  kolla_globals:
    description:
      - With O(layout=kolla), the operator's Kolla-Ansible globals (globals.yml), so the module knows what
        Kolla's own templates render. C(enable_neutron_sriov) or C(nova_pci_passthrough_whitelist) with
        devname entries and O(report_in_placement) are refused (Nova would not start);
        C(enable_blazar) and C(enable_nova_fake) set the filters the scheduler list extends.
    type: dict
    default: {}
  kolla_control_hosts:
    description: With O(layout=kolla), the hosts that run nova-api, nova-scheduler or a conductor; they are
      reported in RV(changed_hosts) when a file they read changed.
    type: list
    elements: str
    default: []
  kolla_inventory:
    description: The Kolla-Ansible inventory path to put in RV(kolla_command).
    type: str
  kolla_pending_file:
    description:
      - With O(layout=kolla), a JSON file (under O(root)) that records the hosts whose change Kolla-Ansible
        has not applied yet, so that every later run prints RV(kolla_command) for them again until it is
        applied (O(kolla_deployed) says when). Not given, only this run's changes are reported.
    type: str
  kolla_deployed:
    description:
      - With O(kolla_pending_file), per host, when Kolla-Ansible last wrote the merged Nova config on it (the
        newest C(/etc/kolla/nova-*/nova.conf), seconds since the epoch; null when unknown). A recorded host
        counts as applied once this is later than its recorded change.
    type: dict
    default: {}
  config_dir:
    description: Kolla's custom config directory (V(/etc/kolla/config)) or the config directory nova reads
      (V(/etc/nova/nova.conf.d)), depending on O(layout).
    type: str
  file_name:
    description: The file name with O(layout=nova_conf_d).
    type: str
    default: 50-accel-openstack.conf
  provider_config_dir:
    description: Nova's provider config directory with O(layout=nova_conf_d).
    type: str
    default: /etc/nova/provider_config
  nova_conf:
    description:
      - Nova's main config file with O(layout=nova_conf_d), read before the O(config_dir) files (as
        oslo.config reads them) to know whether the planned files change what Nova reads.
    type: str
    default: /etc/nova/nova.conf
  kolla_super_conductor:
    description:
      - With O(layout=kolla), whether the cloud runs nova-super-conductor (Kolla-Ansible's
        C(nova-super-conductor) group); its file then counts among what Nova reads.
    type: bool
    default: true
  take_ownership:
    description:
      - When every Nova service would read the same configuration before and after the planned files (as
        Nova parses it, with JSON objects, lists, booleans, Nova's defaults, an empty provider config), the files
        are left as the operator wrote them and nothing changes. This is the case of a cloud built by hand
        and adopted (docs/audit.md).
      - V(true) writes the files anyway, with the ownership header, so that the collection owns the keys
        from then on.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reports what would change, with the diff, and writes nothing.
  diff_mode:
    support: full
    description: Returns the before and after text of every file that changes.
notes:
  - Nova services must be restarted to read the new files; the module reports which files changed.
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Render the Kolla-Ansible overrides for every compute host (on the deploy host)
  accel.openstack.nova_config:
    layout: kolla
    config_dir: /etc/kolla/config
    policy: "{{ accel_device_policy }}"
    hosts:
      - name: gpu-01
        facts: "{{ hostvars['gpu-01'] }}"
  run_once: true
  delegate_to: localhost

- name: Write this host's nova.conf.d file
  accel.openstack.nova_config:
    layout: nova_conf_d
    host: "{{ inventory_hostname }}"
    services: [compute]
    report_in_placement: true
    policy: "{{ accel_device_policy }}"
    hosts: "{{ accel_nova_hosts }}"
"""

RETURN = r"""
files:
  description: Every file the layout manages, with whether this run changed it.
  returned: always
  type: dict
  sample: {"/etc/kolla/config/nova/gpu-01/nova.conf": true}
rendered:
  description: The full text of each managed file after this run (empty for a file that is absent).
  returned: always
  type: dict
changed_hosts:
  description: The hosts whose Nova config this run changed (layout kolla - compute hosts for their own
    files, O(kolla_control_hosts) for the shared ones; layout nova_conf_d - O(host)).
  returned: always
  type: list
  elements: str
pending_hosts:
  description: With O(layout=kolla), the hosts whose Nova config changed and that Kolla-Ansible has not
    applied yet (this run's RV(changed_hosts) plus, with O(kolla_pending_file), the ones recorded before).
  returned: always
  type: list
  elements: str
kolla_command:
  description: With O(layout=kolla), the command that makes Kolla-Ansible apply the changes to the
    RV(pending_hosts), or null when none is pending. In check mode it names what would change.
  returned: always
  type: str
  sample: kolla-ansible reconfigure -i multinode -t nova --limit gpu-01,gpu-02
policy_warnings:
  description: Policy entries that match no device, devices not yet on vfio-pci, devices not offered because
    their host's IOMMU is off, C([libvirt]) options deprecated in Nova or post-copy permitted on a vGPU host,
    and the like.
  returned: always
  type: list
  elements: str
"""

import time

from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import (
    DEFAULT_DIRS,
    SERVICES,
    changed_hosts,
    plan,
    reconfigure_command,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.reconfigure import plan_pending


def argument_spec() -> dict:
    return {
        "layout": {"type": "str", "required": True, "choices": ["kolla", "nova_conf_d"]},
        "hosts": {
            "type": "list",
            "elements": "dict",
            "required": True,
            "options": {
                "name": {"type": "str", "required": True},
                "facts": {"type": "dict", "required": True},
                "hypervisor_hostname": {"type": "str"},
                "compute_node_traits": {"type": "list", "elements": "str"},
                "compute_node_inventories": {"type": "dict"},
                "provider_config": {"type": "list", "elements": "dict"},
                "libvirt": {"type": "dict"},
            },
        },
        "policy": {"type": "list", "elements": "dict", "required": True},
        "host": {"type": "str"},
        "services": {"type": "list", "elements": "str", "choices": list(SERVICES), "default": list(SERVICES)},
        "report_in_placement": {"type": "bool", "default": False},
        "pci_in_placement": {"type": "bool", "default": False},
        "enabled_filters": {"type": "list", "elements": "str", "default": []},
        "kolla_globals": {"type": "dict", "default": {}},
        "kolla_control_hosts": {"type": "list", "elements": "str", "default": []},
        "kolla_inventory": {"type": "str"},
        "kolla_pending_file": {"type": "str"},
        "kolla_deployed": {"type": "dict", "default": {}},
        "config_dir": {"type": "str"},
        "file_name": {"type": "str", "default": "50-accel-openstack.conf"},
        "provider_config_dir": {"type": "str", "default": "/etc/nova/provider_config"},
        "nova_conf": {"type": "str", "default": "/etc/nova/nova.conf"},
        "kolla_super_conductor": {"type": "bool", "default": True},
        "take_ownership": {"type": "bool", "default": False},
    }


class NovaConfigModule(HostModule):
    argument_spec = argument_spec()
    module_kwargs = {"required_if": [("layout", "nova_conf_d", ("host",))]}

    def run(self) -> dict:
        rendering, changes = plan(self.host, self.params)
        for warning in rendering.warnings:
            self.warn(warning)
        self.apply_files(changes)
        params = self.params
        hosts: list[str] = []
        if params["layout"] == "kolla":
            hosts = changed_hosts(
                changes,
                params.get("config_dir") or DEFAULT_DIRS["kolla"],
                [h["name"] for h in params["hosts"]],
                params["kolla_control_hosts"],
            )
        elif any(c.changed for c in changes):
            hosts = [params["host"]]
        kolla_command = None
        pending: list[str] = []
        if params["layout"] == "kolla":
            pending = hosts
            if params.get("kolla_pending_file"):
                record, pending = plan_pending(
                    self.host, params["kolla_pending_file"], hosts, params["kolla_deployed"], time.time()
                )
                self.apply_files([record])
            kolla_command = reconfigure_command(pending, params.get("kolla_inventory"))
        return {
            "changed_hosts": hosts,
            "pending_hosts": pending,
            "kolla_command": kolla_command,
            "changed": bool(self.diff),
            "diff": self.diff,
            "files": {c.path: c.changed for c in changes},
            "rendered": {c.path: c.after or "" for c in changes},
            "policy_warnings": rendering.warnings,
        }


def main():
    NovaConfigModule()()


if __name__ == "__main__":
    main()
