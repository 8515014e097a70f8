# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet snapshot nova-compute will report, built from every host's discovery facts.

``nova_fleet(hosts, policy, **options)`` takes ``{hostname: facts}`` (the ``accel_*`` facts of the
discover stage) and returns a snapshot in the format ``placement_info`` returns (and ``flavor_fit``
takes), so a flavor catalog can be proven before any host exists in Placement.

Per host, the provider tree is the placement stage's prediction (``_nova/providers.py``: the compute
node, PCI providers with ``report_in_placement``, vGPU children), with the compute node's CPU inventory
as Nova 34's libvirt driver reports it:

- ``PCPU``: the CPUs of ``[compute] cpu_dedicated_set`` (allocation ratio 1.0, nothing reserved);
- ``VCPU``: the CPUs of ``cpu_shared_set`` when set; none when only ``cpu_dedicated_set`` is set; else
  every CPU (``cpu_allocation_ratio``, ``reserved_host_cpus`` reserved);
- ``MEMORY_MB`` and ``DISK_GB`` as the prediction gives them (``ram_allocation_ratio``,
  ``reserved_host_memory_mb``, ``disk_gb``, ``disk_allocation_ratio``, ``reserved_host_disk_gb``).

The root record also carries the facts Nova's filters use (see ``nova_filters.py``): ``numa_cells``
(dedicated and shared CPUs and memory per NUMA node, with its huge page pools and its cores' thread
siblings when the facts give them, see ``numa_cell``), ``pci_pools`` (the devices the policy exposes,
by vendor, product, device type and NUMA node) and ``disabled``. Uuids are derived from the provider
names, so the same facts always give the same snapshot.

Per-host values (a dedicated set that differs between hosts) are given in ``host_options``:
``{hostname: {option: value}}``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import (
    CpuSetSyntaxError,
    InputError,
    host_facts,
    parse_cpu_set,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError, parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import (
    DEFAULTS,
    PredictionError,
    inventory,
    predict_providers,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import select
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs

_NAMESPACE = uuid.UUID("6f1c3a52-7a0e-4b0f-9d35-3c1f0e4b6a11")
CPU_OPTIONS = ("cpu_dedicated_set", "cpu_shared_set")
HOST_OPTIONS = (*DEFAULTS, *CPU_OPTIONS, "report_in_placement", "disabled")


class FleetPredictionError(AccelError):
    """Facts, policy or options that do not give a fleet; the message names the host and the fix."""


def parse_cpu_spec(spec: str, where: str) -> set[int]:
    """Nova's CPU set syntax: ``"0-3,^2,8"`` (ranges, single CPUs, ``^`` excludes); CPU numbers past the
    largest host the collection models are refused before a range is expanded."""
    text = spec if isinstance(spec, str) else str(spec)
    shown = repr(spec) if isinstance(spec, str) and len(spec) <= 80 else "'...'"
    try:
        found = parse_cpu_set(text)
    except CpuSetSyntaxError as exc:
        raise FleetPredictionError(
            f"{where}: {shown} is not a CPU set ({exc.msg}); write ranges and CPUs like '4-31,^8,40'"
        ) from None
    except InputError as exc:
        raise FleetPredictionError(f"{where}: {shown} {exc.msg}") from None
    if not found:
        raise FleetPredictionError(f"{where}: {shown} leaves no CPU; Nova refuses an empty set")
    return found


def _boolean(value, where: str) -> bool:
    try:
        return inputs.boolean(value, where)
    except inputs.InputError as exc:
        raise FleetPredictionError(exc.msg) from None


def _device_type(device: Mapping) -> str:
    if device.get("physfn"):
        return "type-VF"
    if device.get("sriov_totalvfs"):
        return "type-PF"
    return "type-PCI"


def pci_pools(hostname: str, facts: Mapping, policy, withhold_without_iommu: bool = True) -> list[dict]:
    """The PCI device pools nova-compute reports for the host (what PciPassthroughFilter reads); none
    from a host whose IOMMU is off unless ``withhold_without_iommu`` is false (a deployed config)."""
    selection = select(hostname, dict(facts), policy, False, withhold_without_iommu)
    counts: dict[tuple, int] = {}
    for item in selection.passthrough:
        for device in item.devices:
            key = (
                device["vendor_id"],
                device["product_id"],
                _device_type(device),
                device.get("numa_node"),
                item.entry.physical_network,
            )
            counts[key] = counts.get(key, 0) + 1
    # A pool of devices Neutron hands out carries its physical_network tag, as nova-compute's pools do.
    return [
        {"vendor_id": v, "product_id": p, "device_type": t, "numa_node": n, "count": c}
        | ({"physical_network": net} if net else {})
        for (v, p, t, n, net), c in sorted(counts.items(), key=lambda kv: tuple(str(x) for x in kv[0]))
    ]


def numa_cell(node: Mapping, dedicated: set[int], shared: set[int]) -> dict:
    """One NUMA node as nova-compute reports the cell: its dedicated and shared CPUs and memory; its huge
    page pools (``hugepages``: {size in KiB: pages}) when it has any; with the node's thread siblings known,
    ``cores`` (the dedicated CPUs of each core holding any, cores in order of their first CPU) and
    ``threads_per_core`` (the most CPUs of one core within the dedicated and shared sets)."""
    cpus = set(node.get("cpus") or [])
    cell = {
        "id": node.get("id"),
        "pcpus": len(dedicated & cpus),
        "vcpus": len(shared & cpus),
        "memory_mb": int(node.get("memory_mb") or 0),
    }
    pools = {str(size): int(pool.get("total") or 0) for size, pool in (node.get("hugepages") or {}).items()}
    if any(pools.values()):
        cell["hugepages"] = {size: total for size, total in pools.items() if total}
    siblings = node.get("siblings") or []
    if siblings:
        allowed = [set(core) & (dedicated | shared) for core in siblings]
        cell["cores"] = [len(core & dedicated) for core in allowed if core & dedicated]
        cell["threads_per_core"] = max((len(core) for core in allowed), default=1) or 1
    return cell


def host_tree(hostname: str, facts: Mapping, policy, settings: Mapping) -> list[dict]:
    """The snapshot records of one host's tree, root first."""
    where = f"host {hostname}"
    nodes = facts.get("accel_numa_nodes")
    if not isinstance(nodes, list) or not nodes:
        raise FleetPredictionError(
            f"{where}: accel_numa_nodes is missing or empty; run the discover stage (accel.openstack.pci_facts)"
        )
    every = {int(cpu) for node in nodes for cpu in node.get("cpus") or []}
    dedicated = (
        parse_cpu_spec(settings["cpu_dedicated_set"], f"{where}: cpu_dedicated_set")
        if settings.get("cpu_dedicated_set")
        else set()
    )
    shared_spec = settings.get("cpu_shared_set")
    shared = parse_cpu_spec(shared_spec, f"{where}: cpu_shared_set") if shared_spec else None
    for name, cpus in (("cpu_dedicated_set", dedicated), ("cpu_shared_set", shared or set())):
        offline = sorted(cpus - every)
        if offline:
            raise FleetPredictionError(
                f"{where}: {name} names CPU(s) {offline} the host does not have (it has {min(every)}-{max(every)})"
            )
    if shared is not None and shared & dedicated:
        raise FleetPredictionError(
            f"{where}: cpu_shared_set and cpu_dedicated_set overlap on {sorted(shared & dedicated)}; Nova refuses that"
        )
    vcpus = shared if shared is not None else (set() if dedicated else every)
    options = {k: settings[k] for k in DEFAULTS if settings.get(k) is not None}
    try:
        providers = predict_providers(
            dict(facts), policy, hostname, bool(settings.get("report_in_placement")), **options
        )
    except PredictionError as exc:
        raise FleetPredictionError(f"{where}: {exc}") from exc
    root = providers[0]
    inventories = {rc: inv for rc, inv in root["inventories"].items() if rc != "VCPU"}
    if vcpus:
        inventories["VCPU"] = inventory(
            len(vcpus), settings.get("reserved_host_cpus") or 0, settings.get("cpu_allocation_ratio") or 4.0
        )
    if dedicated:
        inventories["PCPU"] = inventory(len(dedicated))
    root["inventories"] = dict(sorted(inventories.items()))
    ids = {p["name"]: str(uuid.uuid5(_NAMESPACE, p["name"])) for p in providers}
    records = []
    for provider in providers:
        parent = provider.get("parent_name")
        record = {
            "uuid": ids[provider["name"]],
            "name": provider["name"],
            "parent_provider_uuid": ids[parent] if parent else None,
            "root_provider_uuid": ids[hostname],
            "inventories": provider["inventories"],
            "usages": {},
            "traits": list(provider["traits"]),
            "aggregates": list(provider.get("aggregates") or []),
        }
        records.append(record)
    records[0]["numa_cells"] = [numa_cell(node, dedicated, vcpus) for node in nodes]
    if any(len(core) > 1 for node in nodes for core in node.get("siblings") or ()):
        # the libvirt driver reports SMT as this trait (hw:cpu_thread_policy require / isolate ask for it)
        records[0]["traits"] = sorted({*records[0]["traits"], "HW_CPU_HYPERTHREADING"})
    records[0]["pci_pools"] = pci_pools(hostname, facts, policy)
    records[0]["disabled"] = bool(settings.get("disabled"))
    if records[0]["disabled"]:
        records[0]["traits"] = sorted({*records[0]["traits"], "COMPUTE_STATUS_DISABLED"})
    return records


def nova_fleet(hosts: Mapping, policy, host_options: Mapping | None = None, **options) -> dict:
    """``{hostname: facts}`` -> fleet snapshot (hosts in name order)."""
    if not isinstance(hosts, Mapping):
        raise FleetPredictionError("hosts must map each hypervisor hostname to its accel_* discovery facts")
    try:
        hosts = {
            str(name): host_facts(facts, f"host {name}") if isinstance(facts, Mapping) else facts
            for name, facts in inputs.plain(hosts, "hosts").items()
        }
        options = inputs.plain(options, "options")
        host_options = inputs.plain(host_options, "host_options")
    except inputs.InputError as exc:
        raise FleetPredictionError(f"{exc.msg}; run the discover stage for that host again") from None
    for name in ("disabled", "report_in_placement"):
        if options.get(name) is not None:
            options[name] = _boolean(options[name], name)
    for hostname, own in (host_options or {}).items():
        if isinstance(own, Mapping):
            for name in ("disabled", "report_in_placement"):
                if own.get(name) is not None:
                    own[name] = _boolean(own[name], f"host_options.{hostname}.{name}")
    unknown = sorted(set(options) - set(HOST_OPTIONS))
    if unknown:
        raise FleetPredictionError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(HOST_OPTIONS)}")
    try:
        entries = parse_policy(policy or [])
    except PolicyError as exc:
        raise FleetPredictionError(f"policy: {exc}") from exc
    host_options = host_options or {}
    records: list[dict] = []
    for hostname in sorted(hosts):
        facts = hosts[hostname]
        if not isinstance(facts, Mapping):
            raise FleetPredictionError(f"host {hostname}: facts must be a mapping of accel_* facts")
        own = host_options.get(hostname) or {}
        bad = sorted(set(own) - set(HOST_OPTIONS))
        if bad:
            raise FleetPredictionError(f"host_options.{hostname}: unknown option(s) {', '.join(bad)}")
        records += host_tree(str(hostname), facts, entries, {**options, **own})
    return {"resource_providers": records}
