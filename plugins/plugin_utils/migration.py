# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live-migration readiness of the instances that hold a GPU or PCI device, from Placement's allocations.

:func:`migration_targets` takes a fleet snapshot with its ``allocations`` (placement_info's
``allocations: true``), the hosts' facts, the deployed nova-compute config per host and, when known, the
servers' flavors and the ``[pci] alias`` entries. For every consumer holding a device it decides:

- whether Nova 34 can live-migrate it at all (``blockers``): a Cyborg device (Nova's API refuses live
  migration of a flavor with ``accel:device_profile``), a PCI device whose provider lacks
  ``HW_PCI_LIVE_MIGRATABLE`` (its ``[pci] device_spec`` entry is not tagged ``live_migratable``) or whose
  alias does not ask ``live_migratable: "true"`` (the conductor's pre-check), libvirt/QEMU older than the
  driver's minimum on the source, the host kernel older than 5.18 for a vGPU, ``[libvirt]
  live_migration_permit_post_copy`` on for a vGPU (documented requirement: Nova itself does not refuse);
- on which other host its exact resources fit now (``targets``, in the RAMWeigher's order) and, per host
  that is no target, why not (``why_not``).

The query for a host is the instance's own allocation: the root's classes in the unsuffixed group (with a
vGPU's classes when the flavor asks them there, ``resources:VGPU=1``, as Nova asks them again), each other
device provider's classes in a numbered group (with ``HW_PCI_LIVE_MIGRATABLE`` required for a PCI device,
which is what Nova's PCI pool filter keeps for a live-migratable request), ``root_required=
!COMPUTE_STATUS_DISABLED`` as Nova sends it and the flavor's required traits when the flavor is known; the
embedded solver answers it with Placement 1.39 semantics. A vGPU candidate must take a GPU whose enabled
mdev type is the source's (the destination's ``check_can_live_migrate_destination``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like
from ansible_collections.accel.openstack.plugins.module_utils._nova import deployed
from ansible_collections.accel.openstack.plugins.module_utils._placement.quarantine import (
    CONSUMER_TYPE,
    QUARANTINE_PROJECT,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor import parse_aliases
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, FleetError
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_filters import DISABLED_TRAIT
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates

# nova/virt/libvirt/driver.py (Nova 34): MIN_MDEV_LIVEMIG_LIBVIRT_VERSION, MIN_MDEV_LIVEMIG_QEMU_VERSION
MDEV_MIN_LIBVIRT = (8, 6, 0)
MDEV_MIN_QEMU = (8, 1, 0)
# Nova's vGPU documentation: the host kernel needs VFIO migration (5.18 or later)
MDEV_MIN_KERNEL = (5, 18, 0)
# nova/virt/libvirt/driver.py: MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION, MIN_VFIO_PCI_VARIANT_QEMU_VERSION
# (nova-compute refuses to start with a live_migratable device_spec below them)
PCI_MIN_LIBVIRT = (10, 0, 0)
PCI_MIN_QEMU = (8, 2, 2)
LIVE_MIGRATABLE_TRAIT = "HW_PCI_LIVE_MIGRATABLE"
PCI_TRAIT = "COMPUTE_MANAGED_PCI_DEVICE"
VERSION_FACTS = {"kernel": "accel_kernel_release", "libvirt": "accel_libvirt_version", "qemu": "accel_qemu_version"}
MINIMA = {
    "vgpu": {"libvirt": MDEV_MIN_LIBVIRT, "qemu": MDEV_MIN_QEMU, "kernel": MDEV_MIN_KERNEL},
    "pci": {"libvirt": PCI_MIN_LIBVIRT, "qemu": PCI_MIN_QEMU},
}
MAX_INSTANCES = 20000
_VERSION = re.compile(r"(\d{1,6})(?:\.(\d{1,6}))?(?:\.(\d{1,6}))?(?!\d)")
_CLASS = re.compile(r"[A-Z0-9_]{1,255}")
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}")
_LIBVIRT_NAME = re.compile(r"_pci_([0-9a-f]{4})_([0-9a-f]{2})_([0-9a-f]{2})_([0-7])\Z")


class MigrationInputError(AccelError, ValueError):
    """Input that is not what the lookup takes; the message names it and the fix."""


def parse_version(text: object) -> tuple[int, int, int] | None:
    """``"10.0.0"``, ``"6.1.0-18-amd64"`` or ``"8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)"`` as a triple; None when
    it does not start with a number."""
    if isinstance(text, list | tuple) and 0 < len(text) <= 3 and all(_whole(v) and 0 <= v < 10**6 for v in text):
        parts = [*text, 0, 0][:3]
        return (parts[0], parts[1], parts[2])
    if not isinstance(text, str):
        return None
    found = _VERSION.match(text.strip())
    if not found:
        return None
    return tuple(int(part or 0) for part in found.groups())  # type: ignore[return-value]


def _whole(value: object) -> bool:
    """An int (Ansible's tagged ints included), not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def shown(name: object) -> str:
    """A name read from a host or a service as text shows it: as it is when it is a plain name, else quoted."""
    text = str(name)
    return text if _PLAIN.fullmatch(text) else shlex.quote(text[:200])


def _text(version: tuple) -> str:
    return ".".join(str(v) for v in version)


class _Host:
    """One compute host as the rules read it: its versions, its deployed config, its enabled mdev types."""

    def __init__(self, name: str, facts: Mapping, config: Mapping):
        self.name = name
        self.shown = shown(name)
        self.facts = facts
        self.config = config
        self.versions = {kind: parse_version(facts.get(fact)) for kind, fact in VERSION_FACTS.items()}
        self.post_copy = deployed.is_true(dict(config), "libvirt", "live_migration_permit_post_copy")
        types = deployed.mdev_types(dict(config))
        self.enabled_types = [t for t, _a, _c in types]
        self.type_of: dict[str, str] = {}
        for mdev_type, addresses, _class in types:
            for address in addresses:
                self.type_of.setdefault(address.lower(), mdev_type)
        # Nova gives every GPU the only enabled type when that type lists no device_addresses
        self.default_type = types[0][0] if len(types) == 1 and not types[0][1] else None

    def mdev_type(self, provider_name: str) -> str | None:
        found = _LIBVIRT_NAME.search(provider_name.lower())
        if not found:
            return None
        address = "{}:{}:{}.{}".format(*found.groups())
        return self.type_of.get(address) or self.default_type

    def too_old(self, kind: str) -> list[tuple[str, str]]:
        """``(code, why)`` for each version of this host that does not allow live-migrating a device of ``kind``
        (code ``version_too_old``, or ``version_unknown`` when it is not known); empty when they all do."""
        out = []
        for part, minimum in MINIMA[kind].items():
            have = self.versions[part]
            if have is None:
                out.append(
                    (
                        "version_unknown",
                        f"{part} version of {self.shown} is not known "
                        f"(give {VERSION_FACTS[part]} in its facts or inventory)",
                    )
                )
            elif have < minimum:
                out.append(("version_too_old", f"{part} {_text(have)} on {self.shown} is older than {_text(minimum)}"))
        return out


def _check(inputs: dict) -> None:
    fleet = inputs["fleet"]
    if not isinstance(fleet, Mapping):
        raise MigrationInputError("fleet must be Placement's snapshot (placement_info's fleet with allocations: true)")
    allocations = fleet.get("allocations")
    if not isinstance(allocations, Mapping) or not all(
        isinstance(a, Mapping) and isinstance(a.get("allocations"), Mapping) for a in allocations.values()
    ):
        raise MigrationInputError(
            "fleet.allocations must map consumer UUIDs to {allocations: {provider uuid: {resources}}}; "
            "read the snapshot with placement_info's allocations: true"
        )
    if len(allocations) > MAX_INSTANCES:
        raise MigrationInputError(f"fleet.allocations holds {len(allocations)} consumers; at most {MAX_INSTANCES}")
    for consumer, record in allocations.items():
        for provider, held in record["allocations"].items():
            resources = held.get("resources") if isinstance(held, Mapping) else None
            if not isinstance(resources, Mapping) or not all(
                isinstance(rc, str) and _CLASS.fullmatch(rc) and _whole(n) and 0 < n < 2**31
                for rc, n in resources.items()
            ):
                raise MigrationInputError(
                    f"fleet.allocations[{shown(consumer)}] on provider {shown(provider)}: resources must map resource "
                    "class names (A-Z, 0-9, _) to positive whole amounts, as Placement holds them"
                )
    servers = inputs.get("servers")
    if servers is not None and not (
        isinstance(servers, Mapping)
        or (isinstance(servers, list | tuple) and all(isinstance(s, Mapping | str) for s in servers))
    ):
        raise MigrationInputError("servers must be a list of servers (openstack.cloud.server_info's servers) or UUIDs")
    for name in ("hosts", "deployed", "hypervisor_hostnames"):
        value = inputs.get(name)
        if value is not None and not isinstance(value, Mapping):
            raise MigrationInputError(f"{name} must be a dict keyed by host")
    for host, facts in (inputs.get("hosts") or {}).items():
        if not isinstance(facts, Mapping):
            raise MigrationInputError(f"hosts[{host}] must be the host's accel_* facts (a dict)")
    for host, services in (inputs.get("deployed") or {}).items():
        if not isinstance(services, Mapping) or not isinstance(services.get("compute") or {}, Mapping):
            raise MigrationInputError(f"deployed[{host}] must be {{service: config sections}} (nova_config_info)")


class Migration:
    """The cloud as the migration rules read it (indexed once)."""

    def __init__(
        self, fleet, hosts=None, deployed_config=None, hypervisor_hostnames=None, servers=None, pci_aliases=None
    ):
        given = {"fleet": fleet, "hosts": hosts, "deployed": deployed_config, "servers": servers}
        _check({**given, "hypervisor_hostnames": hypervisor_hostnames})
        try:
            self.fleet = Fleet.from_snapshot(fleet)
        except FleetError as exc:
            raise MigrationInputError(f"fleet: {exc}") from None
        self.snapshot = fleet
        self.servers = _servers(servers)
        aliases, problem = parse_aliases(pci_aliases or [])
        if problem:
            raise MigrationInputError(f"pci_aliases: Nova refuses them: {problem}")
        self.aliases = aliases
        self.aliases_known = pci_aliases is not None
        names = {str(node): str(host) for host, node in (hypervisor_hostnames or {}).items()}
        self.hosts: dict[str, _Host] = {}
        for root in self.fleet.roots:
            host = names.get(root.name, root.name)
            facts = (hosts or {}).get(host) or {}
            config = ((deployed_config or {}).get(host) or {}).get("compute") or {}
            self.hosts[root.uuid] = _Host(host, facts, config)
        self.records = {r["uuid"]: r for r in fleet.get("resource_providers") or []}
        # the device providers a quarantine holds (device_quarantine's consumers)
        self.quarantined = {
            provider
            for record in (fleet.get("allocations") or {}).values()
            if record.get("consumer_type") == CONSUMER_TYPE or record.get("project_id") == QUARANTINE_PROJECT
            for provider in record["allocations"]
        }

    # -- one instance ------------------------------------------------------------------------------
    def instances(self) -> list[dict]:
        """Every consumer holding a device, with its source, devices and blockers (sorted by host, name)."""
        found = []
        for consumer, record in sorted((self.snapshot.get("allocations") or {}).items()):
            # a quarantine or a migration in progress is no instance; nor is a consumer that is no server UUID
            if (
                record.get("consumer_type") in (CONSUMER_TYPE, "MIGRATION")
                or record.get("project_id") == QUARANTINE_PROJECT
            ):
                continue
            if not is_uuid_like(consumer) or (self.servers and str(consumer) not in self.servers):
                continue
            held = {p: dict((a or {}).get("resources") or {}) for p, a in record["allocations"].items()}
            held = {p: r for p, r in held.items() if p in self.fleet.providers and isinstance(r, dict) and r}
            shared = [p for p in held if p in self.fleet.sharing]  # e.g. DISK_GB on shared storage
            devices = [p for p in held if self.fleet.providers[p].parent is not None and p not in shared]
            # an instance holds its compute node's VCPU or memory; devices alone are a leaked allocation
            if not devices or not any(self.fleet.providers[p].parent is None and p not in shared for p in held):
                continue
            roots = {self.fleet.providers[p].root for p in held if p not in shared}
            found.append(self._instance(str(consumer), held, devices, roots))
        return sorted(found, key=lambda i: (i["host"], i["name"], i["uuid"]))

    def _kind(self, provider_uuid: str) -> str:
        provider = self.fleet.providers[provider_uuid]
        if PCI_TRAIT in provider.traits:
            return "pci"
        if _LIBVIRT_NAME.search(provider.name.lower()) and ("VGPU" in provider.inventories or any(
            rc.startswith("CUSTOM_") for rc in provider.inventories
        )):  # fmt: skip
            return "vgpu"
        return "other"

    def _instance(self, consumer: str, held: dict, devices: list, roots: set) -> dict:
        server = self.servers.get(consumer) or {}
        root = sorted(roots)[0]
        source = self.hosts[root]
        flavor = server.get("flavor") if isinstance(server.get("flavor"), Mapping) else None
        extra_specs = dict((flavor or {}).get("extra_specs") or {})
        items = []
        for uuid in sorted(devices, key=lambda u: self.fleet.providers[u].name):
            provider = self.fleet.providers[uuid]
            kind = self._kind(uuid)
            item = {"provider": provider.name, "provider_uuid": uuid, "kind": kind, "resources": held[uuid]}
            if kind == "vgpu":
                item["mdev_type"] = source.mdev_type(provider.name)
            items.append(item)
        blockers: list[dict] = []

        def block(code: str, detail: str, fix: str) -> None:
            blockers.append({"code": code, "detail": detail, "fix": fix})

        if len(roots) > 1:
            block(
                "spread_over_hosts",
                "its allocation takes from more than one compute node",
                "check the allocation in Placement",
            )
        kinds = {i["kind"] for i in items}
        if "other" in kinds or extra_specs.get("accel:device_profile"):
            block(
                "accelerator",
                "it holds a device Nova did not allocate from [pci] or mdevs (a Cyborg accelerator); "
                "Nova's API refuses live migration of a flavor with accel:device_profile",
                "cold-migrate it (resize or shelve and unshelve), or move the workload",
            )
        if "vgpu" in kinds:
            for code, why in source.too_old("vgpu"):
                block(code, why, f"vGPU live migration needs libvirt {_text(MDEV_MIN_LIBVIRT)}, "
                      f"QEMU {_text(MDEV_MIN_QEMU)} and kernel {_text(MDEV_MIN_KERNEL)} on both hosts")  # fmt: skip
            if source.post_copy:
                block(
                    "post_copy_permitted",
                    f"[libvirt] live_migration_permit_post_copy is true on {source.shown}; "
                    "vGPU live migration needs it false",
                    f"set [libvirt] live_migration_permit_post_copy = false on {source.shown}'s nova-compute",
                )
            for item in items:
                if item["kind"] == "vgpu" and item["mdev_type"] is None:
                    block(
                        "mdev_type_unknown",
                        f"the mdev type of {shown(item['provider'])} is not known",
                        f"give {source.shown}'s deployed [devices] enabled_mdev_types (nova_config_info)",
                    )
        if "pci" in kinds:
            for item in items:
                if (
                    item["kind"] == "pci"
                    and LIVE_MIGRATABLE_TRAIT not in self.fleet.providers[item["provider_uuid"]].traits
                ):
                    block(
                        "device_not_live_migratable",
                        f"{shown(item['provider'])} lacks {LIVE_MIGRATABLE_TRAIT}: its [pci] device_spec entry "
                        'is not tagged live_migratable: "true"',
                        f'tag the device live_migratable: "true" in {source.shown}\'s [pci] device_spec (policy key '
                        "live_migratable) if its driver supports VFIO migration",
                    )
            self._check_aliases(extra_specs if flavor is not None else None, items, block)
            for code, why in source.too_old("pci"):
                block(code, why, f"PCI live migration needs libvirt {_text(PCI_MIN_LIBVIRT)} and QEMU "
                      f"{_text(PCI_MIN_QEMU)} on both hosts")  # fmt: skip
        return {
            "uuid": consumer,
            "name": str(server.get("name") or consumer),
            "host": source.name,
            "source_root": root,
            "devices": items,
            "held": held,
            "flavor_traits": _flavor_traits(extra_specs),
            "flavor_unsuffixed": _unsuffixed_classes(extra_specs),
            "blockers": blockers,
        }

    def _check_aliases(self, extra_specs: dict | None, items: list, block) -> None:
        """The conductor's pre-check: every flavor PCI request's specs must ask live_migratable "true"."""
        if not self.aliases_known:
            block("alias_unknown", "the [pci] alias entries are not known, so whether the request asks a "
                  "live-migratable device cannot be told", "give pci_aliases (nova-api's [pci] alias)")  # fmt: skip
            return
        if extra_specs is not None:
            asked = [p.split(":")[0].strip() for p in str(extra_specs.get("pci_passthrough:alias") or "").split(",")]
            names = [n for n in asked if n]
        else:
            classes = {rc for i in items if i["kind"] == "pci" for rc in i["resources"]}
            names = [n for n, (_numa, specs) in self.aliases.items() if any(_alias_class(s) in classes for s in specs)]
        for name in names:
            _numa, specs = self.aliases.get(name, (None, []))
            if not specs or not all(s.get("live_migratable") == "true" for s in specs):
                block(
                    "alias_not_live_migratable",
                    f'PCI alias {shown(name)} does not ask live_migratable: "true" (Nova refuses: "This request '
                    'does not explicitly request live-migratable devices.")',
                    f'add "live_migratable": "true" to every [pci] alias entry named {shown(name)} on nova-api and the '
                    "scheduler (new instances of the flavor are then placed on tagged devices only)",
                )

    # -- targets -----------------------------------------------------------------------------------
    def query(self, instance: dict) -> str:
        """The Placement query (without ``?``) for the instance's exact resources, as its own allocation has them."""
        root = instance["source_root"]
        parts = []
        # the compute node's classes and those of sharing providers: Placement may take the latter from any
        # sharing provider of the target's aggregates, as it did for the source
        unsuffixed: dict[str, int] = {}
        for provider, resources in instance["held"].items():
            if provider == root or provider in self.fleet.sharing:
                for rc, amount in resources.items():
                    unsuffixed[rc] = unsuffixed.get(rc, 0) + amount
        # a device class the flavor asks in its unsuffixed group (resources:VGPU=1) is asked there again, as
        # Nova's request spec asks it for the move: the flavor's unsuffixed required traits are then judged
        # with the device's provider among the group's, as they were when the instance was placed
        numbered, together = self._device_groups(instance)
        for item in together:
            for rc, amount in item["resources"].items():
                unsuffixed[rc] = unsuffixed.get(rc, 0) + amount
        if unsuffixed:
            parts.append("resources=" + ",".join(f"{rc}:{n}" for rc, n in sorted(unsuffixed.items())))
        if instance["flavor_traits"]["required"] or instance["flavor_traits"]["forbidden"]:
            traits = sorted(instance["flavor_traits"]["required"]) + sorted(
                "!" + t for t in instance["flavor_traits"]["forbidden"]
            )
            parts.append("required=" + ",".join(traits))
        number = 0
        for item in numbered:
            number += 1
            parts.append(f"resources{number}=" + ",".join(f"{rc}:{n}" for rc, n in sorted(item["resources"].items())))
            if item["kind"] == "pci":
                parts.append(f"required{number}={LIVE_MIGRATABLE_TRAIT}")
        if number > 1:
            parts.append("group_policy=none")
        parts.append(f"root_required=!{DISABLED_TRAIT}")
        return "&".join(parts)

    def targets(self, instance: dict, fleet: Fleet | None = None) -> dict:
        """``{targets, why_not, candidates}``: the other hosts where the instance fits now, in order."""
        fleet = fleet or self.fleet
        answer = allocation_candidates(fleet, Request.parse(self.query(instance)))
        by_root: dict[str, list[dict]] = {}
        for candidate in answer["allocation_requests"]:
            # the compute node the candidate lands on (a sharing provider of another tree may serve it too)
            root = next(fleet.providers[p].root for p in candidate["allocations"] if p not in fleet.sharing)
            by_root.setdefault(root, []).append(candidate)
        kinds = {d["kind"] for d in instance["devices"]} & set(MINIMA)
        source_types = [d.get("mdev_type") for d in instance["devices"] if d["kind"] == "vgpu"]
        why_not: dict[str, str] = {}
        fits: dict[str, dict] = {}
        for root in fleet.roots:
            if root.uuid in fleet.sharing:  # shared storage and the like: no compute node
                continue
            host = self.hosts[root.uuid]
            reasons = []
            record = self.records.get(root.uuid) or {}
            if root.uuid == instance["source_root"]:
                why_not[host.name] = "the source host"
                continue
            disabled = bool(record.get("disabled")) or DISABLED_TRAIT in root.traits
            if disabled:
                reasons.append(f"its compute service is disabled ({DISABLED_TRAIT})")
            for kind in sorted(kinds):
                reasons += [why for _code, why in host.too_old(kind)]
            for mdev_type in source_types:
                if mdev_type and mdev_type not in host.enabled_types:
                    reasons.append(f"mdev type {shown(mdev_type)} is not in its [devices] enabled_mdev_types")
            candidates = by_root.get(root.uuid, [])
            if source_types and candidates:
                candidates = [c for c in candidates if self._same_types(instance, c, host, fleet)]
                if not candidates and not reasons:
                    reasons.append(f"no free unit of mdev type {', '.join(shown(t) for t in source_types if t)}")
            if not by_root.get(root.uuid) and not disabled:
                reasons.append(self._short_of(instance, root.uuid, fleet))
            if reasons:
                why_not[host.name] = "; ".join(reasons)
            else:
                fits[root.uuid] = candidates[0]
        # RAMWeigher (Nova's default multiplier 1.0): most free RAM first, then the name
        order = sorted(fits, key=lambda u: (-_free(fleet, u, "MEMORY_MB"), self.hosts[u].name))
        return {
            "targets": [self.hosts[u].name for u in order],
            "why_not": why_not,
            "first": {u: fits[u] for u in order},
        }

    @staticmethod
    def _device_groups(instance: dict) -> tuple[list, list]:
        """(the devices asked each in a numbered group, the vGPUs asked in the unsuffixed group)."""
        numbered, together = [], []
        for item in instance["devices"]:
            if item["kind"] == "vgpu" and set(item["resources"]) <= instance["flavor_unsuffixed"]:
                together.append(item)
            else:
                numbered.append(item)
        return numbered, together

    def _same_types(self, instance: dict, candidate: dict, host: _Host, fleet: Fleet) -> bool:
        mappings = candidate.get("mappings") or {}
        numbered, together = self._device_groups(instance)
        for number, item in enumerate(numbered, start=1):
            if item["kind"] != "vgpu":
                continue
            for uuid in mappings.get(str(number), []):
                if host.mdev_type(fleet.providers[uuid].name) != item["mdev_type"]:
                    return False
        # the unsuffixed group's vGPU providers (its other providers are the compute node and sharing ones)
        wanted = {item["mdev_type"] for item in together}
        for uuid in mappings.get("", []) if together else []:
            provider = fleet.providers[uuid]
            if provider.parent is None or uuid in fleet.sharing:
                continue
            if host.mdev_type(provider.name) not in wanted:
                return False
        return True

    def _short_of(self, instance: dict, root: str, fleet: Fleet) -> str:
        """Why Placement has no candidate on this host: the first asked group nothing on it can take."""
        tree = fleet.trees.get(root, [])
        for uuid, resources in instance["held"].items():
            if uuid in fleet.sharing:  # Placement may take these from another sharing provider
                continue
            provider = self.fleet.providers[uuid]
            required = {LIVE_MIGRATABLE_TRAIT} if self._kind(uuid) == "pci" else set()
            for rc, amount in sorted(resources.items()):
                offers = [p for p in tree if rc in p.inventories and required <= p.traits]
                if provider.parent is None:
                    offers = [p for p in offers if p.parent is None]
                free = max((p.inventories[rc].free for p in offers), default=0)
                if free < amount:
                    what = f"{rc} on a {LIVE_MIGRATABLE_TRAIT} device" if required else rc
                    if not offers:
                        return f"no provider of {what}"
                    held = sum(p.uuid in self.quarantined for p in offers)
                    note = f" ({held} of its {len(offers)} quarantined)" if held else ""
                    return f"not enough free {what}: needs {amount}, at most {free} free on one provider{note}"
        if instance["flavor_traits"]["required"] - fleet.providers[root].traits:
            return "lacks the flavor's required traits " + ", ".join(sorted(instance["flavor_traits"]["required"]))
        return "no allocation candidate for the instance's resources"


def _servers(servers) -> dict:
    """``{uuid: server}`` from a list of servers (``id``, ``name``, ``flavor``), a list of UUIDs or such a dict."""
    if isinstance(servers, Mapping):
        return {str(k): v if isinstance(v, Mapping) else {} for k, v in servers.items()}
    out = {}
    for server in servers or ():
        if isinstance(server, str):
            out[server] = {}
        elif server.get("id"):
            out[str(server["id"])] = server
    return out


def _alias_class(spec: Mapping) -> str:
    if spec.get("resource_class"):
        rc = str(spec["resource_class"]).upper()
        return rc if rc.startswith("CUSTOM_") or rc in ("PGPU", "VGPU") else f"CUSTOM_{rc}"
    return f"CUSTOM_PCI_{str(spec.get('vendor_id', '')).upper()}_{str(spec.get('product_id', '')).upper()}"


def _flavor_traits(extra_specs: Mapping) -> dict:
    required, forbidden = set(), set()
    for key, value in extra_specs.items():
        if isinstance(key, str) and key.startswith("trait:"):
            if value == "required":
                required.add(key[len("trait:") :])
            elif value == "forbidden":
                forbidden.add(key[len("trait:") :])
    return {"required": required, "forbidden": forbidden}


def _unsuffixed_classes(extra_specs: Mapping) -> set[str]:
    """The resource classes the flavor asks with ``resources:<CLASS>`` (the unsuffixed group), amount above 0."""
    found = set()
    for key, value in extra_specs.items():
        if isinstance(key, str) and key.startswith("resources:") and str(value).strip() not in ("", "0"):
            found.add(key[len("resources:") :].upper())
    return found


def _free(fleet: Fleet, root: str, rc: str) -> int:
    inventory = fleet.providers[root].inventories.get(rc)
    return inventory.free if inventory else 0


def _sentence(items: list[str]) -> str:
    return "; ".join(items)


def migration_targets(
    fleet, hosts=None, deployed_config=None, hypervisor_hostnames=None, servers=None, pci_aliases=None
) -> dict:
    """``{instances, drain}``: per instance its readiness and targets, per source host what a drain moves.

    A drain places the host's movable instances one after another (name order), each on its first target
    with the usage the earlier ones added, so two instances do not count the same free GPU twice."""
    model = Migration(fleet, hosts, deployed_config, hypervisor_hostnames, servers, pci_aliases)
    report = []
    for instance in model.instances():
        found = model.targets(instance)
        blockers = instance["blockers"]
        report.append(
            {
                "uuid": instance["uuid"],
                "name": instance["name"],
                "host": instance["host"],
                "devices": instance["devices"],
                "migratable": not blockers and bool(found["targets"]),
                "blockers": blockers,
                "targets": [] if blockers else found["targets"],
                "why_not": found["why_not"],
                "query": model.query(instance),
                "_instance": instance,
                "_found": found,
            }
        )
    drain = _drains(model, report)
    for entry in report:
        entry.pop("_instance")
        entry.pop("_found")
    return {"instances": report, "drain": drain}


def _drains(model: Migration, report: list[dict]) -> dict:
    out = {}
    by_host: dict[str, list[dict]] = {}
    for entry in report:
        by_host.setdefault(entry["host"], []).append(entry)
    for host, entries in sorted(by_host.items()):
        taken: list[tuple[object, int]] = []  # (inventory, amount) the host's moves added, undone after it
        try:
            out[host] = _drain(model, host, entries, taken)
        finally:
            for inventory, amount in taken:
                inventory.used -= amount
    return out


def _drain(model: Migration, host: str, entries: list[dict], taken: list) -> dict:
    """One host's drain. Each move adds its candidate's amounts to the fleet's usage in place (as the
    capacity plan places instances); until the first move each instance's own answer stands."""
    moves, stuck = {}, {}
    for entry in entries:
        if entry["blockers"]:
            stuck[entry["name"]] = _sentence([b["detail"] for b in entry["blockers"]])
            continue
        found = model.targets(entry["_instance"]) if taken else entry["_found"]
        if not found["targets"]:
            others = [f"{shown(h)}: {w}" for h, w in sorted(found["why_not"].items()) if w != "the source host"]
            stuck[entry["name"]] = "no other host has room: " + (_sentence(others) or "there is no other host")
            continue
        target_root, candidate = next(iter(found["first"].items()))
        moves[entry["name"]] = model.hosts[target_root].name
        for provider, held in candidate["allocations"].items():
            for rc, amount in held["resources"].items():
                inventory = model.fleet.providers[provider].inventories[rc]
                inventory.used += amount
                taken.append((inventory, amount))
    summary = f"draining {shown(host)} moves {len(moves)} of {len(entries)} instances"
    if stuck:
        summary += f"; {len(stuck)} cannot move: " + "; ".join(f"{shown(n)} ({w})" for n, w in stuck.items())
    return {"moves": moves, "cannot_move": stuck, "summary": summary}
