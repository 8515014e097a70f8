# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova's host filters after Placement, modelled where the fleet's facts see what Placement cannot.

Placement answers which trees have the resources; nova-scheduler then runs its enabled filters on each
host Placement returned. Four of them decide on facts the collection knows:

- ``ComputeFilter``: a disabled compute service (the root carries ``COMPUTE_STATUS_DISABLED`` or the
  host record says ``disabled: true``) takes no instance.
- ``PciPassthroughFilter``: with ``pci_in_placement`` off, Placement knows nothing of PCI devices; the
  host's device pools must hold every requested device (requests consume pools one after another).
- ``NUMATopologyFilter``: pinned CPUs (``hw:cpu_policy`` dedicated or mixed) need dedicated CPUs in the
  host's NUMA cells: a host that reports only VCPU (returned by the VCPU fallback query) cannot pin; an
  instance NUMA topology (pinned CPUs or ``hw:numa_nodes``) must fit the host cells, each guest node on
  its own host cell (a host with fewer cells than the guest has nodes is removed): memory, pinned CPUs
  (plus one for an isolated emulator thread on the first node) from the cell's dedicated CPUs, shared
  CPUs from its shared CPUs; its PCI devices must come from those cells as the PCI NUMA affinity policy
  says (``required``: only those cells; ``legacy``: those cells or devices without NUMA information;
  ``preferred``/``socket``: any). Nova tries every permutation of host cells; the model matches guest
  nodes to host cells (augmenting paths) and tries only the sets of cells that hold devices, within the
  solver's step budget; a host it cannot decide within the budget is removed, saying so.
- ``AggregateInstanceExtraSpecsFilter``: every flavor extra spec that is unscoped or scoped
  ``aggregate_instance_extra_specs:`` must match the metadata of one of the host's aggregates, with
  Nova's operators (``=``, ``<in>``, ``<all-in>``, ``==``, ``!=``, ``>=``, ``<=``, ``s==``, ``s!=``,
  ``s<``, ``s<=``, ``s>``, ``s>=``, ``<or>``); a key no aggregate of the host has fails the host. Runs
  only when aggregate metadata is given.

Optional keys of a root provider record in the fleet snapshot feed these models (``nova_fleet`` writes
them; a live snapshot from ``placement_info`` lacks them):

- ``disabled``: bool (or one of Ansible's boolean words: ``"false"`` is false), the compute service is
  disabled;
- ``numa_cells``: ``[{"id": int, "pcpus": int, "vcpus": int, "memory_mb": int}]``, per host NUMA cell
  its dedicated CPUs (``cpu_dedicated_set``), shared CPUs and memory;
- ``pci_pools``: ``[{"vendor_id", "product_id", "device_type", "numa_node", "count"}]``, the devices
  ``[pci] device_spec`` exposes (``device_type`` ``type-PCI`` | ``type-PF`` | ``type-VF``; ``numa_node``
  null when unknown).

A host without ``numa_cells`` is judged on its PCPU inventory alone; with ``pci_in_placement`` off a
host without ``pci_pools`` cannot be shown to hold any device and is removed, with that reason.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Mapping

from ansible.module_utils.parsing.convert_bool import BOOLEANS_TRUE

from ansible_collections.accel.openstack.plugins.module_utils._inputs import InputError, parse_cpu_set
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget, TooCombinatorial

DISABLED_TRAIT = "COMPUTE_STATUS_DISABLED"
AGGREGATE_SCOPE = "aggregate_instance_extra_specs"
MODELLED_FILTERS = (
    "ComputeFilter",
    "PciPassthroughFilter",
    "NUMATopologyFilter",
    "AggregateInstanceExtraSpecsFilter",
)
_PINNED = ("dedicated", "mixed")


def _as_float_op(method):
    def compare(value, wanted):
        try:
            return method(float(value), float(wanted))
        except (TypeError, ValueError):
            return False

    return compare


_OPERATORS = {
    "=": _as_float_op(operator.ge),
    "<in>": lambda value, wanted: wanted in value,
    "<all-in>": lambda value, wanted: all(word in value for word in wanted),
    "==": _as_float_op(operator.eq),
    "!=": _as_float_op(operator.ne),
    ">=": _as_float_op(operator.ge),
    "<=": _as_float_op(operator.le),
    "s==": operator.eq,
    "s!=": operator.ne,
    "s<": operator.lt,
    "s<=": operator.le,
    "s>": operator.gt,
    "s>=": operator.ge,
}


def spec_matches(value: str | None, wanted: str) -> bool:
    """Whether an aggregate metadata value satisfies an extra spec value, with Nova's operator words."""
    words = str(wanted).split()
    op = words.pop(0) if words else None
    method = _OPERATORS.get(op) if op else None
    if op != "<or>" and method is None:
        return value == wanted
    if value is None:
        return False
    if op == "<or>":
        # "<or> a <or> b": the words at even positions are the choices.
        return value in words[0::2]
    if not words:
        return False
    return method(value, words) if op == "<all-in>" else method(value, words[0])


def aggregate_metadata_by_host(aggregates) -> dict[str, dict[str, set[str]]]:
    """``{host: {key: {values}}}`` from ``[{"name", "hosts": [..], "metadata": {..}}]``."""
    found: dict[str, dict[str, set[str]]] = {}
    for index, aggregate in enumerate(aggregates or ()):
        if not isinstance(aggregate, Mapping):
            raise ValueError(f"aggregates_metadata[{index}] must be a dict with 'hosts' and 'metadata'")
        hosts, metadata = aggregate.get("hosts") or [], aggregate.get("metadata") or {}
        if not isinstance(hosts, list) or not isinstance(metadata, Mapping):
            raise ValueError(
                f"aggregates_metadata[{index}] ({aggregate.get('name')}): 'hosts' must be a list of host names "
                "and 'metadata' a dict"
            )
        for host in hosts:
            keys = found.setdefault(str(host), {})
            for key, value in metadata.items():
                keys.setdefault(str(key), set()).add(str(value))
    return found


def aggregate_filter(extra_specs: Mapping, metadata: Mapping[str, set[str]]) -> str | None:
    for key, wanted in (extra_specs or {}).items():
        scope = str(key).split(":", 1)
        if len(scope) > 1 and scope[0] != AGGREGATE_SCOPE:
            continue
        name = scope[-1]
        values = metadata.get(name)
        if not values:
            return f"AggregateInstanceExtraSpecsFilter: extra spec {key}={wanted} is not in any aggregate of the host"
        if not any(spec_matches(value, str(wanted)) for value in sorted(values)):
            return (
                f"AggregateInstanceExtraSpecsFilter: extra spec {key}={wanted} matches none of the host's "
                f"aggregate values {sorted(values)}"
            )
    return None


def _disabled(value) -> bool:
    """``disabled`` as a boolean: a string counts only as one of Ansible's true words (``"false"`` is false)."""
    if isinstance(value, str):
        return value.strip().lower() in BOOLEANS_TRUE
    return value is True or (isinstance(value, int) and value == 1)


def compute_filter(record: Mapping) -> str | None:
    if _disabled(record.get("disabled")) or DISABLED_TRAIT in (record.get("traits") or ()):
        return "ComputeFilter: the compute service is disabled (COMPUTE_STATUS_DISABLED)"
    return None


def _pool_matches(pool: Mapping, spec: Mapping) -> bool:
    for key, wanted in spec.items():
        if key in ("vendor_id", "product_id"):
            if str(pool.get(key, "")).lower() != str(wanted).lower():
                return False
        elif (
            key in ("dev_type", "device_type")
            and (pool.get("device_type") or pool.get("dev_type") or "type-PCI") != wanted
        ):
            return False
    return True


def _affine_pools(pools: list[dict], policy: str, cells: list[int] | None, count: int) -> list[dict]:
    """The pools a request may use for an instance placed on ``cells`` (None: no NUMA topology)."""
    if cells is None:
        return pools
    inside = [p for p in pools if p.get("numa_node") in cells]
    if policy == "required" or sum(p["count"] for p in inside) >= count:
        return inside
    if policy == "socket":
        return pools  # the socket of the cells is not in the facts; judged like preferred
    unknown = inside + [p for p in pools if p.get("numa_node") is None]
    if policy == "legacy" or sum(p["count"] for p in unknown) >= count:
        return unknown
    return pools


def take_devices(pools, pci_requests, policy_of, cells: list[int] | None, consume: bool = False) -> str | None:
    """Consume the requests from copies of the pools (from the pools themselves with ``consume``, which
    then hold int counts); None when all fit, else why not."""
    if consume:
        for pool in pools:
            pool["count"] = int(pool.get("count") or 0)
        free = pools
    else:
        free = [dict(p, count=int(p.get("count") or 0)) for p in pools or ()]
    for request in pci_requests:
        count = int(request.get("count") or 1)
        specs = request.get("specs") or [{}]
        matching = [p for p in free if p["count"] > 0 and any(_pool_matches(p, spec) for spec in specs)]
        policy = policy_of(request)
        usable = _affine_pools(matching, policy, cells, count)
        if sum(p["count"] for p in usable) < count:
            have = sum(p["count"] for p in matching)
            where = ""
            if cells is not None and have >= count:
                where = f" on NUMA cell(s) {cells} (pci_numa_affinity_policy {policy})"
            free_count = sum(p["count"] for p in usable)
            return f"alias {request.get('alias')} needs {count} device(s){where}; the host has {free_count} free"
        for pool in usable:
            used = min(pool["count"], count)
            pool["count"] -= used
            count -= used
            if not count:
                break
    return None


def pci_passthrough_filter(record: Mapping, pci_requests, policy_of, pci_in_placement: bool) -> str | None:
    if not pci_requests:
        return None
    pools = record.get("pci_pools")
    if pools is None:
        if pci_in_placement:
            return None  # Placement chose the devices; without pools nothing more is known
        return (
            "PciPassthroughFilter: the snapshot gives no pci_pools for this host, so no requested device can "
            "be shown to exist (build the fleet with accel.openstack.nova_fleet)"
        )
    why = take_devices(pools, pci_requests, policy_of, None)
    return f"PciPassthroughFilter: {why}" if why else None


def _cpu_list(text: str) -> set[int] | None:
    """A guest CPU list (``"0-1,^0,3"``) as a set; None when it is not one (the translation refuses it)."""
    try:
        return parse_cpu_set(text)
    except InputError:
        return None


def _instance_cells(numa: Mapping, flavor: Mapping) -> list[dict] | None:
    """The instance's NUMA cells as Nova's numa_get_constraints builds them, each
    ``{"pcpus": pinned CPUs, "cpus": shared CPUs, "memory_mb"}``; None without an instance NUMA topology
    (no ``hw:numa_nodes``, no pinned CPUs and no ``hw:mem_page_size``).

    CPUs and memory are split evenly in order (cell 0 gets the first CPUs) unless ``hw:numa_cpus.N`` and
    ``hw:numa_mem.N`` assign them; the pinned CPUs of each cell are its CPUs in the dedicated set."""
    specs = flavor.get("extra_specs") or {}
    nodes = numa.get("numa_nodes") or specs.get("hw:numa_nodes")
    policy = numa.get("cpu_policy")
    if not nodes and policy not in _PINNED and not numa.get("mem_page_size"):
        return None
    try:
        count = max(int(nodes or 1), 1)
    except (TypeError, ValueError):
        count = 1
    if count > inputs.MAX_NUMA_CELLS:
        count = inputs.MAX_NUMA_CELLS + 1  # more than any host has: fails on every host, without the work
    vcpus = int(numa.get("vcpus") or flavor.get("vcpus") or 0)
    memory = int(numa.get("memory_mb") or flavor.get("ram") or 0)
    if policy == "dedicated":
        pinned = set(range(vcpus))
    elif policy == "mixed":
        pinned = set(numa.get("dedicated_cpus") or ())
    else:
        pinned = set()
    explicit = (
        [(_cpu_list(str(specs.get(f"hw:numa_cpus.{n}", ""))), specs.get(f"hw:numa_mem.{n}")) for n in range(count)]
        if count <= inputs.MAX_NUMA_CELLS and any(k.startswith("hw:numa_cpus.") for k in specs)
        else None
    )
    cells = []
    for index in range(min(count, inputs.MAX_NUMA_CELLS + 1)):
        if explicit and explicit[index][0] is not None and explicit[index][1] is not None:
            cpus = explicit[index][0]
            try:
                cell_memory = int(explicit[index][1])
            except (TypeError, ValueError):
                cell_memory = memory // count
        else:
            per = vcpus // count
            cpus = set(range(index * per, (index + 1) * per))
            cell_memory = memory // count
        cells.append({"pcpus": len(cpus & pinned), "cpus": len(cpus - pinned), "memory_mb": cell_memory})
    return cells


def pinned_cpus(numa: Mapping, flavor: Mapping) -> int:
    """How many dedicated CPUs the instance pins (emulator thread isolation adds one)."""
    policy = numa.get("cpu_policy")
    vcpus = int(flavor.get("vcpus") or 0)
    if policy in _PINNED and numa.get("dedicated_cpus") is not None:
        pinned = len(numa["dedicated_cpus"])
    elif policy == "dedicated":
        pinned = vcpus
    elif policy == "mixed":
        mask = numa.get("cpu_dedicated_mask") or (flavor.get("extra_specs") or {}).get("hw:cpu_dedicated_mask")
        pinned = len(_cpu_list(str(mask)) or ()) if mask else 0
    else:
        return 0
    if numa.get("emulator_threads_policy") == "isolate":
        pinned += 1
    return pinned


def _cell_fits(host: Mapping, want: Mapping, reserved: int) -> bool:
    """Nova's _numa_fit_instance_cell on an empty host cell: memory, pinned CPUs (plus the emulator
    thread's reserved CPU on the first cell) from the cell's dedicated CPUs, shared CPUs from its shared
    CPUs (allocation ratios of 1 or more never make a single instance fail where the counts pass)."""
    if int(host.get("memory_mb") or 0) < want["memory_mb"]:
        return False
    if want["pcpus"] and want["pcpus"] + reserved > int(host.get("pcpus") or 0):
        return False
    return not want["cpus"] or want["cpus"] <= int(host.get("vcpus") or 0)


def _augment(start: int, compatible: list[list[int]], owner: list, allowed, budget: Budget, describe) -> bool:
    """One augmenting path from instance cell ``start`` (iterative depth-first search): a host cell once
    matched stays matched, to another instance cell perhaps."""
    seen: set[int] = set()
    stack = [(start, iter(compatible[start]))]
    via: list[int] = []  # the host cell taken at each level of the stack
    while stack:
        _cell, choices = stack[-1]
        for host in choices:
            budget.spend(1, describe)
            if host in seen or (allowed is not None and host not in allowed):
                continue
            seen.add(host)
            via.append(host)
            if owner[host] is None:
                for (cell, _choices), taken in zip(stack, via, strict=True):
                    owner[taken] = cell
                return True
            stack.append((owner[host], iter(compatible[owner[host]])))
            break
        else:
            stack.pop()
            if via:
                via.pop()
    return False


def _match(compatible: list[list[int]], forced: tuple[int, ...], hosts: int, budget: Budget, describe):
    """The host cells of a matching that gives every instance cell its own compatible host cell and uses
    every host cell of ``forced``; None when there is none."""
    owner: list[int | None] = [None] * hosts
    if forced:
        allowed = set(forced)
        for cell in range(len(compatible)):
            _augment(cell, compatible, owner, allowed, budget, describe)
        if any(owner[host] is None for host in forced):
            return None
    matched = {cell for cell in owner if cell is not None}
    for cell in range(len(compatible)):
        if cell not in matched and not _augment(cell, compatible, owner, None, budget, describe):
            return None
    return [host for host, cell in enumerate(owner) if cell is not None]


def numa_topology_filter(record: Mapping, req, flavor: Mapping, policy_of, budget: Budget | None = None) -> str | None:
    numa = getattr(req, "numa", None) or {}
    pinned = pinned_cpus(numa, flavor)
    cells_wanted = _instance_cells(numa, flavor)
    if cells_wanted is None:
        return None
    host_pcpu = (record.get("inventories") or {}).get("PCPU")
    host_cells = record.get("numa_cells")
    if pinned and not host_cells and not (host_pcpu and host_pcpu.get("total")):
        return (
            f"NUMATopologyFilter: the flavor pins {pinned} CPU(s) but the host has no dedicated CPUs "
            "(no [compute] cpu_dedicated_set; Placement returned it for the VCPU fallback query)"
        )
    if not host_cells:
        return None
    wanted = len(cells_wanted)
    shape = "; ".join(
        f"node {index}: {c['pcpus']} pinned CPU(s), {c['cpus']} shared CPU(s), {c['memory_mb']} MB"
        for index, c in enumerate(cells_wanted)
    )
    cells_text = "; ".join(
        f"cell {c.get('id')}: {c.get('pcpus') or 0} dedicated CPU(s), {c.get('vcpus') or 0} shared CPU(s), "
        f"{c.get('memory_mb') or 0} MB"
        for c in host_cells
    )
    if len(host_cells) < wanted:
        return f"NUMATopologyFilter: the guest asks {wanted} NUMA node(s); the host has {len(host_cells)} NUMA cell(s)"
    emulator = 1 if numa.get("emulator_threads_policy") == "isolate" and numa.get("cpu_policy") in _PINNED else 0
    compatible = [
        [h for h, host in enumerate(host_cells) if _cell_fits(host, want, emulator if index == 0 else 0)]
        for index, want in enumerate(cells_wanted)
    ]
    unfit = f"NUMATopologyFilter: no {wanted} host NUMA cell(s) hold the guest's nodes ({shape}) (cells: {cells_text})"
    if any(not hosts for hosts in compatible):
        return unfit.replace(" (cells:", ", one or more fit none of them (cells:", 1)
    budget = budget or Budget()

    def describe() -> tuple[str, int]:
        size = min(math.perm(len(host_cells), wanted), 10**18)
        return (f"{wanted} guest NUMA node(s) over {len(host_cells)} host NUMA cell(s)", size)

    pools = record.get("pci_pools")
    pci_requests = list(getattr(req, "pci_requests", None) or [])
    try:
        if not pci_requests or pools is None:
            return None if _match(compatible, (), len(host_cells), budget, describe) is not None else unfit
        # Nova checks the devices on the host cells an instance lands on. Only the cells holding devices
        # make a difference, and more of them never hurts: try the sets of those cells, largest first.
        position = {c.get("id"): h for h, c in enumerate(host_cells)}
        with_devices = sorted({p.get("numa_node") for p in pools if p.get("numa_node") in position})
        best = None
        for size in range(min(wanted, len(with_devices)), -1, -1):
            for chosen in itertools.combinations(with_devices, size):
                budget.spend(1, describe)
                matched = _match(compatible, tuple(position[c] for c in chosen), len(host_cells), budget, describe)
                if matched is None:
                    continue
                why = take_devices(pools, pci_requests, policy_of, [host_cells[h].get("id") for h in matched])
                if not why:
                    return None
                best = best or f"NUMATopologyFilter: {why}"
        return best or unfit
    except TooCombinatorial as exc:
        return f"NUMATopologyFilter: not decided, so not kept ({exc})"


def run_filters(
    records: Mapping[str, Mapping],
    hosts,
    req,
    flavor: Mapping,
    *,
    pci_in_placement: bool,
    aggregates_metadata=None,
    enabled_filters=MODELLED_FILTERS,
) -> dict:
    """Apply the modelled filters to ``hosts`` (root names); ``records`` maps root name to its snapshot record.

    Returns ``{"hosts": [kept, sorted], "removed": {name: reason}}``; each host gets the first filter that
    removes it, in ``enabled_filters`` order."""
    numa = getattr(req, "numa", None) or {}
    flavor_policy = numa.get("pci_numa_affinity_policy")

    def policy_of(request):
        return flavor_policy or request.get("numa_policy") or "legacy"

    metadata = aggregate_metadata_by_host(aggregates_metadata) if aggregates_metadata is not None else None
    pci_requests = list(getattr(req, "pci_requests", None) or [])
    extra_specs = flavor.get("extra_specs") or {}
    kept, removed = [], {}
    for host in sorted(hosts):
        record = records.get(host) or {}
        why = None
        for name in enabled_filters:
            if name == "ComputeFilter":
                why = compute_filter(record)
            elif name == "PciPassthroughFilter":
                why = pci_passthrough_filter(record, pci_requests, policy_of, pci_in_placement)
            elif name == "NUMATopologyFilter":
                why = numa_topology_filter(record, req, flavor, policy_of)
            elif name == "AggregateInstanceExtraSpecsFilter" and metadata is not None:
                why = aggregate_filter(extra_specs, metadata.get(host, {}))
            if why:
                break
        if why:
            removed[host] = why
        else:
            kept.append(host)
    return {"hosts": kept, "removed": removed}
