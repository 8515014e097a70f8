# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA mig-parted configs (``version: v1``) to ``mig_layout`` device policy entries by PCI address, and back.

A mig-parted config names GPUs by index (``devices: all | [0, 1]``) and by ``device-filter``
(``0x233010DE``: product ID then vendor ID). For one host, the index is the position of the GPU in the
order nvidia-smi lists them: the host's NVIDIA display controllers bound to the ``nvidia`` driver, by PCI
address. So both directions need that host's ``pci_facts``: the policy selects GPUs by address, which
stays the same across boots.

What maps to what:

- ``mig-enabled: true`` with ``mig-devices`` -> an entry with ``mode: mig``, ``mig_layout`` (one
  ``{profile, count}`` per profile, in the config's order) and ``addresses``;
- ``mig-enabled: false`` -> an entry with ``mode: none`` (the collection gives the GPU to no one; the other
  user of the host keeps it whole).

A GPU matched by several items of one config takes the last one, as mig-parted applies them in order.
Refused, with the reason: ``mig-enabled: true`` without ``mig-devices`` (no ``mig_layout`` says "MIG on,
no instances"), a layout that does not fit a GPU whose model has a known profile table, and, going back,
a ``mig_layout`` with ``placement`` (mig-parted has no placements).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import mig_profiles
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy

ENTRY_KEYS = ("devices", "device-filter", "mig-enabled", "mig-devices")
MAX_GPUS = 64  # an index beyond any host's GPU count
MAX_INSTANCES = 64
_FILTER = re.compile(r"0x([0-9a-fA-F]{4})([0-9a-fA-F]{4})")
_NAME = re.compile(r"[^A-Za-z0-9_.-]")


class MigPartedError(AccelError):
    """A mig-parted config or policy that cannot be converted; the message names the item and the fix."""


def gpus(facts: Mapping) -> list[dict]:
    """The host's GPUs in nvidia-smi's index order: NVIDIA display controllers on the nvidia driver."""
    devices = facts.get("accel_pci_devices") if isinstance(facts, Mapping) else None
    if not isinstance(devices, list):
        raise MigPartedError("facts: give the host's facts from accel.openstack.pci_facts (with accel_pci_devices)")
    found = [
        d
        for d in devices
        if isinstance(d, Mapping)
        and d.get("vendor_id") == "10de"
        and str(d.get("class_code") or "").startswith("03")
        and not d.get("physfn")
        and d.get("driver") == "nvidia"
    ]
    return sorted(found, key=lambda d: normalize_address(d["address"]))


def _filters(value: object, where: str) -> list[tuple[str, str]] | None:
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        match = _FILTER.fullmatch(item.strip()) if isinstance(item, str) else None
        if match is None:
            raise MigPartedError(
                f"{where}: device-filter {item!r} is not a PCI ID like '0x233010DE' (device ID, then vendor ID)"
            )
        out.append((match.group(2).lower(), match.group(1).lower()))
    return out


def _indices(value: object, where: str, count: int) -> list[int]:
    if value == "all":
        return list(range(count))
    if not isinstance(value, list) or not value:
        raise MigPartedError(f"{where}: devices must be 'all' or a list of GPU indices, e.g. [0, 1]")
    out = []
    for index in value:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < MAX_GPUS:
            raise MigPartedError(f"{where}: device index {index!r} is not a GPU index from 0 to {MAX_GPUS - 1}")
        out.append(index)
    return out


def _layout(value: object, where: str) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise MigPartedError(f"{where}: mig-devices must map profile names to counts, e.g. {{'1g.10gb': 7}}")
    out = {}
    for profile, count in value.items():
        if not isinstance(profile, str) or not profile or len(profile) > 40:
            raise MigPartedError(f"{where}: profile {profile!r} is not a profile name like '1g.10gb'")
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_INSTANCES:
            raise MigPartedError(f"{where} ({profile}): count {count!r} must be a whole number from 0 to 64")
        out[profile] = count
    return out


def resolve(config: Mapping, facts: Mapping, config_name: str) -> dict[str, dict]:
    """What the named config makes of each GPU of this host: ``{address: {mig_enabled, mig_devices}}``."""
    if not isinstance(config, Mapping) or config.get("version") != "v1":
        raise MigPartedError("config: give a mig-parted config with version: v1 and mig-configs")
    configs = config.get("mig-configs")
    if not isinstance(configs, Mapping) or not configs:
        raise MigPartedError("config: mig-configs must map config names to lists of device items")
    if config_name not in configs:
        raise MigPartedError(
            f"config_name {config_name!r} is not in mig-configs; the config has {', '.join(sorted(map(str, configs)))}"
        )
    items = configs[config_name]
    if not isinstance(items, list):
        raise MigPartedError(f"mig-configs.{config_name}: must be a list of device items")
    host = gpus(facts)
    result: dict[str, dict] = {}
    for number, item in enumerate(items):
        where = f"mig-configs.{config_name}[{number}]"
        if not isinstance(item, Mapping):
            raise MigPartedError(f"{where}: must be a mapping with devices and mig-enabled")
        unknown = sorted(set(map(str, item)) - set(ENTRY_KEYS))
        if unknown:
            raise MigPartedError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(ENTRY_KEYS)}")
        enabled = item.get("mig-enabled")
        if not isinstance(enabled, bool):
            raise MigPartedError(f"{where}: mig-enabled must be true or false")
        layout = _layout(item.get("mig-devices", {}), where) if enabled else {}
        if enabled and not any(layout.values()):
            raise MigPartedError(
                f"{where}: mig-enabled with no mig-devices has no mig_layout equivalent; list the instances"
            )
        filters = _filters(item.get("device-filter"), where)
        for index in _indices(item.get("devices"), where, len(host)):
            if index >= len(host):
                continue  # mig-parted skips an index the host does not have
            gpu = host[index]
            if filters is not None and (gpu["vendor_id"], gpu["product_id"]) not in filters:
                continue
            if enabled:
                _check_fits(gpu, layout, where)
            result[normalize_address(gpu["address"])] = {"mig_enabled": enabled, "mig_devices": dict(layout)}
    return dict(sorted(result.items()))


def _check_fits(gpu: Mapping, layout: dict[str, int], where: str) -> None:
    model = mig_profiles.model_for(gpu.get("product_id"), gpu.get("product_name"))
    if model is None:
        return  # unknown model: nvidia_mig checks it on the host against the GPU's own table
    wanted = [{"profile": p, "count": c} for p, c in layout.items()]
    try:
        mig_profiles.plan_layout(model, wanted, label=f"{where} on {gpu['address']}")
    except mig_profiles.MigLayoutError as exc:
        raise MigPartedError(exc.msg) from None


def policy_from_mig_parted(config: Mapping, facts: Mapping, config_name: str, name_prefix: str = "mig") -> list[dict]:
    """Device policy entries for this host: one per GPU model and state, with the GPUs' addresses."""
    if not isinstance(name_prefix, str) or not name_prefix or _NAME.search(name_prefix) or len(name_prefix) > 40:
        raise MigPartedError("name_prefix must be letters, digits, '_', '.' or '-' (at most 40), e.g. 'mig'")
    by_address = {normalize_address(g["address"]): g for g in gpus(facts)}
    groups: dict[tuple, list[str]] = {}
    for address, state in resolve(config, facts, config_name).items():
        gpu = by_address[address]
        key = (gpu["vendor_id"], gpu["product_id"], state["mig_enabled"], tuple(state["mig_devices"].items()))
        groups.setdefault(key, []).append(address)
    entries = []
    for (vendor, product, enabled, layout), addresses in groups.items():
        entry: dict = {
            "name": f"{name_prefix}-{product}-{len(entries)}",
            "vendor_id": vendor,
            "product_id": product,
            "mode": "mig" if enabled else "none",
            "addresses": sorted(addresses),
        }
        if enabled:
            entry["mig_layout"] = [{"profile": p, "count": c} for p, c in layout if c]
        entries.append(entry)
    return entries


def mig_parted_from_policy(policy: list, facts: Mapping, config_name: str) -> dict:
    """A mig-parted config whose ``config_name`` gives this host's GPUs what the policy's MIG entries say.

    ``mode: mig`` entries become ``mig-enabled: true`` items, ``mode: none`` entries ``mig-enabled: false``
    items; each item lists the indices of the GPUs the entry selects on this host. Other modes are left out.
    """
    if not isinstance(config_name, str) or not config_name or _NAME.search(config_name):
        raise MigPartedError("config_name must be letters, digits, '_', '.' or '-', e.g. 'openstack'")
    entries = parse_policy(policy, "policy")
    host = gpus(facts)
    items = []
    for entry in entries:
        if entry.mode not in ("mig", "none"):
            continue
        indices = [
            i
            for i, gpu in enumerate(host)
            if entry.matches_ids(gpu.get("vendor_id"), gpu.get("product_id")) and entry.matches_address(gpu["address"])
        ]
        if not indices:
            continue
        item: dict = {"devices": indices, "mig-enabled": entry.mode == "mig"}
        if entry.mode == "mig":
            layout: dict[str, int] = {}
            for part in entry.mig_layout:
                if part.get("placement") is not None:
                    raise MigPartedError(
                        f"{entry.label}: mig_layout {part['profile']} has a placement, which mig-parted cannot say; "
                        "remove the placement to share the layout with mig-parted"
                    )
                layout[part["profile"]] = layout.get(part["profile"], 0) + int(part.get("count", 1))
            item["mig-devices"] = layout
        items.append(item)
    return {"version": "v1", "mig-configs": {config_name: items}}
