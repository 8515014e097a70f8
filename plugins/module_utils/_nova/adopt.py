# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adopt a cloud built by hand: its deployed Nova config (and host facts) as a device policy.

:func:`adopt` reads what each compute host's nova-compute runs (``[pci] device_spec``, ``[pci] alias``,
``[pci] report_in_placement``, ``[devices] enabled_mdev_types`` and the ``[mdev_<type>]`` sections) and
the aliases of nova-api, and returns an ``accel_device_policy`` whose rendering (``_nova/config.py``)
gives Nova the same devices with the same tags, the same aliases and the same vGPU types per device.

What the policy cannot say is listed in ``unexpressed`` (host, where, value, reason) and never dropped
silently: ``devname`` entries, tags without a policy key, a second alias for one device model, an
``mdev_class`` Nova ignores, types Nova does not use, device_spec entries that differ between hosts in
a way addresses cannot tell apart. Traits and resource classes are adopted as the names Nova derives
from them (``gold`` -> ``CUSTOM_GOLD``), which is what reaches Placement.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import is_custom, normalize
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_address, normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._names.standard import (
    STANDARD_RESOURCE_CLASSES,
    STANDARD_TRAITS,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova import address_pattern, device_ids
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import Options, RenderError, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import host_inputs
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import ALIAS_NAME, PolicyError
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import host_devices

SPEC_KEYS = ("vendor_id", "product_id", "address")
BOOL_TAGS = ("live_migratable", "one_time_use", "trusted", "remote_managed")
TAG_KEYS = ("resource_class", "traits", "managed", "physical_network", *BOOL_TAGS)
ALIAS_KEYS = ("name", "vendor_id", "product_id", "device_type", "numa_policy", "resource_class", "traits")
TRUE = ("true", "yes", "on", "1", "y", "t")
MAX_VALUES = 4096  # device_spec or alias values read from one host's config
NOTHING = {"vendor_id": "ffff", "product_id": "ffff"}  # matches no device (the kolla layout's placeholder)


class AdoptError(AccelError, ValueError):
    """Input that is not a deployed Nova config; the message names the bad part."""


def _values(config: Mapping, section: str, key: str) -> list[str]:
    values = ((config or {}).get(section) or {}).get(key) or []
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise AdoptError(f"[{section}] {key} must be a list of the strings the config file holds")
    if len(values) > MAX_VALUES:
        raise AdoptError(f"[{section}] {key} has {len(values)} values; more than {MAX_VALUES} is not a Nova config")
    return values


def _json_objects(value: str) -> list | None:
    """The objects one device_spec or alias value holds (Nova takes an object or a list of them)."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    parsed = parsed if isinstance(parsed, list) else [parsed]
    return parsed if all(isinstance(p, dict) for p in parsed) else None


def _bool(text: object) -> bool:
    return str(text).strip().lower() in TRUE


def nova_traits(text: str) -> list[str]:
    """The traits Nova derives from a ``traits`` tag: split on ``,`` as written, custom unless standard."""
    found = set()
    for name in str(text).split(","):
        if not name:
            continue
        found.add(name if name in STANDARD_TRAITS or is_custom(name) else normalize(name, keep_custom_word=True))
    return sorted(found)


def nova_resource_class(name: str) -> str:
    if name in STANDARD_RESOURCE_CLASSES or is_custom(name):
        return name
    return normalize(name, keep_custom_word=True)


class _Adoption:
    def __init__(self, configs: Mapping, facts: Mapping, aliases: list[str] | None):
        self.configs = configs
        self.facts = facts
        self.unexpressed: list[dict] = []
        self.entries: list[dict] = []
        self.alias_values = aliases

    def note(self, host: str | None, where: str, value: object, reason: str) -> None:
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        item = {"host": host, "where": where, "value": text, "reason": reason}
        if item not in self.unexpressed:
            self.unexpressed.append(item)

    # -- aliases -----------------------------------------------------------------------------------
    def aliases(self) -> list[dict]:
        values = self.alias_values
        if values is None:
            values = []
            for host in sorted(self.configs):
                values += [v for v in _values(self.configs[host], "pci", "alias") if v not in values]
        found: list[dict] = []
        for value in values:
            objects = _json_objects(value)
            if objects is None:
                self.note(None, "pci.alias", value, "not JSON Nova can read; Nova refuses to start with it")
                continue
            for alias in objects:
                try:
                    device_ids.alias_id(alias, "vendor_id")
                    device_ids.alias_id(alias, "product_id")
                except device_ids.DeviceIdError as exc:
                    self.note(None, "pci.alias", alias, f"{exc}; Nova refuses to start with it")
                    continue
                extra = sorted(set(alias) - set(ALIAS_KEYS) - {"live_migratable"})
                if extra:
                    self.note(None, "pci.alias", alias, f"keys {', '.join(extra)} have no device policy key")
                found.append(alias)
        return found

    # -- device_spec -------------------------------------------------------------------------------
    def specs(self) -> dict[str, dict]:
        """Distinct device_spec objects (canonical JSON) -> {"spec": ..., "hosts": [...]} in first-seen order."""
        distinct: dict[str, dict] = {}
        for host in sorted(self.configs):
            config = self.configs[host]
            # the deprecated name joins device_spec, as oslo.config joins it
            for value in _values(config, "pci", "passthrough_whitelist") + _values(config, "pci", "device_spec"):
                objects = _json_objects(value)
                if objects is None:
                    self.note(host, "pci.device_spec", value, "not JSON Nova can read; Nova refuses to start with it")
                    continue
                for spec in objects:
                    try:
                        device_ids.spec_ids(spec)
                    except device_ids.DeviceIdError as exc:
                        self.note(host, "pci.device_spec", spec, f"{exc}; Nova refuses to start with it")
                        continue
                    key = json.dumps(spec, sort_keys=True)
                    distinct.setdefault(key, {"spec": spec, "hosts": []})["hosts"].append(host)
        return distinct

    def _ids(self, spec: dict, hosts: list[str]) -> tuple[str, str] | None:
        # as Nova reads them: "0x10DE" is 10de, "*" or no key is any
        vendor, product = (None if i == device_ids.ANY else i for i in device_ids.spec_ids(spec))
        if vendor and product:
            return vendor, product
        address = spec.get("address")
        if not isinstance(address, str) or not is_address(address):
            return None
        ids = set()
        for host in hosts:
            for device in host_devices(self.facts.get(host) or {}):
                if normalize_address(device["address"]) == normalize_address(address):
                    ids.add((device.get("vendor_id"), device.get("product_id")))
        if len(ids) != 1:
            return None
        vendor_id, product_id = ids.pop()
        if (vendor and vendor != vendor_id) or (product and product != product_id):
            return None
        return vendor_id, product_id

    def passthrough(self, aliases: list[dict]) -> None:
        used_names: dict[str, tuple] = {}
        for item in self.specs().values():
            spec, hosts = item["spec"], item["hosts"]
            host = hosts[0] if len(hosts) == 1 else None
            if set(spec) == set(NOTHING) and device_ids.spec_ids(spec) == ("ffff", "ffff"):
                continue  # PCI's reserved vendor: the kolla layout's "no device here", which no policy entry needs
            if "devname" in spec:
                self.note(host, "pci.device_spec", spec, "devname has no device policy key; name the device by address")
                continue
            unknown = sorted(set(spec) - set(SPEC_KEYS) - set(TAG_KEYS))
            if unknown:
                self.note(host, "pci.device_spec", spec, f"tags {', '.join(unknown)} have no device policy key")
                continue
            ids = self._ids(spec, hosts)
            if ids is None:
                self.note(host, "pci.device_spec", spec, "no vendor_id/product_id, and the facts do not tell them")
                continue
            vendor, product = ids
            if "address" not in spec:
                # a host whose IOMMU is off gets no device from the policy either (selection withholds them)
                others = [
                    h
                    for h in sorted(set(self.configs) - set(hosts))
                    if (self.facts.get(h) or {}).get("accel_iommu_enabled") is not False
                    and any(
                        d.get("vendor_id") == vendor and d.get("product_id") == product
                        for d in host_devices(self.facts.get(h) or {})
                    )
                ]
                if others:
                    self.note(
                        None,
                        "pci.device_spec",
                        spec,
                        f"listed on {', '.join(hosts)} but not on {', '.join(others)}, which have such devices too: "
                        "the policy selects them on every host",
                    )
            entry: dict = {"vendor_id": vendor, "product_id": product, "mode": "passthrough"}
            if "address" in spec:
                try:
                    pattern = address_pattern.parse(spec["address"])
                except address_pattern.AddressPatternError as exc:
                    self.note(host, "pci.device_spec", spec, f"address: {exc}")
                    continue
                entry["addresses"] = [
                    normalize_address(spec["address"]) if pattern.is_exact else spec["address"],
                ]
            if spec.get("resource_class"):
                entry["resource_class"] = nova_resource_class(str(spec["resource_class"]))
            traits = nova_traits(spec.get("traits") or "")
            if traits:
                entry["traits"] = traits
            if "managed" in spec:
                entry["managed"] = _bool(spec["managed"])
            if spec.get("physical_network"):
                entry["physical_network"] = str(spec["physical_network"])
            for key in BOOL_TAGS:
                if key in spec:
                    value = _bool(spec[key])
                    if key in ("trusted", "remote_managed") or value:
                        entry[key] = value
                    elif key == "live_migratable":
                        self.note(host, "pci.device_spec", spec, "live_migratable is tested for presence by Nova")
            neutron = any(k in entry for k in ("physical_network", "trusted", "remote_managed"))
            alias = None if neutron else self._alias_for(aliases, vendor, product, entry)
            if alias is not None:
                entry["name"] = alias["name"]
                for key in ("device_type", "numa_policy"):
                    if alias.get(key):
                        entry[key] = alias[key]
                if not alias.get("device_type") and alias["name"] not in used_names:
                    self.note(
                        None,
                        "pci.alias",
                        alias,
                        "the alias has no device_type (any type matches); the rendering writes the type of the "
                        "devices it selects",
                    )
                if any(entry.get(k) and not alias.get(k) for k in ("resource_class", "traits")):
                    self.note(
                        host,
                        "pci.alias",
                        alias,
                        "the rendering copies the device_spec's resource_class and traits into the alias (Nova "
                        "reads them there only with pci_in_placement)",
                    )
                alias_rc = alias.get("resource_class")
                if alias_rc and nova_resource_class(alias_rc) != entry.get("resource_class"):
                    self.note(None, "pci.alias", alias, "its resource_class differs from the device_spec's")
            else:
                base = f"{entry.get('physical_network') or 'pci'}-{vendor}-{product}"
                entry["name"] = base if ALIAS_NAME.match(base) else f"pci-{vendor}-{product}"
                if not neutron:
                    self.note(
                        host,
                        "pci.device_spec",
                        spec,
                        f"no alias names this device; the policy calls it {entry['name']} and the rendering adds "
                        "that alias",
                    )
            key = (entry.get("device_type"), entry.get("numa_policy"))
            if alias is not None and entry["name"] in used_names and used_names[entry["name"]] == key:
                self.note(
                    host,
                    "pci.alias",
                    alias,
                    f"several device_spec entries share alias {entry['name']}; the rendering gives the alias one "
                    "spec per entry, each with that entry's resource_class and traits",
                )
            if used_names.setdefault(entry["name"], key) != key:
                entry["name"] = f"{entry['name']}-{len(self.entries)}"
            entry["_hosts"] = hosts
            self.entries.append(entry)
        for alias in aliases:
            name = alias.get("name")
            if name and name not in used_names:
                self.alias_only(alias)

    def _alias_for(self, aliases: list[dict], vendor: str, product: str, entry: dict) -> dict | None:
        matching = [
            a
            for a in aliases
            if str(a.get("vendor_id", "")).lower() == vendor and str(a.get("product_id", "")).lower() == product
        ]
        names = []
        for alias in matching:
            if alias.get("name") not in names:
                names.append(alias.get("name"))
        if len(names) > 1:
            for alias in matching[1:]:
                if alias.get("name") != names[0]:
                    self.note(
                        None,
                        "pci.alias",
                        alias,
                        f"a second alias for {vendor}:{product}; the policy gives a device model one alias "
                        f"({names[0]})",
                    )
        return matching[0] if matching else None

    def alias_only(self, alias: dict) -> None:
        """An alias no device_spec backs: an entry that renders the alias and selects no device here."""
        vendor, product = str(alias.get("vendor_id", "")).lower(), str(alias.get("product_id", "")).lower()
        name = alias.get("name")
        for host, facts in self.facts.items():
            if any(d.get("vendor_id") == vendor and d.get("product_id") == product for d in host_devices(facts or {})):
                self.note(
                    None,
                    "pci.alias",
                    alias,
                    f"no device_spec lists {vendor}:{product}, but {host} has such devices: a policy entry "
                    "would expose them",
                )
                return
        entry = {"name": name, "vendor_id": vendor, "product_id": product, "mode": "passthrough"}
        for key in ("device_type", "numa_policy"):
            if alias.get(key):
                entry[key] = alias[key]
        if alias.get("resource_class"):
            entry["resource_class"] = nova_resource_class(str(alias["resource_class"]))
        if alias.get("traits"):
            entry["traits"] = nova_traits(alias["traits"])
        entry["_hosts"] = []
        self.entries.append(entry)

    # -- vGPU --------------------------------------------------------------------------------------
    def vgpu(self) -> None:
        merged: dict[tuple, dict] = {}
        for host in sorted(self.configs):
            config = self.configs[host]
            types = [t.strip() for v in _values(config, "devices", "enabled_mdev_types") for t in v.split(",")]
            devices = {normalize_address(d["address"]): d for d in host_devices(self.facts.get(host) or {})}
            default = None
            for mdev_type in [t for t in types if t]:
                section = config.get(f"mdev_{mdev_type}") or {}
                addresses = [
                    a.strip() for v in section.get("device_addresses") or [] for a in v.split(",") if a.strip()
                ]
                mdev_class = (section.get("mdev_class") or [None])[-1]
                max_instances = (section.get("max_instances") or [None])[-1]
                if not addresses:
                    if default is not None:
                        self.note(
                            host,
                            "devices.enabled_mdev_types",
                            mdev_type,
                            f"Nova uses only the first type without device_addresses ({default}); it ignores this one",
                        )
                        continue
                    default = mdev_type
                    if mdev_class and mdev_class != "VGPU":
                        self.note(
                            host,
                            f"mdev_{mdev_type}.mdev_class",
                            mdev_class,
                            "Nova ignores mdev_class for a type without device_addresses (bug 1943934): "
                            "its devices report VGPU, which the policy keeps",
                        )
                        mdev_class = None
                    addresses = [a for a, d in devices.items() if _offers(d, mdev_type)]
                    parents_named = False
                else:
                    parents_named = True
                groups: dict[tuple, list[str]] = {}
                for address in addresses:
                    device = devices.get(normalize_address(address)) if is_address(address) else None
                    if device is None:
                        self.note(
                            host,
                            f"mdev_{mdev_type}.device_addresses",
                            address,
                            "no such device on the host; Nova finds no GPU there",
                        )
                        continue
                    ids = (device.get("vendor_id"), device.get("product_id"))
                    groups.setdefault(ids, []).append(normalize_address(address))
                for (vendor, product), found in groups.items():
                    key = (mdev_type, vendor, product, mdev_class, max_instances)
                    entry = merged.setdefault(
                        key,
                        {
                            "name": f"vgpu-{mdev_type}" if ALIAS_NAME.match(f"vgpu-{mdev_type}") else "vgpu",
                            "vendor_id": vendor,
                            "product_id": product,
                            "mode": "vgpu",
                            "mdev_type": mdev_type,
                            "addresses": [],
                            "_hosts": [],
                        },
                    )
                    if mdev_class:
                        entry["mdev_class"] = mdev_class
                    if max_instances and str(max_instances).isdigit():
                        entry["max_instances"] = int(max_instances)
                    entry["addresses"] += [a for a in found if a not in entry["addresses"]]
                    entry["_hosts"].append(host)
                    entry.setdefault("_named", parents_named)
        names: dict[str, int] = {}
        for entry in merged.values():
            count = names[entry["name"]] = names.get(entry["name"], 0) + 1
            if count > 1:
                entry["name"] = f"{entry['name']}-{count}"
            entry.pop("_named", None)
            self.entries.append(entry)


def _offers(device: Mapping, mdev_type: str) -> bool:
    return any(t.get("type") == mdev_type for t in device.get("mdev_types") or [])


def _report_in_placement(adoption: _Adoption) -> bool:
    values = {
        host: _bool((_values(config, "pci", "report_in_placement") or ["false"])[-1])
        for host, config in adoption.configs.items()
    }
    if len(set(values.values())) > 1:
        on = sorted(h for h, v in values.items() if v)
        adoption.note(
            None,
            "pci.report_in_placement",
            ", ".join(on),
            "set on some compute hosts only; the adopted policy keeps it on for all (Nova cannot turn it off)",
        )
    return any(values.values())


def adopt(configs: Mapping, facts: Mapping, aliases: list[str] | None = None, check: bool = True) -> dict:
    """``configs``: ``{host: nova-compute IniConfig}``; ``facts``: ``{host: accel_* facts}``; ``aliases``:
    nova-api's ``[pci] alias`` values (default: those of the compute hosts).

    Returns ``{"accel_device_policy": [...], "accel_nova_report_in_placement": bool, "unexpressed": [...]}``;
    ``check=False`` skips rendering the result once more to list what does not render (for callers that
    parse the policy themselves).
    """
    if not isinstance(configs, Mapping) or not all(isinstance(c, Mapping) for c in configs.values()):
        raise AdoptError("configs must map each compute host to its deployed nova-compute config sections")
    if not isinstance(facts, Mapping):
        raise AdoptError("facts must map each compute host to its accel_* discovery facts")
    if aliases is not None and (not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases)):
        raise AdoptError("aliases must be the [pci] alias values (JSON strings) nova-api reads")
    adoption = _Adoption(configs, facts, aliases)
    adoption.passthrough(adoption.aliases())
    adoption.vgpu()
    report = _report_in_placement(adoption)
    policy = []
    for entry in adoption.entries:
        policy.append({k: v for k, v in entry.items() if not k.startswith("_")})
    if check:
        _check_rendering(adoption, policy, report)
    return {
        "accel_device_policy": policy,
        "accel_nova_report_in_placement": report,
        "unexpressed": adoption.unexpressed,
    }


def _check_rendering(adoption: _Adoption, policy: list[dict], report: bool) -> None:
    """The adopted policy must render; where it does not, Nova's config holds what no policy says."""
    hosts = host_inputs([{"name": h, "facts": dict(adoption.facts.get(h) or {})} for h in sorted(adoption.configs)])
    try:
        render_fleet(hosts, policy, Options(report_in_placement=report))
    except (RenderError, PolicyError) as exc:
        for error in exc.errors:
            adoption.note(None, "accel_device_policy", error, "the adopted policy does not render as it stands")
