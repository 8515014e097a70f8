# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Nova configuration a cloud runs today, read (never written) from a host's root.

Two layouts, as the nova_config stage writes them:

``kolla``: the operator's override files under ``config_dir`` (``/etc/kolla/config``) merged in
Kolla-Ansible's precedence, per service and host: ``global.conf``, ``nova.conf``,
``nova/nova-<service>.conf``, ``nova/<host>/nova.conf``, and for the nova-cell services (compute,
conductor) ``nova/<host>/nova-<service>.conf`` (the super conductor of Kolla's nova role has none).
As Kolla-Ansible's ``merge_configs`` does, a key in a later file replaces the whole list from earlier
files, and a key repeated within one file accumulates.
Kolla renders every source as Jinja first: values that still hold a template expression are listed
in ``templated`` (the audit cannot evaluate them) and kept as written.

``nova_conf_d``: ``nova.conf`` then every ``*.conf`` of the ``nova.conf.d`` directory in name order,
as oslo.config reads ``--config-file`` and ``--config-dir``: a multi-valued option (``[pci]
device_spec``, its deprecated name ``passthrough_whitelist``, ``[pci] alias``) accumulates over all
files, any other option takes its value from the last file that sets it.

In both layouts ``[pci] passthrough_whitelist`` is joined to ``device_spec`` the way oslo.config joins
a deprecated name to its option, so the result is what Nova's parsers see.
"""

from __future__ import annotations

import json
import os

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import oslo_ini
from ansible_collections.accel.openstack.plugins.module_utils._host.oslo_ini import IniConfig
from ansible_collections.accel.openstack.plugins.module_utils._host.root import MAX_READ, HostRoot, HostRootError
from ansible_collections.accel.openstack.plugins.module_utils._names.text import component_problem
from ansible_collections.accel.openstack.plugins.module_utils._nova import address_pattern, device_ids

SERVICES = ("compute", "api", "scheduler", "conductor", "super-conductor")
CELL_SERVICES = ("compute", "conductor")
# oslo.config MultiStrOpt options Nova registers among the sections the collection reads.
MULTI_VALUED = {("pci", "device_spec"), ("pci", "passthrough_whitelist"), ("pci", "alias")}
MAX_CONF_D_FILES = 256
TEMPLATE_MARKS = ("{{", "{%")


class DeployedConfigError(AccelError):
    """Options that do not name readable configuration; the message names the option."""


def parse_ini(text: str, path: str = "the file") -> IniConfig:
    """One file as a service reads it (:func:`oslo_ini.parse_groups`): groups under their lower-case
    names, every value of a repeated key in order; :class:`oslo_ini.OsloIniError` for a file
    oslo.config refuses."""
    return oslo_ini.parse_groups(text, path)


def _join_deprecated(config: IniConfig) -> IniConfig:
    """``[pci] passthrough_whitelist`` joined to ``device_spec`` (the whitelist's entries first)."""
    pci = config.get("pci")
    if pci and "passthrough_whitelist" in pci:
        pci = dict(pci)
        pci["device_spec"] = list(pci.pop("passthrough_whitelist")) + list(pci.get("device_spec") or [])
        config = {**config, "pci": pci}
    return config


def kolla_sources(config_dir: str, service: str, host: str) -> list[str]:
    """The override files Kolla-Ansible merges for one service on one host, lowest precedence first."""
    base = config_dir.rstrip("/")
    files = [f"{base}/global.conf", f"{base}/nova.conf", f"{base}/nova/nova-{service}.conf"]
    files.append(f"{base}/nova/{host}/nova.conf")
    if service in CELL_SERVICES:
        files.append(f"{base}/nova/{host}/nova-{service}.conf")
    return files


def _with_paths(texts: list[str], paths: list[str] | None) -> list[tuple[str, str]]:
    names = list(paths or [])
    return [(text, names[n] if n < len(names) else f"file {n + 1}") for n, text in enumerate(texts)]


def merge_kolla(texts: list[str], paths: list[str] | None = None) -> IniConfig:
    """Kolla-Ansible's merge_configs, then Nova's reading of the file it writes.

    Each override is parsed as oslo.config's parser does (Kolla-Ansible uses it, after rendering the
    Jinja: lines holding only a Jinja statement are skipped); sections merge by their name as written,
    and a later file's key replaces the earlier list. Nova then reads the merged sections by their
    lower-case names, so ``[PCI]`` and ``[pci]`` add up (in the order the sections first appeared)."""
    merged: IniConfig = {}
    for text, path in _with_paths(texts, paths):
        for section, keys in oslo_ini.parse(text, path, template_lines=True).items():
            target = merged.setdefault(section, {})
            for key, values in keys.items():
                target[key] = list(values)
    grouped: IniConfig = {}
    for section, keys in merged.items():
        target = grouped.setdefault(oslo_ini.group_name(section), {})
        for key, values in keys.items():
            target.setdefault(key, []).extend(values)
    return _join_deprecated(grouped)


def merge_oslo(texts: list[str], paths: list[str] | None = None) -> IniConfig:
    """oslo.config over several files (in the order given): multi-valued options accumulate, others take
    the last value; a file oslo.config refuses raises :class:`oslo_ini.OsloIniError` naming it."""
    merged: IniConfig = {}
    for text, path in _with_paths(texts, paths):
        for section, keys in _join_deprecated(parse_ini(text, path)).items():
            target = merged.setdefault(section, {})
            for key, values in keys.items():
                if (section, key) in MULTI_VALUED:
                    target.setdefault(key, []).extend(values)
                else:
                    target[key] = [values[-1]]
    return merged


def templated(config: IniConfig) -> list[str]:
    """``section.key`` of every value that still holds a Jinja expression."""
    return sorted(
        f"{section}.{key}"
        for section, keys in config.items()
        for key, values in keys.items()
        if any(mark in value for value in values for mark in TEMPLATE_MARKS)
    )


def _read(root: HostRoot, paths: list[str], template_lines: bool = False) -> tuple[list[str], list[str]]:
    """The texts of the files that exist, and their paths. A file the service could not read whole as
    UTF-8 text, or that oslo.config refuses, is refused, the first in the order given (as the service
    reads them, one after the other): Nova would not start with it, or would read what the audit cannot
    see."""
    texts, found = [], []
    for path in paths:
        try:
            read = root.read_file(path)
        except HostRootError as exc:
            root.warn(str(exc))
            continue
        except OSError as exc:
            root.warn(f"{path}: cannot read ({exc.strerror or exc})")
            continue
        if read is None:
            continue
        if read.truncated:
            raise DeployedConfigError(
                f"{path} is longer than {MAX_READ} bytes; that is not a Nova configuration file: check what wrote it",
                path=path,
            )
        try:
            text = read.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = read.data[: exc.start].count(b"\n") + 1
            raise DeployedConfigError(
                f"{path} line {line}: byte {exc.start + 1} is not UTF-8 text, so Nova (reading it as UTF-8) does "
                "not start; convert the file to UTF-8 (iconv -t UTF-8)",
                path=path,
            ) from None
        oslo_ini.parse(text, path, template_lines)
        texts.append(text)
        found.append(path)
    return texts, found


def _check_host(name: object, option: str) -> str:
    problem = component_problem(name)
    if problem:
        raise DeployedConfigError(f"{option} {name!r} {problem}; give the inventory hostname")
    return str(name)


def config_dir_problem(root: HostRoot, config_dir: str) -> str | None:
    """Why Kolla-Ansible's override directory cannot be read (it is missing, not a directory, or not
    readable), or None. Every override file is optional, so without this check a missing directory
    reads as a cloud with no override at all."""
    try:
        real = root.path(config_dir)
        with os.scandir(real):
            pass
    except HostRootError as exc:
        return str(exc)
    except FileNotFoundError:
        return f"{config_dir} does not exist"
    except NotADirectoryError:
        return f"{config_dir} is not a directory"
    except OSError as exc:
        return f"{config_dir} cannot be read ({exc.strerror or exc})"
    return None


def read_kolla(root: HostRoot, config_dir: str, hosts: dict[str, list[str]]) -> dict:
    """``{host: {"services": {service: IniConfig}, "sources": {service: [paths]}}}`` for the kolla layout.

    ``hosts`` maps each inventory hostname to the services it runs.
    """
    result: dict = {}
    for host, services in hosts.items():
        name = _check_host(host, "hosts")
        entry: dict = {"services": {}, "sources": {}}
        for service in services:
            if service not in SERVICES:
                raise DeployedConfigError(f"host {name}: service {service!r} is not one of {', '.join(SERVICES)}")
            texts, found = _read(root, kolla_sources(config_dir, service, name), template_lines=True)
            entry["services"][service] = merge_kolla(texts, found)
            entry["sources"][service] = found
        result[name] = entry
    return result


def read_nova_conf_d(root: HostRoot, nova_conf: str, conf_d: str, host: str, services: list[str]) -> dict:
    """The same shape as :func:`read_kolla` for one host of the nova_conf_d layout (one config for all
    the services it runs)."""
    name = _check_host(host, "host")
    names = sorted(n for n in root.listdir(conf_d, limit=MAX_CONF_D_FILES + 1) if n.endswith(".conf"))
    if len(names) > MAX_CONF_D_FILES:
        raise DeployedConfigError(
            f"{conf_d} holds more than {MAX_CONF_D_FILES} .conf files; that is not a Nova config directory"
        )
    texts, found = _read(root, [nova_conf] + [f"{conf_d.rstrip('/')}/{n}" for n in names])
    config = merge_oslo(texts, found)
    for service in services:
        if service not in SERVICES:
            raise DeployedConfigError(f"host {name}: service {service!r} is not one of {', '.join(SERVICES)}")
    return {
        name: {
            "services": {service: config for service in services},
            "sources": {service: list(found) for service in services},
        }
    }


# -- what a deployed config does --------------------------------------------------------------------
def json_objects(value: str) -> list[dict] | None:
    """The objects one device_spec or alias value holds (Nova takes an object or a list); None if unreadable."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    parsed = parsed if isinstance(parsed, list) else [parsed]
    return parsed if all(isinstance(p, dict) for p in parsed) else None


def values(config: dict, section: str, key: str) -> list[str]:
    found = ((config or {}).get(section) or {}).get(key) or []
    return [found] if isinstance(found, str) else [v for v in found if isinstance(v, str)]


def is_true(config: dict, section: str, key: str) -> bool:
    found = values(config, section, key)
    return bool(found) and found[-1].strip().lower() in ("true", "yes", "on", "1")


def device_specs(config: dict) -> tuple[list[dict], list[tuple[str, str]]]:
    """The ``[pci] device_spec`` objects nova-compute reads, and ``(value, reason)`` for each value it
    refuses (not JSON, not an object or a list of objects, a vendor_id or product_id that is not a PCI ID
    as Nova reads one: :mod:`.device_ids`). nova-compute does not start while one is refused."""
    specs, refused = [], []
    for value in values(config, "pci", "device_spec"):
        objects = json_objects(value)
        if objects is None:
            refused.append((value, "is not a JSON object or a list of objects"))
            continue
        for spec in objects:
            try:
                device_ids.spec_ids(spec)
            except device_ids.DeviceIdError as exc:
                refused.append((value, str(exc)))
                continue
            specs.append(spec)
    return specs, refused


def _spec_matches(spec: dict, device: dict, physical_functions: frozenset) -> bool:
    vendor, product = device_ids.spec_ids(spec)
    if vendor not in (device_ids.ANY, device.get("vendor_id")) or product not in (
        device_ids.ANY,
        device.get("product_id"),
    ):
        return False
    if "address" in spec:
        try:
            pattern = address_pattern.parse(spec["address"])
        except address_pattern.AddressPatternError:
            return False
        return pattern.matches(device["address"], device.get("physfn"), physical_functions)
    return "devname" not in spec


def claims(config: dict, devices: list[dict]) -> dict[str, dict]:
    """``{address: tags}`` of every device ``[pci] device_spec`` claims, the first matching spec winning
    (as Nova's whitelist does); tags are the spec's keys other than what it matches on. IDs compare as
    Nova reads them (``"0x10DE"`` is ``10de``); a spec Nova refuses claims nothing (:func:`device_specs`
    lists it)."""
    specs, _refused = device_specs(config)
    pfs = frozenset(d["physfn"] for d in devices if d.get("physfn"))
    found: dict[str, dict] = {}
    for device in devices:
        for spec in specs:
            if _spec_matches(spec, device, pfs):
                found[device["address"]] = {
                    k: v for k, v in spec.items() if k not in ("vendor_id", "product_id", "address")
                }
                break
    return found


def mdev_types(config: dict) -> list[tuple[str, list[str], str | None]]:
    """``[(type, device_addresses, mdev_class)]`` of ``[devices] enabled_mdev_types``, in order."""
    found = []
    for text in values(config, "devices", "enabled_mdev_types"):
        for name in (t.strip() for t in text.split(",")):
            if not name:
                continue
            section = f"mdev_{name}"
            addresses = [a.strip() for v in values(config, section, "device_addresses") for a in v.split(",")]
            mdev_class = (values(config, section, "mdev_class") or [None])[-1]
            found.append((name, [a for a in addresses if a], mdev_class))
    return found


# Placement's options that decide its answer: (section, option, kind, default).
PLACEMENT_OPTIONS = (
    ("placement", "max_allocation_candidates", "int", -1),
    ("placement", "allocation_candidates_generation_strategy", "str", "depth-first"),
    ("workarounds", "optimize_for_wide_provider_trees", "bool", False),
)
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def placement_sources(layout: str, config_dir: str, placement_conf: str) -> list[str]:
    """The files placement-api reads its settings from, lowest precedence first: Kolla-Ansible's overrides
    (``global.conf``, ``placement.conf``, ``placement/placement-api.conf``), or the plain placement.conf."""
    if layout == "kolla":
        base = config_dir.rstrip("/")
        return [f"{base}/global.conf", f"{base}/placement.conf", f"{base}/placement/placement-api.conf"]
    return [placement_conf]


def placement_settings(config: IniConfig, sources: list[str]) -> dict:
    """Placement's answer-deciding options from a merged config, typed as Placement reads them (its
    default where unset); a value Placement would refuse to start with is an error naming the files."""
    found = {}
    for section, option, kind, default in PLACEMENT_OPTIONS:
        written = (config.get(section) or {}).get(option)
        if not written:
            found[option] = default
            continue
        value = written[-1].strip()
        where = f"[{section}] {option} = {value[:60]!r} (in {', '.join(sources) or 'no file'})"
        if kind == "int":
            try:
                found[option] = int(value)
            except ValueError:
                raise DeployedConfigError(f"{where} is not a whole number; Placement would not start") from None
        elif kind == "bool":
            if value.lower() not in _TRUE + _FALSE:
                raise DeployedConfigError(f"{where} is not true or false; Placement would not start")
            found[option] = value.lower() in _TRUE
        else:
            if value not in ("depth-first", "breadth-first"):
                raise DeployedConfigError(f"{where} is not depth-first or breadth-first; Placement would not start")
            found[option] = value
    return found


def read_placement(root: HostRoot, params: dict) -> tuple[dict, list[str]]:
    """The deployed Placement settings and the files they come from."""
    layout = params.get("layout") or "kolla"
    config_dir = params.get("config_dir") or "/etc/kolla/config"
    paths = placement_sources(layout, config_dir, params.get("placement_conf") or "/etc/placement/placement.conf")
    texts, found = _read(root, paths, template_lines=layout == "kolla")
    merged = merge_kolla(texts, found) if layout == "kolla" else merge_oslo(texts, found)
    return placement_settings(merged, found), found


def read_configs(root: HostRoot, params: dict) -> dict:
    """The ``nova_config_info`` module's answer: ``{deployed, sources, templated}``, and for the kolla
    layout ``config_dir_problem``."""
    layout = params.get("layout") or "kolla"
    hosts = {}
    given = list(params.get("hosts") or [])
    given += [{"name": n, "services": ["compute"]} for n in params.get("compute_hosts") or []]
    control = ["api", "scheduler", "conductor"] + (["super-conductor"] if params.get("super_conductor") else [])
    given += [{"name": n, "services": control} for n in params.get("control_hosts") or []]
    if not given:
        if params.get("placement"):
            settings, sources = read_placement(root, params)
            return {"placement_config": settings, "placement_sources": sources, "deployed": {}, "sources": {},
                    "templated": []}  # fmt: skip
        raise DeployedConfigError("no host to read for: give hosts, compute_hosts or control_hosts")
    for index, item in enumerate(given, start=1):
        name = _check_host(item.get("name"), f"hosts[{index}].name")
        if name in hosts:
            raise DeployedConfigError(f"hosts[{index}]: {name} is given twice; list each host once")
        hosts[name] = list(item.get("services") or ["compute"])
    problem: dict = {}
    if layout == "kolla":
        config_dir = params.get("config_dir") or "/etc/kolla/config"
        problem = {"config_dir_problem": config_dir_problem(root, config_dir)}
        found = read_kolla(root, config_dir, hosts)
    elif layout == "nova_conf_d":
        if len(hosts) != 1:
            raise DeployedConfigError("layout nova_conf_d reads one host's files: give exactly one host in hosts")
        name, services = next(iter(hosts.items()))
        found = read_nova_conf_d(
            root, params.get("nova_conf") or "/etc/nova/nova.conf", params.get("config_dir") or "/etc/nova/nova.conf.d",
            name, services,
        )  # fmt: skip
    else:
        raise DeployedConfigError(f"layout {layout!r} is not one of kolla, nova_conf_d")
    placement: dict = {}
    if params.get("placement"):
        settings, sources = read_placement(root, params)
        placement = {"placement_config": settings, "placement_sources": sources}
    return {
        **placement,
        **problem,
        "deployed": {h: e["services"] for h, e in found.items()},
        "sources": {h: e["sources"] for h, e in found.items()},
        "templated": sorted(
            f"{h}/{s} {key}" for h, e in found.items() for s, c in e["services"].items() for key in templated(c)
        ),
    }
