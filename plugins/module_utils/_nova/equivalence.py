# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a planned set of Nova config files changes what Nova reads.

A cloud built by hand already holds, in its own files and words, the config the nova_config stage
renders from the adopted policy. Rewriting those files would change their text (the ownership header,
the key order, the spacing, the alias repeated in the per-service files, an empty provider config) and
nothing Nova reads. :func:`same_for_nova` merges the files each service reads, before and after the plan,
in the layout's precedence (Kolla-Ansible's ``merge_configs`` or oslo.config's ``--config-dir``), and
compares the results as Nova parses them:

- ``[pci] device_spec`` and ``[pci] alias``: the JSON objects, in order, an exact repeat dropped (Nova
  matches the first spec; a repeated alias is the same alias), their IDs as Nova compares them
  (:mod:`.device_ids`); the no-device placeholder (``vendor_id`` ``ffff``) matches nothing and counts as
  no entry;
- comma lists (``enabled_mdev_types``, ``enabled_filters``): the names in order;
  ``[mdev_*] device_addresses``: the set of addresses;
- ``report_in_placement``, ``pci_in_placement`` and the ``[libvirt]`` booleans as oslo.config reads a
  boolean; ``[mdev_*] mdev_class = VGPU`` and ``[libvirt] live_migration_permit_post_copy = false`` (the
  default the stage writes on vGPU hosts; no Kolla-Ansible template sets the key) are Nova's defaults; any
  other key: its last value;
- provider config documents: their ``providers``, an absent file being an empty list.
"""

from __future__ import annotations

import json

from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova import device_ids
from ansible_collections.accel.openstack.plugins.module_utils._nova.deployed import (
    MULTI_VALUED,
    kolla_sources,
    merge_kolla,
    merge_oslo,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.libvirt import POST_COPY
from ansible_collections.accel.openstack.plugins.module_utils._nova.libvirt_options import OPTIONS as LIBVIRT_OPTIONS

COMMA_LISTS = {("devices", "enabled_mdev_types"), ("filter_scheduler", "enabled_filters")}
# oslo.config BoolOpt options among the keys the stage writes, and the spellings oslo.config accepts.
BOOLEAN_KEYS = {("pci", "report_in_placement"), ("filter_scheduler", "pci_in_placement")} | {
    ("libvirt", name) for name, spec in LIBVIRT_OPTIONS.items() if spec[0] == "bool"
}
BOOLEANS = {"true": "true", "yes": "true", "on": "true", "1": "true", "false": "false", "no": "false", "off": "false"}
BOOLEANS["0"] = "false"
NO_DEVICE = {"vendor_id": "ffff", "product_id": "ffff"}
MAX_COMPARED = 4096  # services x hosts merged for one plan; beyond it the plan is written as planned


def _as_nova_reads(item: object, key: str) -> object:
    """A device_spec or alias object with its IDs as Nova compares them (``"0x10DE"`` in a device_spec is
    ``10de``, an alias ``"10DE"`` is ``10de``); an ID Nova refuses is left as written."""
    if not isinstance(item, dict):
        return item
    try:
        if key == "alias":
            ids = {k: device_ids.alias_id(item, k) for k in ("vendor_id", "product_id")}
        else:
            vendor, product = device_ids.spec_ids(item)
            ids = {"vendor_id": vendor, "product_id": product}
    except device_ids.DeviceIdError:
        return item
    return {**item, **{k: v for k, v in ids.items() if k in item}}


def _objects(values: list[str], key: str = "device_spec") -> list:
    found: list = []
    for value in values:
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        for item in parsed if isinstance(parsed, list) else [parsed]:
            item = _as_nova_reads(item, key)
            canonical = json.dumps(item, sort_keys=True) if isinstance(item, dict) else str(item)
            if item != NO_DEVICE and canonical not in found:
                found.append(canonical)
    return found


def normalized(config: dict) -> dict:
    """``{(section, key): value}`` as Nova reads each key; keys that read as unset are left out."""
    result: dict = {}
    for section, keys in config.items():
        for key, values in keys.items():
            if not values:
                continue
            if (section, key) in MULTI_VALUED:
                value: object = tuple(_objects(values, key))
            elif (section, key) in COMMA_LISTS:
                value = tuple(n.strip() for n in values[-1].split(",") if n.strip())
            elif section.startswith("mdev_") and key == "device_addresses":
                value = tuple(sorted({a.strip().lower() for a in values[-1].split(",") if a.strip()}))
            elif section.startswith("mdev_") and key == "mdev_class" and values[-1].strip() == "VGPU":
                continue
            elif (section, key) in BOOLEAN_KEYS:
                value = BOOLEANS.get(values[-1].strip().lower(), values[-1].strip())
                if (section, key) == ("libvirt", POST_COPY) and value == "false":
                    continue
            else:
                value = values[-1].strip()
            if value != ():
                result[(section, key)] = value
    return result


def _providers(text: str | None) -> object:
    if not text:
        return []
    try:
        return (json.loads(text) or {}).get("providers") or []
    except (ValueError, AttributeError):
        return text


class _Overlay:
    """The host's files with the plan's ``after`` text in place of ``before``."""

    def __init__(self, root: HostRoot, changes: list[FileChange], after: bool):
        self.root = root
        self.planned = {c.path: (c.after if after else c.before) for c in changes}

    def read(self, path: str) -> str | None:
        if path in self.planned:
            return self.planned[path]
        return self.root.read_text(path)


def _merged_kolla(view: _Overlay, config_dir: str, service: str, host: str) -> dict:
    found = [(p, view.read(p)) for p in kolla_sources(config_dir, service, host)]
    found = [(p, t) for p, t in found if t is not None]
    return normalized(merge_kolla([t for _p, t in found], [p for p, _t in found]))


def kolla_views(
    root: HostRoot,
    changes: list[FileChange],
    config_dir: str,
    compute_hosts: list[str],
    control_hosts: list[str],
    super_conductor: bool,
    after: bool,
) -> dict:
    """What every Kolla service reads, before or after the plan, normalized."""
    view = _Overlay(root, changes, after)
    views: dict = {}
    for host in compute_hosts:
        views[(host, "compute")] = _merged_kolla(view, config_dir, "compute", host)
        for path in (c.path for c in changes if c.path.endswith(".yaml") and f"/nova/{host}/" in c.path):
            views[(host, path)] = _providers(view.read(path))
    services = ["api", "scheduler", "conductor"] + (["super-conductor"] if super_conductor else [])
    for host in control_hosts or ["-"]:
        for service in services:
            views[(host, service)] = _merged_kolla(view, config_dir, service, host)
    return views


def conf_d_view(root: HostRoot, changes: list[FileChange], nova_conf: str, config_dir: str, after: bool) -> dict:
    """What the services of one nova_conf_d host read (nova.conf, then nova.conf.d in name order)."""
    view = _Overlay(root, changes, after)
    names = {n for n in root.listdir(config_dir, limit=257) if n.endswith(".conf")}
    base = config_dir.rstrip("/")
    names |= {c.path[len(base) + 1 :] for c in changes if c.path.startswith(base + "/") and c.path.endswith(".conf")}
    paths = [nova_conf] + [f"{base}/{n}" for n in sorted(names)]
    found = [(p, t) for p, t in ((p, view.read(p)) for p in paths) if t is not None]
    result: dict = {"config": normalized(merge_oslo([t for _p, t in found], [p for p, _t in found]))}
    for change in changes:
        if change.path.endswith((".yaml", ".yml")):
            result[change.path] = _providers(view.read(change.path))
    return result


def same_for_nova(before: dict, after: dict) -> bool:
    return before == after
