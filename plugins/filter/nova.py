# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that render Nova's accelerator config and predict Nova's providers from facts + policy."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.module_utils._inputs import host_facts
from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


def _facts_of(value, plugin: str = "nova", option: str = "facts") -> dict:
    """Discovery facts, checked by the input layer (a fact cache may hold anything)."""
    return host_facts(check(plugin, option, value, "mapping"), f"{plugin}: {option}")


def _common(plugin: str, facts, policy, hostname, report_in_placement) -> tuple[dict, list, str, bool]:
    """The arguments every rendering filter takes, checked before anything is rendered."""
    return (
        _facts_of(facts, plugin),
        list(check(plugin, "policy", policy, "list")),
        check(plugin, "hostname", hostname, "string"),
        check(plugin, "report_in_placement", report_in_placement, "boolean"),
    )


@filter_errors
def nova_providers_filter(facts, policy, hostname, report_in_placement=False, **options):
    """``facts | accel.openstack.nova_providers(policy, hostname)``: the predicted provider tree."""
    from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError
    from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import PredictionError, nova_providers

    facts, policy, hostname, report_in_placement = _common(
        "nova_providers", facts, policy, hostname, report_in_placement
    )
    try:
        return nova_providers(_facts_of(facts), policy, hostname, bool(report_in_placement), **options)
    except (PolicyError, PredictionError) as exc:
        raise AnsibleFilterError(f"nova_providers: {exc}") from exc


@filter_errors
def nova_device_spec(facts, policy, hostname="localhost", report_in_placement=False):
    """``facts | accel.openstack.nova_device_spec(policy)``: the ``[pci] device_spec`` values (JSON lines)."""
    from ansible_collections.accel.openstack.plugins.module_utils._nova.config import device_spec_values
    from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError, parse_policy
    from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import select

    facts, policy, hostname, report_in_placement = _common(
        "nova_device_spec", facts, policy, hostname, report_in_placement
    )
    try:
        entries = parse_policy(policy)
        selection = select(hostname, _facts_of(facts), entries, bool(report_in_placement))
    except PolicyError as exc:
        raise AnsibleFilterError(f"nova_device_spec: {exc}") from exc
    if selection.errors:
        raise AnsibleFilterError("nova_device_spec: " + "; ".join(selection.errors))
    return device_spec_values(selection)


@filter_errors
def nova_pci_alias(policy, hosts_facts=None):
    """``policy | accel.openstack.nova_pci_alias(hosts_facts)``: the ``[pci] alias`` values (JSON lines).

    ``hosts_facts`` maps host names to their facts; device types of entries without ``device_type``
    are taken from the devices they match there (type-PCI when they match none).
    """
    from ansible_collections.accel.openstack.plugins.module_utils._nova.config import alias_values
    from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError, parse_policy
    from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import select

    policy = check("nova_pci_alias", "policy", policy, "list")
    hosts_facts = check("nova_pci_alias", "hosts_facts", hosts_facts, "mapping", optional=True) or {}
    try:
        entries = parse_policy(policy)
        selections = {
            name: select(name, _facts_of(facts, "nova_pci_alias", f"hosts_facts[{name!r}]"), entries, False)
            for name, facts in hosts_facts.items()
        }
    except PolicyError as exc:
        raise AnsibleFilterError(f"nova_pci_alias: {exc}") from exc
    values, errors = alias_values(entries, selections)
    if errors:
        raise AnsibleFilterError("nova_pci_alias: " + "; ".join(errors))
    return values


@filter_errors
def nova_compute_conf(facts, policy, hostname, report_in_placement=False):
    """``facts | accel.openstack.nova_compute_conf(policy, hostname)``: the nova-compute INI fragment text."""
    from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
    from ansible_collections.accel.openstack.plugins.module_utils._nova.config import (
        HostInput,
        Options,
        RenderError,
        render_fleet,
    )
    from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError

    facts, policy, hostname, report_in_placement = _common(
        "nova_compute_conf", facts, policy, hostname, report_in_placement
    )
    try:
        rendering = render_fleet(
            [HostInput(name=hostname, facts=_facts_of(facts))],
            policy,
            Options(report_in_placement=report_in_placement),
        )
    except (PolicyError, RenderError) as exc:
        raise AnsibleFilterError(f"nova_compute_conf: {exc}") from exc
    return render_text(rendering.compute[hostname])


@filter_errors
def gpu_sharing_plan(devices, policy):
    """``accel_pci_devices | accel.openstack.gpu_sharing_plan(policy)``: sriov_vfs/nvidia_vgpu/nvidia_mig calls."""
    from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError
    from ansible_collections.accel.openstack.plugins.module_utils._nova.sharing_plan import host_plan

    if not isinstance(devices, list):
        raise AnsibleFilterError("gpu_sharing_plan: expected accel_pci_devices (a list) as input")
    devices = check("gpu_sharing_plan", "accel_pci_devices", devices, "list")
    host_facts({"accel_pci_devices": devices}, "gpu_sharing_plan")
    policy = check("gpu_sharing_plan", "policy", policy, "list")
    try:
        return host_plan(devices, policy)
    except PolicyError as exc:
        raise AnsibleFilterError(f"gpu_sharing_plan: {exc}") from exc


class FilterModule:
    """Nova config rendering and provider prediction."""

    def filters(self):
        return {
            "nova_providers": nova_providers_filter,
            "nova_device_spec": nova_device_spec,
            "nova_pci_alias": nova_pci_alias,
            "nova_compute_conf": nova_compute_conf,
            "gpu_sharing_plan": gpu_sharing_plan,
        }
