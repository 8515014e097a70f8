"""NUMA cells consumed instance by instance, against Nova 34's own claim (``numa_fit_instance_to_host`` and
``numa_usage_from_instance_numa`` in the nova venv, ``tests/support/nova_numa_oracle.py``): every instance
must land on the same host cells, and the instance that no longer fits must be the same; with huge pages and
CPU thread policies also the page size of each guest node, and after each instance the pinned CPUs and the
pages used of every host cell (counts: which thread of a core Nova pins follows a set's order)."""

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


def _run(case: dict) -> dict:
    """The model's answer in the oracle's shape."""
    req = nova_flavor.translate(case["flavor"], image_properties=case.get("image") or {})
    assert req.refusal is None, req.refusal
    numa = req.numa or {}
    wanted = nova_filters._instance_cells(numa, case["flavor"])
    pinned = numa.get("cpu_policy") in ("dedicated", "mixed")
    emulator = 1 if pinned and numa.get("emulator_threads_policy") == "isolate" else 0
    cells = host_cells(case["cells"])
    ratios = tuple(case["ratios"]) if case["ratios"] else None
    options = {
        "pinned": pinned,
        "mixed": numa.get("cpu_policy") == "mixed",
        "emulator": emulator,
        "pagesize": numa.get("mem_page_size"),
        "thread_policy": numa.get("cpu_thread_policy"),
    }
    found: dict[str, list] = {"cells": [], "pages": [], "state": []}
    for _instance in range(case["count"]):
        chosen = claim(cells, wanted, ratios=ratios, **options)
        if chosen is None:
            found["cells"].append(None)
            found["pages"].append(None)
            continue
        found["cells"].append([cells[i]["id"] for i in chosen])
        found["pages"].append([size if options["pagesize"] else None for _m, _c, size, _t in chosen.uses])
        consume(cells, chosen)
        found["state"].append(
            [[c["pcpus_used"], {str(size): used for size, (_total, used) in c["pages"].items()}] for c in cells]
        )
    return found


def _plan(case: dict) -> list:
    return _run(case)["cells"]


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


PAGE_SIZES = [None, "small", "large", "any", "2048", "1048576", "2MB", "1GB"]
THREAD_POLICIES = [None, "prefer", "isolate", "require"]


def _paged_case(rng: random.Random) -> dict:
    """A host with or without SMT and huge page pools per cell, a flavor with a page size and (pinned) a
    CPU thread policy."""
    per_core = rng.choice([1, 2])
    cells = []
    for index in range(rng.randint(1, 3)):
        cores = [per_core] * rng.choice([0, 1, 2, 3, 4])
        if per_core == 2 and rng.random() < 0.2:
            cores.append(1)  # a core with one thread in the dedicated set
        memory = rng.choice([8192, 16384])
        hugepages = {}
        if rng.random() < 0.8:
            hugepages["2048"] = rng.choice([0, 512, 1024, 2048])
        if rng.random() < 0.5:
            hugepages["1048576"] = rng.choice([1, 2, 4])
        shared = rng.choice([0, 2, 4]) if cores else rng.choice([2, 4])
        cells.append(
            {
                "id": index,
                "pcpus": sum(cores),
                "vcpus": shared,
                "memory_mb": memory,
                "hugepages": hugepages,
                "cores": cores,
                "threads_per_core": max(*cores, min(per_core, shared), 1),  # the cell's widest core
            }
        )
    specs = dict(rng.choice(FLAVORS))
    page = rng.choice(PAGE_SIZES)
    if page:
        specs["hw:mem_page_size"] = page
    image = {}
    if page in ("large", "any") and rng.random() < 0.3:
        image["hw_mem_page_size"] = rng.choice(["2048", "1GiB"])
    if specs.get("hw:cpu_policy") == "dedicated" and rng.random() < 0.8:
        policy = rng.choice(THREAD_POLICIES)
        if policy:
            specs["hw:cpu_thread_policy"] = policy
    vcpus = (
        rng.choice([2, 4]) if "hw:numa_nodes" in specs or "hw:cpu_dedicated_mask" in specs else rng.choice([1, 2, 3])
    )
    flavor = {"name": "f", "vcpus": vcpus, "ram": rng.choice([512, 1024, 1536, 2048]), "disk": 1, "extra_specs": specs}
    return {
        "cells": cells,
        "flavor": flavor,
        "image": image,
        "count": 10,
        "ratios": rng.choice([None, [4.0, 1.0], [16.0, 1.5]]),
    }


STICKY = [
    {"id": 0, "pcpus": 4, "vcpus": 0, "memory_mb": 8192, "hugepages": {"1048576": 2}},
    {
        "id": 1,
        "pcpus": 2,
        "vcpus": 0,
        "memory_mb": 8192,
        "hugepages": {"2048": 1024},
        "cores": [2],
        "threads_per_core": 2,
    },
]


HALF_USED = {"id": 0, "pcpus": 3, "vcpus": 0, "memory_mb": 8192, "cores": [2, 1], "threads_per_core": 2}
DEDICATED = {"hw:cpu_policy": "dedicated"}


def _edge(cells: list, specs: dict, vcpus: int, count: int = 3) -> dict:
    flavor = {"name": "f", "vcpus": vcpus, "ram": 1024, "disk": 1, "extra_specs": specs}
    return {"cells": cells, "flavor": flavor, "image": {}, "count": count, "ratios": None}


# the hosts of the rules' tests below, given to Nova too
EDGES = [
    _edge(STICKY, {**DEDICATED, "hw:cpu_thread_policy": "require", "hw:mem_page_size": "large"}, 2),
    _edge([HALF_USED], {**DEDICATED, "hw:cpu_thread_policy": "prefer"}, 3),
    _edge([HALF_USED], {**DEDICATED, "hw:cpu_thread_policy": "require"}, 3),
    _edge([HALF_USED], {**DEDICATED, "hw:cpu_thread_policy": "require"}, 2),
]


def test_huge_pages_and_thread_policies_are_claimed_one_instance_after_another_as_novas_claim_does():
    rng = random.Random(3434)
    cases = [_paged_case(rng) for _index in range(600)] + EDGES
    novas = ask("tests/support/nova_numa_oracle.py", cases, 240, "Nova's NUMA claim")
    figures = {"placed": 0, "full": 0, "huge": 0, "isolate": 0, "require": 0, "smt_prefer": 0, "refused_smt": 0}
    for case, nova in zip(cases, novas, strict=True):
        mine = _run(case)
        assert mine == nova, case
        placed = sum(cells is not None for cells in mine["cells"])
        specs = case["flavor"]["extra_specs"]
        policy = specs.get("hw:cpu_thread_policy")
        smt = any(cell.get("threads_per_core") == 2 for cell in case["cells"])
        figures["placed"] += placed
        figures["full"] += mine["cells"][-1] is None and placed > 0
        figures["huge"] += sum(size not in (None, 4) for sizes in mine["pages"] if sizes for size in sizes)
        figures["isolate"] += placed if policy == "isolate" else 0
        figures["require"] += placed if policy == "require" else 0
        packed = smt and specs.get("hw:cpu_policy") == "dedicated" and policy != "isolate"
        figures["smt_prefer"] += placed if packed else 0
        figures["refused_smt"] += policy == "isolate" and smt and placed == 0
    # the cases reach every path: huge pages of both sizes filling up, each thread policy placing instances
    assert figures["placed"] > 700 and figures["full"] > 150, figures
    assert figures["huge"] > 250 and figures["isolate"] > 10 and figures["require"] > 30, figures
    assert figures["smt_prefer"] > 150 and figures["refused_smt"] > 15, figures


# -- the rules, one at a time ----------------------------------------------------------------------
def _fill(cell: dict, want: dict, count: int = 8, **options) -> list:
    """Claim one instance after another on a one-cell host: per instance (page size, free threads of each
    core, or of the cell when its cores have one thread each)."""
    cells = host_cells([cell])
    out = []
    for _instance in range(count):
        chosen = claim(cells, [want], **options)
        if chosen is None:
            out.append(None)
            continue
        consume(cells, chosen)
        left = cells[0]["cores"]
        out.append((chosen.uses[0][2], list(left) if left is not None else cells[0]["pcpus"] - cells[0]["pcpus_used"]))
    return out


def test_large_pages_take_the_largest_size_that_holds_the_memory_then_the_next():
    cell = {"id": 0, "pcpus": 0, "vcpus": 8, "memory_mb": 8192, "hugepages": {"2048": 1024, "1048576": 2}}
    want = {"pcpus": 0, "cpus": 2, "memory_mb": 1024}
    sizes = [found and found[0] for found in _fill(cell, want, 6, pinned=False, pagesize="large")]
    # two 1 GiB pages, then 2 GiB of 2 MiB pages; never the small pages
    assert sizes == [1048576, 1048576, 2048, 2048, None, None]
    # "any" goes on to the small pages (8 GiB less the 4 GiB of huge pages)
    sizes = [found and found[0] for found in _fill(cell, want, 9, pinned=False, pagesize="any")]
    assert sizes == [1048576, 1048576, 2048, 2048, 4, 4, 4, 4, None]


def test_a_size_the_memory_is_not_a_multiple_of_is_passed_over():
    cell = {"id": 0, "pcpus": 0, "vcpus": 8, "memory_mb": 8192, "hugepages": {"2048": 1024, "1048576": 4}}
    want = {"pcpus": 0, "cpus": 1, "memory_mb": 1536}  # 1.5 GiB: not whole 1 GiB pages
    sizes = [found and found[0] for found in _fill(cell, want, 3, pinned=False, pagesize="large")]
    assert sizes == [2048, None, None]  # 1,024 pages of 2 MiB hold one
    assert _fill(cell, want, 1, pinned=False, pagesize=1048576) == [None]


def test_huge_pages_leave_less_memory_to_small_pages():
    cell = {"id": 0, "pcpus": 0, "vcpus": 8, "memory_mb": 8192, "hugepages": {"2048": 2048}}  # 4 GiB huge
    assert _fill(cell, {"pcpus": 0, "cpus": 1, "memory_mb": 6144}, 1, pinned=False) == [None]
    assert _fill(cell, {"pcpus": 0, "cpus": 1, "memory_mb": 4096}, 1, pinned=False) == [(4, 0)]
    # pinned guests use free small pages (no over-subscription): one 4 GiB guest fills them
    pinned_cell = dict(cell, pcpus=4, vcpus=0)
    want = {"pcpus": 1, "cpus": 0, "memory_mb": 4096}
    assert _fill(pinned_cell, want, 2, pinned=True) == [(4, 3), None]


def test_require_packs_onto_whole_cores_and_needs_siblings():
    smt = {"id": 0, "pcpus": 8, "vcpus": 0, "memory_mb": 65536, "cores": [2, 2, 2, 2], "threads_per_core": 2}
    want = {"pcpus": 3, "cpus": 0, "memory_mb": 1024}
    found = _fill(smt, want, 3, pinned=True, thread_policy="require")
    # three CPUs take a whole core and one thread of the next; the half-used core never serves require again
    assert found == [(4, [0, 1, 2, 2]), (4, [0, 1, 0, 1]), None]
    flat = {"id": 0, "pcpus": 8, "vcpus": 0, "memory_mb": 65536}  # one thread per core
    assert _fill(flat, want, 1, pinned=True, thread_policy="require") == [None]


def test_prefer_packs_onto_siblings_then_falls_back_to_any_free_thread():
    smt = {"id": 0, "pcpus": 8, "vcpus": 0, "memory_mb": 65536, "cores": [2, 2, 2, 2], "threads_per_core": 2}
    want = {"pcpus": 3, "cpus": 0, "memory_mb": 1024}
    found = _fill(smt, want, 3, pinned=True, thread_policy="prefer")
    assert found == [(4, [0, 1, 2, 2]), (4, [0, 1, 0, 1]), None]
    one = {"pcpus": 1, "cpus": 0, "memory_mb": 1024}
    # one CPU at a time: whole free cores first (spreading), then the second threads
    cores = [found[1] for found in _fill(smt, one, 8, pinned=True)]
    assert cores[:4] == [[1, 2, 2, 2], [1, 1, 2, 2], [1, 1, 1, 2], [1, 1, 1, 1]]
    assert cores[-1] == [0, 0, 0, 0]
    # three CPUs on a core with two free threads and one with one: no core width holds them, any threads do
    three = {"pcpus": 3, "cpus": 0, "memory_mb": 1024}
    assert _fill(HALF_USED, three, 1, pinned=True, thread_policy="prefer") == [(4, [0, 0])]
    assert _fill(HALF_USED, three, 1, pinned=True, thread_policy="require") == [None]
    two = {"pcpus": 2, "cpus": 0, "memory_mb": 1024}
    assert _fill(HALF_USED, two, 2, pinned=True, thread_policy="require") == [(4, [0, 1]), None]


def test_isolate_takes_whole_cores_and_is_refused_on_smt_cells():
    flat = {"id": 0, "pcpus": 4, "vcpus": 2, "memory_mb": 65536}
    want = {"pcpus": 2, "cpus": 0, "memory_mb": 1024}
    # with an isolated emulator thread the instance takes three cores; the fourth cannot hold another
    assert _fill(flat, want, 2, pinned=True, emulator=1, thread_policy="isolate") == [(4, 1), None]
    smt = {"id": 0, "pcpus": 8, "vcpus": 0, "memory_mb": 65536, "cores": [2, 2, 2, 2], "threads_per_core": 2}
    assert _fill(smt, want, 1, pinned=True, thread_policy="isolate") == [None]


def test_a_node_keeps_the_page_size_it_was_first_given_in_the_claim():
    # cell 0 comes first (more free dedicated CPUs): its 1 GiB pages hold the guest, but require finds no
    # siblings there; the guest then asks cell 1 for 1 GiB pages, which it lacks, so nothing fits, as in Nova
    want = [{"pcpus": 2, "cpus": 0, "memory_mb": 1024}]
    assert claim(host_cells(STICKY), want, pinned=True, pagesize="large", thread_policy="require") is None
    # asked for 2 MiB pages from the start, the guest fits cell 1
    chosen = claim(host_cells(STICKY), want, pinned=True, pagesize=2048, thread_policy="require")
    assert list(chosen) == [1] and chosen.uses[0][2] == 2048
    # (the differential test above gives Nova this host too: EDGES)
