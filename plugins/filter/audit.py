# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the audit: adopt the deployed Nova config as a policy, audit the cloud, show the findings."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def _device_policy_from_nova(deployed, facts=None):
    from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import adopt
    from ansible_collections.accel.openstack.plugins.module_utils._nova.deployed import values

    deployed = check("device_policy_from_nova", "deployed", deployed, "mapping")
    facts = check("device_policy_from_nova", "facts", facts, "mapping", optional=True) or {}
    for host, services in deployed.items():
        check("device_policy_from_nova", f"deployed.{host}", services, "mapping")
    computes = {h: s["compute"] for h, s in deployed.items() if isinstance(s.get("compute"), dict)}
    aliases = next((values(s["api"], "pci", "alias") for _h, s in sorted(deployed.items()) if "api" in s), None)
    return adopt(computes, {h: facts.get(h) or {} for h in computes}, aliases)


OPTIONS = ("hypervisor_hostnames", "flavor_options", "inventory_hosts", "instances", "playbook_form")


@filter_errors
def _audit_cloud(hosts, deployed, fleet, flavors=None, policy=None, extra_findings=None, **options):
    from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import AuditInputError, audit_cloud

    hosts = check("audit_cloud", "hosts", hosts, "mapping")
    deployed = check("audit_cloud", "deployed", deployed, "mapping")
    fleet = check("audit_cloud", "fleet", fleet, "mapping")
    flavors = check("audit_cloud", "flavors", flavors, "list", optional=True) or []
    policy = check("audit_cloud", "policy", policy, "list", optional=True)
    extra = check("audit_cloud", "extra_findings", extra_findings, "list", optional=True)
    for name in ("hypervisor_hostnames", "flavor_options"):
        check("audit_cloud", name, options.get(name), "mapping", optional=True)
    for name in ("inventory_hosts", "instances"):
        check("audit_cloud", name, options.get(name), "list", optional=True)
    check("audit_cloud", "playbook_form", options.get("playbook_form"), "string", optional=True)
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise AuditInputError(
            f"audit_cloud: unknown option(s) {', '.join(unknown)}; known: flavors, policy, extra_findings, "
            + ", ".join(OPTIONS)
        )
    return audit_cloud(hosts, deployed, fleet, list(flavors), policy, extra, **options)


@filter_errors
def _audit_tables(findings):
    from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import tables

    return tables(list(check("audit_tables", "findings", findings, "list", optional=True) or []))


@filter_errors
def _audit_reached(findings, fail_on="error"):
    from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import reached

    findings = list(check("audit_reached", "findings", findings, "list", optional=True) or [])
    return reached(findings, check("audit_reached", "fail_on", fail_on, "string"))


class FilterModule:
    def filters(self):
        return {
            "device_policy_from_nova": _device_policy_from_nova,
            "audit_cloud": _audit_cloud,
            "audit_tables": _audit_tables,
            "audit_reached": _audit_reached,
        }
