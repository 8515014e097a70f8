# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One validation layer for what reaches the controller: flavors, fleets, facts, caches, answers.

Every lookup, filter and the fleet inventory pass their inputs through here before any work starts, so
the domain code (the flavor translation, the solver, the modelled Nova filters) sees plain, bounded
values:

- **Types as Ansible delivers them.** ansible-core 2.19 hands plugins tagged values (``str``, ``int``,
  ``dict`` and ``list`` subclasses carrying their origin), lazy template containers that template on
  access, and ``AnsibleUnsafe`` text. ``plain`` (``module_utils/_inputs.py``, shared with the modules)
  copies such data into plain ``dict``, ``list``, ``str``, ``int``, ``float``, ``bool`` and ``None``,
  nested at most ``MAX_DEPTH`` deep and holding at most ``MAX_ITEMS`` values, and refuses a whole
  number of more than 63 bits (a 5,000-digit number) by its size, without converting it to text.
- **Numbers that set an amount of work.** Nova's API takes a flavor's vCPUs, RAM, disk, ephemeral disk
  and swap as whole numbers up to 2,147,483,647, extra spec keys of 1 to 255 characters from
  ``[a-zA-Z0-9-_:. ]`` and values of at most 255 characters: :func:`flavor` refuses the same, with a
  message naming the flavor, the key and the fix. Beyond Nova's limits, the collection computes per CPU,
  per NUMA cell and per device only up to the largest host it models (:data:`MAX_HOST_CPUS` CPUs,
  :data:`MAX_NUMA_CELLS` NUMA cells, :data:`MAX_DEVICES` PCI devices per flavor): a flavor that pins more
  CPUs, asks more guest NUMA nodes or more devices than that fits no host, and is reported so
  (``too_big``) without the work.
- **Records.** Root provider records of a fleet snapshot (``disabled``, ``numa_cells``, ``pci_pools``),
  discovery facts (``accel_numa_nodes``, ``accel_pci_devices``) and CPU sets are checked field by field;
  a wrong type or an out-of-range number is refused with the record and the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._inputs import (
    _DIGITS,
    _HEX4,
    _LARGEST,
    MAX_HOST_CPUS,
    MAX_INT,
    MAX_NUMA_CELLS,
    InputError,
    boolean,
    cpu_set_problem,
    discovery_entry,
    integer,
    kind_of,
    plain,
    shown,
    text,
)

# PCI devices one flavor may ask for (each becomes a request group when PCI is in Placement).
MAX_DEVICES = 1024
# Extra specs of one flavor.
MAX_EXTRA_SPECS = 4096
_SPEC_KEY = re.compile(r"[a-zA-Z0-9\-_:. ]{1,255}")
_CPU_SPEC_KEYS = ("hw:cpu_dedicated_mask", "hw:cpu_realtime_mask")
_CPU_SPEC_PREFIXES = ("hw:numa_cpus.",)
DEVICE_TYPES = ("type-PCI", "type-PF", "type-VF")


class FlavorInputError(InputError):
    """A flavor refused before its translation: ``code`` is ``invalid_flavor`` (Nova's API refuses it) or
    ``too_big`` (Nova takes it, but it fits no host the collection models)."""

    def __init__(self, msg: str, name: str | None, code: str = "invalid_flavor"):
        super().__init__(msg, flavor=name, code=code)
        self.name = name
        self.code = code


# -- flavors ---------------------------------------------------------------------------------------
_SIZES = (("vcpus", 1, "vCPUs", True), ("ram", 1, "MB", True), ("disk", 0, "GB", True))
_OPTIONAL_SIZES = (("ephemeral", "GB"), ("swap", "MB"), ("OS-FLV-EXT-DATA:ephemeral", "GB"))


def flavor(value, index: int, image: Mapping | None = None) -> dict:
    """One flavor as plain data, checked as Nova's API checks it and bounded for the collection's work.

    ``image`` (the image properties) counts too: ``hw_cpu_policy`` and ``hw_numa_nodes`` set the same work
    as the flavor's ``hw:cpu_policy`` and ``hw:numa_nodes``. Raises FlavorInputError naming the flavor (by
    name, else by position) and the key."""
    where = f"flavors[{index}]"
    raw_name = value.get("name") if isinstance(value, Mapping) else None
    if isinstance(raw_name, str) and 0 < len(raw_name) <= 255:
        where = f"flavor {str(raw_name)!r}"
    try:
        data = plain(value, where, max_items=100_000)
    except InputError as exc:
        raise FlavorInputError(exc.msg, str(raw_name) if where != f"flavors[{index}]" else None) from None
    if not isinstance(data, Mapping):
        raise FlavorInputError(
            f"{where} is {kind_of(data)} ({shown(data)}); a flavor is a mapping with name, vcpus, ram and disk", None
        )
    name = data.get("name")
    if isinstance(name, str) and name and len(name) <= 255:
        label = f"flavor {name!r}"
    else:
        label = where
        if name is not None:
            problem = (
                f"is {len(name):,} characters long; Nova takes at most 255"
                if isinstance(name, str) and name
                else f"is {kind_of(name)} ({shown(name)}); give the flavor's name"
            )
            raise FlavorInputError(f"{where}: name {problem}", None)
    who = name if isinstance(name, str) else None

    def refuse(message: str, code: str = "invalid_flavor"):
        raise FlavorInputError(f"{label}: {message}", who, code)

    for key, _minimum, unit, _required in _SIZES:
        if data.get(key) is None:
            continue  # the translation names a missing size
        if isinstance(data[key], bool):
            refuse(f"{key} is a boolean; give a whole number of {unit}")
        try:
            integer(data[key], key, 0, MAX_INT)
        except InputError as exc:
            refuse(f"{exc.msg} (Nova's API limit); {key} is in {unit}")
    for key, unit in _OPTIONAL_SIZES:
        if data.get(key) is not None:
            try:
                integer(data[key], key, 0, MAX_INT)
            except InputError as exc:
                refuse(f"{exc.msg} (Nova's API limit); {key} is in {unit}")
    specs = data.get("extra_specs")
    if specs is None:
        specs = data.get("properties")
    if specs is None:
        specs = {}
    if not isinstance(specs, Mapping):
        return data  # the translation refuses it with its own words
    if len(specs) > MAX_EXTRA_SPECS:
        refuse(f"has {len(specs):,} extra specs; at most {MAX_EXTRA_SPECS:,} are taken")
    for key, spec in specs.items():
        if not isinstance(key, str) or not _SPEC_KEY.fullmatch(key):
            named = f"({len(key):,} characters long)" if isinstance(key, str) and len(key) > 255 else shown(key)
            refuse(
                f"extra spec key {named} "
                "is refused by Nova's API: a key is 1 to 255 characters of letters, digits, '-', '_', ':', "
                "'.' and spaces"
            )
        if isinstance(spec, Mapping | list):
            refuse(f"extra spec {key!r} is {kind_of(spec)}; give a string")
        if isinstance(spec, str) and len(spec) > 255:
            refuse(f"extra spec {key!r} is {len(spec):,} characters long; Nova's API takes at most 255")
        if isinstance(spec, int) and not isinstance(spec, bool) and abs(spec) > MAX_INT:
            refuse(f"extra spec {key!r} is {shown(spec)}; give a whole number of at most {MAX_INT:,}")
        if key in _CPU_SPEC_KEYS or key.startswith(_CPU_SPEC_PREFIXES):
            # These name guest CPUs, 0 to vcpus - 1 (Nova refuses any other).
            vcpus = _spec_int({"v": data.get("vcpus")}, "v") or 1
            problem = cpu_set_problem(str(spec), min(vcpus, MAX_HOST_CPUS) - 1)
            if problem:
                refuse(f"extra spec {key!r} {problem} (the flavor has {vcpus:,} vCPUs, numbered from 0)")
    _work_bounds(data, specs, image if isinstance(image, Mapping) else {}, refuse)
    return data


def _spec_int(specs: Mapping, key: str) -> int | None:
    value = specs.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value) and len(value.strip()) <= 19:
        return int(value)
    return None


def _work_bounds(data: Mapping, specs: Mapping, image: Mapping, refuse) -> None:
    """Refuse as ``too_big`` what would make the collection compute per CPU, cell or device past the
    largest host it models."""
    vcpus = _spec_int({"v": data.get("vcpus")}, "v") or 0
    policy_key = "hw:cpu_policy" if "hw:cpu_policy" in specs else "hw_cpu_policy"
    policy = str(specs.get("hw:cpu_policy", image.get("hw_cpu_policy", ""))).strip()
    nodes_key = "hw:numa_nodes" if "hw:numa_nodes" in specs else "hw_numa_nodes"
    nodes = _spec_int(specs, "hw:numa_nodes") if "hw:numa_nodes" in specs else _spec_int(image, "hw_numa_nodes")
    if policy in ("dedicated", "mixed") and vcpus > MAX_HOST_CPUS:
        refuse(
            f"pins {vcpus:,} vCPUs ({policy_key} {policy}); no host the collection models has "
            f"more than {MAX_HOST_CPUS:,} CPUs, so it fits no host",
            "too_big",
        )
    if nodes is not None and nodes > MAX_NUMA_CELLS:
        refuse(
            f"asks {nodes:,} guest NUMA nodes ({nodes_key}); a host has at most {MAX_NUMA_CELLS:,} NUMA "
            "cells, so it fits no host",
            "too_big",
        )
    if nodes is not None and vcpus > MAX_HOST_CPUS:
        refuse(
            f"spreads {vcpus:,} vCPUs over guest NUMA nodes; no host the collection models has more than "
            f"{MAX_HOST_CPUS:,} CPUs, so it fits no host",
            "too_big",
        )
    aliases = specs.get("pci_passthrough:alias")
    if isinstance(aliases, str):
        total = 0
        for count in re.findall(r":\s*([0-9]+)", aliases):
            if len(count) > 9:
                total = MAX_DEVICES + 1
                break
            total += int(count)
        if total > MAX_DEVICES:
            refuse(
                f"asks {'more than ' + format(MAX_DEVICES, ',') if total == MAX_DEVICES + 1 else format(total, ',')} "
                f"PCI devices (pci_passthrough:alias); the collection models at most {MAX_DEVICES:,} devices "
                "per flavor, so it fits no host",
                "too_big",
            )


# -- fleet snapshots ---------------------------------------------------------------------------------
_ROOT_KEYS = ("disabled", "numa_cells", "pci_pools")


def fleet_snapshot(snapshot) -> dict:
    """The snapshot with the optional root record keys the Nova filters read checked and made plain:
    ``disabled`` (a boolean or Ansible's boolean words), ``numa_cells`` and ``pci_pools``.

    Provider records are otherwise passed on as they are (shallow copies where a key was checked):
    ``Fleet.from_snapshot`` checks every uuid, name, inventory field (whole, finite, within Placement's
    limits), trait and aggregate itself, and a fleet of tens of thousands of providers is not copied
    twice."""
    records = snapshot.get("resource_providers") if isinstance(snapshot, Mapping) else None
    if not isinstance(records, list | tuple):
        return plain(snapshot, "fleet")  # Fleet.from_snapshot answers the shape with its own words
    data = plain({k: v for k, v in snapshot.items() if k != "resource_providers"}, "fleet")
    checked = []
    for index, record in enumerate(records):
        if isinstance(record, Mapping) and any(record.get(key) is not None for key in _ROOT_KEYS):
            name = record.get("name") or record.get("uuid")
            where = f"fleet: resource_providers[{index}]" + (f" ({shown(name, 80)})" if name is not None else "")
            record = dict(record)
            if record.get("disabled") is not None:
                record["disabled"] = boolean(plain(record["disabled"], where), f"{where}: disabled")
            if record.get("numa_cells") is not None:
                record["numa_cells"] = numa_cells(plain(record["numa_cells"], where), f"{where}: numa_cells")
            if record.get("pci_pools") is not None:
                record["pci_pools"] = pci_pools(plain(record["pci_pools"], where), f"{where}: pci_pools")
        checked.append(record)
    data["resource_providers"] = checked
    return data


def numa_cells(cells, where: str) -> list[dict]:
    if not isinstance(cells, list):
        raise InputError(f"{where} is {kind_of(cells)}; give a list of {{id, pcpus, vcpus, memory_mb}}")
    if len(cells) > MAX_NUMA_CELLS:
        raise InputError(f"{where} holds {len(cells):,} cells; a host has at most {MAX_NUMA_CELLS:,}")
    out, seen = [], set()
    for index, cell in enumerate(cells):
        at = f"{where}[{index}]"
        if not isinstance(cell, Mapping):
            raise InputError(f"{at} is {kind_of(cell)}; give {{id, pcpus, vcpus, memory_mb}}")
        checked = {
            "id": integer(cell.get("id"), f"{at}.id", 0, MAX_NUMA_CELLS - 1),
            "pcpus": integer(cell.get("pcpus") or 0, f"{at}.pcpus", 0, MAX_HOST_CPUS),
            "vcpus": integer(cell.get("vcpus") or 0, f"{at}.vcpus", 0, MAX_HOST_CPUS),
            "memory_mb": integer(cell.get("memory_mb") or 0, f"{at}.memory_mb", 0, _LARGEST),
        }
        if checked["id"] in seen:
            raise InputError(f"{at}.id {checked['id']} appears twice; each NUMA cell has its own id")
        seen.add(checked["id"])
        checked.update(_pages_and_cores(cell, checked, at))
        out.append({**cell, **checked})
    return out


def _pages_and_cores(cell: Mapping, checked: dict, at: str) -> dict:
    """A cell's ``hugepages`` ({size in KiB: pages}, within its memory) and ``cores`` (dedicated CPUs per
    core, adding up to ``pcpus``) with ``threads_per_core``, checked."""
    out: dict = {}
    pools = cell.get("hugepages")
    if pools is not None:
        if not isinstance(pools, Mapping) or len(pools) > 64:
            raise InputError(
                f"{at}.hugepages is {kind_of(pools)}; give {{page size in KiB: pages}}, e.g. {{'2048': 1024}}"
            )
        out["hugepages"] = {
            str(integer(size, f"{at}.hugepages key {shown(size)}", 8, MAX_INT)): integer(
                count, f"{at}.hugepages[{shown(size)}]", 0, _LARGEST
            )
            for size, count in pools.items()
        }
        huge_kb = sum(int(size) * count for size, count in out["hugepages"].items())
        if huge_kb > checked["memory_mb"] * 1024:
            raise InputError(
                f"{at}.hugepages hold {huge_kb // 1024:,} MB, more than the cell's {checked['memory_mb']:,} MB of "
                "memory; give the pools of this cell only"
            )
    cores = cell.get("cores")
    if cores is not None:
        if not isinstance(cores, list) or len(cores) > MAX_HOST_CPUS:
            raise InputError(f"{at}.cores is {kind_of(cores)}; give the dedicated CPUs of each core, e.g. [2, 2]")
        out["threads_per_core"] = integer(cell.get("threads_per_core") or 1, f"{at}.threads_per_core", 1, 64)
        out["cores"] = [integer(c, f"{at}.cores[{index}]", 1, 64) for index, c in enumerate(cores)]
        widest = max(out["cores"], default=1)
        if widest > out["threads_per_core"]:
            raise InputError(
                f"{at}.cores name a core of {widest} dedicated CPUs while threads_per_core is "
                f"{out['threads_per_core']}; give threads_per_core, the most threads one core of the cell has"
            )
        if sum(out["cores"]) != checked["pcpus"]:
            raise InputError(
                f"{at}.cores hold {sum(out['cores']):,} dedicated CPU(s) while pcpus is {checked['pcpus']:,}; "
                "give each core's dedicated CPUs so that they add up to pcpus"
            )
    return out


def pci_pools(pools, where: str) -> list[dict]:
    if not isinstance(pools, list):
        raise InputError(f"{where} is {kind_of(pools)}; give a list of {{vendor_id, product_id, device_type, count}}")
    if len(pools) > 65536:
        raise InputError(f"{where} holds {len(pools):,} pools; at most 65,536 are taken")
    out = []
    for index, pool in enumerate(pools):
        at = f"{where}[{index}]"
        if not isinstance(pool, Mapping):
            raise InputError(f"{at} is {kind_of(pool)}; give {{vendor_id, product_id, device_type, numa_node, count}}")
        for key in ("vendor_id", "product_id"):
            if not isinstance(pool.get(key), str) or not _HEX4.fullmatch(pool[key]):
                raise InputError(f"{at}.{key} is {shown(pool.get(key))}; give 4 hex digits, e.g. '10de'")
        device_type = pool.get("device_type") or pool.get("dev_type") or "type-PCI"
        if device_type not in DEVICE_TYPES:
            raise InputError(f"{at}.device_type is {shown(device_type)}; give one of {', '.join(DEVICE_TYPES)}")
        out.append(
            {
                **pool,
                "device_type": device_type,
                "numa_node": integer(pool.get("numa_node"), f"{at}.numa_node", 0, MAX_NUMA_CELLS - 1, optional=True),
                "count": integer(pool.get("count") or 0, f"{at}.count", 0, MAX_INT),
            }
        )
    return out


def inventory_data(data, where: str) -> dict:
    """What the fleet inventory caches: ``{"facts": {host: facts} | None, "placement": snapshot | None}``,
    checked record by record (the cache is a file anyone with access to it may have rewritten)."""
    data = plain(data, where)
    if not isinstance(data, Mapping) or set(data) != {"facts", "placement"}:
        raise InputError(f"{where} is not what this inventory stores (a mapping of facts and placement)")
    facts = data["facts"]
    if facts is not None:
        if not isinstance(facts, Mapping):
            raise InputError(f"{where}: facts is {kind_of(facts)}; expected a mapping of host names to facts")
        data["facts"] = {
            str(host): discovery_entry(entry, f"{where}: facts of {host}") for host, entry in facts.items()
        }
    if data["placement"] is not None:
        data["placement"] = placement_snapshot(data["placement"], f"{where}: placement")
    return data


def placement_snapshot(snapshot, where: str) -> dict:
    """A fleet snapshot whose provider records have the types ``placement_info`` gives them."""
    data = fleet_snapshot(snapshot)
    if not isinstance(data, Mapping) or not isinstance(data.get("resource_providers"), list):
        raise InputError(f"{where} is not a fleet snapshot (a mapping with a resource_providers list)")
    for index, record in enumerate(data["resource_providers"]):
        at = f"{where}: resource_providers[{index}]"
        if not isinstance(record, Mapping):
            raise InputError(f"{at} is {kind_of(record)}; expected a provider record")
        for key in ("uuid", "name"):
            text(record.get(key), f"{at}.{key}")
        for key in ("parent_provider_uuid", "root_provider_uuid"):
            text(record.get(key), f"{at}.{key}", optional=True)
        for key in ("traits", "aggregates"):
            names = record.get(key) or []
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise InputError(f"{at}.{key} is {kind_of(names)}; expected a list of names")
        for key in ("inventories", "usages"):
            if not isinstance(record.get(key) or {}, Mapping):
                raise InputError(f"{at}.{key} is {kind_of(record.get(key))}; expected a mapping")
    return data
