"""capacity_plan: the weigher's rule, what a plan reports, headroom, stranded devices and bad input."""

import copy

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import (
    CapacityOptionError,
    capacity_plan,
    capacity_table,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.weighers import MULTIPLIERS
from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, cpu_host, flavor, gpu_host, provider

KEYS = {
    "placed",
    "unplaced",
    "reasons",
    "hosts",
    "left",
    "stranded",
    "headroom",
    "order",
    "weigher",
    "weighers",
    "drawn",
    "refused",
    "failure",
    "worst_case",
    "what_if",
}


def plan(demand, fleet, **options):
    options.setdefault("pci_aliases", ALIASES)
    options.setdefault("pci_in_placement", True)
    return capacity_plan(demand, fleet, **options)


def sized_host(name, memory, used=0, vcpus=64):
    return provider(
        f"u-{name}",
        name,
        None,
        {"VCPU": vcpus, "MEMORY_MB": memory, "DISK_GB": 1000},
        ["OWNER_NOVA"],
        usages={"MEMORY_MB": used},
    )


# -- the weigher -----------------------------------------------------------------------------------
def test_spread_alternates_and_pack_fills_one_host_first():
    fleet = {"resource_providers": [sized_host("h1", 32768), sized_host("h2", 32768)]}
    demand = [{"flavor": flavor("m", ram=8192), "count": 4}]
    spread = plan(demand, fleet, weigher="spread")
    assert spread["hosts"] == {"h1": {"m": 2}, "h2": {"m": 2}}
    packed = plan(demand, fleet, weigher="pack")
    assert packed["hosts"] == {"h1": {"m": 4}}
    assert packed["left"]["h1"]["MEMORY_MB"] == 0 and packed["left"]["h2"]["MEMORY_MB"] == 32768


ONLY = dict.fromkeys(MULTIPLIERS, 0.0)


def test_io_operations_grow_in_a_burst_and_not_when_builds_are_settled():
    fleet = {"resource_providers": [sized_host("h1", 32768), sized_host("h2", 32768)]}
    demand = [{"flavor": flavor("m", ram=1024), "count": 4}]
    io_only = dict(ONLY, io_ops_weight_multiplier=-1.0)
    assert plan(demand, fleet, arrival="burst", **io_only)["hosts"] == {"h1": {"m": 2}, "h2": {"m": 2}}
    assert plan(demand, fleet, arrival="settled", **io_only)["hosts"] == {"h1": {"m": 4}}  # equal weights
    instances_only = dict(ONLY, num_instances_weight_multiplier=-1.0)
    assert plan(demand, fleet, **instances_only)["hosts"] == {"h1": {"m": 2}, "h2": {"m": 2}}


def test_the_hosts_figures_from_the_snapshot_weigh_as_novas_compute_node_reports_them():
    fleet = {"resource_providers": [sized_host("h1", 32768), sized_host("h2", 32768), sized_host("h3", 32768)]}
    fleet["resource_providers"][1]["hypervisor_version"] = 9002000  # the newest libvirt wins
    fleet["resource_providers"][0]["failed_builds"] = 2  # a failed build weighs a million against it
    demand = [{"flavor": flavor("m", ram=1024), "count": 1}]
    assert plan(demand, fleet)["hosts"] == {"h2": {"m": 1}}
    fleet["resource_providers"][1]["failed_builds"] = 3
    assert plan(demand, fleet)["hosts"] == {"h3": {"m": 1}}


def test_a_multiplier_in_a_hosts_aggregate_metadata_weighs_that_host_as_nova_does():
    fleet = {"resource_providers": [sized_host("h1", 65536), sized_host("h2", 32768)]}
    demand = [{"flavor": flavor("m", ram=1024), "count": 1}]
    assert plan(demand, fleet)["hosts"] == {"h1": {"m": 1}}  # the most free RAM
    packing = [{"name": "pack", "hosts": ["h1"], "metadata": {"ram_weight_multiplier": "-1.0"}}]
    assert plan(demand, fleet, aggregates_metadata=packing)["hosts"] == {"h2": {"m": 1}}
    # Nova takes the smallest value over the host's aggregates; a value that is no number leaves the option.
    noise = [{"name": "x", "hosts": ["h1"], "metadata": {"ram_weight_multiplier": "lots"}}]
    assert plan(demand, fleet, aggregates_metadata=noise)["hosts"] == {"h1": {"m": 1}}
    huge = [{"name": "x", "hosts": ["h1"], "metadata": {"ram_weight_multiplier": "1e400"}}]
    with pytest.raises(CapacityOptionError) as caught:
        plan(demand, fleet, aggregates_metadata=huge)
    assert "aggregates_metadata: ram_weight_multiplier of host h1 must be a finite number" in str(caught.value)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("hypervisor_version", "9.2", "fleet: host h1: hypervisor_version must be a whole number from 0 to"),
        ("num_instances", -1, "fleet: host h1: num_instances must be a whole number from 0 to"),
        ("failed_builds", True, "fleet: host h1: failed_builds must be a whole number"),
        ("pci_pools", [{"count": "x"}], "fleet: host h1: pci_pools entry 0 needs a count"),
    ],
)
def test_a_hosts_figure_that_is_not_a_count_is_refused_naming_the_host(key, value, message):
    fleet = {"resource_providers": [sized_host("h1", 32768)]}
    fleet["resource_providers"][0][key] = value
    with pytest.raises(CapacityOptionError) as caught:
        plan([{"flavor": flavor("m"), "count": 1}], fleet)
    assert message in str(caught.value)


def pinned_fleet(shared_hosts: int) -> dict:
    """Hosts with shared CPUs only and more free RAM (weighed first), then one host with dedicated CPUs."""
    hosts = [sized_host(f"shared{n}", 262144) for n in range(shared_hosts)]
    hosts.append(
        provider(
            "u-pinned", "pinned", None, {"VCPU": 16, "PCPU": 8, "MEMORY_MB": 65536, "DISK_GB": 1000}, ["OWNER_NOVA"]
        )
    )
    return {"resource_providers": hosts}


PINNED = flavor("p", vcpus=4, ram=4096, **{"hw:cpu_policy": "dedicated"})
NO_NUMA_FILTER = ["ComputeFilter", "PciPassthroughFilter"]


def test_pinned_instances_sent_through_the_vcpu_fallback_are_refused_and_built_on_an_alternate():
    result = plan([{"flavor": PINNED, "count": 3}], pinned_fleet(2), enabled_filters=NO_NUMA_FILTER)
    # Nova's scheduler weighs the shared hosts first (Placement offered them for the VCPU fallback query);
    # their computes cannot pin, and the third host Nova chose builds each instance.
    assert result["hosts"] == {"pinned": {"p": 2}}
    assert result["placed"] == {"p": 2} and result["unplaced"] == {"p": 1}  # 8 PCPU: two instances of 4
    # The third reaches the pinned host through the VCPU fallback query too, with its PCPU used up.
    assert result["reasons"]["p"]["detail"].endswith(
        "(shared0, shared1, pinned): nova-compute on shared0 refuses the build (its claim fits the NUMA topology "
        "as NUMATopologyFilter does, which is not enabled): the flavor pins 4 CPU(s) but the host has no dedicated "
        "CPUs (no [compute] cpu_dedicated_set; Placement returned it for the VCPU fallback query)"
    )
    assert result["refused"]["p"]["attempts"] == 7  # 2 per instance built, and 3 for the one not built
    assert result["refused"]["p"]["detail"] == (
        "nova-compute on shared0 refuses the build (its claim fits the NUMA topology as NUMATopologyFilter does, "
        "which is not enabled): the flavor pins 4 CPU(s) but the host has no dedicated CPUs (no [compute] "
        "cpu_dedicated_set; Placement returned it for the VCPU fallback query)"
    )
    assert any(line.startswith("refused by nova-compute: p: 7 build(s);") for line in capacity_table(result))


def test_an_instance_every_chosen_host_refuses_is_not_built():
    result = plan([{"flavor": PINNED, "count": 2}], pinned_fleet(3), enabled_filters=NO_NUMA_FILTER)
    assert result["placed"] == {"p": 0} and result["unplaced"] == {"p": 2}
    assert result["reasons"]["p"]["code"] == "compute_refused"
    assert result["reasons"]["p"]["detail"].startswith(
        "0 placed; the next was refused by nova-compute on each of the 3 host(s) Nova tried (shared0, shared1, "
        "shared2): nova-compute on shared0 refuses the build"
    )


def test_with_numa_topology_filter_the_scheduler_never_sends_pinned_instances_to_shared_hosts():
    result = plan([{"flavor": PINNED, "count": 3}], pinned_fleet(3))
    assert result["hosts"] == {"pinned": {"p": 2}} and result["refused"] == {}


def numa_host(name="n1"):
    record = provider(
        f"u-{name}", name, None, {"VCPU": 8, "PCPU": 8, "MEMORY_MB": 65536, "DISK_GB": 1000}, ["OWNER_NOVA"]
    )
    record["numa_cells"] = [
        {"id": 0, "pcpus": 3, "vcpus": 4, "memory_mb": 32768},
        {"id": 1, "pcpus": 5, "vcpus": 4, "memory_mb": 32768},
    ]
    return record


def test_numa_cells_are_consumed_instance_by_instance_for_pinned_flavors():
    # Placement sees 8 PCPU, room for 4 instances pinning 2; the cells hold 1 (of 3) and 2 (of 5).
    pinned2 = flavor("p2", vcpus=2, ram=2048, **{"hw:cpu_policy": "dedicated"})
    result = plan([{"flavor": pinned2, "count": 4}], {"resource_providers": [numa_host()]})
    assert result["placed"] == {"p2": 3} and result["unplaced"] == {"p2": 1}
    assert result["left"]["n1"]["PCPU"] == 2  # two dedicated CPUs Placement still offers, one per cell
    assert result["refused"] == {}
    # flavor_fit judges empty cells (its count takes the VCPU fallback too); the reason says the cells,
    # filled one by one, may hold fewer
    assert result["reasons"]["p2"] == {
        "code": "in_use",
        "detail": "3 placed; the NUMA cells, filled instance after instance as Nova's claim fills them, or the "
        "demand's other instances took the room for the rest (Placement and the filters on empty cells allow 8)",
    }
    # Without NUMATopologyFilter the scheduler sends the fourth there and nova-compute refuses it.
    refused = plan(
        [{"flavor": pinned2, "count": 4}], {"resource_providers": [numa_host()]}, enabled_filters=NO_NUMA_FILTER
    )
    assert refused["placed"] == {"p2": 3} and refused["reasons"]["p2"]["code"] == "compute_refused"
    assert refused["refused"]["p2"]["detail"] == (
        "nova-compute on n1 refuses the build (its claim fits the NUMA topology as NUMATopologyFilter does, which is "
        "not enabled): the host's NUMA cells no longer hold the guest's (2 pinned + 0 shared CPU(s), 2048 MB); "
        "free: cell 0: 1 dedicated CPU(s), 30720 MB, cell 1: 1 dedicated CPU(s), 28672 MB"
    )


def test_gpus_beside_full_numa_cells_are_stranded():
    records = gpu_host(1, gpus=4)
    records[0]["inventories"]["PCPU"] = {"total": 8}
    records[0]["numa_cells"] = [
        {"id": 0, "pcpus": 3, "vcpus": 16, "memory_mb": 32768},
        {"id": 1, "pcpus": 5, "vcpus": 16, "memory_mb": 32768},
    ]
    pinned_gpu = flavor("pg", vcpus=2, ram=4096, **{"hw:cpu_policy": "dedicated", "pci_passthrough:alias": "h100:1"})
    result = plan([{"flavor": pinned_gpu, "count": 4}], {"resource_providers": records})
    # Placement holds 8 PCPU and 4 GPUs, room for 4; the cells pin 1 (of 3) and 2 (of 5) instances.
    assert result["placed"] == {"pg": 3}
    assert result["stranded"] == {"gpu1": {"CUSTOM_NVIDIA_H100": {"free": 1, "short": [], "flavors": ["pg"]}}}


def test_huge_page_flavors_fill_the_cells_pools_before_memory():
    # 64 GiB and 8 VCPU in Placement; each cell holds 2 GiB of 2 MiB pages: two 2 GiB guests in all
    record = numa_host()
    for cell in record["numa_cells"]:
        cell["hugepages"] = {"2048": 1024}
    paged = flavor("hp", vcpus=1, ram=2048, **{"hw:mem_page_size": "large"})
    result = plan([{"flavor": paged, "count": 4}], {"resource_providers": [record]})
    assert result["placed"] == {"hp": 2} and result["unplaced"] == {"hp": 2}
    # without NUMATopologyFilter nova-compute refuses the third, its detail naming the pages left
    refused = plan([{"flavor": paged, "count": 3}], {"resource_providers": [record]}, enabled_filters=NO_NUMA_FILTER)
    assert refused["placed"] == {"hp": 2} and refused["refused"]["hp"]["detail"].endswith(
        "the host's NUMA cells no longer hold the guest's (0 pinned + 1 shared CPU(s), 2048 MB); "
        "free: cell 0: 3 dedicated CPU(s), 30720 MB, 0 of 1024 2048 KiB page(s) free, "
        "cell 1: 5 dedicated CPU(s), 30720 MB, 0 of 1024 2048 KiB page(s) free"
    )


def test_thread_policies_pin_by_the_cells_cores():
    # SMT cells of 2 cores (4 threads) and 2 + 1 half-dedicated cores: require pins 2 CPUs on whole cores
    record = numa_host()
    record["traits"] = [*record["traits"], "HW_CPU_HYPERTHREADING"]
    record["numa_cells"][0].update(pcpus=3, cores=[2, 1], threads_per_core=2)
    record["numa_cells"][1].update(pcpus=5, cores=[2, 2, 1], threads_per_core=2)
    require = flavor("rq", vcpus=2, ram=2048, **{"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "require"})
    assert plan([{"flavor": require, "count": 4}], {"resource_providers": [record]})["placed"] == {"rq": 3}
    # isolate forbids the trait: Placement offers no SMT host
    isolate = flavor("iso", vcpus=2, ram=2048, **{"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "isolate"})
    assert plan([{"flavor": isolate, "count": 1}], {"resource_providers": [record]})["placed"] == {"iso": 0}


def test_cores_that_do_not_add_up_to_the_cells_dedicated_cpus_are_refused():
    record = numa_host()
    record["numa_cells"][0]["cores"] = [2, 2]
    with pytest.raises(CapacityOptionError) as caught:
        plan([{"flavor": PINNED, "count": 1}], {"resource_providers": [record]})
    assert "numa_cells[0].cores name a core of 2 dedicated CPUs while threads_per_core is 1" in str(caught.value)
    record["numa_cells"][0]["threads_per_core"] = 2
    with pytest.raises(CapacityOptionError) as caught:
        plan([{"flavor": PINNED, "count": 1}], {"resource_providers": [record]})
    assert "numa_cells[0].cores hold 4 dedicated CPU(s) while pcpus is 3" in str(caught.value)
    record = numa_host()
    record["numa_cells"][1]["hugepages"] = {"1048576": 40}
    with pytest.raises(CapacityOptionError) as caught:
        plan([{"flavor": PINNED, "count": 1}], {"resource_providers": [record]})
    assert "numa_cells[1].hugepages hold 40,960 MB, more than the cell's 32,768 MB" in str(caught.value)


def test_a_numa_cell_that_is_not_a_cell_is_refused_naming_the_host():
    record = numa_host()
    record["numa_cells"][1]["pcpus"] = "five"
    with pytest.raises(CapacityOptionError) as caught:
        plan([{"flavor": PINNED, "count": 1}], {"resource_providers": [record]})
    assert "fleet: host n1: numa_cells[1].pcpus" in str(caught.value)


# -- the plan --------------------------------------------------------------------------------------
def test_a_plan_has_its_keys_and_counts_add_up():
    fleet = {"resource_providers": gpu_host(1) + gpu_host(2, used_gpus=1) + cpu_host(1)}
    demand = [
        {"flavor": flavor("gpu", **{"pci_passthrough:alias": "h100:1"}), "count": 5},
        {"flavor": flavor("small"), "count": 3},
    ]
    result = plan(demand, fleet)
    assert set(result) == KEYS
    assert result["placed"] == {"gpu": 3, "small": 3}
    assert result["unplaced"] == {"gpu": 2, "small": 0}
    assert result["reasons"]["gpu"]["code"] == "in_use"
    # Three GPUs are free in the whole fleet: alone, the flavor takes three, so the rest is the fleet's size.
    assert result["reasons"]["gpu"]["detail"] == (
        "3 placed; the fleet as it is takes no more of this flavor, even with no other instance"
    )
    assert sum(n for per in result["hosts"].values() for n in per.values()) == 6
    assert result["left"]["gpu1"]["CUSTOM_NVIDIA_H100"] == 0


def test_a_flavor_squeezed_out_by_the_rest_of_the_demand_says_what_it_takes_alone():
    fleet = {"resource_providers": gpu_host(1)}  # 32 VCPU, 64 GiB, 2 GPUs
    demand = [
        {"flavor": flavor("small", vcpus=2, ram=16384), "count": 3},
        {"flavor": flavor("gpu", vcpus=8, ram=16384, **{"pci_passthrough:alias": "h100:1"}), "count": 2},
    ]
    result = plan(demand, fleet)
    assert result["placed"] == {"small": 3, "gpu": 1}
    assert result["reasons"]["gpu"] == {
        "code": "in_use",
        "detail": "1 placed; the demand's other instances took the room for the rest (alone, the fleet takes 2)",
    }


def test_largest_first_places_the_gpu_flavor_before_small_ones_take_the_ram():
    fleet = {"resource_providers": gpu_host(1)}  # 32 VCPU, 64 GiB, 2 GPUs
    small = {"flavor": flavor("small", vcpus=2, ram=16384), "count": 4}
    big = {"flavor": flavor("gpu", vcpus=8, ram=32768, **{"pci_passthrough:alias": "h100:1"}), "count": 1}
    as_given = plan([small, big], fleet)
    assert as_given["placed"] == {"small": 4, "gpu": 0}
    # It fits the fleet alone: the demand's other instances took the room, even though none was placed.
    assert as_given["reasons"]["gpu"] == {
        "code": "in_use",
        "detail": "0 placed; the demand's other instances took the room for the rest (alone, the fleet takes 2)",
    }
    assert as_given["stranded"] == {
        "gpu1": {"CUSTOM_NVIDIA_H100": {"free": 2, "short": ["MEMORY_MB"], "flavors": ["gpu"]}}
    }
    largest = plan([small, big], fleet, order="largest_first")
    assert largest["order"] == ["gpu", "small"]
    assert largest["placed"] == {"small": 2, "gpu": 1}


def test_flavors_that_fit_nowhere_get_flavor_fits_reason():
    fleet = {"resource_providers": gpu_host(1)}
    demand = [
        {"flavor": flavor("typo", **{"trait:CUSTOM_GPU_NVLNK": "required"}), "count": 2},
        {"flavor": flavor("huge", ram=10**7), "count": 1},
        {"flavor": {"name": "broken", "vcpus": "x", "ram": 1, "disk": 1}, "count": 1},
    ]
    result = plan(demand, fleet)
    assert result["placed"] == {"typo": 0, "huge": 0, "broken": 0}
    assert result["unplaced"] == {"typo": 2, "huge": 1, "broken": 1}
    assert result["reasons"]["typo"]["code"] == "unknown_trait"
    assert result["reasons"]["typo"]["did_you_mean"] == ["CUSTOM_GPU_NVLINK"]
    assert result["reasons"]["huge"]["code"] == "too_big"
    assert result["reasons"]["broken"]["code"] == "invalid_flavor"


def test_headroom_places_the_lost_hosts_instances_again():
    fleet = {"resource_providers": [sized_host("h1", 32768), sized_host("h2", 32768), sized_host("h3", 32768)]}
    demand = [{"flavor": flavor("m", ram=8192), "count": 6}]
    survives = plan(demand, fleet, failures=1)
    assert survives["headroom"]["survives"] is True
    assert survives["headroom"]["hosts_lost"] == ["h1"]
    full = plan([{"flavor": flavor("m", ram=8192), "count": 12}], fleet, failures=1)
    assert full["headroom"] == {"failures": 1, "survives": False, "lost": {"m": 4}, "hosts_lost": ["h1"]}
    # The headroom run leaves the plan's own figures alone.
    assert full["left"]["h1"]["MEMORY_MB"] == 0 and full["hosts"]["h1"] == {"m": 4}


def test_pci_pools_are_consumed_when_placement_does_not_know_the_devices():
    pools = [{"vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI", "numa_node": None, "count": 2}]
    fleet = {"resource_providers": cpu_host(1, pci_pools=pools)}
    demand = [{"flavor": flavor("gpu", **{"pci_passthrough:alias": "h100:1"}), "count": 3}]
    result = plan(demand, fleet, pci_in_placement=False)
    assert result["placed"] == {"gpu": 2} and result["unplaced"] == {"gpu": 1}
    assert pools[0]["count"] == 2  # the snapshot is not modified


def test_the_snapshot_is_not_modified():
    fleet = {"resource_providers": gpu_host(1) + cpu_host(1)}
    before = copy.deepcopy(fleet)
    plan([{"flavor": flavor("small"), "count": 5}], fleet, failures=1)
    assert fleet == before


def test_the_same_flavor_twice_adds_up_and_counts_zero_are_kept():
    fleet = {"resource_providers": cpu_host(1)}
    small = flavor("small")
    demand = [{"flavor": small, "count": 2}, {"flavor": small, "count": 1}, {"flavor": flavor("z"), "count": 0}]
    result = plan(demand, fleet)
    assert result["placed"] == {"small": 3, "z": 0}
    assert result["reasons"] == {}


@pytest.mark.parametrize(
    ("demand", "options", "words"),
    [
        ({"flavor": {}}, {}, "must be a list"),
        (["small"], {}, "demand entry 0: give {flavor: FLAVOR, count: N}"),
        ([{"flavor": flavor("a"), "count": -1}], {}, "demand entry 0 count must be a whole number from 0"),
        ([{"flavor": flavor("a"), "count": True}], {}, "demand entry 0 count"),
        ([{"flavor": flavor("a"), "count": 10**6}], {}, "from 0 to 100000"),
        ([{"flavor": flavor("a"), "count": 1, "size": 2}], {}, "unknown key(s) size"),
        ([{"flavor": {"vcpus": 1}, "count": 1}], {}, "needs a name"),
        ([{"flavor": flavor("a"), "count": 1}, {"flavor": flavor("a", vcpus=8), "count": 1}], {}, "given twice"),
        ([{"flavor": flavor("a"), "count": 1}], {"order": "random"}, "order must be one of as_given, largest_first"),
        ([{"flavor": flavor("a"), "count": 1}], {"weigher": "cpu"}, "weigher must be one of spread, pack"),
        ([{"flavor": flavor("a"), "count": 1}], {"failures": 5}, "failures (5) is more than the fleet's 1 hosts"),
        ([{"flavor": flavor("a"), "count": 1}], {"failures": -1}, "failures must be a whole number"),
        ([{"flavor": flavor("a"), "count": 1}], {"count_limit": 0}, "count_limit must be a positive integer"),
        ([{"flavor": flavor("a"), "count": 1}], {"colour": 1}, "unknown option(s) colour"),
    ],
)
def test_bad_input_is_refused_naming_it(demand, options, words):
    with pytest.raises(CapacityOptionError) as exc:
        plan(demand, {"resource_providers": cpu_host(1)}, **options)
    assert words in str(exc.value)


def test_a_fleet_that_is_not_a_snapshot_is_refused():
    with pytest.raises(CapacityOptionError, match="fleet"):
        plan([], ["not", "a", "snapshot"])
    with pytest.raises(CapacityOptionError, match="fleet: "):
        plan([], {"resource_providers": [{"uuid": 3}]})
