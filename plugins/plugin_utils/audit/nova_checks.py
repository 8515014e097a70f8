# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova findings: the deployed configuration of every service, against itself, the flavors and the policy."""

from __future__ import annotations

import json

from ansible_collections.accel.openstack.plugins.module_utils._names.pci import normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._nova import deployed, device_ids
from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import nova_resource_class, nova_traits
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import NOVA_DEFAULT_FILTERS
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import host_devices
from ansible_collections.accel.openstack.plugins.plugin_utils.audit import lost_state
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding

ALIAS_SERVICES = ("api", "scheduler")
PLACEMENT_SERVICES = ("api", "scheduler", "conductor", "super-conductor")
NOVA_CONFIG = "run playbooks/nova_config.yml (kolla-ansible reconfigure -t nova for the kolla layout)"


def _aliases(config: dict) -> tuple[dict[str, list[dict]], list[tuple[str, str]]]:
    """``{name: [alias objects]}`` (IDs in lower case, as Nova compares them) and ``(value, reason)`` of
    the values Nova refuses."""
    found: dict[str, list[dict]] = {}
    bad = []
    for value in deployed.values(config, "pci", "alias"):
        objects = deployed.json_objects(value)
        if objects is None:
            bad.append((value, "is not a JSON object or a list of objects"))
            continue
        for alias in objects:
            try:
                ids = {key: device_ids.alias_id(alias, key) for key in ("vendor_id", "product_id")}
            except device_ids.DeviceIdError as exc:
                bad.append((value, str(exc)))
                continue
            found.setdefault(str(alias.get("name")), []).append({**alias, **{k: v for k, v in ids.items() if v}})
    return found, bad


def _shape(aliases: list[dict]) -> tuple:
    return (
        tuple(sorted({str(a.get("device_type") or "any") for a in aliases})),
        tuple(sorted({str(a.get("numa_policy") or "legacy") for a in aliases})),
        tuple(sorted({f"{a.get('vendor_id')}:{a.get('product_id')}" for a in aliases})),
    )


def _describe(shape: tuple) -> str:
    return f"device_type {'/'.join(shape[0])}, numa_policy {'/'.join(shape[1])}, IDs {', '.join(shape[2])}"


def check_services(cloud) -> list[dict]:
    found: list[dict] = []
    shapes: dict[str, dict[tuple, list[str]]] = {}
    placement_flags: dict[str, bool] = {}
    for host, services in sorted(cloud.deployed.items()):
        for service, config in sorted(services.items()):
            where = f"nova-{service}"
            for key in deployed.templated(config):
                found.append(
                    finding(
                        host,
                        "nova_config_templated",
                        f"{where}: {key} holds a Jinja expression Kolla-Ansible renders; the audit reads it as written",
                        "nothing to do if the expression is intended; the audit cannot judge its value",
                    )
                )
            aliases, bad = _aliases(config)
            for value, reason in bad:
                found.append(
                    finding(
                        host,
                        "nova_config_unreadable",
                        f"{where}: [pci] alias {json.dumps(value)}: {reason}; Nova refuses to start with it",
                        f"write each alias as one JSON object with 4-hex-digit IDs, then {NOVA_CONFIG}",
                    )
                )
            if service == "compute":
                for value, reason in deployed.device_specs(config)[1]:
                    found.append(
                        finding(
                            host,
                            "nova_config_unreadable",
                            f"{where}: [pci] device_spec {json.dumps(value)}: {reason}; nova-compute refuses to "
                            "start with it, and no device of the host is offered",
                            f"write each device_spec as a JSON object whose vendor_id and product_id are PCI IDs "
                            f'(e.g. "10de"), then {NOVA_CONFIG}',
                        )
                    )
            for name, entries in sorted(aliases.items()):
                shape = _shape(entries)
                if len(shape[0]) > 1 or len(shape[1]) > 1:
                    found.append(
                        finding(
                            host,
                            "alias_conflict",
                            f"{where}: alias {name} is defined {len(entries)} times with {_describe(shape)}; Nova "
                            "refuses same-name aliases whose device_type or numa_policy differ",
                            f"give the entries one device_type and numa_policy, or different names; then {NOVA_CONFIG}",
                        )
                    )
                if service in ALIAS_SERVICES or service == "compute":
                    shapes.setdefault(name, {}).setdefault(shape, []).append(f"{host}/{where}")
            if service in PLACEMENT_SERVICES:
                placement_flags[f"{host}/{where}"] = deployed.is_true(config, "filter_scheduler", "pci_in_placement")
    for name, variants in sorted(shapes.items()):
        if len(variants) > 1:
            described = "; ".join(f"{_describe(s)} on {', '.join(w[:3])}" for s, w in variants.items())
            found.append(
                finding(
                    None,
                    "alias_conflict",
                    f"alias {name} differs between services: {described}; the API accepts a request the scheduler "
                    "or the compute host reads differently",
                    f"make [pci] alias identical on nova-api, nova-scheduler and the compute hosts; {NOVA_CONFIG}",
                )
            )
    found += _alias_reach(cloud)
    found += _pci_in_placement(cloud, placement_flags)
    return found


def _alias_reach(cloud) -> list[dict]:
    found = []
    used = cloud.flavor_aliases()
    for host, services in sorted(cloud.deployed.items()):
        for service in ALIAS_SERVICES:
            if service not in services:
                continue
            have, _bad = _aliases(services[service])
            for name in sorted(set(used) - set(have)):
                found.append(
                    finding(
                        host,
                        "alias_missing_on_service",
                        f"nova-{service} has no [pci] alias {name}, which flavor(s) {', '.join(used[name][:3])} ask "
                        "for: "
                        + ("the API refuses to boot them" if service == "api" else "the scheduler cannot place them"),
                        f"put the alias on nova-api and nova-scheduler (nova/nova-{service}.conf in the kolla layout); "
                        f"{NOVA_CONFIG}",
                    )
                )
    return found


def _pci_in_placement(cloud, flags: dict[str, bool]) -> list[dict]:
    found = []
    on = sorted(w for w, v in flags.items() if v)
    off = sorted(w for w, v in flags.items() if not v)
    if on and off:
        found.append(
            finding(
                None,
                "pci_in_placement_partial",
                f"[filter_scheduler] pci_in_placement is on for {', '.join(on[:4])} but off for {', '.join(off[:4])}; "
                "services that disagree build different requests for the same flavor",
                f"set it alike on nova-api, nova-scheduler and every nova-conductor; {NOVA_CONFIG}",
            )
        )
    if on:
        for host in cloud.compute_hosts:
            if not deployed.is_true(cloud.compute_config(host), "pci", "report_in_placement"):
                found.append(
                    finding(
                        host,
                        "pci_in_placement_partial",
                        "pci_in_placement is on but this compute host does not set [pci] report_in_placement: "
                        "its PCI devices are not in Placement, so no PCI flavor lands here",
                        f"set [pci] report_in_placement = true on every compute host; {NOVA_CONFIG}",
                    )
                )
    return found


def check_mdev(cloud, host: str) -> list[dict]:
    found = []
    default = None
    for mdev_type, addresses, mdev_class in deployed.mdev_types(cloud.compute_config(host)):
        if addresses:
            continue
        if default is not None:
            found.append(
                finding(
                    host,
                    "mdev_type_ignored",
                    f"[devices] enabled_mdev_types lists {mdev_type} without device_addresses after {default}; Nova "
                    "uses only the first such type and ignores this one",
                    f"give [mdev_{mdev_type}] device_addresses (one type per GPU), or remove the type",
                )
            )
            continue
        default = mdev_type
        if mdev_class and mdev_class != "VGPU":
            found.append(
                finding(
                    host,
                    "mdev_class_ignored",
                    f"[mdev_{mdev_type}] mdev_class = {mdev_class} has no device_addresses: Nova ignores the class "
                    "(bug 1943934) and reports VGPU, so flavors asking for it find no host",
                    f"list the GPUs in [mdev_{mdev_type}] device_addresses; {NOVA_CONFIG}",
                )
            )
    return found


def _normal(tags: dict) -> dict:
    out = {}
    for key, value in tags.items():
        if key == "traits":
            out[key] = nova_traits(value)
        elif key == "resource_class":
            out[key] = nova_resource_class(str(value))
        else:
            out[key] = str(value).lower()
    return out


def check_drift(cloud, host: str) -> list[dict]:
    """With a device policy given: what the deployed config does, against what the policy renders."""
    if cloud.rendering is None or host not in cloud.rendering.compute:
        return []
    devices = host_devices(cloud.hosts.get(host) or {})
    rendered = cloud.rendering.compute[host]
    have = {a: _normal(t) for a, t in deployed.claims(cloud.compute_config(host), devices).items()}
    want = {a: _normal(t) for a, t in deployed.claims(rendered, devices).items()}
    lines = []
    lost = lost_state.lost_addresses(cloud, host)  # host state to restore, not config to render again
    for address in sorted(set(have) | set(want)):
        if have.get(address) != want.get(address) and normalize_address(address) not in lost:
            lines.append(f"{address}: deployed {json.dumps(have.get(address))}, policy {json.dumps(want.get(address))}")
    types_have = [(t, sorted(a), c or "VGPU") for t, a, c in deployed.mdev_types(cloud.compute_config(host))]
    types_want = [(t, sorted(a), c or "VGPU") for t, a, c in deployed.mdev_types(rendered)]
    if sorted(types_have) != sorted(types_want):
        lines.append(f"vGPU types: deployed {types_have}, policy {types_want}")
    if not lines:
        return []
    return [
        finding(
            host,
            "nova_config_drift",
            "nova-compute's device config differs from what the device policy renders: " + "; ".join(lines[:8]),
            f"run playbooks/nova_config.yml --check --diff to see the change, then {NOVA_CONFIG}; or adopt the "
            "deployed config as the policy (the audit writes it beside its report)",
        )
    ]


# Nova's own default of [filter_scheduler] enabled_filters (nova/conf/scheduler.py, Nova 34; the rendering's
# NOVA_DEFAULT_FILTERS) is used when the deployed config does not set it (Kolla-Ansible's template sets it only
# for Blazar or the fake driver).
# Flavor extra specs that give an instance a NUMA topology (nova.virt.hardware.numa_get_constraints): only
# NUMATopologyFilter then checks that the host can fit it, its pinned CPUs, page size and the PCI NUMA policy.
_NUMA_KEYS = ("hw:numa_nodes", "hw:mem_page_size", "hw:pmem", "hw:cpu_dedicated_mask", "resources:PCPU")
_NUMA_PREFIXES = ("hw:numa_cpus.", "hw:numa_mem.")


def enabled_filters(config: dict) -> tuple[list[str], bool]:
    """The filters nova-scheduler runs with, and whether that is Nova's default (the option unset)."""
    given = deployed.values(config, "filter_scheduler", "enabled_filters")
    if not given:
        return list(NOVA_DEFAULT_FILTERS), True
    return [n.strip() for v in given for n in str(v).split(",") if n.strip()], False


def _numa_topology(specs: dict) -> bool:
    if any(k in specs for k in _NUMA_KEYS) or any(k.startswith(_NUMA_PREFIXES) for k in specs):
        return True
    return str(specs.get("hw:cpu_policy") or "").lower() in ("dedicated", "mixed")


def needed_filters(cloud) -> dict[str, list[str]]:
    """``{filter: [why]}``: the filters the cloud's aliases and flavors need on nova-scheduler."""
    needed: dict[str, list[str]] = {}
    if cloud.aliases:
        needed["PciPassthroughFilter"] = [f"[pci] alias has {len(cloud.aliases)} entry(ies)"]
    for flavor in cloud.flavors:
        specs = {str(k): v for k, v in (flavor.get("extra_specs") or {}).items()}
        name = str(flavor.get("name"))
        if specs.get("pci_passthrough:alias"):
            needed.setdefault("PciPassthroughFilter", []).append(f"flavor {name} asks pci_passthrough:alias")
        if _numa_topology(specs):
            needed.setdefault("NUMATopologyFilter", []).append(f"flavor {name} has a NUMA topology")
        if any(k.startswith("aggregate_instance_extra_specs:") for k in specs):
            needed.setdefault("AggregateInstanceExtraSpecsFilter", []).append(
                f"flavor {name} uses aggregate_instance_extra_specs"
            )
        if any(k.startswith("capabilities:") for k in specs):
            needed.setdefault("ComputeCapabilitiesFilter", []).append(f"flavor {name} uses capabilities:")
    return needed


def check_filters(cloud) -> list[dict]:
    found = []
    needed = needed_filters(cloud)
    for host, services in sorted(cloud.deployed.items()):
        if "scheduler" not in services:
            continue
        enabled, default = enabled_filters(services["scheduler"])
        missing = [name for name in sorted(needed) if name not in enabled]
        if not missing:
            continue
        why = "; ".join(f"{name}: {', '.join(needed[name][:3])}" for name in missing)
        if default:
            runs = f"nova-scheduler runs Nova's {len(enabled)} default filters ([filter_scheduler] enabled_filters "
            runs += "is unset)"
            change = f"set [filter_scheduler] enabled_filters = {','.join([*enabled, *missing])} on nova-scheduler"
        else:
            runs = f"nova-scheduler's [filter_scheduler] enabled_filters lists {len(enabled)} filter(s)"
            change = (
                f"add {', '.join(missing)} to [filter_scheduler] enabled_filters of nova-scheduler, keeping the "
                "filters listed now (a later file replaces the whole list)"
            )
        found.append(
            finding(
                host,
                "scheduler_filter_missing",
                f"{runs}, without {', '.join(missing)}, which the cloud needs ({why}): the scheduler then picks hosts "
                "that cannot hold such instances, and their builds fail there",
                f"{change} (nova/nova-scheduler.conf in the kolla layout); {NOVA_CONFIG}",
            )
        )
    return found
