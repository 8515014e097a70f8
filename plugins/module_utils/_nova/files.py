# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the rendered Nova config goes for each layout, and the plan that writes it.

``kolla`` (run once, on the deploy host) writes, under ``config_dir`` (``/etc/kolla/config``)::

    nova/<inventory_hostname>/nova.conf         nova-compute fragment of that host
    nova/nova-api.conf                          aliases (+ pci_in_placement)
    nova/nova-scheduler.conf                    aliases, enabled_filters (+ pci_in_placement)
    nova/<inventory_hostname>/provider_config/accel-openstack.yaml   when the host needs one

``nova_conf_d`` (run on each host) writes ``<config_dir>/<file_name>`` (``/etc/nova/nova.conf.d/
50-accel-openstack.conf``) holding the parts of the services that host runs, and
``<provider_config_dir>/accel-openstack.yaml`` (``/etc/nova/provider_config``) when it needs one.

Every INI file is edited through :mod:`.._host.ini_file`, so only the keys written here are owned. The
provider config file is ours entirely (JSON, which is YAML and needs no YAML library on the host).
"""

from __future__ import annotations

import json

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import update_text
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import (
    LAYOUTS,
    FleetRendering,
    HostInput,
    IniConfig,
    Options,
    RenderError,
    render_fleet,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError

SERVICES = ("compute", "api", "scheduler")
PROVIDER_CONFIG_NAME = "accel-openstack.yaml"
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
            files.append(
                (
                    _join(config_dir, "nova", name, "provider_config", PROVIDER_CONFIG_NAME),
                    "whole",
                    provider_config_text(rendering.provider_configs.get(name)),
                )
            )
        files.append((_join(config_dir, "nova", "nova-api.conf"), "ini", rendering.api))
        files.append((_join(config_dir, "nova", "nova-scheduler.conf"), "ini", rendering.scheduler))
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


def plan_files(root: HostRoot, wanted: list[tuple[str, str, object]], mode: int = FILE_MODE) -> list[FileChange]:
    """Current -> desired text for each file ("ini": our keys only; "whole": the text given); reads only.

    A file left with nothing in it is deleted (``after`` is None).
    """
    changes = []
    for path, kind, content in wanted:
        before = root.read_existing(path)
        after = update_text(before or "", content) if kind == "ini" else content
        changes.append(FileChange(path, before, after or None, mode))
    return changes


def host_inputs(raw_hosts: list[dict]) -> list[HostInput]:
    hosts = []
    for index, raw in enumerate(raw_hosts, start=1):
        if not isinstance(raw, dict) or not raw.get("name"):
            raise LayoutError(f"hosts item {index} needs a name (the inventory hostname) and facts")
        facts = raw.get("facts") or {}
        if not isinstance(facts, dict):
            raise LayoutError(f"hosts item {index} ({raw['name']}): facts must be the host's accel_* facts")
        hosts.append(
            HostInput(
                name=raw["name"],
                facts=facts,
                hypervisor_hostname=raw.get("hypervisor_hostname") or None,
                compute_node_traits=tuple(raw.get("compute_node_traits") or ()),
                compute_node_inventories=dict(raw.get("compute_node_inventories") or {}),
            )
        )
    return hosts


def plan(root: HostRoot, params: dict) -> tuple[FleetRendering, list[FileChange]]:
    """Render for the module parameters and plan every file; raises the domain errors."""
    layout = params["layout"]
    options = Options(
        report_in_placement=bool(params.get("report_in_placement")),
        pci_in_placement=bool(params.get("pci_in_placement")),
        enabled_filters=tuple(params.get("enabled_filters") or Options().enabled_filters),
    )
    try:
        rendering = render_fleet(host_inputs(params["hosts"]), params["policy"], options)
    except (PolicyError, RenderError) as exc:
        raise RenderError(exc.errors, intro="the device policy cannot be rendered:") from exc
    files = wanted_files(
        rendering,
        layout,
        params.get("config_dir") or DEFAULT_DIRS[layout],
        host=params.get("host"),
        services=tuple(params.get("services") or SERVICES),
        file_name=params.get("file_name") or "50-accel-openstack.conf",
        provider_config_dir=params.get("provider_config_dir") or "/etc/nova/provider_config",
    )
    return rendering, plan_files(root, files)
