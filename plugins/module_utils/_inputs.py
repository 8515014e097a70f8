# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks every input passes before the collection computes with it, shared by modules and plugins.

- :func:`plain` copies data as Ansible delivers it (ansible-core 2.19's tagged values, lazy template
  containers, ``AnsibleUnsafe`` text) into plain ``dict``, ``list``, ``str``, ``int``, ``float``,
  ``bool`` and ``None``, nested at most :data:`MAX_DEPTH` deep and holding at most :data:`MAX_ITEMS`
  values; a whole number of more than 63 bits (a 5,000-digit number) is refused by its size, never
  converted to text.
- :func:`integer`, :func:`boolean`, :func:`text` check one value against its bounds, with a message
  naming where it is and what to give.
- :func:`cpu_set_problem` checks a CPU set's text before any range in it is expanded; :func:`parse_cpu_set`
  reads it as Nova does.
- :func:`host_facts` and :func:`discovery_entry` check the discover stage's facts (they may come from a
  fact cache anyone could have rewritten) field by field.

The controller's own inputs (flavors, fleet snapshots, the fleet inventory's cache) are checked in
``plugins/plugin_utils/inputs.py`` with these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

# Nova's and Placement's integer columns (nova.db.constants.MAX_INT; Placement's inventory fields).
MAX_INT = 0x7FFFFFFF
# The largest host the collection computes per CPU for (discovery refuses a CPU list naming more).
MAX_HOST_CPUS = 65536
# Linux allows at most 1024 NUMA nodes (CONFIG_NODES_SHIFT=10).
MAX_NUMA_CELLS = 1024
# Nested containers and values in one input.
MAX_DEPTH = 64
MAX_ITEMS = 2_000_000
# Text of one value (a trait name is at most 255; an INI value or a fact is far below this).
MAX_TEXT = 1 << 20
_LARGEST = (1 << 63) - 1
_DIGITS = re.compile(r"\s*[-+]?[0-9]+\s*")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")


class InputError(AccelError, ValueError):
    """An input that is not usable; the message names where it is and what to give instead."""


def kind_of(value: object) -> str:
    if value is None:
        return "null"
    for kind, words in ((bool, "a boolean"), (str, "a string"), (int, "an integer"), (float, "a number")):
        if isinstance(value, kind):
            return words
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def shown(value: object, width: int = 60) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 64:
        return f"a whole number of about {_digits(value):,} digits"
    if isinstance(value, str) and len(value) > width:
        return repr(value[: width - 3]) + f"... ({len(value):,} characters)"
    text = repr(value) if isinstance(value, (str, int, float, bool)) or value is None else f"<{kind_of(value)}>"
    return text if len(text) <= width else text[: width - 3] + "..."


def _digits(number: int) -> int:
    """Decimal digits of ``number``, estimated from its bits (never converted to text)."""
    return int(abs(number).bit_length() * 0.30103) + 1


class _Counter:
    __slots__ = ("left",)

    def __init__(self, items: int):
        self.left = items


def plain(value, where: str, *, max_items: int = MAX_ITEMS):
    """``value`` as plain JSON-like Python data (tags, laziness and unsafe marks removed), or InputError.

    Objects of other types (a Fleet, a datetime) are kept as they are; the checks of each field refuse
    them where a plain value belongs."""
    return _plain(value, where, 0, _Counter(max_items))


def _plain(value, where: str, depth: int, counter: _Counter):
    counter.left -= 1
    if counter.left < 0:
        raise InputError(f"{where}: holds more than {MAX_ITEMS:,} values; give a smaller input")
    if value is None or isinstance(value, bool):
        return None if value is None else bool(value)
    if isinstance(value, int):
        if value.bit_length() > 63:
            raise InputError(
                f"{where}: is a whole number of about {_digits(value):,} digits; numbers here are at most {_LARGEST:,}"
            )
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise InputError(f"{where}: is a text of {len(value):,} characters; at most {MAX_TEXT:,} are taken")
        return str(value)
    if isinstance(value, (Mapping, list, tuple)) and depth >= MAX_DEPTH:
        raise InputError(f"{where}: is nested more than {MAX_DEPTH} levels deep; no input of the collection is")
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            key = _plain(key, f"{where}: a key", depth + 1, counter)
            out[key] = _plain(item, f"{where}[{shown(key, 40)}]", depth + 1, counter)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{index}]", depth + 1, counter) for index, item in enumerate(value)]
    return value


def integer(value, where: str, minimum: int | None = 0, maximum: int | None = MAX_INT, optional=False):
    """A whole number (or a string of digits, as Nova's API takes) within the bounds, or InputError."""
    if value is None and optional:
        return None
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _DIGITS.fullmatch(value):
        if len(value.strip().lstrip("+-")) > 19:
            number = None
            raise InputError(
                f"{where} is a number of {len(value.strip()):,} digits; give a whole number{_range(minimum, maximum)}"
            )
        number = int(value)
    elif isinstance(value, float) and value.is_integer() and abs(value) <= _LARGEST:
        number = int(value)
    if number is None:
        raise InputError(f"{where} is {kind_of(value)} ({shown(value)}); give a whole number{_range(minimum, maximum)}")
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        raise InputError(f"{where} is {shown(number)}; give a whole number{_range(minimum, maximum)}")
    return number


def _range(minimum, maximum) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum:,} to {maximum:,}"
    if minimum is not None:
        return f" of {minimum:,} or more"
    return f" of at most {maximum:,}" if maximum is not None else ""


def boolean(value, where: str, optional: bool = False):
    """A boolean from a real boolean or one of Ansible's boolean words (``"false"`` is false), or InputError."""
    if value is None and optional:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        word = value.strip().lower() if isinstance(value, str) else value
        if word in BOOLEANS_TRUE:
            return True
        if word in BOOLEANS_FALSE:
            return False
    raise InputError(f"{where} is {kind_of(value)} ({shown(value)}); give true or false")


def text(value, where: str, maximum: int = 255, optional: bool = False, empty: bool = False):
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not value and not empty):
        raise InputError(f"{where} is {kind_of(value)} ({shown(value)}); give a non-empty string")
    if len(value) > maximum:
        raise InputError(f"{where} is {len(value):,} characters long; at most {maximum} are allowed")
    return value


# -- CPU sets --------------------------------------------------------------------------------------
def cpu_set_problem(spec: str, largest: int = MAX_HOST_CPUS - 1) -> str | None:
    """Why a CPU set text (``"0-3,^2,8"``) cannot be expanded within bounds; None when it can.

    Checked on the text, before any range is expanded: every CPU number at most ``largest``, and at
    most 4,096 characters."""
    if not isinstance(spec, str):
        return f"is {kind_of(spec)}; give a CPU set such as '0-3,^2'"
    if len(spec) > 4096:
        return f"is {len(spec):,} characters long; a CPU set is at most 4,096"
    for number in re.findall(r"[0-9]+", spec):
        if len(number) > 6 or int(number) > largest:
            named = number if len(number) <= 12 else f"a number of {len(number):,} digits"
            return f"names CPU {named}; CPU numbers here go up to {largest:,}"
    return None


class CpuSetSyntaxError(InputError):
    """A CPU set text Nova's parser refuses; the message is Nova's own ("Invalid range expression '5-2'")."""


def parse_cpu_set(spec: str, largest: int = MAX_HOST_CPUS - 1) -> set[int]:
    """A CPU set (``"0-3,^2,8"``, ``"^4-5"``) as nova.virt.hardware.parse_cpu_spec reads it: comma-separated
    rules, each a CPU, a range ``a-b`` (``a <= b``) or either prefixed with ``^`` to exclude it; numbers as
    Python's ``int`` reads them (spaces, ``+``, ``_`` between digits), empty rules skipped.

    The one parser of the collection for Nova's CPU sets (host ``cpu_dedicated_set``/``cpu_shared_set``, a
    flavor's ``hw:cpu_dedicated_mask``, ``hw:cpu_realtime_mask``, ``hw:numa_cpus.N``). Every number is checked
    against ``largest`` before a range is expanded. Raises :class:`CpuSetSyntaxError` with Nova's words where
    Nova refuses the text, :class:`InputError` where a number is out of bounds."""
    problem = cpu_set_problem(spec, largest)
    if problem:
        raise InputError(problem)
    include: set[int] = set()
    exclude: set[int] = set()

    def number(text: str, refusal: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise CpuSetSyntaxError(refusal) from None
        if value > largest:
            raise InputError(f"names CPU {value:,}; CPU numbers here go up to {largest:,}")
        return value

    for rule in spec.split(","):
        rule = rule.strip()
        if not rule:
            continue
        parts = rule.split("-", 1)
        if len(parts) > 1:
            reject = parts[0][:1] == "^"
            refusal = f"Invalid range expression {rule!r}"
            start = number(parts[0][1:] if reject else parts[0], refusal)
            end = number(parts[1], refusal)
            if start > end:
                raise CpuSetSyntaxError(refusal)
            (exclude if reject else include).update(range(start, end + 1))
        elif rule[0] == "^":
            exclude.add(number(rule[1:], f"Invalid exclusion expression {rule!r}"))
        else:
            include.add(number(rule, f"Invalid inclusion expression {rule!r}"))
    return include - exclude


# -- discovery facts --------------------------------------------------------------------------------
def _node_pages_and_cores(node: Mapping, cpus: list, at: str) -> None:
    """A NUMA node's ``hugepages`` ({size in KiB: {total, free}}) and ``siblings`` (its CPUs by core)."""
    pools = node.get("hugepages")
    if pools is not None:
        if not isinstance(pools, Mapping) or len(pools) > 64:
            raise InputError(f"{at}.hugepages is {kind_of(pools)}; give {{page size in KiB: {{total, free}}}}")
        for size, pool in pools.items():
            integer(size, f"{at}.hugepages key {shown(size)}", 8, MAX_INT)
            if not isinstance(pool, Mapping):
                raise InputError(f"{at}.hugepages[{shown(size)}] is {kind_of(pool)}; give {{total, free}}")
            for key in ("total", "free"):
                integer(pool.get(key) or 0, f"{at}.hugepages[{shown(size)}].{key}", 0, _LARGEST)
    cores = node.get("siblings")
    if cores is not None:
        if not isinstance(cores, list):
            raise InputError(
                f"{at}.siblings is {kind_of(cores)}; give the node's CPUs by core, e.g. [[0, 64], [1, 65]]"
            )
        seen: set = set()
        inside = {cpu for cpu in cpus if isinstance(cpu, int)}
        for position, core in enumerate(cores):
            if not isinstance(core, list) or not core:
                raise InputError(f"{at}.siblings[{position}] is {kind_of(core)}; give the core's CPU numbers")
            for cpu in core:
                if not isinstance(cpu, int) or cpu in seen or cpu not in inside:
                    raise InputError(
                        f"{at}.siblings[{position}] names CPU {shown(cpu)} twice or outside the node's cpus; "
                        "rerun the discover stage"
                    )
                seen.add(cpu)


def host_facts(facts, where: str) -> dict:
    """Discovery facts (from the discover stage or a fact cache) as plain data, the fields the controller
    computes with checked: ``accel_numa_nodes`` (ids, CPU lists, memory), ``accel_pci_devices`` and the
    scalar facts' types (``accel_iommu_enabled`` decides whether the host offers any device)."""
    data = plain(facts, where)
    if not isinstance(data, Mapping):
        raise InputError(f"{where} is {kind_of(data)}; give the host's accel_* discovery facts (a mapping)")
    for key, kinds, words in (
        ("accel_cpu_vendor", str, "a string"),
        ("accel_kernel_cmdline", str, "a string"),
        ("accel_iommu_enabled", bool, "true or false"),
    ):
        if data.get(key) is not None and not isinstance(data[key], kinds):
            raise InputError(f"{where}: {key} is {kind_of(data[key])} ({shown(data[key])}); expected {words}")
    nodes = data.get("accel_numa_nodes")
    if nodes is not None:
        if not isinstance(nodes, list):
            raise InputError(f"{where}: accel_numa_nodes is {kind_of(nodes)}; expected a list of NUMA nodes")
        if len(nodes) > MAX_NUMA_CELLS:
            raise InputError(f"{where}: accel_numa_nodes holds {len(nodes):,} nodes; a host has at most 1,024")
        cpus_total = 0
        for index, node in enumerate(nodes):
            at = f"{where}: accel_numa_nodes[{index}]"
            if not isinstance(node, Mapping):
                raise InputError(f"{at} is {kind_of(node)}; give {{id, cpus, memory_mb}}")
            integer(node.get("id"), f"{at}.id", 0, MAX_NUMA_CELLS - 1)
            cpus = node.get("cpus") or []
            if not isinstance(cpus, list):
                raise InputError(f"{at}.cpus is {kind_of(cpus)} ({shown(cpus)}); give a list of CPU numbers")
            cpus_total += len(cpus)
            if cpus_total > MAX_HOST_CPUS:
                raise InputError(f"{at}.cpus: the host names more than {MAX_HOST_CPUS:,} CPUs")
            for position, cpu in enumerate(cpus):
                integer(cpu, f"{at}.cpus[{position}]", 0, MAX_HOST_CPUS - 1)
            integer(node.get("memory_mb") or 0, f"{at}.memory_mb", 0, _LARGEST)
            _node_pages_and_cores(node, cpus, at)
    devices = data.get("accel_pci_devices")
    if devices is not None:
        if not isinstance(devices, list):
            raise InputError(f"{where}: accel_pci_devices is {kind_of(devices)}; expected a list of devices")
        for index, device in enumerate(devices):
            at = f"{where}: accel_pci_devices[{index}]"
            if not isinstance(device, Mapping):
                raise InputError(f"{at} is {kind_of(device)}; give a device as pci_facts reports it")
            address = device.get("address")
            if not isinstance(address, str) or len(address) > 32:
                raise InputError(f"{at}.address is {shown(address)}; give a PCI address such as '0000:41:00.0'")
            for key in ("vendor_id", "product_id"):
                if device.get(key) is not None and not (isinstance(device[key], str) and _HEX4.fullmatch(device[key])):
                    raise InputError(f"{at}.{key} is {shown(device.get(key))}; give 4 hex digits")
            integer(device.get("numa_node"), f"{at}.numa_node", 0, MAX_NUMA_CELLS - 1, optional=True)
            integer(device.get("iommu_group"), f"{at}.iommu_group", 0, MAX_INT, optional=True)
            for key in ("sriov_totalvfs", "sriov_numvfs"):
                integer(device.get(key), f"{at}.{key}", 0, 65535, optional=True)
            for key in ("physfn", "driver"):
                text(device.get(key), f"{at}.{key}", optional=True)
            if device.get("mdev_types") is not None and not isinstance(device["mdev_types"], list):
                raise InputError(f"{at}.mdev_types is {kind_of(device['mdev_types'])}; give a list")
    return data


def discovery_entry(facts, where: str) -> dict:
    """One host's discovery facts as the fleet inventory keeps them (from a fact cache or its own cache):
    the checks of :func:`host_facts` plus the IOMMU groups."""
    data = host_facts(facts, where)
    groups = data.get("accel_iommu_groups")
    if groups is not None and not isinstance(groups, Mapping):
        raise InputError(
            f"{where}: accel_iommu_groups is {kind_of(groups)} ({shown(groups)}); "
            "expected a mapping of group numbers to addresses"
        )
    for group, members in (data.get("accel_iommu_groups") or {}).items():
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise InputError(f"{where}: accel_iommu_groups[{shown(group)}] is {kind_of(members)}; expected addresses")
    return data
