"""Run Nova 34's own scheduler filters on a host and a flavor: the oracle for ``nova_filters.py``.

Runs under the nova venv's interpreter (``.venv-nova/bin/python``), never imported by the test process:
JSON cases on stdin, JSON results on stdout, one process for many cases (as nova_flavor_oracle.py).

A case::

    {"id": "...", "flavor": {name, vcpus, ram, disk, extra_specs}, "pci_aliases": ["<alias JSON>", ...],
     "host": {"disabled": bool, "numa_cells": [{id, pcpus, vcpus, memory_mb}],
              "pci_pools": [{vendor_id, product_id, numa_node, count}],
              "aggregates": [{"metadata": {...}}]}}

The host becomes a ``HostState`` as the host manager builds it: its service (``disabled``), a
``NUMATopology`` whose cells hold ``pcpus`` dedicated and ``vcpus`` shared CPUs (distinct CPU ids) and
``memory_mb``, a ``PciDeviceStats`` holding ``count`` type-PCI devices per pool (admitted by a
``[pci] device_spec`` of their vendor and product), its aggregates, allocation ratios of 1.0 and the one
allocation candidate Placement returned. The flavor becomes the RequestSpec nova-api builds
(``numa_get_constraints``, ``get_pci_requests_from_flavor``). Each filter answers ``host_passes``:
``{"ComputeFilter": bool, "NUMATopologyFilter": bool, "PciPassthroughFilter": bool,
"AggregateInstanceExtraSpecsFilter": bool}``, or ``{"refusal": ...}`` when nova-api refuses the flavor.
The service-group liveness check of ComputeFilter is answered "up" (the model has no heartbeats).
"""

from __future__ import annotations

import json
import sys
import warnings

warnings.simplefilter("ignore")


def _setup():
    import nova.conf
    from nova import objects

    objects.register_all()
    conf = nova.conf.CONF
    conf([], project="nova", default_config_files=[])
    return conf


def _flavor(data: dict):
    from nova import objects

    return objects.Flavor(
        id=1,
        flavorid="f-1",
        name=data["name"],
        vcpus=data["vcpus"],
        memory_mb=data["ram"],
        root_gb=data.get("disk", 0),
        ephemeral_gb=0,
        swap=0,
        extra_specs=dict(data.get("extra_specs") or {}),
        rxtx_factor=1.0,
        vcpu_weight=0,
        disabled=False,
        is_public=True,
        description=None,
    )


def _topology(cells: list[dict]):
    from nova import objects

    built, next_cpu = [], 0
    for cell in cells:
        pcpuset = set(range(next_cpu, next_cpu + cell["pcpus"]))
        next_cpu += cell["pcpus"]
        cpuset = set(range(next_cpu, next_cpu + cell["vcpus"]))
        next_cpu += cell["vcpus"]
        built.append(
            objects.NUMACell(
                id=cell["id"],
                cpuset=cpuset,
                pcpuset=pcpuset,
                memory=cell["memory_mb"],
                cpu_usage=0,
                memory_usage=0,
                pinned_cpus=set(),
                siblings=[{cpu} for cpu in sorted(pcpuset | cpuset)],
                mempages=[],
                network_metadata=objects.NetworkMetadata(physnets=set(), tunneled=False),
            )
        )
    return objects.NUMATopology(cells=built)


def _pci_stats(topology, pools: list[dict]):
    from nova import objects
    from nova.pci import stats, whitelist

    specs = sorted({json.dumps({"vendor_id": p["vendor_id"], "product_id": p["product_id"]}) for p in pools})
    pci_stats = stats.PciDeviceStats(topology, dev_filter=whitelist.Whitelist(specs))
    number = 0
    for pool in pools:
        for _device in range(pool["count"]):
            address = f"0000:{number // 32 + 1:02x}:{number % 32:02x}.0"
            number += 1
            device = objects.PciDevice(
                compute_node_id=1,
                address=address,
                vendor_id=pool["vendor_id"],
                product_id=pool["product_id"],
                dev_type="type-PCI",
                numa_node=pool["numa_node"],
                status="available",
                dev_id="pci_" + address.replace(":", "_").replace(".", "_"),
                label="label_" + pool["vendor_id"] + "_" + pool["product_id"],
                parent_addr=None,
                request_id=None,
                extra_info={},
            )
            pci_stats.add_device(device)
    return pci_stats


def _host_state(host: dict):
    from nova import objects
    from nova.scheduler import host_manager

    state = host_manager.HostState("h1", "h1", "00000000-0000-0000-0000-000000000001")
    state.service = {"disabled": bool(host["disabled"]), "host": "h1", "id": 1, "forced_down": False}
    state.numa_topology = _topology(host["numa_cells"]) if host.get("numa_cells") else None
    state.pci_stats = _pci_stats(state.numa_topology, host.get("pci_pools") or [])
    state.cpu_allocation_ratio = 1.0
    state.ram_allocation_ratio = 1.0
    state.limits = {}
    state.aggregates = [
        objects.Aggregate(id=index + 1, name=f"agg{index}", hosts=["h1"], metadata=dict(aggregate["metadata"]))
        for index, aggregate in enumerate(host.get("aggregates") or [])
    ]
    state.allocation_candidates = [{"mappings": {}}]
    return state


def _case(conf, case: dict) -> dict:
    from nova import objects
    from nova.compute import api as compute_api
    from nova.pci import request as pci_request
    from nova.scheduler.filters import (
        aggregate_instance_extra_specs,
        compute_filter,
        numa_topology_filter,
        pci_passthrough_filter,
    )
    from nova.virt import hardware

    conf.set_override("alias", case.get("pci_aliases") or [], group="pci")
    pci_request.get_alias_from_config.cache_clear()
    image = {"name": "image", "properties": {}}
    try:
        flavor = _flavor(case["flavor"])
        compute_api.API._validate_flavor_image_numa_pci(image, flavor, validate_numa=True, validate_pci=True)
        image_meta = compute_api._get_image_meta_obj(image)
        numa = hardware.numa_get_constraints(flavor, image_meta)
        policy = hardware.get_pci_numa_policy_constraint(flavor, image_meta)
        requests = pci_request.get_pci_requests_from_flavor(flavor, affinity_policy=policy)
    except Exception as exc:  # nova-api refuses the flavor: no filter runs
        return {"refusal": f"{type(exc).__name__}: {exc}"}
    spec = objects.RequestSpec(
        flavor=flavor,
        image=image_meta,
        numa_topology=numa,
        pci_requests=requests,
        instance_uuid="00000000-0000-0000-0000-0000000000aa",
    )
    computes = compute_filter.ComputeFilter()
    computes.servicegroup_api.service_is_up = lambda service: True
    filters = {
        "ComputeFilter": computes,
        "NUMATopologyFilter": numa_topology_filter.NUMATopologyFilter(),
        "PciPassthroughFilter": pci_passthrough_filter.PciPassthroughFilter(),
        "AggregateInstanceExtraSpecsFilter": aggregate_instance_extra_specs.AggregateInstanceExtraSpecsFilter(),
    }
    # Each filter on its own host state (a filter may record limits on the one it passes).
    return {name: bool(f.host_passes(_host_state(case["host"]), spec)) for name, f in filters.items()}


def ask(cases: list[dict], timeout: int = 300) -> list[dict]:
    """Client side (test process): run the cases in one nova-venv process and return its results."""
    from tests.support import nova_venv

    return nova_venv.ask(__file__, cases, timeout, "nova filter oracle")


if __name__ == "__main__":
    from nova_venv import serve_cases

    sys.exit(serve_cases(_setup, _case))
