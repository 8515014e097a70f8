"""NUMA cells consumed instance by instance, against Nova 34's own claim (``numa_fit_instance_to_host`` and
``numa_usage_from_instance_numa`` in the nova venv, ``tests/support/nova_numa_oracle.py``): every instance
must land on the same host cells, and the instance that no longer fits must be the same."""

import random

from ansible_collections.accel.openstack.plugins.plugin_utils import flavor as nova_flavor
from ansible_collections.accel.openstack.plugins.plugin_utils import nova_filters
from ansible_collections.accel.openstack.plugins.plugin_utils.numa_claims import claim, consume, host_cells
from tests.support.nova_venv import ask

FLAVORS = [
    {"hw:cpu_policy": "dedicated"},
    {"hw:cpu_policy": "dedicated", "hw:numa_nodes": "2"},
    {"hw:cpu_policy": "dedicated", "hw:emulator_threads_policy": "isolate"},
    {"hw:numa_nodes": "1"},
    {"hw:numa_nodes": "2"},
    {"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "^0"},
]


def _case(rng: random.Random) -> dict:
    cells = [
        {
            "id": index,
            "pcpus": rng.choice([0, 2, 4, 6, 8]),
            "vcpus": rng.choice([0, 2, 4, 8]),
            "memory_mb": rng.choice([4096, 8192, 16384]),
        }
        for index in range(rng.randint(1, 4))
    ]
    specs = dict(rng.choice(FLAVORS))
    vcpus = (
        rng.choice([2, 4]) if "hw:numa_nodes" in specs or "hw:cpu_dedicated_mask" in specs else rng.choice([1, 2, 3])
    )
    flavor = {"name": "f", "vcpus": vcpus, "ram": rng.choice([1024, 2048, 3072, 4096]), "disk": 1, "extra_specs": specs}
    return {"cells": cells, "flavor": flavor, "count": 12, "ratios": rng.choice([None, [4.0, 1.0], [16.0, 1.5]])}


def _plan(case: dict) -> list:
    req = nova_flavor.translate(case["flavor"])
    numa = req.numa or {}
    wanted = nova_filters._instance_cells(numa, case["flavor"])
    pinned = numa.get("cpu_policy") in ("dedicated", "mixed")
    emulator = 1 if pinned and numa.get("emulator_threads_policy") == "isolate" else 0
    cells = host_cells(case["cells"])
    ratios = tuple(case["ratios"]) if case["ratios"] else None
    found = []
    for _instance in range(case["count"]):
        chosen = claim(cells, wanted, pinned=pinned, emulator=emulator, ratios=ratios)
        if chosen is None:
            found.append(None)
            continue
        found.append([cells[i]["id"] for i in chosen])
        consume(cells, chosen, wanted, pinned, emulator)
    return found


def test_cells_are_claimed_one_instance_after_another_as_novas_claim_does():
    rng = random.Random(34)
    cases = [_case(rng) for _index in range(150)]
    novas = ask("tests/support/nova_numa_oracle.py", cases, 120, "Nova's NUMA claim")
    placed = full = 0
    for case, nova in zip(cases, novas, strict=True):
        mine = _plan(case)
        assert mine == nova["cells"], case
        placed += sum(cells is not None for cells in mine)
        full += mine[-1] is None and mine[0] is not None
    assert placed > 300 and full > 40  # the cases fill hosts up
