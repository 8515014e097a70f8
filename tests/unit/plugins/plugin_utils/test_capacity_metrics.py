"""capacity_metrics: the reports as Prometheus text, read back with prometheus_client's own parser."""

import pytest
from ansible.errors import AnsibleFilterError
from prometheus_client.parser import text_string_to_metric_families

from ansible_collections.accel.openstack.plugins.filter.capacity import FilterModule
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import capacity_plan
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_metrics import (
    MetricsInputError,
    capacity_metrics,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit
from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, FLEET, cpu_host, flavor, gpu_host


def samples(text: str) -> dict:
    """{(family, sorted labels): value} as prometheus_client parses the text; every family a gauge."""
    found = {}
    for family in text_string_to_metric_families(text):
        assert family.name.startswith("accel_"), family.name
        assert family.type == "gauge" and family.documentation
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            assert key not in found, key
            found[key] = sample.value
    return found


def test_flavor_fit_report_gives_capacity_placeable_and_reason_per_flavor():
    flavors = [
        flavor("gpu", **{"pci_passthrough:alias": "h100:1"}),
        flavor("typo", **{"trait:CUSTOM_GPU_NVLNK": "required"}),
        flavor("small"),
    ]
    reports = flavor_fit(flavors, FLEET, pci_aliases=ALIASES, pci_in_placement=True)
    found = samples(capacity_metrics(reports))
    for report in reports:
        labels = (("flavor", report["name"]),)
        kept = report["after_filters"]["hosts"]
        assert found[("accel_flavor_hosts", labels)] == len(kept)
        assert found[("accel_flavor_capacity_instances", labels)] == sum(report["max_instances"][h] for h in kept)
        assert found[("accel_flavor_placeable", labels)] == (1 if kept else 0)
    assert found[("accel_flavor_capacity_instances", (("flavor", "gpu"),))] == 3  # 2 free on gpu1, 1 on gpu2
    assert found[("accel_flavor_reason", (("code", "unknown_trait"), ("flavor", "typo")))] == 1
    assert not [k for k in found if k[0] == "accel_flavor_reason" and ("flavor", "gpu") in k[1]]
    # validate_flavors' result ({"flavors": [...]}) gives the same text
    assert capacity_metrics({"flavors": reports, "findings": [], "ok": False}) == capacity_metrics(reports)


def test_capacity_plan_gives_placed_free_stranded_and_headroom():
    fleet = {"resource_providers": gpu_host(1) + cpu_host(1)}
    demand = [
        {"flavor": flavor("small", vcpus=2, ram=16384), "count": 4},
        {"flavor": flavor("gpu", vcpus=8, ram=32768, **{"pci_passthrough:alias": "h100:1"}), "count": 3},
    ]
    plan = capacity_plan(demand, fleet, pci_aliases=ALIASES, pci_in_placement=True, weigher="pack", failures=1)
    found = samples(capacity_metrics([plan]))  # the lookup's one-element list
    assert found == samples(capacity_metrics(plan))
    for name in ("small", "gpu"):
        assert found[("accel_capacity_placed_instances", (("flavor", name),))] == plan["placed"][name]
        assert found[("accel_capacity_unplaced_instances", (("flavor", name),))] == plan["unplaced"][name]
    for host, classes in plan["left"].items():
        for rc, free in classes.items():
            assert found[("accel_capacity_free", (("host", host), ("resource_class", rc)))] == free
    stranded = {k: v for k, v in found.items() if k[0] == "accel_capacity_stranded_devices"}
    assert set(stranded) == {
        ("accel_capacity_stranded_devices", (("host", "gpu1"), ("resource_class", "CUSTOM_NVIDIA_H100")))
    }
    assert list(stranded.values()) == [plan["stranded"].get("gpu1", {}).get("CUSTOM_NVIDIA_H100", {}).get("free", 0)]
    assert found[("accel_capacity_headroom_failures", ())] == 1
    assert found[("accel_capacity_headroom_survives", ())] == (1 if plan["headroom"]["survives"] else 0)
    for name in ("small", "gpu"):
        assert found[("accel_capacity_refused_builds", (("flavor", name),))] == 0
        assert found[("accel_capacity_drawn_instances", (("flavor", name),))] == plan["drawn"][name] == 0


def test_refused_builds_and_draws_are_metrics_per_flavor():
    shared = [cpu_host(n, vcpus=64) for n in (1, 2)]
    pinned = [
        {
            "uuid": "p1",
            "name": "pinned1",
            "inventories": {"VCPU": {"total": 8}, "PCPU": {"total": 8}, "MEMORY_MB": {"total": 32768}},
            "traits": ["OWNER_NOVA"],
        }
    ]
    fleet = {"resource_providers": shared[0] + shared[1] + pinned}
    demand = [
        {"flavor": flavor("p", vcpus=4, ram=1024, **{"hw:cpu_policy": "dedicated"}), "count": 2},
        {"flavor": flavor("small", vcpus=1, ram=1024), "count": 3},
    ]
    plan = capacity_plan(demand, fleet, enabled_filters=["ComputeFilter"], host_subset_size=2)
    found = samples(capacity_metrics(plan))
    assert plan["refused"]["p"]["attempts"] > 0 and plan["drawn"]["small"] == 3
    assert found[("accel_capacity_refused_builds", (("flavor", "p"),))] == plan["refused"]["p"]["attempts"]
    assert found[("accel_capacity_refused_builds", (("flavor", "small"),))] == 0
    assert found[("accel_capacity_drawn_instances", (("flavor", "small"),))] == 3


def test_hostile_names_are_escaped_and_read_back_unchanged():
    name = 'evil"} accel_x 1\n# TYPE\\'
    reports = flavor_fit([flavor(name)], FLEET, pci_aliases=ALIASES)
    found = samples(capacity_metrics(reports))
    assert found[("accel_flavor_hosts", (("flavor", name),))] == 4


@pytest.mark.parametrize("report", ["text", 3, {"placed": {}}, [{"name": "x"}], None])
def test_bad_input_is_refused_through_the_filter(report):
    with pytest.raises(MetricsInputError):
        capacity_metrics(report)
    with pytest.raises(AnsibleFilterError, match="capacity_metrics"):
        FilterModule().filters()["capacity_metrics"](report)


def test_failures_worst_case_and_what_if_are_metrics():
    fleet = {"resource_providers": gpu_host(1) + gpu_host(2) + cpu_host(1)}
    demand = [{"flavor": flavor("gpu", vcpus=8, ram=32768, **{"pci_passthrough:alias": "h100:1"}), "count": 3}]
    option = {"name": "more", "model": "H100", "count": 1, "mode": "passthrough", "gpus": 2}
    plan = capacity_plan(
        demand,
        fleet,
        pci_aliases=ALIASES,
        pci_in_placement=True,
        fail_hosts=["gpu1"],
        worst_case={"hosts": 2},
        what_if=[option],
    )
    found = samples(capacity_metrics(plan))
    assert found[("accel_capacity_failure_hosts", ())] == 1
    assert (
        found[("accel_capacity_failure_lost_instances", (("flavor", "gpu"),))]
        == plan["failure"]["lost"]["gpu"]["count"]
    )
    assert found[("accel_capacity_failure_survives", ())] == 0
    # Both GPU hosts lost: every GPU instance is lost.
    assert plan["worst_case"]["worst"]["hosts"] == ["gpu1", "gpu2"]
    assert found[("accel_capacity_worst_case_lost_instances", (("flavor", "gpu"),))] == 3
    assert found[("accel_capacity_worst_case_hosts", ())] == 2
    assert found[("accel_capacity_what_if_placed_instances", (("flavor", "gpu"), ("option", "more")))] == 3
    # Without those options there is none of their families.
    plain = samples(capacity_metrics(capacity_plan(demand, fleet, pci_aliases=ALIASES, pci_in_placement=True)))
    new = ("accel_capacity_failure_", "accel_capacity_worst_case_", "accel_capacity_what_if_")
    assert not [key for key in plain if key[0].startswith(new)]
