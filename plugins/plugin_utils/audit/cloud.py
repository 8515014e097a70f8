# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit a running GPU cloud: every input read once, every check run, one list of findings.

:func:`audit_cloud` takes what the audit playbook gathers, read-only:

- ``hosts``: ``{inventory hostname: accel_* facts}`` (``pci_facts``; a host's ``accel_gpu_health``, the
  ``gpu_health`` module's fact, gives the area ``health``);
- ``deployed``: ``{inventory hostname: {service: config sections}}`` (``nova_config_info``), services
  ``compute``, ``api``, ``scheduler``, ``conductor``;
- ``fleet``: Placement's snapshot (``placement_info``; with ``quarantines: true`` its ``quarantines`` give
  one ``device_quarantined`` finding per quarantined device);
- ``flavors``: the flavor catalog (openstack.cloud.compute_flavor's keys);
- ``policy``: ``accel_device_policy`` when the operator has one (then ``nova_config_drift`` compares
  with its rendering), else nothing: the adopted policy stands in where a policy is needed.

Options: ``hypervisor_hostnames`` (``{inventory hostname: compute node name}``), ``flavor_options``,
``inventory_hosts`` (every hostname of the inventory: a compute node of none of them is gone) and
``instances`` (the UUIDs of the live servers, or None when not read: a consumer that is none of them holds
a leaked allocation). The snapshot's optional ``allocations`` (placement_info's ``allocations: true``) name
who holds what.

It returns ``{"findings", "counts", "adopted"}``; ``extra_findings`` (e.g. a Cyborg ARQ report) are
checked for the findings' shape and joined to the list. The option ``playbook_form`` (``path``, the
default, or ``fqcn``) says how the texts name the collection's playbooks (``plugin_utils/playbooks.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._nova import deployed
from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import adopt
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import Options, RenderError, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import host_inputs
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError, parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._placement.quarantine import quarantined_devices
from ansible_collections.accel.openstack.plugins.plugin_utils.audit import (
    flavor_checks,
    health_checks,
    host_checks,
    migration_checks,
    nova_checks,
    placement_checks,
    quarantines,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import checked, counts, finding, ordered
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor import parse_aliases
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import pci_pools
from ansible_collections.accel.openstack.plugins.plugin_utils.playbooks import name_playbooks

MAX_HOSTS = 100000


class AuditInputError(AccelError, ValueError):
    """Audit input that is not what the playbook gathers; the message names it."""


class Cloud:
    def __init__(self, hosts, deployed_config, fleet, flavors, policy, options: dict):
        self.hosts = hosts
        self.deployed = deployed_config
        self.fleet = fleet
        self.flavors = flavors
        self.nodenames = options.get("hypervisor_hostnames") or {}
        self.flavor_options = options.get("flavor_options") or {}
        # every host of the inventory (not only those the play audits), and the live instances when known
        self.inventory_hosts = [str(h) for h in options.get("inventory_hosts") or []]
        self.instances = options.get("instances")
        self.compute_hosts = sorted(h for h, s in deployed_config.items() if "compute" in s)
        self.aliases = self._api_aliases()
        self.pci_in_placement = any(
            deployed.is_true(s.get(service) or {}, "filter_scheduler", "pci_in_placement")
            for s in deployed_config.values()
            for service in ("scheduler",)
        )
        computes = {h: self.compute_config(h) for h in self.compute_hosts}
        self.adopted = adopt(computes, {h: hosts.get(h) or {} for h in self.compute_hosts}, self.aliases or None)
        self._host_policy: dict[str, list] = {}
        self.policy_entries = []
        self.rendering = None
        self.extra: list[dict] = []
        if policy:
            try:
                self.policy_entries = parse_policy(policy)
                inputs = host_inputs(
                    [{"name": h, "facts": hosts.get(h) or {}, "hypervisor_hostname": self.nodename(h)}
                     for h in self.compute_hosts]
                )  # fmt: skip
                self.rendering = render_fleet(
                    inputs,
                    policy,
                    Options(report_in_placement=any(self.reports_in_placement(h) for h in self.compute_hosts)),
                )
            except (PolicyError, RenderError) as exc:
                self.extra.append(
                    finding(
                        None,
                        "nova_config_drift",
                        f"accel_device_policy does not render, so drift cannot be judged: {exc}",
                        "fix the policy (docs/device-policy.md) or leave it unset to audit against the deployed config",
                    )
                )
        # Placement, indexed once
        records = fleet.get("resource_providers") or []
        self.roots = {p["name"]: p for p in records if not p.get("parent_provider_uuid")}
        self.children: dict[str, list[dict]] = {}
        self._root_of: dict[str, str] = {}
        for provider in records:
            if provider.get("parent_provider_uuid"):
                self.children.setdefault(provider["parent_provider_uuid"], []).append(provider)
        self._host_by_nodename = {self.nodename(h): h for h in hosts}
        # The device quarantines the snapshot carries (placement_info's quarantines: true)
        self.quarantined = quarantined_devices(fleet)
        self.quarantine_held = {d["provider_uuid"]: d["held"] for d in self.quarantined}

    def nodename(self, host: str) -> str:
        return str(self.nodenames.get(host) or host)

    def compute_config(self, host: str) -> dict:
        return (self.deployed.get(host) or {}).get("compute") or {}

    def reports_in_placement(self, host: str) -> bool:
        return deployed.is_true(self.compute_config(host), "pci", "report_in_placement")

    def _api_aliases(self) -> list[str]:
        for _host, services in sorted(self.deployed.items()):
            if "api" in services:
                return deployed.values(services["api"], "pci", "alias")
        for host in self.compute_hosts:
            return deployed.values(self.compute_config(host), "pci", "alias")
        return []

    def host_policy(self, host: str) -> list:
        """The deployed nova-compute config of one host, adopted and parsed (for the prediction)."""
        if host not in self._host_policy:
            single = adopt(
                {host: self.compute_config(host)}, {host: self.hosts.get(host) or {}}, self.aliases or None, check=False
            )
            try:
                self._host_policy[host] = parse_policy(single["accel_device_policy"])
            except PolicyError:
                self._host_policy[host] = []
        return self._host_policy[host]

    def host_of(self, provider: dict) -> str | None:
        root = provider.get("root_provider_uuid") or provider["uuid"]
        for name, record in self.roots.items():
            if record["uuid"] == root:
                return self._host_by_nodename.get(name, name)
        return None

    def flavor_fleet(self) -> dict:
        """The snapshot with each compute node's PCI pools, as nova-compute reports them to the scheduler
        (Placement does not hold them; Nova's PciPassthroughFilter reads them)."""
        records = []
        for record in self.fleet.get("resource_providers") or []:
            host = self._host_by_nodename.get(record.get("name"))
            if not record.get("parent_provider_uuid") and host in self.compute_hosts and "pci_pools" not in record:
                # nova-compute pools what its deployed device_spec lists, whether the IOMMU is on or not
                facts = self.hosts.get(host) or {}
                pools = pci_pools(self.nodename(host), facts, self.host_policy(host), withhold_without_iommu=False)
                record = dict(record, pci_pools=pools)
            records.append(record)
        return {**self.fleet, "resource_providers": records}

    def flavor_aliases(self) -> dict[str, list[str]]:
        """``{alias name: [flavors asking it]}`` from the catalog's pci_passthrough:alias."""
        used: dict[str, list[str]] = {}
        for flavor in self.flavors:
            text = str((flavor.get("extra_specs") or {}).get("pci_passthrough:alias") or "")
            for part in text.split(","):
                name = part.split(":")[0].strip()
                if name:
                    used.setdefault(name, []).append(str(flavor.get("name")))
        return used


def _check_inputs(hosts, deployed_config, fleet, flavors) -> None:
    if not isinstance(hosts, Mapping) or not all(isinstance(f, Mapping) for f in hosts.values()):
        raise AuditInputError("hosts must map each inventory hostname to its accel_* facts (pci_facts)")
    if len(hosts) > MAX_HOSTS:
        raise AuditInputError(f"hosts: {len(hosts)} hosts; the audit takes at most {MAX_HOSTS}")
    if not isinstance(deployed_config, Mapping) or not all(
        isinstance(s, Mapping) and all(isinstance(c, Mapping) for c in s.values()) for s in deployed_config.values()
    ):
        raise AuditInputError("deployed must map each host to {service: config sections} (nova_config_info)")
    if not isinstance(fleet, Mapping):
        raise AuditInputError("fleet must be Placement's snapshot (placement_info's fleet)")
    Fleet.from_snapshot(fleet)  # the snapshot's own checks, with their messages
    if not isinstance(flavors, list | tuple) or not all(isinstance(f, Mapping) for f in flavors):
        raise AuditInputError("flavors must be a list of flavor dicts (openstack.cloud.compute_flavor's keys)")
    allocations = fleet.get("allocations")
    if allocations is not None and not (
        isinstance(allocations, Mapping) and all(isinstance(a, Mapping) for a in allocations.values())
    ):
        raise AuditInputError("fleet.allocations must map consumer UUIDs to {allocations: {provider: {resources}}}")


def _check_options(options: dict) -> None:
    for name in ("inventory_hosts", "instances"):
        value = options.get(name)
        if value is not None and (not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value)):
            raise AuditInputError(f"{name} must be a list of strings")


def audit_cloud(hosts, deployed_config, fleet, flavors=(), policy=None, extra_findings=None, **options) -> dict:
    _check_inputs(hosts, deployed_config, fleet, flavors or [])
    _check_options(options)
    cloud = Cloud(hosts, deployed_config, fleet, list(flavors or []), policy, options)
    _aliases, problem = parse_aliases(cloud.aliases)
    found: list[dict] = list(cloud.extra)
    for host in sorted(hosts):
        if host in cloud.compute_hosts:
            found += host_checks.check_host(cloud, host)
            found += nova_checks.check_mdev(cloud, host)
            found += nova_checks.check_drift(cloud, host)
            found += placement_checks.check_host(cloud, host)
    found += nova_checks.check_services(cloud)
    found += nova_checks.check_filters(cloud)
    found += placement_checks.check_reservations(cloud)
    found += placement_checks.check_gone(cloud)
    found += placement_checks.check_allocations(cloud)
    found += quarantines.check_quarantines(cloud)
    found += health_checks.check_health(cloud)
    found += migration_checks.check_migration(cloud)
    if problem is None:
        found += flavor_checks.check_flavors(cloud)
    for item in cloud.adopted["unexpressed"]:
        found.append(
            finding(
                item["host"],
                "adopt_unexpressed",
                f"{item['where']} {item['value'][:200]}: {item['reason']}",
                "review it before using the adopted policy; the rest of the policy renders the deployed config",
            )
        )
    found += checked(extra_findings)
    # Playbooks named the way this run invokes them (a path from a checkout, the FQCN when installed).
    form = options.get("playbook_form") or "path"
    found = ordered([{**f, "message": name_playbooks(f["message"], form), "fix": name_playbooks(f["fix"], form)}
                     for f in found])  # fmt: skip
    # The scheduling switch the services run with, so the adopted variables render what is deployed.
    adopted = {**cloud.adopted, "accel_nova_pci_in_placement": cloud.pci_in_placement}
    return {"findings": found, "counts": counts(found), "adopted": adopted}
