"""flavor_fit against the real Placement 16.0.0: Nova's queries for each flavor asked of both.

A fleet predicted from discovery facts of real hardware profiles (``nova_fleet``: PCI providers with
report_in_placement, vGPU children, PCPU on a pinned host, usage on one host) is loaded into Placement.
For generated and hand-written flavors, every query Nova sends is asked of Placement, the answers are
merged with Nova's rules, and the outcome, status and hosts must equal ``flavor_fit``'s. For some
flavors the per-host count is checked by placing real allocations in Placement, one after another.
The fleet also holds Ironic nodes as Nova reports them (one unit of a custom class per root, some in
maintenance, some deployed), asked for by bare-metal flavors, right and wrong.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.filter.nova import nova_pci_alias
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.plugin_utils import flavor as nova_flavor
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import nova_fleet
from tests.support.fake_sysfs import build_root
from tests.support.fleet_generator import BAREMETAL_CLASSES, BAREMETAL_TRAITS, baremetal_nodes
from tests.support.placement_loader import allocate, load_fleet

pytestmark = pytest.mark.placement

REPO = Path(__file__).resolve().parents[2]
POLICY = yaml.safe_load((REPO / "inventories/demo/group_vars/all/device_policy.yml").read_text())["accel_device_policy"]
HOSTS = {"hgx-a": "hgx-h100", "hgx-pinned": "hgx-h100", "a16": "vgpu-a16", "nic": "sriov-nic", "amd": "amd-epyc"}


@pytest.fixture(scope="module")
def world(tmp_path_factory, placement):
    facts = {}
    for host, profile in HOSTS.items():
        facts[host], _unused = discover(build_root(profile, str(tmp_path_factory.mktemp(host))))
    snapshot = nova_fleet(
        facts,
        POLICY,
        host_options={"hgx-pinned": {"cpu_dedicated_set": "8-63", "cpu_shared_set": "0-7"}},
        report_in_placement=True,
        disk_gb=2000,
    )
    roots = [p for p in snapshot["resource_providers"] if p["parent_provider_uuid"] is None]
    busy = next(p for p in roots if p["name"] == "hgx-a")
    busy["usages"] = {"VCPU": 100, "MEMORY_MB": 200000}
    snapshot["resource_providers"] += baremetal_nodes(random.Random(11), 14)
    load_fleet(placement, snapshot)
    return snapshot, nova_pci_alias(POLICY)


def generated_flavors(count: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    aliases = ["h100", "t4", "mi210", "rtx6000", "a100", "cx6-vf"]
    flavors = []
    for n in range(count):
        specs = {}
        kind = rng.choice(["general", "alias", "alias", "vgpu", "pinned", "trait", "typo"])
        if kind == "alias":
            specs["pci_passthrough:alias"] = f"{rng.choice(aliases)}:{rng.choice([1, 1, 2, 4, 9])}"
        elif kind == "vgpu":
            specs[f"resources:{rng.choice(['CUSTOM_VGPU_A16_4Q', 'VGPU', 'CUSTOM_VGPU_L40S_4Q'])}"] = "1"
        elif kind == "pinned":
            specs["hw:cpu_policy"] = "dedicated"
        elif kind == "trait":
            specs["trait:CUSTOM_GPU_NVLINK"] = rng.choice(["required", "forbidden"])
            specs["pci_passthrough:alias"] = "h100:1"
        elif kind == "typo":
            specs["trait:CUSTOM_GPU_NVLNK"] = "required"
            if rng.random() < 0.5:
                specs["hw:cpu_policy"] = "dedicated"
        flavors.append(
            {
                "name": f"f{n}-{kind}",
                "vcpus": rng.choice([1, 4, 16, 64, 200]),
                "ram": rng.choice([1024, 16384, 131072, 900000]),
                "disk": rng.choice([0, 20, 500]),
                "ephemeral": rng.choice([0, 0, 10]),
                "swap": rng.choice([0, 0, 1500]),
                "extra_specs": specs,
            }
        )
    return flavors


def placement_answers(server, queries):
    answers = []
    for query in queries:
        status, body = server.request("GET", "/allocation_candidates?" + query)
        answers.append((status, body if status == 200 else body["errors"][0]["detail"]))
    return answers


def test_hosts_outcome_and_status_equal_placement(world, placement):
    snapshot, aliases = world
    names = {p["uuid"]: p for p in snapshot["resource_providers"]}
    root_name = {u: names[p["root_provider_uuid"]]["name"] for u, p in names.items()}
    flavors = generated_flavors(80)
    reports = flavor_fit(flavors, snapshot, pci_aliases=aliases, pci_in_placement=True)
    outcomes = set()
    for flavor, report in zip(flavors, reports, strict=True):
        outcomes.add(report["outcome"])
        if report["outcome"] == "invalid_flavor":
            continue
        req = nova_flavor.translate(flavor, pci_aliases=aliases, pci_in_placement=True)
        answers = placement_answers(placement, req.queries)
        merged = nova_flavor.merge_answers(req, answers)
        hosts = sorted({root_name[u] for c in merged["candidates"] for u in c["allocations"]})
        assert (report["outcome"], report["status"]) == (merged["outcome"], merged["status"]), flavor
        truncated = any(
            status == 200 and len(body["allocation_requests"]) >= nova_flavor.MAX_PLACEMENT_RESULTS
            for status, body in answers
        )
        if truncated:
            # Placement cut its answer at Nova's limit; which trees the kept candidates come from is
            # Placement's undefined order. Both answers come only from trees that can take the flavor.
            viable = {h for h, n in report["max_instances"].items() if n}
            assert set(report["hosts"]) <= viable and set(hosts) <= viable, flavor
            continue
        assert report["hosts"] == hosts, flavor
        assert set(report["why_not"]) == set(report["max_instances"]) - set(hosts), flavor
    assert {"fits", "no_host", "rejected_by_placement", "scheduler_error"} <= outcomes


def place_copies(server, queries, root_uuid, members, cap):
    """Copies placed one after another on one host in the real Placement; the allocations made."""
    consumers = []
    while len(consumers) < cap:
        chosen = None
        for query in queries:
            status, body = server.request("GET", "/allocation_candidates?" + query)
            if status != 200:
                continue
            mine = [a for a in body["allocation_requests"] if members & set(a["allocations"])]
            if mine:
                chosen = mine[0]
                break
        if chosen is None:
            break
        consumer, status = allocate(server, chosen["allocations"])
        assert status == 204
        consumers.append(consumer)
    return consumers


@pytest.mark.parametrize(
    ("flavor", "host"),
    [
        (
            {
                "name": "h100x2",
                "vcpus": 8,
                "ram": 16384,
                "disk": 20,
                "extra_specs": {"pci_passthrough:alias": "h100:2"},
            },
            "hgx-a",
        ),
        (
            {"name": "pinned", "vcpus": 8, "ram": 8192, "disk": 20, "extra_specs": {"hw:cpu_policy": "dedicated"}},
            "hgx-pinned",
        ),
        (
            {"name": "a16", "vcpus": 2, "ram": 4096, "disk": 10, "extra_specs": {"resources:CUSTOM_VGPU_A16_4Q": "1"}},
            "a16",
        ),
        ({"name": "small", "vcpus": 16, "ram": 32768, "disk": 100, "extra_specs": {}}, "nic"),
    ],
)
def test_max_instances_equal_copies_placed_in_placement(world, placement, flavor, host):
    snapshot, aliases = world
    (report,) = flavor_fit([flavor], snapshot, pci_aliases=aliases, pci_in_placement=True, count_limit=40)
    assert report["max_instances"][host] > 0
    root = next(p for p in snapshot["resource_providers"] if p["name"] == host)
    members = {p["uuid"] for p in snapshot["resource_providers"] if p["root_provider_uuid"] == root["uuid"]}
    consumers = place_copies(placement, report["queries"], root["uuid"], members, 40)
    try:
        assert len(consumers) == report["max_instances"][host]
    finally:
        for consumer in consumers:
            placement.request("DELETE", f"/allocations/{consumer}")


@pytest.mark.parametrize(
    ("vcpus", "outcome"),
    [
        (4000, "no_host"),  # both queries stop at the unsuffixed group: two empty answers, NoValidHost
        (2, "scheduler_error"),  # the VCPU fallback reaches the unknown class: 400, the scheduler's TypeError
    ],
)
def test_a_dedicated_flavors_unknown_class_is_checked_lazily_as_placement_does(world, placement, vcpus, outcome):
    snapshot, aliases = world
    flavor = {
        "name": "pinned-nope",
        "vcpus": vcpus,
        "ram": 4096,
        "disk": 20,
        "extra_specs": {"hw:cpu_policy": "dedicated", "resources1:CUSTOM_NOPE": "1"},
    }
    (report,) = flavor_fit([flavor], snapshot, pci_aliases=aliases, pci_in_placement=True)
    req = nova_flavor.translate(flavor, pci_aliases=aliases, pci_in_placement=True)
    merged = nova_flavor.merge_answers(req, placement_answers(placement, req.queries))
    assert report["outcome"] == merged["outcome"] == outcome
    assert report["status"] == merged["status"]


def generated_baremetal_flavors(count: int, seed: int = 13) -> list[dict]:
    """Bare-metal flavors as catalogs write them (one unit of the node class, standard classes zeroed),
    and the classic mistakes: a class in the wrong case or without CUSTOM_, sizes not zeroed, two units."""
    rng = random.Random(seed)
    zeroed = {"resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0"}
    flavors = []
    for n in range(count):
        rc = rng.choice([*BAREMETAL_CLASSES, "CUSTOM_GPU_MI300X8"])
        kind = rng.choice(["ok", "ok", "trait", "forbidden", "not_zeroed", "two", "case", "no_custom"])
        specs = dict(zeroed, **{f"resources:{rc}": "1"})
        if kind == "trait":
            specs[f"trait:{rng.choice(BAREMETAL_TRAITS)}"] = "required"
        elif kind == "forbidden":
            specs[f"trait:{rng.choice(BAREMETAL_TRAITS)}"] = "forbidden"
        elif kind == "not_zeroed":
            for key in rng.sample(sorted(zeroed), rng.randint(1, 3)):
                del specs[key]
        elif kind == "two":
            specs[f"resources:{rc}"] = "2"
        elif kind in ("case", "no_custom"):
            del specs[f"resources:{rc}"]
            wrong = rc[:7] + rc[7:].lower() if kind == "case" else rc[len("CUSTOM_") :]
            specs[f"resources:{wrong}"] = "1"
        flavors.append({"name": f"bm{n}-{kind}", "vcpus": 64, "ram": 524288, "disk": 800, "extra_specs": specs})
    return flavors


def test_baremetal_flavors_equal_placement(world, placement):
    snapshot, aliases = world
    names = {p["uuid"]: p for p in snapshot["resource_providers"]}
    flavors = generated_baremetal_flavors(40)
    reports = flavor_fit(flavors, snapshot, pci_aliases=aliases, pci_in_placement=True)
    outcomes = set()
    for flavor, report in zip(flavors, reports, strict=True):
        outcomes.add(report["outcome"])
        if report["outcome"] == "invalid_flavor":
            # Nova's extra spec validator refuses a class that is not CUSTOM_[A-Z0-9_]+ or standard.
            assert flavor["name"].endswith(("-case", "-no_custom")), report
            continue
        req = nova_flavor.translate(flavor, pci_aliases=aliases, pci_in_placement=True)
        merged = nova_flavor.merge_answers(req, placement_answers(placement, req.queries))
        hosts = sorted(
            {names[names[u]["root_provider_uuid"]]["name"] for c in merged["candidates"] for u in c["allocations"]}
        )
        assert (report["outcome"], report["status"], report["hosts"]) == (merged["outcome"], merged["status"], hosts), (
            flavor
        )
        bare = [p for p in snapshot["resource_providers"] if p["name"] in report["hosts"]]
        assert all(p.get("ironic_state") == "available" for p in bare), flavor
    assert {"fits", "no_host", "invalid_flavor"} <= outcomes


def test_a_baremetal_node_takes_one_instance_unless_in_maintenance_or_deployed(world, placement):
    snapshot, aliases = world
    nodes = [p for p in snapshot["resource_providers"] if "ironic_state" in p]
    rc = next(iter(nodes[0]["inventories"]))
    specs = {f"resources:{rc}": "1", "resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0"}
    flavor = {"name": "bm", "vcpus": 64, "ram": 524288, "disk": 800, "extra_specs": specs}
    (report,) = flavor_fit([flavor], snapshot, pci_aliases=aliases, pci_in_placement=True)
    same = [p for p in nodes if rc in p["inventories"]]
    assert {p["ironic_state"] for p in same} >= {"available"}
    for node in same:
        consumers = place_copies(placement, report["queries"], node["uuid"], {node["uuid"]}, 5)
        try:
            assert len(consumers) == report["max_instances"][node["name"]] == int(node["ironic_state"] == "available")
        finally:
            for consumer in consumers:
                placement.request("DELETE", f"/allocations/{consumer}")
