"""Place a demand one instance at a time as nova-scheduler does, with Nova 34's own weighing and the real Placement.

Runs under the nova venv's interpreter (``.venv-nova/bin/python``), never imported by the test process:
JSON cases on stdin, JSON results on stdout (``nova_venv.serve``). A case::

    {"placement": URL, "multipliers": {option: value} (Nova's [filter_scheduler] weight multipliers; Nova's
     default for the others), "roots": [[uuid, name], ...] (fleet order),
     "figures": {name: {num_io_ops, num_instances, failed_builds, hypervisor_version}} (0 when absent),
     "arrival": "settled" | "burst" (in a burst each instance placed adds one I/O operation to its host),
     "steps": [{"flavor": name, "queries": [...], "pcpu_fallback": bool,
                "allocations": {...} or null (what the plan under test allocated, null: it found no host),
                "refused": n (the hosts Nova chose whose nova-compute the plan says refuses the build),
                "first": the host the plan drew first, with "host_subset_size" > 1 in the case,
                "down": [names] (optional: hosts lost, whose nova-compute is down: their providers and
                allocations stay in Placement and Nova's ComputeFilter drops them)}]}

For each step the script asks the real Placement every query (``GET /allocation_candidates``), merges
the answers as Nova's scheduler does (the first query's candidates, then the VCPU fallback's), builds one
``nova.scheduler.host_manager.HostState`` per root in the answer (fleet order) with the fields Nova's
weighers read (``_host_state``: free RAM and disk, VCPUs, free PCI devices as ``pci_stats``, I/O
operations (growing with each instance of the case in a burst) and instances (growing with each), build failures and
hypervisor version) and the candidates on that root, and lets Nova's
``SchedulerManager._get_sorted_hosts`` choose (its real ``HostManager.get_weighed_hosts`` with Nova's
default ``weight_classes``, ``all_weighers``, the case's multipliers and ``host_subset_size`` 1; no
filter). Nova then claims the first candidate of the first sorted host that has one. The script
writes into Placement the plan's allocation when it is one of Placement's candidates on the chosen host
(so both sides keep the same usage even where a host has several equal devices), else Placement's first.

A case with ``weigh`` instead asks only Nova's weight handler for the weights of a list of hosts
(``weigh``).

With ``host_subset_size`` N > 1 Nova draws its host among the N best at random; the script takes the
plan's draw (``first``) when it is one of them and reports those N (``subset``).

Each result step: ``hosts`` (names Placement returned, fleet order), ``attempts`` (the host Nova's
scheduler chose and its alternates, up to ``max_attempts`` 3), ``chosen`` (the one of them the build
lands on after ``refused`` refusals, or null),
``tied`` (hosts of the chosen one's weight), ``plan_allocation_offered`` (the plan's allocation is one
of Placement's candidates on the chosen host), ``status`` of the allocation write. The allocations a
case wrote are deleted after it, so the next case starts from the fleet as loaded.
"""

from __future__ import annotations

import os
import sys
import uuid
import warnings

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.support.nova_venv import serve  # noqa: E402
from tests.support.service_process import json_call  # noqa: E402

# The compute node's figures a case may give per host (0 when absent); the first two grow by one with
# each instance placed on the host (as Nova's HostState.consume_from_request counts them).
FIGURES = ("num_io_ops", "num_instances", "failed_builds", "hypervisor_version")
MAX_ATTEMPTS = 3  # Nova's [scheduler] max_attempts: the chosen host and two alternates
PROJECT = "6b4a3c2e-0000-4000-8000-000000000001"
USER = "6b4a3c2e-0000-4000-8000-000000000002"


def _request(url: str, method: str, path: str, body=None):
    return json_call(url, method, path, body, {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.39"})


def _scheduler(multipliers: dict):
    import nova.conf
    from nova import objects
    from nova.scheduler import host_manager, manager, weights

    objects.register_all()
    conf = nova.conf.CONF
    conf([], project="nova", default_config_files=[])
    _configure(conf, None, dict(multipliers, host_subset_size=1))
    hosts = object.__new__(host_manager.HostManager)
    hosts.weight_handler = weights.HostWeightHandler()
    classes = hosts.weight_handler.get_matching_classes(conf.filter_scheduler.weight_classes)
    hosts.weighers = [cls() for cls in classes]  # as HostManager.__init__ does
    hosts.get_filtered_hosts = lambda host_states, spec_obj, index=0: list(host_states)
    scheduler = object.__new__(manager.SchedulerManager)
    scheduler.host_manager = hosts
    spec = objects.RequestSpec(instance_group=None, requested_destination=None)  # a new server, no group
    return scheduler, host_manager.HostState, spec


def _inventories(url: str, root: str) -> dict:
    """The root's inventories (total, reserved and ratios do not change while a case runs)."""
    _s, inventories = _request(url, "GET", f"/resource_providers/{root}/inventories")
    return inventories["inventories"]


def _free(inventory: dict | None, summaries: dict, root: str, rc: str) -> int:
    """A compute node's free figure: total less reserved and used (usage from Placement's answer)."""
    if inventory is None:
        return 0
    used = summaries[root]["resources"][rc]["used"]
    return inventory["total"] - inventory["reserved"] - used


def _host_state(host_state_cls, name: str, root: str, inventories: dict, summaries: dict, counts: dict):
    """Nova's HostState of the compute node as its resource tracker reports it: free RAM and disk, VCPUs
    (total, used by every instance, pinned or not, allocation ratio), the free PCI devices Nova tracks (the
    root's providers with COMPUTE_MANAGED_PCI_DEVICE in Placement's provider summaries), the I/O
    operations and instances (the fleet's figures plus this case's instances), build failures and the
    hypervisor version from the fleet's figures."""
    state = host_state_cls(name, name, "cell1")
    state.uuid = root
    vcpu = inventories.get("VCPU")
    resources = summaries[root]["resources"]
    state.free_ram_mb = _free(inventories.get("MEMORY_MB"), summaries, root, "MEMORY_MB")
    state.free_disk_mb = _free(inventories.get("DISK_GB"), summaries, root, "DISK_GB") * 1024
    state.vcpus_total = vcpu["total"] if vcpu else 0
    state.cpu_allocation_ratio = vcpu["allocation_ratio"] if vcpu else 1.0
    state.vcpus_used = sum(resources[rc]["used"] for rc in ("VCPU", "PCPU") if rc in resources)
    pci_free = sum(
        entry["capacity"] - entry["used"]
        for summary in summaries.values()
        if summary["root_provider_uuid"] == root and "COMPUTE_MANAGED_PCI_DEVICE" in summary["traits"]
        for entry in summary["resources"].values()
    )
    state.pci_stats = _pci_stats(pci_free)
    for key in FIGURES:
        setattr(state, key, counts[key])
    return state


def _same(one: dict, other: dict) -> bool:
    def canonical(allocations):
        return sorted((u, sorted(a["resources"].items())) for u, a in allocations.items())

    return canonical(one) == canonical(other)


def run_case(case: dict) -> dict:
    url = case["placement"]
    scheduler, host_state_cls, spec = _scheduler(case.get("multipliers") or {})
    roots = [tuple(r) for r in case["roots"]]
    name_of = dict(roots)
    inventories = {root: _inventories(url, root) for root, _name in roots}
    figures = case.get("figures") or {}
    counts = {name: {key: int((figures.get(name) or {}).get(key) or 0) for key in FIGURES} for _root, name in roots}
    results, consumers = [], []
    for step in case["steps"]:
        candidates, summaries = [], {}
        for index, query in enumerate(step["queries"]):
            status, body = _request(url, "GET", "/allocation_candidates?" + query)
            if status == 200 and (index == 0 or step["pcpu_fallback"]):
                candidates += body["allocation_requests"]
                summaries.update(body["provider_summaries"])
        by_root: dict[str, list] = {}
        for candidate in candidates:
            for provider in candidate["allocations"]:
                if provider in name_of:
                    by_root.setdefault(provider, []).append(candidate)
        states = []
        down = set(step.get("down") or ())
        for root, name in roots:
            if root not in by_root or name in down:
                continue
            state = _host_state(host_state_cls, name, root, inventories[root], summaries, counts[name])
            state.allocation_candidates = by_root[root]
            states.append(state)
        weighed = scheduler.host_manager.get_weighed_hosts(states, spec)
        subset = [w.obj for w in weighed[: case.get("host_subset_size", 1)]]
        if len(subset) > 1:
            # Nova draws one of the best host_subset_size hosts at random; the plan's draw (its first host)
            # must be one of them, and Nova then tries the others in the weighed order.
            first = next((h for h in subset if h.host == step.get("first")), subset[0])
            sorted_hosts = [first] + [w.obj for w in weighed if w.obj is not first]
        else:
            sorted_hosts = scheduler._get_sorted_hosts(spec, states, 0)
        # The chosen host and its alternates, as many as [scheduler] max_attempts (3) allows; the plan says
        # how many of them nova-compute refused, and the build lands on the next.
        attempts = [h for h in sorted_hosts if h.allocation_candidates][:MAX_ATTEMPTS]
        refused = step.get("refused", 0)
        chosen = attempts[refused] if refused < len(attempts) and step.get("allocations") is not None else None
        result = {
            "flavor": step["flavor"],
            "hosts": [s.host for s in states],
            "attempts": [h.host for h in attempts],
            "subset": [h.host for h in subset],
            "chosen": chosen.host if chosen else None,
            "tied": [],
            "plan_allocation_offered": None,
            "status": None,
        }
        if chosen is not None:
            top = next(w.weight for w in weighed if w.obj is chosen)
            result["tied"] = [w.obj.host for w in weighed if w.weight == top]
            allocation = chosen.allocation_candidates[0]["allocations"]
            wanted = step.get("allocations")
            offered = wanted is not None and any(_same(c["allocations"], wanted) for c in chosen.allocation_candidates)
            result["plan_allocation_offered"] = offered
            if offered:
                allocation = wanted
            consumer = str(uuid.uuid4())
            consumers.append(consumer)
            status, _body = _request(
                url,
                "PUT",
                f"/allocations/{consumer}",
                {
                    "allocations": allocation,
                    "project_id": PROJECT,
                    "user_id": USER,
                    "consumer_generation": None,
                    "consumer_type": "INSTANCE",
                },
            )
            result["status"] = status
            counts[chosen.host]["num_instances"] += 1
            if case.get("arrival") == "burst":  # the build still runs when the next instance is scheduled
                counts[chosen.host]["num_io_ops"] += 1
        results.append(result)
    for consumer in consumers:  # the next case starts from the fleet as loaded
        _request(url, "DELETE", f"/allocations/{consumer}")
    return {"steps": results}


def _configure(conf, weight_classes: list[str] | None, multipliers: dict) -> None:
    """``[filter_scheduler]`` for one case: Nova's defaults (no override left from an earlier case), then
    the case's weight classes and multipliers."""
    for option in conf.filter_scheduler:
        conf.clear_override(option, "filter_scheduler")
    conf.set_override("weight_classes", weight_classes or ["nova.scheduler.weights.all_weighers"], "filter_scheduler")
    for option, value in multipliers.items():
        conf.set_override(option, value, "filter_scheduler")


def weigh(case: dict) -> dict:
    """Nova's weights for one list of hosts: ``{"weigh": [{"host": name, FIELD: value, ..., "aggregates": [metadata
    of each aggregate of the host]}], "weight_classes":
    [...] (Nova's default when absent), "multipliers": {option: value}}`` -> ``{"weights": [...] (the hosts'
    order), "order": [names, Nova's sorted order]}``. FIELD is a ``HostState`` attribute the weighers read."""
    import nova.conf
    from nova import objects
    from nova.scheduler import host_manager, weights

    objects.register_all()
    conf = nova.conf.CONF
    conf([], project="nova", default_config_files=[])
    _configure(conf, case.get("weight_classes"), case.get("multipliers") or {})
    handler = weights.HostWeightHandler()
    weighers = [cls() for cls in handler.get_matching_classes(conf.filter_scheduler.weight_classes)]
    states = []
    for host in case["weigh"]:
        state = host_manager.HostState(host["host"], host["host"], "cell1")
        state.cpu_allocation_ratio = 1.0
        for field, value in host.items():
            if field not in ("host", "pci_free", "aggregates"):
                setattr(state, field, value)
        state.pci_stats = _pci_stats(host.get("pci_free", 0))
        state.aggregates = [objects.Aggregate(metadata=metadata) for metadata in host.get("aggregates") or ()]
        states.append(state)
    spec = objects.RequestSpec(instance_group=None, requested_destination=None)
    weighed = handler.get_weighed_objects(weighers, states, spec)
    by_host = {w.obj.host: w.weight for w in weighed}
    return {"weights": [by_host[s.host] for s in states], "order": [w.obj.host for w in weighed]}


def _pci_stats(free: int):
    """A ``PciDeviceStats`` with one pool of ``free`` devices (what PCIWeigher reads); None without devices."""
    if not free:
        return None
    from nova import objects
    from nova.pci import stats as pci_stats

    pool = objects.PciDevicePool(vendor_id="10de", product_id="2330", numa_node=None, tags={}, count=free)
    return pci_stats.PciDeviceStats(None, stats=objects.PciDevicePoolList(objects=[pool]))


if __name__ == "__main__":
    sys.exit(serve(lambda cases: [weigh(case) if "weigh" in case else run_case(case) for case in cases]))
