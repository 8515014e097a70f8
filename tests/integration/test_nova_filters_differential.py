"""The modelled Nova host filters against Nova 34's own filter code, on generated hosts and flavors.

Each case is one host (disabled or not, one to four NUMA cells with dedicated and shared CPUs and
memory, PCI device pools on some cells or without NUMA information, aggregate metadata) and one flavor
(CPU policy, guest NUMA nodes, a mixed mask, an isolated emulator thread, a PCI alias with an affinity
policy, aggregate extra specs). Nova's ComputeFilter, NUMATopologyFilter, PciPassthroughFilter and
AggregateInstanceExtraSpecsFilter answer ``host_passes`` in the nova venv
(``tests/support/nova_filter_oracle.py``); ``nova_filters.run_filters`` must keep or remove the host
exactly as each of them does. Flavors nova-api refuses are left out (the flavor differential covers
refusals).
"""

from __future__ import annotations

import json
import random

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import flavor as nova_flavor
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs, nova_filters
from tests.support import nova_filter_oracle

CASES = 320
ALIASES = [
    {"name": "gpu", "vendor_id": "10de", "product_id": "2331", "device_type": "type-PCI"},
    {"name": "fpga", "vendor_id": "1172", "product_id": "0001", "device_type": "type-PCI"},
]
FILTERS = nova_filters.MODELLED_FILTERS


def _host(rng: random.Random) -> dict:
    cells = []
    for cell_id in range(rng.choice([1, 1, 2, 2, 3, 4])):
        cells.append(
            {
                "id": cell_id,
                "pcpus": rng.choice([0, 1, 2, 4, 8]),
                "vcpus": rng.choice([0, 2, 4, 8]),
                "memory_mb": rng.choice([1024, 2048, 4096, 8192]),
            }
        )
    pools = []
    for alias in ALIASES:
        for _ in range(rng.choice([0, 1, 1, 2])):
            pools.append(
                {
                    "vendor_id": alias["vendor_id"],
                    "product_id": alias["product_id"],
                    "numa_node": rng.choice([None, *range(len(cells))]),
                    "count": rng.choice([1, 1, 2]),
                }
            )
    metadata = rng.choice([{}, {"gpu": "true"}, {"gpu": "false", "tier": "3"}, {"tier": "1"}])
    return {
        "disabled": rng.choice([False, False, True, "false", "true", "no"]),
        "numa_cells": cells,
        "pci_pools": pools,
        "aggregates": [{"metadata": metadata}] if metadata else [],
    }


def _flavor(rng: random.Random, index: int) -> dict:
    vcpus = rng.choice([1, 2, 4, 6, 8])
    ram = rng.choice([512, 1024, 2048, 4096, 8192])
    specs: dict[str, str] = {}
    policy = rng.choice([None, None, "shared", "dedicated", "dedicated", "mixed"])
    if policy:
        specs["hw:cpu_policy"] = policy
    if policy == "mixed":
        specs["hw:cpu_dedicated_mask"] = rng.choice(["^0", "0", f"0-{max(vcpus // 2 - 1, 0)}"])
        if vcpus == 1:
            vcpus = 2
    nodes = rng.choice([None, None, 1, 2, 2, 3, 4])
    if nodes and vcpus % nodes == 0 and ram % nodes == 0:
        specs["hw:numa_nodes"] = str(nodes)
    if policy in ("dedicated", "mixed") and rng.random() < 0.25:
        specs["hw:emulator_threads_policy"] = "isolate"
    alias = rng.choice([None, None, "gpu", "fpga", "both"])
    if alias == "both":
        specs["pci_passthrough:alias"] = f"gpu:{rng.choice([1, 2])},fpga:1"
    elif alias:
        specs["pci_passthrough:alias"] = f"{alias}:{rng.choice([1, 1, 2, 3])}"
    if alias and rng.random() < 0.6:
        specs["hw:pci_numa_affinity_policy"] = rng.choice(["required", "legacy", "preferred"])
    aggregate = rng.choice([None, None, "gpu=true", "tier=>= 2", "scoped"])
    if aggregate == "gpu=true":
        specs["gpu"] = "true"
    elif aggregate == "tier=>= 2":
        specs["tier"] = ">= 2"
    elif aggregate == "scoped":
        specs["aggregate_instance_extra_specs:gpu"] = "<in> tru"
    return {"name": f"f{index}", "vcpus": vcpus, "ram": ram, "disk": 1, "extra_specs": specs}


def _cases() -> list[dict]:
    rng = random.Random(20261201)
    cases = []
    for index in range(CASES):
        cases.append({"id": str(index), "flavor": _flavor(rng, index), "host": _host(rng)})
    return cases


@pytest.fixture(scope="module")
def judged() -> list[tuple[dict, dict]]:
    cases = _cases()
    for case in cases:
        case["pci_aliases"] = [json.dumps(a) for a in ALIASES]
    oracle_cases = []
    for case in cases:
        host = dict(case["host"], disabled=inputs.boolean(case["host"]["disabled"], "disabled"))
        oracle_cases.append({**case, "host": host})
    answers = {a["id"]: a for a in nova_filter_oracle.ask(oracle_cases, timeout=240)}
    return [(case, answers[case["id"]]) for case in cases]


def _model(case: dict) -> dict[str, bool]:
    snapshot = {
        "resource_providers": [
            {
                "uuid": "00000000-0000-0000-0000-000000000001",
                "name": "h1",
                "inventories": {"VCPU": {"total": 64}},
                "traits": [],
                **case["host"],
            }
        ]
    }
    record = inputs.fleet_snapshot(snapshot)["resource_providers"][0]
    aggregates = [{"name": "agg", "hosts": ["h1"], **a} for a in case["host"]["aggregates"]]
    req = nova_flavor.translate(case["flavor"], pci_aliases=case["pci_aliases"], pci_in_placement=False)
    assert not req.refusal, req.refusal
    kept = {}
    for name in FILTERS:
        result = nova_filters.run_filters(
            {"h1": record},
            ["h1"],
            req,
            case["flavor"],
            pci_in_placement=False,
            aggregates_metadata=aggregates,
            enabled_filters=(name,),
        )
        kept[name] = result["hosts"] == ["h1"]
    return kept


def test_the_generated_cases_cover_every_filter_both_ways(judged):
    accepted = [answer for _case, answer in judged if "refusal" not in answer]
    assert len(accepted) >= CASES // 2
    for name in FILTERS:
        outcomes = {answer[name] for answer in accepted}
        assert outcomes == {True, False}, f"{name} never {'fails' if True in outcomes else 'passes'}"


def test_each_modelled_filter_keeps_and_removes_hosts_as_nova_does(judged):
    differences = []
    for case, answer in judged:
        if "refusal" in answer:
            continue
        model = _model(case)
        for name in FILTERS:
            if model[name] != answer[name]:
                differences.append(
                    f"case {case['id']} {name}: Nova {'keeps' if answer[name] else 'removes'}, model "
                    f"{'keeps' if model[name] else 'removes'}: flavor {case['flavor']}, host {case['host']}"
                )
    assert not differences, f"{len(differences)} difference(s):\n" + "\n".join(differences[:15])
