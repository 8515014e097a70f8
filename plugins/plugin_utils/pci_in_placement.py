# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The move of a cloud to PCI-in-Placement: what must hold before, and what Placement must show after.

Nova's rules (nova/pci/request.py, nova/compute/pci_placement_translator.py, Nova 34), read as the
collection checks them before anything is switched on:

- with ``[filter_scheduler] pci_in_placement`` every alias name has exactly one spec (Nova refuses an
  alias defined twice: "have multiple specs"), and each spec names ``vendor_id`` and ``product_id`` or a
  ``resource_class``;
- the alias asks Placement for one resource class: its ``resource_class`` normalised as Nova normalises
  it (upper case; a name that is neither standard nor ``CUSTOM_`` gets ``CUSTOM_`` and each run of
  characters other than letters and digits becomes one ``_``), else ``CUSTOM_PCI_<VENDOR>_<PRODUCT>``;
  the alias's ``traits`` are required traits; a device can serve the alias only when its device_spec gives
  that class and those traits (plus ``COMPUTE_MANAGED_PCI_DEVICE`` Nova adds);
- nova-compute refuses to start when a ``devname`` entry is in ``device_spec``, when a PF and one of its
  VFs are both claimed, when the VFs of one PF get different resource classes or traits, and when a VF
  is tagged ``one_time_use``;
- devices of instances are healed into Placement by nova-compute only for an instance that already holds
  an allocation on the host (Nova skips a consumer Placement does not know).

A host here is ``{name, hypervisor_hostname, devices (accel_pci_devices), config (the deployed nova-compute
config, as nova_config_info returns it), allocated ({address: instance UUID} of the devices instances hold)}``.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import CUSTOM_PREFIX, normalize
from ansible_collections.accel.openstack.plugins.module_utils._names.standard import (
    STANDARD_RESOURCE_CLASSES,
    STANDARD_TRAITS,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova import deployed

MANAGED_TRAIT = "COMPUTE_MANAGED_PCI_DEVICE"
NOVA_CONFIG = "docs/pci-in-placement.md"
HEAL_FIX = "nova-manage placement heal_allocations --instance {}"


class MigrationInputError(AccelError):
    """Input the pre-check cannot read; the message names the host and the fix."""


def resource_class(requested: object, vendor_id: object, product_id: object) -> str:
    """The resource class Nova gives a device (or asks for an alias): the requested name upper-cased, kept when it
    is standard or custom, else made custom by os-resource-classes' rule; without one
    ``CUSTOM_PCI_<VENDOR>_<PRODUCT>``."""
    if requested:
        name = str(requested).upper()
        if name in STANDARD_RESOURCE_CLASSES or name.startswith(CUSTOM_PREFIX):
            return name
        return normalize(name, keep_custom_word=True)
    return f"CUSTOM_PCI_{vendor_id}_{product_id}".upper()


def traits(text: object) -> set[str]:
    """Nova's traits of a comma-separated ``traits`` tag (split on ``,`` without stripping): a standard trait
    name as written is kept, any other is upper-cased and, unless it is then custom, made custom by os-traits'
    rule."""
    found = set()
    for item in str(text or "").split(","):
        if not item:
            continue
        if item in STANDARD_TRAITS:
            found.add(item)
            continue
        name = item.upper()
        found.add(name if name.startswith(CUSTOM_PREFIX) else normalize(name, keep_custom_word=True))
    return found


def device_traits(tags: Mapping) -> set[str]:
    found = traits(tags.get("traits")) | {MANAGED_TRAIT}
    if str(tags.get("live_migratable", "false")).strip().lower() in ("true", "1", "yes", "on", "y", "t"):
        found.add("HW_PCI_LIVE_MIGRATABLE")
    return found


def _problem(host, code: str, entry: str, message: str, fix: str) -> dict:
    return {"host": host, "code": code, "entry": entry, "message": message, "fix": fix}


def parse_aliases(values: list[str]) -> tuple[dict[str, list[dict]], list[dict]]:
    """``{name: [spec, ...]}`` in order of the ``[pci] alias`` values, and the problems of values that do not
    parse."""
    aliases: dict[str, list[dict]] = {}
    problems = []
    for value in values:
        objects = deployed.json_objects(value)
        if objects is None or len(objects) != 1 or not isinstance(objects[0].get("name"), str):
            problems.append(
                _problem(
                    None,
                    "alias_invalid",
                    value,
                    f"[pci] alias {value} is not one JSON object with a name; Nova refuses it",
                    'write each alias as one JSON object, e.g. {"name": "a16", '
                    '"vendor_id": "10de", "product_id": "25b6"}',
                )
            )
            continue
        spec = objects[0]
        aliases.setdefault(spec["name"].strip(), []).append(spec)
    return aliases, problems


def alias_request(spec: Mapping) -> tuple[str | None, set[str]]:
    """The resource class and required traits Nova asks Placement for this alias (None: it cannot say)."""
    if spec.get("resource_class"):
        return resource_class(spec["resource_class"], None, None), traits(spec.get("traits"))
    if "vendor_id" in spec and "product_id" in spec:
        return resource_class(None, spec["vendor_id"], spec["product_id"]), traits(spec.get("traits"))
    return None, traits(spec.get("traits"))


def _host_name(host: Mapping, index: int) -> str:
    name = host.get("name")
    if not isinstance(name, str) or not name:
        raise MigrationInputError(f"host {index + 1} has no name; give each host its inventory hostname as name")
    return name


def _check_host(host: Mapping, index: int) -> tuple[str, list[dict], dict, dict]:
    name = _host_name(host, index)
    devices = host.get("devices")
    if not isinstance(devices, list) or not all(isinstance(d, Mapping) and d.get("address") for d in devices):
        raise MigrationInputError(
            f"host {name}: devices is not a list of accel_pci_devices facts; run the discover stage for {name} first"
        )
    config = host.get("config")
    if not isinstance(config, Mapping):
        raise MigrationInputError(
            f"host {name}: config is not the deployed nova-compute config; read it "
            "with accel.openstack.nova_config_info"
        )
    allocated = host.get("allocated") or {}
    if not isinstance(allocated, Mapping):
        raise MigrationInputError(
            f"host {name}: allocated is not a mapping of PCI address to instance UUID; "
            f"give {{}} when no instance holds a device"
        )
    return name, devices, config, dict(allocated)


def host_view(host: Mapping, index: int = 0) -> dict:
    """What Nova with report_in_placement would build for one host: ``providers`` ({provider name:
    {resource_class, traits, addresses}}), ``claims`` ({address: tags}) and the problems it would refuse."""
    name, devices, config, _allocated = _check_host(host, index)
    hypervisor = str(host.get("hypervisor_hostname") or name)
    problems = []
    specs, refused = deployed.device_specs(config)
    for value, reason in refused:
        problems.append(
            _problem(
                name,
                "device_spec_invalid",
                value,
                f"[pci] device_spec {value} {reason}; nova-compute does not start with it",
                "correct or remove the entry in the device policy and run the nova_config stage",
            )
        )
    for spec in specs:
        if "devname" in spec:
            shown = json.dumps(spec, sort_keys=True)
            problems.append(
                _problem(
                    name,
                    "device_spec_devname",
                    shown,
                    f"[pci] device_spec {shown} selects by devname; Nova refuses it with report_in_placement "
                    "('PCI Placement reporting does not support devname based device specification')",
                    "select the device by its PCI address instead of devname (Kolla: nova_pci_passthrough_whitelist "
                    "without devname)",
                )
            )
    claims = deployed.claims(config, devices)
    by_address = {d["address"]: d for d in devices}
    providers: dict[str, dict] = {}
    for address in sorted(claims):
        tags = claims[address]
        if tags.get("physical_network"):
            continue  # Neutron's SR-IOV devices: Nova keeps them out of Placement
        device = by_address[address]
        parent = device.get("physfn") if device.get("physfn") else None
        if parent and parent in claims and not claims[parent].get("physical_network"):
            problems.append(
                _problem(
                    name,
                    "pf_and_vfs",
                    address,
                    f"device_spec claims the VF {address} and its PF {parent}; Nova refuses a PF and its VFs on one "
                    "host with report_in_placement (PlacementPciDependentDeviceException)",
                    f"claim either the PF {parent} or its VFs in the device policy, not both",
                )
            )
            continue
        provider = f"{hypervisor}_{(parent or address).upper()}"
        rc = resource_class(tags.get("resource_class"), device.get("vendor_id"), device.get("product_id"))
        dev_traits = device_traits(tags)
        if parent and "one_time_use" in tags:
            problems.append(
                _problem(
                    name,
                    "vf_one_time_use",
                    address,
                    f"device_spec tags the VF {address} one_time_use; Nova allows it only "
                    "on type-PCI and type-PF devices",
                    f"remove one_time_use from the entry that claims {address}",
                )
            )
        known = providers.get(provider)
        if known is None:
            providers[provider] = {"resource_class": rc, "traits": dev_traits, "addresses": [address], "parent": parent}
            continue
        if known["resource_class"] != rc:
            problems.append(
                _problem(
                    name,
                    "vfs_mixed_resource_class",
                    address,
                    f"the VFs of {parent} get resource classes {known['resource_class']} "
                    f"({', '.join(known['addresses'])}) "
                    f"and {rc} ({address}); Nova refuses different classes on one PF "
                    "(PlacementPciMixedResourceClassException)",
                    f"give every VF of {parent} the same resource_class in the device policy",
                )
            )
        elif known["traits"] != dev_traits:
            problems.append(
                _problem(
                    name,
                    "vfs_mixed_traits",
                    address,
                    f"the VFs of {parent} get traits {', '.join(sorted(known['traits']))} and "
                    f"{', '.join(sorted(dev_traits))} ({address}); Nova refuses different traits on one PF "
                    "(PlacementPciMixedTraitsException)",
                    f"give every VF of {parent} the same traits in the device policy",
                )
            )
        else:
            known["addresses"].append(address)
    return {
        "name": name,
        "hypervisor_hostname": hypervisor,
        "providers": providers,
        "claims": claims,
        "problems": problems,
    }


def _alias_problems(aliases: dict[str, list[dict]], views: list[dict]) -> list[dict]:
    problems = []
    offered = [(view["name"], p["resource_class"], p["traits"]) for view in views for p in view["providers"].values()]
    for alias, specs in sorted(aliases.items()):
        if len(specs) > 1:
            problems.append(
                _problem(
                    None,
                    "alias_not_unique",
                    alias,
                    f"alias {alias} is defined {len(specs)} times; with pci_in_placement Nova refuses an alias with "
                    "several specs ('The PCI alias(es) have multiple specs')",
                    f"keep one [pci] alias named {alias}; give the devices it covers one "
                    "resource_class in the device policy",
                )
            )
            continue
        spec = specs[0]
        rc, wanted = alias_request(spec)
        if rc is None:
            problems.append(
                _problem(
                    None,
                    "alias_without_resource_class",
                    alias,
                    f"alias {alias} has neither vendor_id and product_id nor resource_class; Nova refuses it with "
                    "pci_in_placement ('does not have vendor_id and product_id fields set "
                    "or resource_class field set')",
                    f"give alias {alias} its vendor_id and product_id, or the resource_class of its devices",
                )
            )
            continue
        serving = [host for host, klass, have in offered if klass == rc and wanted <= have]
        if serving:
            continue
        same_class = sorted({host for host, klass, _have in offered if klass == rc})
        if same_class:
            missing = sorted(wanted - set().union(*(have for host, klass, have in offered if klass == rc)))
            message = (
                f"alias {alias} asks for traits {', '.join(sorted(wanted))}, but no device of resource class {rc} "
                f"(on {', '.join(same_class)}) has {', '.join(missing)}; its flavors would find no host"
            )
            fix = (
                f"give the devices of alias {alias} the traits {', '.join(sorted(wanted))} in the "
                "device policy, or drop them from the alias"
            )
        else:
            classes = sorted({klass for _host, klass, _have in offered})
            message = (
                f"alias {alias} asks Placement for resource class {rc}, which no device_spec of any compute host gives "
                f"(they give {', '.join(classes) if classes else 'none'}); its flavors would find no host"
            )
            fix = (
                "give the alias and the device_spec of its devices the same "
                f"resource_class ({rc} or one of those listed)"
            )
        problems.append(_problem(None, "alias_unmatched", alias, message, fix))
    return problems


def _allocation_roots(fleet: Mapping | None) -> tuple[dict[str, str], dict]:
    providers = (fleet or {}).get("resource_providers") or []
    roots = {
        p.get("name"): p.get("uuid") for p in providers if isinstance(p, Mapping) and not p.get("parent_provider_uuid")
    }
    return roots, (fleet or {}).get("allocations") or {}


def _healing(view: dict, allocated: dict, roots: dict, allocations: Mapping, fleet_known: bool) -> tuple[list, list]:
    name = view["name"]
    problems, healing = [], []
    per_provider: dict[tuple[str, str], int] = {}
    for address, instance in sorted(allocated.items()):
        try:
            instance = str(uuidlib.UUID(str(instance)))
        except ValueError:
            problems.append(
                _problem(
                    name,
                    "allocated_invalid",
                    address,
                    f"the instance holding {address} is given as {json.dumps(str(instance))}, which is not a UUID",
                    "give the instance UUID Nova's pci_devices table records for the device",
                )
            )
            continue
        provider = next((p for p, data in view["providers"].items() if address in data["addresses"]), None)
        if provider is None:
            problems.append(
                _problem(
                    name,
                    "allocated_unclaimed",
                    address,
                    f"instance {instance} holds {address}, which the deployed device_spec "
                    f"of {name} does not claim; Nova "
                    "keeps such a device out of Placement's view with a warning",
                    f"restore the device_spec entry for {address}, or move instance {instance} off the device first",
                )
            )
            continue
        key = (instance, provider)
        per_provider[key] = per_provider.get(key, 0) + 1
    root = roots.get(view["hypervisor_hostname"])
    for (instance, provider), amount in sorted(per_provider.items()):
        rc = view["providers"][provider]["resource_class"]
        holds = ((allocations.get(instance) or {}).get("allocations") or {}) if isinstance(allocations, Mapping) else {}
        if fleet_known and (root is None or root not in holds):
            problems.append(
                _problem(
                    name,
                    "allocation_missing",
                    instance,
                    f"instance {instance} holds a device on {name} but has no allocation "
                    "on its compute node provider in "
                    "Placement; nova-compute heals only an instance Placement already knows, so its device would stay "
                    "unaccounted",
                    "heal the instance's allocation first: " + HEAL_FIX.format(instance),
                )
            )
            continue
        healing.append(
            {"host": name, "instance": instance, "provider": provider, "resource_class": rc, "amount": amount}
        )
    return problems, healing


def precheck(hosts: list, aliases: list | None = None, fleet: Mapping | None = None) -> dict:
    """Everything that must hold before ``report_in_placement`` and ``pci_in_placement`` are turned on.

    ``hosts``: the compute hosts (module doc); ``aliases``: the ``[pci] alias`` values nova-api and
    nova-scheduler read (the compute hosts' own aliases are added); ``fleet``: a placement_info snapshot with
    ``allocations`` (None: the allocations are not compared). Returns ``{problems, healing, providers}``:
    each problem ``{host, code, entry, message, fix}``; each healing ``{host, instance, provider,
    resource_class, amount}`` (what nova-compute will add to the instance's allocation); providers
    ``{host: {provider name: {resource_class, traits, addresses}}}``.
    """
    if not isinstance(hosts, list):
        raise MigrationInputError("hosts is not a list; give one entry per compute host")
    views = [host_view(host, index) for index, host in enumerate(hosts)]
    values = [v for v in aliases or [] if isinstance(v, str)]
    for host in hosts:
        values += deployed.values(host.get("config") or {}, "pci", "alias")
    parsed, problems = parse_aliases(list(dict.fromkeys(values)))
    for view in views:
        problems += view["problems"]
    problems += _alias_problems(parsed, views)
    roots, allocations = _allocation_roots(fleet)
    healing = []
    for index, (host, view) in enumerate(zip(hosts, views, strict=True)):
        found, healed = _healing(view, _check_host(host, index)[3], roots, allocations, fleet is not None)
        problems += found
        healing += healed
    return {
        "problems": problems,
        "healing": healing,
        "providers": {
            v["name"]: {
                p: {"resource_class": d["resource_class"], "traits": sorted(d["traits"]), "addresses": d["addresses"]}
                for p, d in sorted(v["providers"].items())
            }
            for v in views
        },
    }


def progress(host: str, providers: Mapping, healing: list, fleet: Mapping) -> dict:
    """How far Placement is with one host: ``{host, done, providers_expected, providers_found, missing,
    healed, unhealed, lost}``. ``providers``: the host's expected PCI providers (precheck's ``providers``);
    ``healing``: precheck's healing entries (only the host's count); ``fleet``: placement_info with
    allocations. A provider counts when it exists with the expected class in its inventory and Nova's
    COMPUTE_MANAGED_PCI_DEVICE trait; an instance counts as healed when its allocation holds the class on it."""
    by_name = {p.get("name"): p for p in (fleet or {}).get("resource_providers") or [] if isinstance(p, Mapping)}
    allocations = (fleet or {}).get("allocations") or {}
    missing = []
    for name, want in sorted((providers or {}).items()):
        found = by_name.get(name)
        if (
            found is None
            or want["resource_class"] not in (found.get("inventories") or {})
            or MANAGED_TRAIT not in (found.get("traits") or [])
        ):
            missing.append(name)
    healed, unhealed = [], []
    for item in healing or []:
        if item.get("host") != host:
            continue
        provider = by_name.get(item["provider"]) or {}
        holds = ((allocations.get(item["instance"]) or {}).get("allocations") or {}).get(provider.get("uuid")) or {}
        amount = (holds.get("resources") or {}).get(item["resource_class"], 0)
        (healed if amount >= item["amount"] else unhealed).append(item["instance"])
    return {
        "host": host,
        "done": not missing and not unhealed,
        "providers_expected": len(providers or {}),
        "providers_found": len(providers or {}) - len(missing),
        "missing": missing,
        "healed": healed,
        "unhealed": unhealed,
    }


def reporting(hosts: list, fleet: Mapping) -> dict:
    """Which compute hosts report their PCI devices: ``{reporting: [names], not_reporting: [{host, why}]}``.

    ``hosts``: ``{name, hypervisor_hostname, config}`` (the deployed nova-compute config). A host reports when
    its config sets ``[pci] report_in_placement = true`` and, when its device_spec claims anything, Placement
    shows at least one provider with COMPUTE_MANAGED_PCI_DEVICE under its compute node."""
    providers = [p for p in (fleet or {}).get("resource_providers") or [] if isinstance(p, Mapping)]
    roots = {p.get("name"): p.get("uuid") for p in providers if not p.get("parent_provider_uuid")}
    good, bad = [], []
    for index, host in enumerate(hosts or []):
        name = _host_name(host, index)
        config = host.get("config") if isinstance(host.get("config"), Mapping) else {}
        hypervisor = str(host.get("hypervisor_hostname") or name)
        if not deployed.is_true(config, "pci", "report_in_placement"):
            bad.append(
                {"host": name, "why": "its deployed nova-compute config does not set [pci] report_in_placement = true"}
            )
            continue
        specs, _refused = deployed.device_specs(config)
        root = roots.get(hypervisor)
        managed = [
            p
            for p in providers
            if root
            and root in (p.get("parent_provider_uuid"), p.get("root_provider_uuid"))
            and MANAGED_TRAIT in (p.get("traits") or [])
        ]
        if specs and not managed:
            bad.append(
                {
                    "host": name,
                    "why": (
                        f"Placement shows no PCI provider under {hypervisor} yet "
                        "(nova-compute has not reported with report_in_placement)"
                    ),
                }
            )
            continue
        good.append(name)
    return {"reporting": good, "not_reporting": bad}


def hosts_to_read(compute: list, control: list, control_services: tuple = ("api", "scheduler")) -> list[dict]:
    """``[{name, services}]`` for nova_config_info: the compute hosts with ``compute``, the control hosts with
    ``control_services``, a host in both with both (in the order given)."""
    found: dict[str, list[str]] = {}
    for name in compute or []:
        found.setdefault(str(name), []).append("compute")
    for name in control or []:
        services = found.setdefault(str(name), [])
        services.extend(s for s in control_services if s not in services)
    return [{"name": name, "services": services} for name, services in found.items()]


def service_aliases(deployed_config: Mapping, services: tuple = ("api", "scheduler")) -> list[str]:
    """The ``[pci] alias`` values of the given services of every host of a nova_config_info ``deployed``, once each."""
    found: list[str] = []
    for host in sorted(deployed_config or {}):
        for service in services:
            for value in deployed.values(((deployed_config[host] or {}).get(service)) or {}, "pci", "alias"):
                if value not in found:
                    found.append(value)
    return found


SCHEDULER_SERVICES = ("api", "scheduler", "conductor", "super-conductor")


def scheduler_off(deployed_config: Mapping) -> list[str]:
    """``host nova-<service>`` for every nova-api, nova-scheduler and conductor of a nova_config_info ``deployed``
    whose ``[filter_scheduler] pci_in_placement`` is not true, sorted."""
    found = []
    for host in sorted(deployed_config or {}):
        for service in SCHEDULER_SERVICES:
            config = (deployed_config[host] or {}).get(service)
            if config is not None and not deployed.is_true(config, "filter_scheduler", "pci_in_placement"):
                found.append(f"{host} nova-{service}")
    return found
