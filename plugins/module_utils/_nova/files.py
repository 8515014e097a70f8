# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the rendered Nova config goes for each layout, and the plan that writes it.

``kolla`` (run once, on the deploy host) writes, under ``config_dir`` (``/etc/kolla/config``)::

    nova/<inventory_hostname>/nova.conf         nova-compute fragment of that host
    nova/nova-api.conf                          aliases (+ pci_in_placement)
    nova/nova-scheduler.conf                    aliases, enabled_filters (+ pci_in_placement)
    nova/nova-conductor.conf                    pci_in_placement (cell conductors)
    nova/nova-super-conductor.conf              pci_in_placement (the super conductor)
    nova/<inventory_hostname>/provider_config.yaml   the host's provider config document, which
                                                Kolla reads through nova_cell_compute_provider_config

What Kolla-Ansible renders itself matters (``kolla_globals``, the operator's globals.yml): with
``enable_neutron_sriov`` its template sets ``[pci] passthrough_whitelist`` with devname entries, which
oslo.config joins to ``device_spec`` and Nova refuses with ``report_in_placement``; with ``enable_blazar``
(or the fake driver) its template sets ``[filter_scheduler] enabled_filters``, which the rendered list
extends, together with whatever ``global.conf`` / ``nova.conf`` / ``nova/nova-scheduler.conf`` already set.

``nova_conf_d`` (run on each host) writes ``<config_dir>/<file_name>`` (``/etc/nova/nova.conf.d/
50-accel-openstack.conf``) holding the parts of the services that host runs, and
``<provider_config_dir>/accel-openstack.yaml`` (``/etc/nova/provider_config``) when it needs one.

Every INI file is edited through :mod:`.._host.ini_file`, so only the keys written here are owned. The
provider config file is ours entirely (JSON, which is YAML and needs no YAML library on the host).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import owned_keys, update_text
from ansible_collections.accel.openstack.plugins.module_utils._host.oslo_ini import parse_groups
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._inputs import InputError, host_facts, kind_of
from ansible_collections.accel.openstack.plugins.module_utils._names.text import (
    component_problem,
    directory_problem,
    text_problem,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import (
    LAYOUTS,
    NOVA_DEFAULT_FILTERS,
    FleetRendering,
    HostInput,
    IniConfig,
    Options,
    RenderError,
    render_fleet,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.equivalence import (
    MAX_COMPARED,
    conf_d_view,
    kolla_views,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError

SERVICES = ("compute", "api", "scheduler", "conductor")
PROVIDER_CONFIG_NAME = "accel-openstack.yaml"
# Where the kolla layout puts each host's provider config; globals.yml points
# nova_cell_compute_provider_config at it (docs/kolla.md).
KOLLA_PROVIDER_CONFIG = "provider_config.yaml"
# What Kolla-Ansible 23's nova role template sets as enabled_filters, by the globals that change it.
KOLLA_BLAZAR_FILTERS = NOVA_DEFAULT_FILTERS + ("BlazarFilter",)
KOLLA_FAKE_FILTERS = ("ComputeFilter", "ComputeCapabilitiesFilter", "ImagePropertiesFilter")
EMPTY_PROVIDER_CONFIG = {"meta": {"schema_version": "1.0"}, "providers": []}
# Matches no device (PCI reserves vendor ffff for "no device"): the kolla layout sets it on hosts without
# passthrough devices, so a device_spec left in global.conf or nova.conf cannot reach them through the merge.
MATCH_NOTHING = '{"vendor_id": "ffff", "product_id": "ffff"}'
FILE_MODE = 0o640  # Nova's files may hold the aliases of a cloud: readable by their group only
DEFAULT_DIRS = {"kolla": "/etc/kolla/config", "nova_conf_d": "/etc/nova/nova.conf.d"}


class LayoutError(AccelError):
    """The layout options do not fit together; the message names the option to fix."""


def merge_ini(*configs: IniConfig) -> IniConfig:
    """Several services' parts in one file; a key set by two parts must agree (aliases do)."""
    merged: IniConfig = {}
    for config in configs:
        for section, keys in config.items():
            target = merged.setdefault(section, {})
            for key, values in keys.items():
                if key in target and target[key] != values:
                    raise LayoutError(f"[{section}] {key} differs between services; cannot put them in one file")
                target[key] = list(values)
    return merged


def provider_config_text(document: dict | None) -> str:
    return "" if document is None else json.dumps(document, indent=2, sort_keys=True) + "\n"


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/")] + [p.strip("/") for p in parts])


def wanted_files(
    rendering: FleetRendering,
    layout: str,
    config_dir: str,
    host: str | None = None,
    services: tuple[str, ...] = SERVICES,
    file_name: str = "50-accel-openstack.conf",
    provider_config_dir: str = "/etc/nova/provider_config",
) -> list[tuple[str, str, object]]:
    """(host path, kind, desired content) for every file the layout writes."""
    if layout == "kolla":
        files: list[tuple[str, str, object]] = []
        for name, config in rendering.compute.items():
            if not config.get("pci", {}).get("device_spec"):
                config = {**config, "pci": {"device_spec": [MATCH_NOTHING], **config.get("pci", {})}}
            files.append((_join(config_dir, "nova", name, "nova.conf"), "ini", config))
            # Every compute host gets a valid document, so the lookup in globals.yml always finds one.
            document = rendering.provider_configs.get(name) or EMPTY_PROVIDER_CONFIG
            files.append(
                (_join(config_dir, "nova", name, KOLLA_PROVIDER_CONFIG), "whole", provider_config_text(document))
            )
            # Earlier releases wrote here for a hand-made mount; Kolla reads the file above instead.
            files.append((_join(config_dir, "nova", name, "provider_config", PROVIDER_CONFIG_NAME), "whole", ""))
        files.append((_join(config_dir, "nova", "nova-api.conf"), "ini", rendering.api))
        files.append((_join(config_dir, "nova", "nova-scheduler.conf"), "ini", rendering.scheduler))
        files.append((_join(config_dir, "nova", "nova-conductor.conf"), "ini", rendering.conductor))
        files.append((_join(config_dir, "nova", "nova-super-conductor.conf"), "ini", rendering.conductor))
        return files
    if layout != "nova_conf_d":
        raise LayoutError(f"layout {layout!r} is not one of {', '.join(LAYOUTS)}")
    if not host or host not in rendering.compute:
        raise LayoutError(
            f"layout nova_conf_d writes one host's file: set host to one of the hosts given ({host!r} is not)"
        )
    parts = []
    if "compute" in services:
        parts.append(rendering.compute[host])
    if "api" in services:
        parts.append(rendering.api)
    if "scheduler" in services:
        parts.append(rendering.scheduler)
    if "conductor" in services:
        parts.append(rendering.conductor)
    files = [(_join(config_dir, file_name), "ini", merge_ini(*parts))]
    if "compute" in services:
        files.append(
            (
                _join(provider_config_dir, PROVIDER_CONFIG_NAME),
                "whole",
                provider_config_text(rendering.provider_configs.get(host)),
            )
        )
    return files


def read_ini(text: str, skip_owned: bool = True, path: str = "the file") -> IniConfig:
    """The keys a file sets, read as oslo.config reads it (groups by the names Nova looks them up by,
    continuation lines joined, repeated keys accumulated; a Kolla-Ansible override's Jinja statement lines
    left out as rendering removes them), without the keys our header says we own. A file oslo.config
    refuses is refused here too (:class:`OsloIniError`, naming ``path`` and the line)."""
    skip = owned_keys(text) if skip_owned else frozenset()
    config = parse_groups(text, path, template_lines=True)
    return {
        group: kept
        for group, keys in config.items()
        if (kept := {key: values for key, values in keys.items() if (group, key) not in skip})
    }


def _true(values: list[str] | None) -> bool:
    return bool(values) and values[-1].strip().lower() in ("true", "yes", "on", "1")


def check_report_in_placement(changes: list[FileChange]) -> None:
    """Refuse to turn ``[pci] report_in_placement`` off where a file we own had it on."""
    for item in changes:
        if not item.before or item.path.endswith((".yaml", ".yml")):
            continue
        before = read_ini(item.before, skip_owned=False, path=item.path).get("pci", {}).get("report_in_placement")
        after = read_ini(item.after or "", skip_owned=False, path=item.path).get("pci", {}).get("report_in_placement")
        if _true(before) and not _true(after):
            raise LayoutError(
                f"{item.path} has [pci] report_in_placement = true and this run would turn it off; Nova "
                "forbids that once PCI devices are in Placement (nova-compute refuses to start rather than "
                "orphan their providers and allocations): keep accel_nova_report_in_placement: true",
                path=item.path,
            )


def kolla_whitelist(kolla_globals: dict) -> list:
    """What Kolla-Ansible 23's nova-cell template renders as ``[pci] passthrough_whitelist``."""
    if "nova_pci_passthrough_whitelist" in kolla_globals:
        value = kolla_globals["nova_pci_passthrough_whitelist"]
        return list(value) if isinstance(value, list) else [value] if value else []
    if not _true([str(kolla_globals.get("enable_neutron_sriov", False))]):
        return []
    mappings = kolla_globals.get("neutron_sriov_physnet_mappings") or {"physnet1": "ens785f0"}
    if not isinstance(mappings, Mapping) or not all(isinstance(v, str) for v in [*mappings, *mappings.values()]):
        raise LayoutError(
            f"kolla_globals: neutron_sriov_physnet_mappings (globals.yml) is {kind_of(mappings)}"
            f"{' holding a name that is not a string' if isinstance(mappings, Mapping) else ''}; Kolla-Ansible "
            "renders it as a mapping of physical network to interface name, e.g. {physnet1: ens785f0}: "
            "correct it in globals.yml"
        )
    return [{"physical_network": net, "devname": dev} for net, dev in mappings.items()]


def _physnet_example(whitelist: list) -> str:
    """The physical network the whitelist gives, for the message (the first one, else physnet1)."""
    for item in whitelist:
        if isinstance(item, dict) and item.get("physical_network"):
            return str(item["physical_network"])
    return "physnet1"


def check_kolla_globals(kolla_globals: dict, options: Options) -> None:
    """Refuse a globals combination whose rendered nova.conf Nova would refuse."""
    whitelist = kolla_whitelist(kolla_globals)
    devnames = [e for e in whitelist if isinstance(e, dict) and "devname" in e] or [
        e for e in whitelist if not isinstance(e, dict)
    ]
    if devnames and options.report_in_placement:
        source = (
            "nova_pci_passthrough_whitelist"
            if "nova_pci_passthrough_whitelist" in kolla_globals
            else "enable_neutron_sriov (through nova_pci_passthrough_whitelist)"
        )
        raise LayoutError(
            f"globals.yml: {source} makes Kolla-Ansible render [pci] passthrough_whitelist = "
            f"{json.dumps(whitelist)}; oslo.config joins it to the device_spec the collection writes and "
            "Nova refuses devname entries with [pci] report_in_placement. Set nova_pci_passthrough_whitelist: "
            "[] in globals.yml and describe the SR-IOV VFs in accel_device_policy by vendor_id/product_id "
            f"or addresses with physical_network: {_physnet_example(whitelist)} (Nova keeps them out of "
            "Placement, as Neutron's), or keep accel_nova_report_in_placement: false",
            setting="nova_pci_passthrough_whitelist",
        )


def template_filters(kolla_globals: dict) -> tuple[str, ...]:
    """The enabled_filters Kolla-Ansible 23's nova role template writes for these globals."""
    if _true([str(kolla_globals.get("enable_nova_fake", False))]):
        return KOLLA_FAKE_FILTERS
    if _true([str(kolla_globals.get("enable_blazar", False))]):
        return KOLLA_BLAZAR_FILTERS
    return NOVA_DEFAULT_FILTERS


def current_filters(root: HostRoot, config_dir: str, kolla_globals: dict) -> tuple[str, ...]:
    """The enabled_filters nova-scheduler runs: Kolla's template, then global.conf and nova.conf in
    Kolla's order (a later file replaces the list), extended by what nova-scheduler.conf holds."""
    filters: tuple[str, ...] = template_filters(kolla_globals)
    for name in ("global.conf", "nova.conf"):
        text = root.read_text(_join(config_dir, name), default="") or ""
        values = read_ini(text, path=_join(config_dir, name)).get("filter_scheduler", {}).get("enabled_filters")
        if values:
            filters = _split(values)
    # nova-scheduler.conf is read last and whole: whether the operator or an earlier run set the list
    # there, every filter in it stays.
    path = _join(config_dir, "nova/nova-scheduler.conf")
    text = root.read_text(path, default="") or ""
    values = read_ini(text, skip_owned=False, path=path).get("filter_scheduler", {}).get("enabled_filters")
    if values:
        filters += tuple(f for f in _split(values) if f not in filters)
    return filters


def _split(values: list[str]) -> tuple[str, ...]:
    return tuple(f.strip() for f in ",".join(values).split(",") if f.strip())


def plan_files(root: HostRoot, wanted: list[tuple[str, str, object]], mode: int = FILE_MODE) -> list[FileChange]:
    """Current -> desired text for each file ("ini": our keys only; "whole": the text given); reads only.

    A file left with nothing in it is deleted (``after`` is None).
    """
    changes = []
    for path, kind, content in wanted:
        before = root.read_existing(path)
        after = update_text(before or "", content, path) if kind == "ini" else content
        changes.append(FileChange(path, before, after or None, mode))
    check_report_in_placement(changes)
    return changes


def host_inputs(raw_hosts: list[dict]) -> list[HostInput]:
    hosts = []
    for index, raw in enumerate(raw_hosts, start=1):
        if not isinstance(raw, dict) or not raw.get("name"):
            raise LayoutError(f"hosts item {index} needs a name (the inventory hostname) and facts")
        facts = raw.get("facts") or {}
        if not isinstance(facts, dict):
            raise LayoutError(f"hosts item {index} ({raw['name']}): facts must be the host's accel_* facts")
        try:
            facts = host_facts(facts, f"hosts item {index} ({raw['name']}): facts")
        except InputError as exc:
            raise LayoutError(f"{exc.msg}; run the discover stage for that host again") from None
        hosts.append(
            HostInput(
                name=raw["name"],
                facts=facts,
                hypervisor_hostname=raw.get("hypervisor_hostname") or None,
                compute_node_traits=tuple(raw.get("compute_node_traits") or ()),
                compute_node_inventories=dict(raw.get("compute_node_inventories") or {}),
                extra_providers=tuple(raw.get("provider_config") or ()),
                libvirt=raw.get("libvirt"),
            )
        )
    return hosts


_FILTER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def filter_name_problem(name: object) -> str | None:
    """Why ``name`` is not one scheduler filter class name: a comma would make it several filters in the
    written list (and the list grow on every run), a space or control character a different name."""
    if isinstance(name, str) and _FILTER_NAME.fullmatch(name):
        return None
    return (
        "is not one scheduler filter class name (letters, digits and _, such as PciPassthroughFilter); "
        "give each filter as its own list item"
    )


def check_names(params: dict) -> None:
    """Refuse every name that becomes a path (or a word of the printed command) unless it is plain.

    Host names and the file name are single path components (no ``/``, no ``..``, no control
    characters), the directories absolute paths without ``..``: a file is only ever written in the
    directory the options name.
    """
    checks: list[tuple[str, object, Callable[[object], str | None]]] = []  # (label, value, its check)
    for index, raw in enumerate(params.get("hosts") or [], start=1):
        raw = raw if isinstance(raw, dict) else {}
        checks.append((f"hosts[{index}].name", raw.get("name"), component_problem))
        checks.append((f"hosts[{index}].hypervisor_hostname", raw.get("hypervisor_hostname"), text_problem))
    checks += [(option, params.get(option), component_problem) for option in ("host", "file_name")]
    for index, name in enumerate(params.get("kolla_control_hosts") or [], start=1):
        checks.append((f"kolla_control_hosts[{index}]", name, component_problem))
    checks += [
        (option, params.get(option), directory_problem) for option in ("config_dir", "provider_config_dir", "nova_conf")
    ]
    checks.append(("kolla_inventory", params.get("kolla_inventory"), text_problem))
    for index, name in enumerate(params.get("enabled_filters") or [], start=1):
        checks.append((f"enabled_filters[{index}]", name, filter_name_problem))
    problems = []
    for label, value, check in checks:
        problem = check(value) if value is not None else None
        if problem:
            problems.append(f"{label} {value!r} {problem}")
    if problems:
        raise LayoutError(
            "names that become paths must be plain, so no file is written outside its directory: "
            + "; ".join(problems),
            errors=problems,
        )


def plan(root: HostRoot, params: dict) -> tuple[FleetRendering, list[FileChange]]:
    """Render for the module parameters and plan every file; raises the domain errors."""
    check_names(params)
    layout = params["layout"]
    config_dir = params.get("config_dir") or DEFAULT_DIRS[layout]
    kolla_globals = dict(params.get("kolla_globals") or {})
    options = Options(
        report_in_placement=bool(params.get("report_in_placement")),
        pci_in_placement=bool(params.get("pci_in_placement")),
        add_filters=tuple(params.get("enabled_filters") or ()),
    )
    if layout == "kolla":
        check_kolla_globals(kolla_globals, options)
        options.enabled_filters = current_filters(root, config_dir, kolla_globals)
    try:
        rendering = render_fleet(host_inputs(params["hosts"]), params["policy"], options)
    except (PolicyError, RenderError) as exc:
        raise RenderError(exc.errors, intro="the device policy cannot be rendered:") from exc
    files = wanted_files(
        rendering,
        layout,
        config_dir,
        host=params.get("host"),
        services=tuple(params.get("services") or SERVICES),
        file_name=params.get("file_name") or "50-accel-openstack.conf",
        provider_config_dir=params.get("provider_config_dir") or "/etc/nova/provider_config",
    )
    changes = plan_files(root, files)
    if not params.get("take_ownership") and any(c.changed for c in changes) and same_for_nova(root, params, changes):
        # The files already say this to Nova in the operator's words: leave them as written.
        changes = [FileChange(c.path, c.before, c.before, c.mode) for c in changes]
    return rendering, changes


def same_for_nova(root: HostRoot, params: dict, changes: list[FileChange]) -> bool:
    """Whether every service reads the same config, as Nova parses it, before and after ``changes``."""
    layout = params["layout"]
    config_dir = params.get("config_dir") or DEFAULT_DIRS[layout]
    if layout == "kolla":
        compute = [h["name"] for h in params["hosts"]]
        control = list(params.get("kolla_control_hosts") or [])
        if (len(compute) + len(control)) * 5 > MAX_COMPARED:
            return False
        views = [
            kolla_views(root, changes, config_dir, compute, control, params.get("kolla_super_conductor", True), after)
            for after in (False, True)
        ]
    else:
        nova_conf = params.get("nova_conf") or "/etc/nova/nova.conf"
        views = [conf_d_view(root, changes, nova_conf, config_dir, after) for after in (False, True)]
    return views[0] == views[1]


def changed_hosts(
    plans: list[FileChange], config_dir: str, compute_hosts: list[str], control_hosts: list[str]
) -> list[str]:
    """The hosts whose Nova config a kolla layout run changed: a compute host for its own files, every
    control host when a file all services read (api, scheduler, conductor) changed."""
    nova_dir = _join(config_dir, "nova") + "/"
    hosts: set[str] = set()
    for item in plans:
        if not item.changed or not item.path.startswith(nova_dir):
            continue
        head = item.path[len(nova_dir) :].split("/", 1)[0]
        if head in compute_hosts:
            hosts.add(head)
        else:
            hosts.update(control_hosts)
    return sorted(hosts)


def reconfigure_command(hosts: list[str], inventory: str | None = None) -> str | None:
    """The Kolla-Ansible command that makes Nova read the changed files, or None when nothing changed."""
    if not hosts:
        return None
    inventory_part = f"-i {shlex.quote(inventory)} " if inventory else ""
    return f"kolla-ansible reconfigure {inventory_part}-t nova --limit {shlex.quote(','.join(hosts))}"
