# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: fleet
author: accel.openstack contributors (@accel-openstack)
short_description: The accelerator fleet as an inventory, from discovery facts and Placement
description:
  - Builds hosts, groups and host variables from two sources, read in full before anything is added
    to the inventory, so a source that cannot be read leaves no partial inventory behind.
  - C(facts) is Ansible's fact cache holding the facts of the discover stage
    (set by M(accel.openstack.pci_facts) - C(accel_pci_devices), C(accel_iommu_groups), C(accel_numa_nodes),
    C(accel_cpu_vendor), C(accel_iommu_enabled), C(accel_kernel_cmdline)), read through Ansible's cache
    plugin loader. Hosts whose cached facts lack C(accel_pci_devices) are left out.
  - C(placement) is Placement's view of the fleet, read with openstacksdk and the usual OpenStack
    options. Each root provider is a host, named after the provider (the hypervisor hostname);
    sharing providers (C(MISC_SHARES_VIA_AGGREGATE)) are not hosts. A host in both sources is one host.
  - "Groups (with I(group_prefix) C(accel_)): C(accel_model_<vendor>_<product>) per accelerator model
    (or the vendor and product names with I(model_group_names=names)), C(accel_mode_passthrough),
    C(accel_mode_vgpu), C(accel_mode_mig), C(accel_numa_<node>) per NUMA node holding an accelerator,
    C(accel_reboot_pending), C(accel_rc_<resource class>) and C(accel_trait_<trait>). Names are lower
    case with anything but letters and digits turned into C(_)."
  - An accelerator is a device of C(accel_pci_devices), except the boot VGA when no I(device_policy)
    entry selects it. Its mode is that of the first I(device_policy) entry that selects it (a C(vgpu)
    or C(mig) entry also selects the VFs of a PF it selects); otherwise the facts decide - C(mig) when
    MIG mode is enabled, C(vgpu) when the device or one of its VFs offers vGPU types, C(passthrough)
    when it is bound to vfio-pci, C(none) otherwise (no mode group).
  - A host waits for a reboot (group C(accel_reboot_pending)) when a GPU's pending MIG mode differs
    from its current one, or when I(device_policy) passes one of its devices through and the running
    kernel command line lacks an argument of I(reboot_kernel_args) for the host's CPU vendor or, with
    I(vfio_ids_on_cmdline), the device's C(vendor:product) in C(vfio-pci.ids).
  - "Host variables: C(accel_fleet_devices) (one record per model, mode and policy entry with names,
    C(count), C(virtual_functions), C(addresses), C(numa_nodes)), C(accel_fleet_device_count),
    C(accel_fleet_modes), C(accel_fleet_reboot_pending), C(accel_fleet_reboot_reasons) from the facts;
    C(accel_fleet_resource_classes) (per class C(total), C(reserved), C(used), C(providers)),
    C(accel_fleet_traits), C(accel_fleet_provider_uuid), C(accel_fleet_providers) from Placement;
    C(accel_fleet_sources)."
  - I(compose), I(groups) and I(keyed_groups) see these variables and the discovery facts.
extends_documentation_fragment:
  - ansible.builtin.constructed
  - ansible.builtin.inventory_cache
  - accel.openstack.openstack
options:
  plugin:
    description: Marks the file as this plugin's source.
    required: true
    type: str
    choices: [accel.openstack.fleet]
  sources:
    description: Which sources to read. Every listed source must be readable.
    type: list
    elements: str
    choices: [facts, placement]
    default: [facts, placement]
  fact_cache_plugin:
    description:
      - The cache plugin the discover stage's facts were cached with. It must persist between runs
        (C(ansible.builtin.jsonfile), or another file, database or network cache).
    type: str
    default: ansible.builtin.jsonfile
    env:
      - name: ANSIBLE_CACHE_PLUGIN
    ini:
      - section: defaults
        key: fact_caching
  fact_cache_connection:
    description:
      - Where the fact cache lives, as the cache plugin takes it; for C(jsonfile) the directory of
        per-host files. It must exist and hold facts.
    type: str
    env:
      - name: ANSIBLE_CACHE_PLUGIN_CONNECTION
    ini:
      - section: defaults
        key: fact_caching_connection
  fact_cache_prefix:
    description: The prefix the cache plugin put before each host name.
    type: str
    env:
      - name: ANSIBLE_CACHE_PLUGIN_PREFIX
    ini:
      - section: defaults
        key: fact_caching_prefix
  fact_cache_timeout:
    description: Seconds after which cached facts count as expired and are ignored; 0 never expires them.
    type: int
    default: 86400
    env:
      - name: ANSIBLE_CACHE_PLUGIN_TIMEOUT
    ini:
      - section: defaults
        key: fact_caching_timeout
  device_policy:
    description:
      - The device policy (the C(accel_device_policy) list the roles take; see docs/device-policy.md).
        It decides the mode of the devices it selects and what the kernel command line must hold.
        Empty means modes come from the facts alone and the command line is not checked.
    type: list
    elements: dict
    default: []
  hosts:
    description: Shell-style patterns; only hosts whose name matches one are added. Empty adds all.
    type: list
    elements: str
    default: []
  group_prefix:
    description: Prefix of every group the plugin makes itself.
    type: str
    default: accel_
  model_group_names:
    description:
      - C(ids) names model groups by PCI IDs (C(accel_model_10de_2330)); C(names) by the vendor's first
        word and the product name from the PCI ID database (C(accel_model_nvidia_gh100_h100_sxm5_80gb)),
        falling back to the IDs where the facts have no name.
    type: str
    choices: [ids, names]
    default: ids
  trait_patterns:
    description: Shell-style patterns of the Placement traits that make groups and appear in C(accel_fleet_traits).
    type: list
    elements: str
    default: ["CUSTOM_*"]
  skip_resource_classes:
    description: Resource classes that make no group and are left out of C(accel_fleet_resource_classes).
    type: list
    elements: str
    default: [VCPU, PCPU, MEMORY_MB, DISK_GB, MEM_ENCRYPTION_CONTEXT]
  reboot_kernel_args:
    description:
      - Per CPU vendor (C(accel_cpu_vendor)), the kernel arguments a host with passthrough devices must
        be running with; the default is what the prepare stage sets (C(host_passthrough_iommu_args)).
    type: dict
    default: {intel: [intel_iommu=on, iommu=pt], amd: [iommu=pt], other: []}
  vfio_ids_on_cmdline:
    description:
      - Whether the running command line must list each passed-through device's C(vendor:product) in
        C(vfio-pci.ids), as the prepare stage writes it by default (C(host_passthrough_ids_on_cmdline)).
    type: bool
    default: true
notes:
  - The source file's name must end in C(.fleet.yml) or C(.fleet.yaml).
  - Facts and Placement are matched by name, so the hypervisor hostname Placement knows
    (C(accel_placement_hostname)) must be the host's inventory name in the discover run.
  - A cache file the cache plugin cannot parse is removed by the cache plugin itself (Ansible's behaviour).
seealso:
  - module: accel.openstack.pci_facts
  - module: accel.openstack.placement_info
"""

EXAMPLES = r"""
# inventories/gpu.fleet.yml: the discover stage's facts (cached by running playbooks/discover.yml with
# ANSIBLE_CACHE_PLUGIN=jsonfile ANSIBLE_CACHE_PLUGIN_CONNECTION=~/.cache/accel-facts) and the cloud's Placement.
plugin: accel.openstack.fleet
fact_cache_connection: ~/.cache/accel-facts
cloud: mycloud
device_policy:
  - {name: h100, vendor_id: "10de", product_id: "2330", mode: passthrough, resource_class: CUSTOM_NVIDIA_H100}
compose:
  gpu_count: accel_fleet_devices | selectattr('mode', 'equalto', 'passthrough') | map(attribute='count') | sum
groups:
  big_gpu_hosts: (accel_fleet_resource_classes.CUSTOM_NVIDIA_H100.total | default(0)) >= 8
keyed_groups:
  - key: accel_cpu_vendor
    prefix: cpu

# Facts only, names for model groups, with the inventory cached for an hour.
plugin: accel.openstack.fleet
sources: [facts]
fact_cache_connection: /var/cache/ansible/facts
model_group_names: names
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: /var/cache/ansible/inventory
cache_timeout: 3600

# A standalone Placement (noauth2) only.
plugin: accel.openstack.fleet
sources: [placement]
auth_type: admin_token
auth: {endpoint: "http://127.0.0.1:8778", token: "admin"}
trait_patterns: ["CUSTOM_*", "HW_GPU_*", "COMPUTE_MANAGED_PCI_DEVICE"]
"""

import os

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable
from ansible.plugins.loader import cache_loader

from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet_inventory import (
    FACT_KEYS,
    InventoryError,
    Settings,
    build,
    discovery_facts,
    load_policy,
)

NAME = "accel.openstack.fleet"
FILE_CACHES = ("jsonfile", "yaml", "pickle")
OPENSTACK_OPTIONS = (
    "cloud",
    "auth",
    "auth_type",
    "region_name",
    "validate_certs",
    "ca_cert",
    "client_cert",
    "client_key",
    "interface",
    "api_timeout",
)
DISCOVER_HINT = (
    "run playbooks/discover.yml with the fact cache on, e.g. ANSIBLE_CACHE_PLUGIN=jsonfile "
    "ANSIBLE_CACHE_PLUGIN_CONNECTION=<directory> ansible-playbook -i <inventory> playbooks/discover.yml"
)


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = NAME

    def verify_file(self, path):
        return super().verify_file(path) and path.endswith((".fleet.yml", ".fleet.yaml"))

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        self._read_config_data(path)
        cache_key = self.get_cache_key(path)
        use_cache = self.get_option("cache") and cache
        update_cache = self.get_option("cache") and not cache
        data = None
        if use_cache:
            try:
                data = inputs.inventory_data(self._cache[cache_key], "the inventory cache")
            except KeyError:
                update_cache = True
            except inputs.InputError as exc:
                # A cache entry this plugin did not write is not trusted: the sources are read again.
                self.display.warning(f"{NAME} ({path}): {exc.msg}; reading the sources again")
                data, update_cache = None, True
        try:
            settings = Settings(
                prefix=self.get_option("group_prefix"),
                model_names=self.get_option("model_group_names"),
                trait_patterns=tuple(self.get_option("trait_patterns")),
                skip_resource_classes=tuple(self.get_option("skip_resource_classes")),
                kernel_args=self.get_option("reboot_kernel_args"),
                vfio_ids_on_cmdline=self.get_option("vfio_ids_on_cmdline"),
            )
            policy = load_policy(self.get_option("device_policy"))
            if data is None:
                data = self._read_sources(path)
            views = build(data["facts"], data["placement"], policy, settings, self.get_option("hosts"))
        except InventoryError as exc:
            # The message already says what failed and what to do; the chain would only repeat it.
            raise AnsibleParserError(f"{NAME} ({path}): {exc}") from None
        if update_cache:
            self._cache[cache_key] = data
        self._populate(views, data["facts"] or {})

    # -- sources ---------------------------------------------------------------------------------
    def _read_sources(self, path: str) -> dict:
        sources = self.get_option("sources")
        if not sources:
            raise InventoryError("sources is empty; list facts, placement or both")
        facts = self._read_fact_cache() if "facts" in sources else None
        snapshot = self._read_placement() if "placement" in sources else None
        return {"facts": facts, "placement": snapshot}

    def _read_fact_cache(self) -> dict:
        plugin = self.get_option("fact_cache_plugin")
        connection = self.get_option("fact_cache_connection")
        if plugin.rsplit(".", 1)[-1] == "memory":
            raise InventoryError(
                f"fact_cache_plugin is {plugin}, which keeps facts only while a playbook runs; set "
                f"fact_cache_plugin (or ANSIBLE_CACHE_PLUGIN) to ansible.builtin.jsonfile and {DISCOVER_HINT}"
            )
        if plugin.rsplit(".", 1)[-1] in FILE_CACHES:
            if not connection:
                raise InventoryError(
                    "fact_cache_connection is not set; give the directory of the fact cache "
                    f"(or set ANSIBLE_CACHE_PLUGIN_CONNECTION), and {DISCOVER_HINT}"
                )
            connection = os.path.expanduser(os.path.expandvars(connection))
            if not os.path.isdir(connection):
                raise InventoryError(
                    f"fact_cache_connection {connection} is not a directory; point it at the fact cache the "
                    f"discover stage wrote, or {DISCOVER_HINT}"
                )
        options = {"_uri": connection, "_prefix": self.get_option("fact_cache_prefix") or ""}
        options["_timeout"] = self.get_option("fact_cache_timeout")
        try:
            cache = cache_loader.get(plugin, **{k: v for k, v in options.items() if v is not None})
            facts = {}
            for host in sorted(cache.keys()):
                try:
                    entry = discovery_facts(cache.get(host), f"the fact cache entry of {host}")
                except KeyError:
                    continue
                if entry is not None:
                    facts[host] = inputs.discovery_entry(entry, f"the fact cache entry of {host}")
        except InventoryError:
            raise
        except inputs.InputError as exc:
            raise InventoryError(
                f"{exc.msg}; run playbooks/discover.yml for that host again to rewrite its facts"
            ) from None
        except Exception as exc:
            raise InventoryError(
                f"the fact cache ({plugin} at {connection}) could not be read: {exc}; check fact_cache_plugin "
                "and fact_cache_connection"
            ) from exc
        if not facts:
            found = len(cache.keys())
            held = (
                f"holds facts of {found} host(s) but none with {FACT_KEYS[0]}"
                if found
                else "holds no facts (or only facts older than fact_cache_timeout)"
            )
            raise InventoryError(f"the fact cache ({plugin} at {connection}) {held}; {DISCOVER_HINT}")
        return facts

    def _read_placement(self) -> dict:
        # Imported here: openstacksdk is needed only when Placement is a source.
        try:
            from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import (
                HAS_OPENSTACKSDK,
                credential_problems,
            )
            from ansible_collections.accel.openstack.plugins.module_utils._openstack.redaction import Redactor
            from ansible_collections.accel.openstack.plugins.module_utils._placement.client import (
                PlacementError,
                fleet_snapshot,
            )
            from ansible_collections.accel.openstack.plugins.module_utils._placement.module import placement_client
        except ImportError as exc:  # pragma: no cover - the collection's own modules always import
            raise InventoryError(f"the Placement client could not be loaded: {exc}") from exc
        if not HAS_OPENSTACKSDK:
            raise InventoryError(
                "placement is a source but openstacksdk is not installed on the controller; install it "
                "(pip install openstacksdk) or remove placement from sources"
            )
        params = {name: self.get_option(name) for name in OPENSTACK_OPTIONS}
        cloud = params.get("cloud")
        if cloud is not None and not isinstance(cloud, str | dict):
            raise InventoryError(
                f"cloud is {kind_of(cloud)}; give the name of a cloud in clouds.yaml or a dict of connection options"
            )
        # An inventory has no no_log: every credential (options, clouds.yaml, OS_* variables, the session's
        # token) is taken out of every message it raises.
        redactor = Redactor(params)
        problems = credential_problems(params)
        if problems:
            raise InventoryError(redactor.mask("; ".join(problems)))
        try:
            client = placement_client(params)
            redactor.connection = client.adapter
            return inputs.placement_snapshot(fleet_snapshot(client), "Placement's answer")
        except inputs.InputError as exc:
            raise InventoryError(redactor.mask(f"{exc.msg}. {self._placement_fix(params)}")) from None
        except PlacementError as exc:
            raise InventoryError(redactor.mask(f"{exc} {self._placement_fix(params)}")) from None
        except Exception as exc:  # openstacksdk's config and keystoneauth errors
            raise InventoryError(
                redactor.mask(
                    f"Placement could not be reached: {type(exc).__name__}: {exc}. {self._placement_fix(params)}"
                )
            ) from None

    @staticmethod
    def _placement_fix(params: dict) -> str:
        given = ", ".join(f"{k}" for k in ("cloud", "auth_type", "auth") if params.get(k)) or "none"
        return (
            f"Check the OpenStack options of this file (given: {given}): cloud names a clouds.yaml entry, "
            "or auth_type and auth reach Placement (a standalone Placement: auth_type admin_token with auth "
            "{endpoint: URL, token: TOKEN}); or remove placement from sources."
        )

    # -- the inventory ---------------------------------------------------------------------------
    def _populate(self, views, facts_by_host: dict) -> None:
        strict = self.get_option("strict")
        for view in views:
            host = self.inventory.add_host(view.name)
            for group in view.groups:
                self.inventory.add_group(group)
                self.inventory.add_child(group, host)
            for key, value in view.hostvars.items():
                self.inventory.set_variable(host, key, value)
            variables = dict(facts_by_host.get(view.name) or {})
            variables.update(self.inventory.get_host(host).get_vars())
            self._set_composite_vars(self.get_option("compose"), variables, host, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), variables, host, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, host, strict=strict)
