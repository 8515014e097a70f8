# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render Nova's accelerator configuration for a fleet from discovery facts and the device policy.

:func:`render_fleet` is pure: hosts (facts) + policy + options -> the files Nova reads, as data
(:class:`FleetRendering`). Writing them is :mod:`._ini_file`'s job. An INI file is represented as an
ordered ``{section: {key: [values]}}``; a key with several values is written as repeated lines,
which is how Nova's multi-valued options (``[pci] device_spec``, ``[pci] alias``) are read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import custom_name_problem
from ansible_collections.accel.openstack.plugins.module_utils._names.inventory import INVENTORY_FIELDS
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._nova import naming
from ansible_collections.accel.openstack.plugins.module_utils._nova.libvirt import SECTION as LIBVIRT
from ansible_collections.accel.openstack.plugins.module_utils._nova.libvirt import libvirt_section
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyEntry, parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import (
    HostSelection,
    PassthroughSelection,
    select,
)

LAYOUTS = ("kolla", "nova_conf_d")
# Nova 34's default [filter_scheduler] enabled_filters; PciPassthroughFilter is appended.
NOVA_DEFAULT_FILTERS = (
    "ComputeFilter",
    "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
)
PCI_FILTER = "PciPassthroughFilter"
PROVIDER_CONFIG_SCHEMA = "1.0"

IniConfig = dict[str, dict[str, list[str]]]


class RenderError(AccelError):
    """The fleet cannot be rendered; ``errors`` lists every reason with its fix.

    ``intro`` (a line before the reasons) lets a caller say what could not be rendered.
    """

    def __init__(self, errors: list[str], intro: str | None = None):
        self.errors = list(errors)
        text = "\n".join(self.errors)
        super().__init__(f"{intro}\n{text}" if intro else text, errors=self.errors)


@dataclass
class HostInput:
    """One host as the renderer needs it."""

    name: str
    facts: dict
    hypervisor_hostname: str | None = None
    compute_node_traits: tuple[str, ...] = ()
    compute_node_inventories: dict = field(default_factory=dict)
    # The operator's own providers for this host's provider config (Nova's provider config schema).
    extra_providers: tuple[dict, ...] = ()
    # The operator's [libvirt] options for this host (accel_nova_libvirt; checked by .libvirt).
    libvirt: object = None

    @property
    def nodename(self) -> str:
        return self.hypervisor_hostname or self.name


@dataclass
class Options:
    report_in_placement: bool = False
    pci_in_placement: bool = False
    # The filters the scheduler already runs (what Kolla's template and the operator's files set);
    # the rendered list extends it with ``add_filters`` and PciPassthroughFilter, never drops one.
    enabled_filters: tuple[str, ...] = NOVA_DEFAULT_FILTERS
    add_filters: tuple[str, ...] = ()


@dataclass
class FleetRendering:
    compute: dict[str, IniConfig]  # inventory hostname -> the nova-compute fragment
    api: IniConfig
    scheduler: IniConfig
    conductor: IniConfig
    provider_configs: dict[str, dict]  # inventory hostname -> provider config document (only when needed)
    selections: dict[str, HostSelection]
    warnings: list[str]


def _json(value: dict) -> str:
    return json.dumps(value, separators=(", ", ": "))


# -- [pci] device_spec ----------------------------------------------------------------------------
def device_spec_values(selection: HostSelection) -> list[str]:
    """One JSON object per line, by vendor/product where an entry takes every device of its model on
    the host, by address otherwise."""
    values: list[str] = []
    for item in selection.passthrough:
        entry = item.entry
        tags: dict[str, str] = {}
        if item.resource_class:
            tags["resource_class"] = item.resource_class
        if entry.traits:
            tags["traits"] = ",".join(entry.traits)
        # Nova tests the tag for presence: "false" would still trigger its libvirt/QEMU version check.
        if entry.live_migratable:
            tags["live_migratable"] = "true"
        if item.managed is not None:
            tags["managed"] = "yes" if item.managed else "no"
        tags.update(nova_tag_values(entry))
        if any(not p.is_exact for p in entry.address_patterns):
            values.extend(_pattern_specs(item, selection.physical_functions, tags))
        elif item.by_address:
            for device in item.devices:
                spec = {"address": normalize_address(device["address"])}
                spec.update(vendor_id=entry.vendor_id, product_id=entry.product_id, **tags)
                values.append(_json(spec))
        else:
            values.append(_json({"vendor_id": entry.vendor_id, "product_id": entry.product_id, **tags}))
    return values


def nova_tag_values(entry: PolicyEntry) -> dict[str, str]:
    """The one-time-use and Neutron SR-IOV tags of an entry, as device_spec writes them.

    ``one_time_use`` is written only when true: Nova refuses the tag on a VF even as "false".
    ``trusted`` and ``remote_managed`` are written whichever way they are set: Neutron asks for
    "true" or "false" explicitly, and a device without the tag matches neither."""
    tags: dict[str, str] = {}
    if entry.one_time_use:
        tags["one_time_use"] = "true"
    if entry.physical_network:
        tags["physical_network"] = entry.physical_network
    for key in ("trusted", "remote_managed"):
        value = getattr(entry, key)
        if value is not None:
            tags[key] = "true" if value else "false"
    return tags


def _pattern_specs(item, physical_functions: frozenset, tags: dict[str, str]) -> list[str]:
    """An entry with address globs or regexes: one spec per pattern that takes a device here, as
    written, and the selected devices no such pattern takes by their own address."""
    entry = item.entry
    ids = {"vendor_id": entry.vendor_id, "product_id": entry.product_id}
    values: list[str] = []
    covered: set[str] = set()
    for pattern in entry.address_patterns:
        if pattern.is_exact:
            continue
        taken = {
            normalize_address(d["address"])
            for d in item.devices
            if pattern.matches(d["address"], d.get("physfn"), physical_functions)
        }
        if taken:
            covered |= taken
            values.append(_json({"address": pattern.device_spec_value(), **ids, **tags}))
    for device in item.devices:
        address = normalize_address(device["address"])
        if address not in covered:
            values.append(_json({"address": address, **ids, **tags}))
    return values


# -- [pci] alias --------------------------------------------------------------------------------
def alias_values(policy: list[PolicyEntry], selections: dict[str, HostSelection]) -> tuple[list[str], list[str]]:
    """The alias lines for the whole fleet (identical on every service) and the errors found."""
    errors: list[str] = []
    seen_types: dict[int, set[str]] = {}
    vgpu_vf: dict[int, str] = {}
    for selection in selections.values():
        # devices withheld for the IOMMU count too: the alias must not change when a host's IOMMU comes on
        withheld = [item for item in selection.withheld if isinstance(item, PassthroughSelection)]
        for item in [*selection.passthrough, *withheld]:
            seen_types.setdefault(item.entry.index, set()).update(naming.nova_device_type(d) for d in item.devices)
            if item.vgpu_vf:
                vgpu_vf[item.entry.index] = item.resource_class
    values: list[str] = []
    chosen_type: dict[str, str] = {}
    for entry in policy:
        if entry.mode != "passthrough" and entry.index not in vgpu_vf:
            continue
        if entry.for_neutron:
            continue  # Neutron ports take these devices; an alias would let flavors take them too
        device_type = entry.device_type
        if not device_type:
            found = seen_types.get(entry.index, set())
            if len(found) > 1:
                errors.append(
                    f"{entry.label}: matches devices of types {', '.join(sorted(found))} across the fleet; "
                    "an alias has one device_type: set device_type or split the entry by addresses"
                )
                continue
            device_type = found.pop() if found else naming.TYPE_PCI
        first = chosen_type.setdefault(entry.name, device_type)
        if first != device_type:
            errors.append(
                f"{entry.label}: alias {entry.name} resolves to device_type {device_type} here and "
                f"{first} in another entry of the same name; Nova refuses that: set device_type on both "
                "entries"
            )
            continue
        alias = {"name": entry.name, "vendor_id": entry.vendor_id, "product_id": entry.product_id}
        alias["device_type"] = device_type
        if entry.numa_policy:
            alias["numa_policy"] = entry.numa_policy
        resource_class = vgpu_vf.get(entry.index, entry.resource_class)
        if resource_class:
            alias["resource_class"] = resource_class
        if entry.traits:
            alias["traits"] = ",".join(entry.traits)
        if entry.live_migratable:
            alias["live_migratable"] = "true"
        values.append(_json(alias))
    return values, errors


# -- per service --------------------------------------------------------------------------------
def offers_vgpu(selection: HostSelection) -> bool:
    """Whether the host's nova-compute config enables an mdev type (``[devices] enabled_mdev_types``)."""
    return any(item.parents for item in selection.vgpu)


def compute_config(
    selection: HostSelection, aliases: list[str], options: Options, libvirt: dict[str, list[str]] | None = None
) -> IniConfig:
    config: IniConfig = {}
    pci: dict[str, list[str]] = {}
    specs = device_spec_values(selection)
    if specs:
        pci["device_spec"] = specs
    if aliases:
        pci["alias"] = list(aliases)
    if options.report_in_placement:
        pci["report_in_placement"] = ["true"]
    if pci:
        config["pci"] = pci
    vgpu = [item for item in selection.vgpu if item.parents]
    if vgpu:
        config["devices"] = {"enabled_mdev_types": [", ".join(item.entry.mdev_type for item in vgpu)]}
        for item in vgpu:
            section = {
                "device_addresses": [
                    ",".join(normalize_address(d["address"]) for d in item.parents),
                ],
                "mdev_class": [item.mdev_class],
            }
            if item.entry.max_instances:
                section["max_instances"] = [str(item.entry.max_instances)]
            config[f"mdev_{item.entry.mdev_type}"] = section
    if libvirt:
        config[LIBVIRT] = {key: list(values) for key, values in libvirt.items()}
    return config


def scheduler_config(aliases: list[str], options: Options) -> IniConfig:
    config: IniConfig = {}
    if aliases:
        config["pci"] = {"alias": list(aliases)}
    scheduler = {"enabled_filters": [",".join(extend_filters(options.enabled_filters, options.add_filters))]}
    if options.pci_in_placement:
        scheduler["pci_in_placement"] = ["true"]
    config["filter_scheduler"] = scheduler
    return config


def extend_filters(current: tuple[str, ...] | list[str], add: tuple[str, ...] | list[str] = ()) -> list[str]:
    """``current`` in its order, then each of ``add`` and PciPassthroughFilter not already there."""
    filters: list[str] = []
    for name in [*current, *add, PCI_FILTER]:
        name = name.strip()
        if name and name not in filters:
            filters.append(name)
    return filters


def conductor_config(aliases: list[str], options: Options) -> IniConfig:
    """Conductors build request specs on move operations: they read the aliases and, like nova-api and
    nova-scheduler, ``pci_in_placement``; an alias left in global.conf would otherwise reach them."""
    return api_config(aliases, options)


def api_config(aliases: list[str], options: Options) -> IniConfig:
    config: IniConfig = {}
    if aliases:
        config["pci"] = {"alias": list(aliases)}
    if options.pci_in_placement:
        config["filter_scheduler"] = {"pci_in_placement": ["true"]}
    return config


def provider_config(host: HostInput, selection: HostSelection) -> dict | None:
    """Nova provider config for custom traits/inventories Nova cannot set from nova.conf."""
    providers = []
    if host.compute_node_traits or host.compute_node_inventories:
        provider: dict = {"identification": {"uuid": "$COMPUTE_NODE"}}
        if host.compute_node_inventories:
            additional = []
            for resource_class, amount in sorted(host.compute_node_inventories.items()):
                inv = {"total": amount} if isinstance(amount, int) else dict(sorted(amount.items()))
                additional.append({resource_class: inv})
            provider["inventories"] = {"additional": additional}
        if host.compute_node_traits:
            provider["traits"] = {"additional": sorted(host.compute_node_traits)}
        providers.append(provider)
    for item in selection.vgpu:
        if not item.entry.traits:
            continue
        for device in item.parents:
            providers.append(
                {
                    "identification": {"name": naming.vgpu_provider_name(host.nodename, device["address"])},
                    "traits": {"additional": sorted(item.entry.traits)},
                }
            )
    providers = list(host.extra_providers) + providers
    if not providers:
        return None
    return {"meta": {"schema_version": PROVIDER_CONFIG_SCHEMA}, "providers": providers}


def provider_identity(provider: object) -> str | None:
    """``uuid:<value>`` or ``name:<value>``: how Nova tells two provider entries apart."""
    ident = provider.get("identification") if isinstance(provider, dict) else None
    if not isinstance(ident, dict):
        return None
    if ident.get("uuid"):
        return f"uuid:{ident['uuid']}"
    if ident.get("name"):
        return f"name:{ident['name']}"
    return None


def duplicate_providers(document: dict | None) -> list[str]:
    """The identifications given by more than one provider entry (Nova refuses such a config)."""
    seen: list[str] = []
    twice: list[str] = []
    for provider in (document or {}).get("providers", []):
        identity = provider_identity(provider)
        if identity is None:
            continue
        if identity in seen and identity not in twice:
            twice.append(identity)
        seen.append(identity)
    return twice


# Placement's integer columns (an inventory total above this is refused by Placement's schema).
PLACEMENT_MAX_INT = 0x7FFFFFFF


def _check_host_input(host: HostInput, errors: list[str]) -> None:
    for index, provider in enumerate(host.extra_providers, start=1):
        ident = provider.get("identification") if isinstance(provider, dict) else None
        if isinstance(ident, dict) and any(not isinstance(v, str) for v in ident.values() if v is not None):
            errors.append(f"{host.name}: provider_config entry {index}: identification values must be text")
        elif provider_identity(provider) is None:
            errors.append(
                f"{host.name}: provider_config entry {index} has no identification; give "
                "identification: {uuid: ...} or {name: ...} as Nova's provider config schema asks"
            )
    for trait in host.compute_node_traits:
        problem = naming.trait_problem(trait)
        if problem:
            errors.append(f"{host.name}: compute node trait {trait!r} {problem}")
    for resource_class, amount in host.compute_node_inventories.items():
        problem = custom_name_problem(resource_class)
        if problem:
            errors.append(
                f"{host.name}: compute node inventory {resource_class!r} is not a custom resource class "
                f"(Nova's provider config only adds CUSTOM_ classes): it {problem}"
            )
        if isinstance(amount, int):
            total = amount
        elif isinstance(amount, dict):
            total = amount.get("total")
            numbers = {field: (int, float) if field == "allocation_ratio" else (int,) for field in INVENTORY_FIELDS}
            odd = sorted(
                str(key)
                for key, value in amount.items()
                if key not in numbers or isinstance(value, bool) or not isinstance(value, numbers[key])
            )
            if odd:
                errors.append(
                    f"{host.name}: compute node inventory {resource_class}: {', '.join(odd)} must be one of "
                    f"{', '.join(INVENTORY_FIELDS)} with a number"
                )
        else:  # a string or a list: neither a total nor an inventory
            total = None
        if isinstance(total, bool) or not isinstance(total, int) or not 1 <= total <= PLACEMENT_MAX_INT:
            errors.append(
                f"{host.name}: compute node inventory {resource_class} needs a whole-number total from 1 to "
                f"{PLACEMENT_MAX_INT} (a number, or {{total: N}})"
            )


def render_fleet(hosts: list[HostInput], policy_raw: object, options: Options | None = None) -> FleetRendering:
    """Everything Nova needs on every host; raises :class:`RenderError` (policy errors included)."""
    options = options or Options()
    policy = parse_policy(policy_raw)
    errors: list[str] = []
    warnings: list[str] = []
    names = [h.name for h in hosts]
    for name in sorted({n for n in names if names.count(n) > 1}):
        errors.append(f"host {name} is given more than once; list each host once")
    if options.pci_in_placement and not options.report_in_placement:
        errors.append(
            "pci_in_placement needs report_in_placement on the compute hosts; turn both on "
            "(accel_nova_report_in_placement: true)"
        )
    if options.pci_in_placement:
        names_used = [e.name for e in policy if e.mode == "passthrough" and not e.for_neutron]
        for name in sorted({n for n in names_used if names_used.count(n) > 1}):
            errors.append(
                f"alias {name} is defined by several passthrough entries; with pci_in_placement Nova "
                "allows one spec per alias: give each entry its own name"
            )
    selections: dict[str, HostSelection] = {}
    libvirt: dict[str, dict[str, list[str]]] = {}
    for host in hosts:
        _check_host_input(host, errors)
        selection = select(host.nodename, host.facts or {}, policy, options.report_in_placement)
        selections[host.name] = selection
        errors.extend(selection.errors)
        warnings.extend(selection.warnings)
        libvirt[host.name], libvirt_errors, libvirt_warnings = libvirt_section(
            host.name, host.libvirt, offers_vgpu(selection)
        )
        errors.extend(libvirt_errors)
        warnings.extend(libvirt_warnings)
    matched = set().union(*(s.matched_entries for s in selections.values())) if selections else set()
    read = sorted(set(names))
    if not read:
        looked_at = "no host (none was given)"
    elif len(read) == 1:
        looked_at = f"the only host given ({read[0]})"
    else:
        looked_at = f"any of the {len(read)} hosts given ({', '.join(read)})"
    for entry in policy:
        if entry.index not in matched:  # only the hosts given were read: a limited run says which
            warnings.append(
                f"{entry.label} ({entry.vendor_id}:{entry.product_id}) matches no device on {looked_at}; "
                "check the IDs against their accel_pci_devices or remove the entry (hosts outside this run were "
                "not read)"
            )
    aliases, alias_errors = alias_values(policy, selections)
    errors.extend(alias_errors)
    if errors:  # before the provider configs are built from the hosts' inputs these errors describe
        raise RenderError(errors)
    provider_configs = {h.name: doc for h in hosts if (doc := provider_config(h, selections[h.name])) is not None}
    for name, document in provider_configs.items():
        for identity in duplicate_providers(document):
            errors.append(
                f"{name}: the provider {identity} is defined twice in its provider config (once by the "
                "operator's provider_config, once by the collection for custom traits or inventories); "
                "Nova refuses to start: keep one, e.g. move the operator's traits into "
                "accel_nova_compute_node_traits"
            )
    if errors:
        raise RenderError(errors)
    return FleetRendering(
        compute={h.name: compute_config(selections[h.name], aliases, options, libvirt[h.name]) for h in hosts},
        api=api_config(aliases, options),
        scheduler=scheduler_config(aliases, options),
        conductor=conductor_config(aliases, options),
        provider_configs=provider_configs,
        selections=selections,
        warnings=warnings,
    )


def render_host(facts: dict, policy_raw: object, hostname: str, **options) -> IniConfig:
    """The nova-compute fragment of one host (aliases from this host's devices only)."""
    host = HostInput(name=hostname, facts=facts)
    return render_fleet([host], policy_raw, Options(**options)).compute[hostname]
