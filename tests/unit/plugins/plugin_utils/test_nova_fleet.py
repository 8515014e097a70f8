"""The fleet nova-compute will report, from discovery facts of real hardware profiles."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import (
    FleetPredictionError,
    nova_fleet,
    parse_cpu_spec,
)
from tests.support.fake_sysfs import build_root, load_profile

H100 = {"name": "h100", "vendor_id": "10de", "product_id": "2330", "mode": "passthrough"}


@pytest.fixture(scope="module")
def hgx(tmp_path_factory):
    facts, _unused = discover(build_root("hgx-h100", str(tmp_path_factory.mktemp("hgx"))))
    return facts


def root_of(snapshot, name):
    return next(p for p in snapshot["resource_providers"] if p["name"] == name)


def test_without_cpu_sets_every_cpu_is_vcpu(hgx):
    snapshot = nova_fleet({"cn1": hgx}, [H100])
    root = root_of(snapshot, "cn1")
    every = sum(len(n["cpus"]) for n in hgx["accel_numa_nodes"])
    assert root["inventories"]["VCPU"]["total"] == every
    assert "PCPU" not in root["inventories"]
    Fleet.from_snapshot(snapshot)  # a valid snapshot


def test_dedicated_set_becomes_pcpu_and_leaves_no_vcpu_without_shared_set(hgx):
    snapshot = nova_fleet({"cn1": hgx}, [], cpu_dedicated_set="4-15,^8")
    root = root_of(snapshot, "cn1")
    assert root["inventories"]["PCPU"]["total"] == 11
    assert root["inventories"]["PCPU"]["allocation_ratio"] == 1.0
    assert "VCPU" not in root["inventories"]
    assert sum(c["pcpus"] for c in root["numa_cells"]) == 11


def test_shared_set_is_the_vcpu(hgx):
    root = root_of(nova_fleet({"cn1": hgx}, [], cpu_dedicated_set="4-15", cpu_shared_set="0-3"), "cn1")
    assert root["inventories"]["VCPU"]["total"] == 4
    assert root["inventories"]["VCPU"]["allocation_ratio"] == 4.0


def test_pci_children_with_report_in_placement_and_pools_always(hgx):
    snapshot = nova_fleet({"cn1": hgx}, [H100], report_in_placement=True, disk_gb=500)
    names = [p["name"] for p in snapshot["resource_providers"]]
    assert len(names) == 9 and names[0] == "cn1"
    root = root_of(snapshot, "cn1")
    assert root["inventories"]["DISK_GB"]["total"] == 500
    assert sum(p["count"] for p in root["pci_pools"]) == 8
    assert {p["numa_node"] for p in root["pci_pools"]} <= {0, 1, None}
    without = nova_fleet({"cn1": hgx}, [H100])
    assert len(without["resource_providers"]) == 1
    assert sum(p["count"] for p in root_of(without, "cn1")["pci_pools"]) == 8


def test_same_facts_give_the_same_snapshot(hgx):
    assert nova_fleet({"a": hgx, "b": hgx}, [H100]) == nova_fleet({"b": hgx, "a": hgx}, [H100])


def test_host_options_override_and_disabled_adds_the_trait(hgx):
    snapshot = nova_fleet({"a": hgx, "b": hgx}, [], host_options={"b": {"disabled": True}})
    assert "COMPUTE_STATUS_DISABLED" in root_of(snapshot, "b")["traits"]
    assert "COMPUTE_STATUS_DISABLED" not in root_of(snapshot, "a")["traits"]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"cpu_dedicated_set": "4-x"}, "not a CPU set"),
        ({"cpu_dedicated_set": "9999"}, "does not have"),
        ({"cpu_dedicated_set": "0-3", "cpu_shared_set": "2-5"}, "overlap"),
        ({"colour": "red"}, "unknown option"),
    ],
)
def test_bad_options_name_the_host_and_the_fix(hgx, options, match):
    with pytest.raises(FleetPredictionError, match=match):
        nova_fleet({"cn1": hgx}, [], **options)


def test_missing_facts_say_to_run_discovery():
    with pytest.raises(FleetPredictionError, match="discover"):
        nova_fleet({"cn1": {}}, [])


def test_cpu_spec_syntax():
    assert parse_cpu_spec("0-3,^2,8", "x") == {0, 1, 3, 8}


def test_a_pool_of_devices_neutron_hands_out_carries_its_physical_network(tmp_path):
    facts, _unused = discover(build_root("sriov-nic", str(tmp_path / "nic")))
    neutron = {"name": "cx6-vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough",
               "physical_network": "physnet1"}  # fmt: skip
    t4 = {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough"}
    pools = root_of(nova_fleet({"net-01": facts}, [neutron, t4]), "net-01")["pci_pools"]
    assert {p.get("physical_network") for p in pools if p["product_id"] == "101e"} == {"physnet1"}
    assert [p for p in pools if p["product_id"] == "1eb8" and "physical_network" in p] == []
    assert sum(p["count"] for p in pools if p["product_id"] == "1eb8") == 1


@pytest.fixture(scope="module")
def smt_hugepages(tmp_path_factory):
    """hgx-h100 with two threads per core and huge page pools on node 0 (2 MiB) and node 1 (1 GiB)."""
    profile = load_profile("hgx-h100")
    profile["cpu"] = dict(profile["cpu"], threads_per_core=2)
    profile["numa_nodes"] = [dict(node) for node in profile["numa_nodes"]]
    profile["numa_nodes"][0]["hugepages"] = {"2048": {"total": 4096, "free": 4000}}
    profile["numa_nodes"][1]["hugepages"] = {"1048576": 16, "2048": 0}
    facts, _unused = discover(build_root(profile, str(tmp_path_factory.mktemp("smt"))))
    return facts


def test_discovery_reads_each_nodes_huge_page_pools_and_thread_siblings(smt_hugepages):
    node0, node1 = smt_hugepages["accel_numa_nodes"]
    assert node0["hugepages"] == {"2048": {"total": 4096, "free": 4000}}
    assert node1["hugepages"] == {"2048": {"total": 0, "free": 0}, "1048576": {"total": 16, "free": 16}}
    # the node's CPU list in two runs, a core holding the k-th CPU of each (0-55,112-167: 0 with 112)
    assert node0["siblings"][0] == [0, 112] and node0["siblings"][-1] == [55, 167]
    assert len(node0["siblings"]) == len(node0["cpus"]) // 2
    assert sorted(cpu for core in node1["siblings"] for cpu in core) == sorted(node1["cpus"])


def test_cells_carry_their_huge_pages_and_cores_and_smt_gives_the_hyperthreading_trait(smt_hugepages):
    # node 0 dedicates 0-7 and 112-115: four whole cores and four cores with one dedicated thread
    snapshot = nova_fleet({"cn1": smt_hugepages}, [], cpu_dedicated_set="0-7,112-115", cpu_shared_set="8-15")
    root = root_of(snapshot, "cn1")
    cell0, cell1 = root["numa_cells"]
    assert cell0["hugepages"] == {"2048": 4096} and cell1["hugepages"] == {"1048576": 16}
    assert cell0["cores"] == [2, 2, 2, 2, 1, 1, 1, 1] and cell0["threads_per_core"] == 2
    assert cell1["pcpus"] == 0 and cell1["cores"] == [] and cell1["threads_per_core"] == 1
    assert "HW_CPU_HYPERTHREADING" in root["traits"]
    Fleet.from_snapshot(snapshot)


def test_without_smt_or_pools_the_cells_say_nothing_of_them(hgx):
    root = root_of(nova_fleet({"cn1": hgx}, [], cpu_dedicated_set="0-7"), "cn1")
    assert all("hugepages" not in cell and "cores" not in cell for cell in root["numa_cells"])
    assert "HW_CPU_HYPERTHREADING" not in root["traits"]
