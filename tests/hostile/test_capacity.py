"""Hostile input to the capacity lookup, filters and role: refused with a message, bounded, nothing written."""

from __future__ import annotations

import sys
import time

import pytest
from ansible.errors import AnsibleFilterError
from prometheus_client.parser import text_string_to_metric_families

from ansible_collections.accel.openstack.plugins.filter.capacity import FilterModule
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import CapacityOptionError, capacity_plan
from tests.support.ansible_runner import run_playbook

FLEET = {
    "resource_providers": [
        {
            "uuid": "cn1",
            "name": "c1",
            "inventories": {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}},
            "traits": ["OWNER_NOVA"],
        }
    ]
}
SMALL = {"name": "small", "vcpus": 1, "ram": 512, "disk": 0}
FILTERS = FilterModule().filters()


@pytest.mark.parametrize(
    ("demand", "fragment"),
    [
        ("small", "must be a list"),
        ([{"flavor": SMALL, "count": 10**9}], "from 0 to 100000"),
        ([{"flavor": SMALL, "count": 100000}, {"flavor": dict(SMALL, name="b"), "count": 100001}], "from 0 to"),
        ([{"flavor": dict(SMALL, name=f"f{n}"), "count": 100000} for n in range(3)], "more than 200000 instances"),
        ([{"flavor": SMALL, "count": "7"}], "count must be a whole number"),
        ([{"flavor": SMALL, "count": 1.5}], "count must be a whole number"),
        ([{"flavor": "m1.small", "count": 1}], "FLAVOR a dict"),
        ([{"flavor": dict(SMALL, name=["x"]), "count": 1}], "needs a name"),
    ],
)
def test_hostile_demands_are_refused_before_any_work(demand, fragment):
    start = time.monotonic()
    with pytest.raises(CapacityOptionError) as caught:
        capacity_plan(demand, FLEET)
    assert fragment in str(caught.value)
    assert time.monotonic() - start < 1


@pytest.mark.parametrize(
    ("record", "options", "fragment"),
    [
        ({"hypervisor_version": 10**30}, {}, "host c1: hypervisor_version must be a whole number from 0 to"),
        ({"num_io_ops": float("nan")}, {}, "host c1: num_io_ops must be a whole number"),
        ({"failed_builds": "1; rm -rf /"}, {}, "host c1: failed_builds must be a whole number"),
        ({"num_instances": [1]}, {}, "host c1: num_instances must be a whole number"),
        ({"numa_cells": [{"id": 0, "pcpus": 10**9}]}, {}, "host c1: numa_cells[0].pcpus"),
        ({"numa_cells": "0-3"}, {}, "host c1: numa_cells is"),
        ({}, {"ram_weight_multiplier": float("inf")}, "ram_weight_multiplier must be a finite number"),
        ({}, {"cpu_weight_multiplier": "-1"}, "cpu_weight_multiplier must be a finite number"),
        ({}, {"host_subset_size": 10**12}, "host_subset_size must be a whole number from 1 to 100000"),
        ({}, {"host_subset_size": 10**100000}, "got a whole number of about 100,001 digits"),
        ({}, {"ram_weight_multiplier": 10**5000}, "ram_weight_multiplier must be between"),
        ({}, {"failures": 10**100000}, "failures must be a whole number from 0 to 1000, got a whole number of about"),
        ({}, {"seed": "x"}, "seed must be a whole number"),
        ({}, {"arrival": "tomorrow"}, "arrival must be one of settled, burst"),
        ({}, {"soft_affinity_weight_multiplier": 2.0}, "unknown multiplier option(s) soft_affinity_weight_multiplier"),
    ],
)
def test_hostile_host_figures_and_weigher_options_are_refused_naming_them(record, options, fragment):
    fleet = {"resource_providers": [dict(FLEET["resource_providers"][0], **record)]}
    with pytest.raises(CapacityOptionError) as caught:
        capacity_plan([{"flavor": SMALL, "count": 1}], fleet, **options)
    assert fragment in str(caught.value)


def test_a_huge_bad_flavor_count_costs_one_refusal_not_one_per_instance():
    demand = [{"flavor": dict(SMALL, extra_specs={"trait:CUSTOM_NOPE": "required"}), "count": 100000}]
    start = time.monotonic()
    plan = capacity_plan(demand, FLEET)
    assert plan["unplaced"] == {"small": 100000} and plan["reasons"]["small"]["code"] == "unknown_trait"
    assert time.monotonic() - start < 5


def test_names_that_try_to_break_the_exposition_format_are_escaped():
    name = 'x"} 1\naccel_injected{a="b"} 9\\'
    plan = capacity_plan([{"flavor": dict(SMALL, name=name), "count": 2}], FLEET)
    text = FILTERS["capacity_metrics"](plan)
    names = {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    assert "accel_injected" not in names
    flavors = {s.labels.get("flavor") for f in text_string_to_metric_families(text) for s in f.samples}
    assert name in flavors


@pytest.mark.parametrize("report", [{"placed": 1}, "x", 5, [1, 2]])
def test_metrics_refuse_what_is_not_a_report(report):
    with pytest.raises(AnsibleFilterError, match="capacity_metrics"):
        FILTERS["capacity_metrics"](report)


@pytest.mark.parametrize("name", ["../../outside.prom", "metrics.txt"])
def test_the_role_refuses_a_metrics_file_name_outside_the_directory(tmp_path, name):
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    extra = {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "accel_capacity_fleet": FLEET,
        "accel_capacity_demand": [{"flavor": SMALL, "count": 1}],
        "accel_capacity_textfile_dir": str(textfile),
        "accel_capacity_textfile_name": name,
    }
    report = run_playbook("playbooks/capacity.yml", "localhost,", extra)
    assert report["rc"] != 0
    assert "must be a plain file name ending in .prom" in report["stdout"] + str(report["plays"])
    assert list(tmp_path.rglob("*.prom")) == [] and not (tmp_path.parent / "outside.prom").exists()


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"fail_hosts": ["c1"] * 1001}, "fail_hosts names 1001 hosts, more than the 1000 allowed"),
        (
            {"fail_hosts": [{"name": "c1"}]},
            "fail_hosts: <a mapping> is not a host of the fleet; the fleet's hosts are c1",
        ),
        ({"fail_hosts": ["c1\nFAKE LINE"]}, "fail_hosts: 'c1\\nFAKE LINE' is not a host of the fleet"),
        ({"fail_domain": "x" * 10**6}, "fail_domain: "),
        ({"worst_case": {"hosts": 10**40}}, "worst_case hosts must be a whole number from 1 to 1000"),
        ({"worst_case": {"hosts": "1"}}, "worst_case hosts must be a whole number"),
        (
            {"what_if": [{"name": "n", "model": "H200", "count": 10**40, "mode": "passthrough"}]},
            "count must be a whole",
        ),
        (
            {"what_if": [{"name": "../etc", "model": "H200", "count": 1, "mode": "passthrough"}]},
            "what_if: name '../etc'",
        ),
        ({"what_if": [{"name": "n", "model": "H200", "count": 1, "mode": "passthrough", "shape": "../../x"}]}, "shape"),
        (
            {"what_if": [{"name": "n", "model": "H200", "count": 1, "mode": "passthrough", "gpus": 10**9}]},
            "gpus must be",
        ),
    ],
)
def test_hostile_failure_and_what_if_options_are_refused_bounded(options, fragment):
    started = time.monotonic()
    with pytest.raises(CapacityOptionError) as exc:
        capacity_plan([{"flavor": SMALL, "count": 1}], FLEET, **options)
    assert fragment in str(exc.value)
    assert len(str(exc.value)) < 1000 and "\n" not in str(exc.value)
    assert time.monotonic() - started < 5


def test_hostile_allocations_in_the_snapshot_are_refused_or_left_out():
    fleet = dict(FLEET, allocations={"c": {"allocations": {"cn1": {"resources": {"VCPU": 10**40}}}}})
    with pytest.raises(CapacityOptionError, match="must be a whole number from 0 to"):
        capacity_plan([{"flavor": SMALL, "count": 1}], fleet, fail_hosts=["c1"])
    # A provider outside the snapshot and a consumer of another type are left out, not trusted.
    fleet = dict(
        FLEET,
        allocations={
            "a": {"allocations": {"elsewhere": {"resources": {"VCPU": 1}}}},
            "b": {"allocations": {"cn1": {"resources": {"VCPU": 1}}}, "consumer_type": "MIGRATION"},
        },
    )
    result = capacity_plan([{"flavor": SMALL, "count": 1}], fleet, fail_hosts=["c1"])
    assert result["failure"]["moved"] == {"small": 1}
