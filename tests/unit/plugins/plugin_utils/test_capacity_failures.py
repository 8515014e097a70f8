"""capacity_plan's failures: named hosts, an aggregate, the worst case over k hosts, and what the snapshot
already holds on the lost hosts placed again."""

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import CapacityOptionError
from tests.unit.plugins.plugin_utils.test_capacity import plan, sized_host
from tests.unit.plugins.plugin_utils.test_flavor_fit import cpu_host, flavor, gpu_host


def three_hosts():
    return {"resource_providers": [sized_host("h1", 32768), sized_host("h2", 32768), sized_host("h3", 32768)]}


def test_named_hosts_lose_their_instances_which_go_to_the_survivors():
    demand = [{"flavor": flavor("m", ram=8192), "count": 6}]
    result = plan(demand, three_hosts(), fail_hosts=["h2"])
    assert result["hosts"] == {"h1": {"m": 2}, "h2": {"m": 2}, "h3": {"m": 2}}
    assert result["failure"] == {
        "hosts": ["h2"],
        "domain": None,
        "moved": {"m": 2},
        "lost": {},
        "survives": True,
        "still_placed": {"m": 6},
    }


def test_two_named_hosts_lose_what_the_last_cannot_hold_and_say_why():
    demand = [{"flavor": flavor("m", ram=8192), "count": 9}]
    result = plan(demand, three_hosts(), fail_hosts=["h1", "h3", "h1"])
    failure = result["failure"]
    assert failure["hosts"] == ["h1", "h3"]
    assert failure["moved"] == {"m": 6}
    # h2 holds 3 and has room for 1 more (32768 MB, 8192 each): 5 of the 6 are lost.
    assert failure["lost"]["m"]["count"] == 5
    assert failure["lost"]["m"]["code"] == "survivors_full"
    assert "MEMORY_MB" in failure["lost"]["m"]["detail"]
    assert failure["still_placed"] == {"m": 4}
    # The plan itself is untouched by the failure run.
    assert result["left"]["h1"]["MEMORY_MB"] == 32768 - 3 * 8192


def test_a_lost_gpu_host_whose_device_no_survivor_has_names_the_device():
    fleet = {"resource_providers": gpu_host(1, gpus=2) + cpu_host(1)}
    demand = [{"flavor": flavor("gpu", **{"pci_passthrough:alias": "h100:1"}), "count": 2}]
    result = plan(demand, fleet, fail_hosts=["gpu1"])
    lost = result["failure"]["lost"]["gpu"]
    assert lost["count"] == 2 and lost["code"] == "no_host_with_device"
    assert "CUSTOM_NVIDIA_H100" in lost["detail"] and "gpu1" in lost["detail"]


def test_an_unknown_host_is_refused_listing_the_known_ones():
    with pytest.raises(CapacityOptionError) as exc:
        plan([{"flavor": flavor("m"), "count": 1}], three_hosts(), fail_hosts=["h9", "h1"])
    assert str(exc.value) == "fail_hosts: 'h9' is not a host of the fleet; the fleet's hosts are h1, h2, h3"


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"fail_hosts": "h1"}, "fail_hosts must be a list of host names, got a string"),
        ({"fail_hosts": []}, "fail_hosts is empty"),
        ({"fail_hosts": ["h1"], "fail_domain": "rack1"}, "give fail_hosts or fail_domain, not both"),
        ({"fail_domain": 3}, "fail_domain must be an aggregate's name or UUID"),
        ({"worst_case": {"hosts": 0}}, "worst_case hosts must be a whole number from 1 to 1000, got 0"),
        ({"worst_case": {"hosts": 4}}, "worst_case hosts (4) is more than the fleet's 3 hosts"),
        ({"worst_case": 1}, "worst_case must be {hosts: K}"),
        ({"worst_case": {"hosts": 1, "more": 2}}, "worst_case must be {hosts: K}"),
    ],
)
def test_bad_failure_options_are_refused_naming_them(options, words):
    with pytest.raises(CapacityOptionError) as exc:
        plan([{"flavor": flavor("m"), "count": 1}], three_hosts(), **options)
    assert words in str(exc.value)


def test_an_aggregate_by_name_or_uuid_is_a_failure_domain():
    fleet = three_hosts()
    fleet["resource_providers"][0]["aggregates"] = ["11111111-2222-3333-4444-555555555555"]
    fleet["resource_providers"][2]["aggregates"] = ["11111111-2222-3333-4444-555555555555"]
    metadata = [{"name": "rack-a", "hosts": ["h1", "h3"], "metadata": {}}]
    demand = [{"flavor": flavor("m", ram=8192), "count": 6}]
    by_name = plan(demand, fleet, fail_domain="rack-a", aggregates_metadata=metadata)
    assert by_name["failure"]["hosts"] == ["h1", "h3"] and by_name["failure"]["domain"] == "rack-a"
    assert by_name["failure"]["lost"]["m"]["count"] == 2
    by_uuid = plan(demand, fleet, fail_domain="11111111-2222-3333-4444-555555555555")
    assert by_uuid["failure"]["hosts"] == ["h1", "h3"]
    with pytest.raises(CapacityOptionError) as exc:
        plan(demand, fleet, fail_domain="rack-b", aggregates_metadata=metadata)
    assert str(exc.value) == (
        "fail_domain: 'rack-b' is no aggregate with hosts in the fleet; the fleet's aggregates are rack-a, "
        "11111111-2222-3333-4444-555555555555"
    )


def test_the_worst_single_host_is_the_one_whose_instances_the_rest_cannot_hold():
    # h1 is large and full: losing it loses more than losing one of the small hosts.
    fleet = {"resource_providers": [sized_host("h1", 65536), sized_host("h2", 16384), sized_host("h3", 16384)]}
    demand = [{"flavor": flavor("m", ram=8192), "count": 12}]
    result = plan(demand, fleet, worst_case={"hosts": 1})
    assert result["placed"] == {"m": 12}
    worst = result["worst_case"]
    assert worst["hosts"] == 1 and worst["combinations"] == 3 and worst["survived"] == 0
    assert worst["worst"]["hosts"] == ["h1"]
    assert worst["worst"]["lost"]["m"]["count"] == 8
    assert worst["worst"]["still_placed"] == {"m": 4}


def test_a_worst_case_over_too_many_combinations_is_refused_with_the_count():
    fleet = {"resource_providers": [sized_host(f"h{i}", 32768) for i in range(40)]}
    with pytest.raises(CapacityOptionError) as exc:
        plan([{"flavor": flavor("m"), "count": 1}], fleet, worst_case={"hosts": 3})
    assert str(exc.value) == (
        "worst_case: losing 3 of 40 hosts is 9,880 combinations, more than the 5,000 allowed; lower hosts, "
        "or name the hosts with fail_hosts or fail_domain"
    )


def test_instances_the_snapshot_already_holds_on_a_lost_host_are_placed_again():
    fleet = three_hosts()
    fleet["resource_providers"][0]["usages"] = {"MEMORY_MB": 24576, "VCPU": 12}
    fleet["allocations"] = {
        f"00000000-0000-0000-0000-00000000000{i}": {
            "allocations": {"u-h1": {"resources": {"VCPU": 4, "MEMORY_MB": 8192}}},
            "consumer_type": "INSTANCE",
        }
        for i in range(3)
    }
    fleet["allocations"]["00000000-0000-0000-0000-00000000000q"] = {
        "allocations": {"u-h1": {"resources": {"VCPU": 1}}},
        "consumer_type": "QUARANTINE",
    }
    demand = [{"flavor": flavor("m", ram=8192), "count": 6}]
    result = plan(demand, fleet, fail_hosts=["h1"])
    failure = result["failure"]
    existing = "existing MEMORY_MB=8192,VCPU=4"
    # The demand went to h2 and h3 (most free RAM), leaving one 8192 MB slot on each: of the three
    # instances h1 already held (the quarantine is not an instance), two fit and one is lost.
    assert result["hosts"] == {"h2": {"m": 3}, "h3": {"m": 3}}
    assert failure["moved"] == {existing: 3}
    assert failure["lost"] == {
        existing: {
            "count": 1,
            "code": "survivors_full",
            "detail": "no surviving host has MEMORY_MB free for one more instance",
        }
    }
    assert failure["still_placed"] == {"m": 6} and failure["survives"] is False
    # Without the allocations nothing is known to be on h1.
    del fleet["allocations"]
    assert plan(demand, fleet, fail_hosts=["h1"])["failure"]["survives"] is True


def test_hostile_allocations_in_the_snapshot_are_refused_naming_the_consumer():
    fleet = three_hosts()
    fleet["allocations"] = {"c1": {"allocations": {"u-h1": {"resources": {"VCPU": -4}}}}}
    with pytest.raises(CapacityOptionError) as exc:
        plan([{"flavor": flavor("m"), "count": 1}], fleet, fail_hosts=["h1"])
    assert str(exc.value) == (
        "fleet: allocations of consumer 'c1': 'VCPU' must be a whole number from 0 to 9223372036854775807, got -4"
    )
    fleet["allocations"] = ["c1"]
    with pytest.raises(CapacityOptionError, match="fleet: allocations must be"):
        plan([{"flavor": flavor("m"), "count": 1}], fleet, fail_hosts=["h1"])


def test_failures_and_worst_case_are_absent_without_their_options():
    result = plan([{"flavor": flavor("m"), "count": 1}], three_hosts())
    assert result["failure"] is None and result["worst_case"] is None


def test_a_large_fleet_names_the_closest_hosts_and_odd_names_are_quoted():
    fleet = {"resource_providers": [sized_host(f"node{i:03d}", 32768) for i in range(60)]}
    with pytest.raises(CapacityOptionError) as exc:
        plan([{"flavor": flavor("m"), "count": 1}], fleet, fail_hosts=["node0100"])
    assert str(exc.value) == (
        "fail_hosts: 'node0100' is not a host of the fleet; the fleet has 60 hosts; the closest: node010, node000, "
        "node051, node050, node041"
    )
    odd = {"resource_providers": [sized_host("ok", 32768), sized_host("bad\nname", 32768)]}
    with pytest.raises(CapacityOptionError) as exc:
        plan([{"flavor": flavor("m"), "count": 1}], odd, fail_hosts=["x"])
    assert str(exc.value) == "fail_hosts: 'x' is not a host of the fleet; the fleet's hosts are 'bad\\nname', ok"


def test_an_existing_gpu_instance_goes_to_a_survivor_with_a_free_device_as_its_allocation_asks():
    fleet = {"resource_providers": gpu_host(1, gpus=2, used_gpus=1) + gpu_host(2, gpus=2) + cpu_host(1)}
    fleet["resource_providers"][0]["usages"] = {"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 40}
    fleet["allocations"] = {
        "a1": {
            "allocations": {
                "r1": {"resources": {"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 40}},
                "g1": {"resources": {"CUSTOM_NVIDIA_H100": 1}},
            },
            "consumer_type": "INSTANCE",
        }
    }
    gpu = flavor("gpu", **{"pci_passthrough:alias": "h100:1"})
    result = plan([{"flavor": gpu, "count": 2}], fleet, fail_hosts=["gpu1"])
    # Spread puts one on each GPU host; with gpu1 lost, the demand's instance takes gpu2's last H100 (the
    # demand goes first) and the instance the snapshot held there, asking its allocation, finds none.
    assert result["hosts"] == {"gpu1": {"gpu": 1}, "gpu2": {"gpu": 1}}
    existing = "existing CUSTOM_NVIDIA_H100=1,DISK_GB=40,MEMORY_MB=16384,VCPU=8"
    assert result["failure"]["moved"] == {"gpu": 1, existing: 1}
    assert result["failure"]["lost"] == {
        existing: {
            "count": 1,
            "code": "survivors_full",
            "detail": "no surviving host has CUSTOM_NVIDIA_H100 free for one more instance",
        }
    }
    assert result["failure"]["still_placed"] == {"gpu": 2}


def test_an_allocation_nova_cannot_ask_for_is_lost_with_novas_refusal():
    fleet = three_hosts()
    fleet["allocations"] = {"c1": {"allocations": {"u-h1": {"resources": {"VCPU": 2, "not a class": 1}}}}}
    result = plan([{"flavor": flavor("m"), "count": 1}], fleet, fail_hosts=["h1"])
    (name,) = [n for n in result["failure"]["lost"] if n.startswith("existing")]
    lost = result["failure"]["lost"][name]
    assert lost["count"] == 1 and lost["code"] == "invalid_flavor" and "not a class" in lost["detail"]
