"""NoValidHost explained from the lines Nova 34's own scheduler writes against the real Placement 16.

``tests/support/nova_scheduler_log_oracle.py`` runs ``SchedulerManager.select_destinations`` (its real report
client, Nova's filter handler and filters) for a flavor that cannot be placed, logging through oslo.log at
INFO and at DEBUG; ``forensics`` reads each log and replays the flavor on the same fleet snapshot, and the
explanation must name the constraint Nova failed on and every host.
"""

import json
import os

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import forensics
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement

GPU1, GPU1_DEV, CPU1, CPU2 = (
    "0c2d4a9e-1111-4a00-8000-000000000001",
    "0c2d4a9e-1111-4a00-8000-000000000002",
    "0c2d4a9e-1111-4a00-8000-000000000003",
    "0c2d4a9e-1111-4a00-8000-000000000004",
)
GENERAL = {"VCPU": 32, "MEMORY_MB": 65536, "DISK_GB": 500}


def _provider(uuid, name, parent, inventories, traits=("OWNER_NOVA",), usages=None):
    return {
        "uuid": uuid,
        "name": name,
        "parent_provider_uuid": parent,
        "inventories": {rc: {"total": n} for rc, n in inventories.items()},
        "traits": list(traits),
        "aggregates": [],
        "usages": usages or {},
    }


# One NUMA cell per host, as nova-compute reports it (the scheduler's host state and the snapshot's record).
CELLS = [{"id": 0, "pcpus": 0, "vcpus": 32, "memory_mb": 65536}]
# nova-compute's PCI pools ([pci] device_spec): gpu1 has one H100 in passthrough, the CPU hosts none.
POOLS = {"gpu1": [{"vendor_id": "10de", "product_id": "2330", "numa_node": 0, "count": 1}], "cpu1": [], "cpu2": []}
ALIASES = [
    '{"name": "h100", "vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI"}',
    '{"name": "a40", "vendor_id": "10de", "product_id": "2235", "device_type": "type-PCI"}',
]
# The one H100 of the fleet is in use; two CPU hosts have room for general flavors.
FLEET = {
    "resource_providers": [
        dict(_provider(GPU1, "gpu1", None, GENERAL), numa_cells=CELLS, pci_pools=POOLS["gpu1"]),
        _provider(GPU1_DEV, "gpu1_0000:41:00.0", GPU1, {"CUSTOM_NVIDIA_H100": 1}, usages={"CUSTOM_NVIDIA_H100": 1}),
        dict(_provider(CPU1, "cpu1", None, GENERAL), numa_cells=CELLS, pci_pools=POOLS["cpu1"]),
        dict(_provider(CPU2, "cpu2", None, GENERAL), numa_cells=CELLS, pci_pools=POOLS["cpu2"]),
    ]
}
HOSTS = {GPU1: "gpu1", CPU1: "cpu1", CPU2: "cpu2"}
TIER = {"name": "a100", "hosts": ["gpu1", "cpu1", "cpu2"], "metadata": {"gpu_tier": "a100"}}
CASES = {
    "no_candidates": {
        "flavor": {
            "name": "gpu.h100",
            "vcpus": 4,
            "ram": 8192,
            "disk": 20,
            "extra_specs": {"resources:CUSTOM_NVIDIA_H100": "1"},
        },
        "filters": ["ComputeFilter"],
    },
    "aggregate": {
        "flavor": {
            "name": "tier.h100",
            "vcpus": 4,
            "ram": 8192,
            "disk": 20,
            "extra_specs": {"aggregate_instance_extra_specs:gpu_tier": "h100"},
        },
        "filters": ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"],
    },
    "numa": {
        "flavor": {"name": "two.nodes", "vcpus": 4, "ram": 8192, "disk": 20, "extra_specs": {"hw:numa_nodes": "2"}},
        "filters": ["ComputeFilter", "NUMATopologyFilter"],
    },
    "pci": {
        "flavor": {
            "name": "gpu.a40",
            "vcpus": 4,
            "ram": 8192,
            "disk": 20,
            "extra_specs": {"pci_passthrough:alias": "a40:1"},
        },
        "filters": ["ComputeFilter", "PciPassthroughFilter"],
    },
    # A reschedule whose alternates are all used: only the conductor logs, MaxRetriesExceeded.
    "retries": {
        "flavor": {"name": "general", "vcpus": 4, "ram": 8192, "disk": 20, "extra_specs": {}},
        "filters": ["ComputeFilter"],
        "retries_exhausted": True,
    },
}


@pytest.fixture(scope="module")
def logs(placement, tmp_path_factory):
    """Each case at INFO and at DEBUG: {(case, debug): (request id, instance uuid, log text, oracle result)}."""
    from tests.support import nova_scheduler_log_oracle

    load_fleet(placement, FLEET)
    folder = tmp_path_factory.mktemp("nova-logs")
    cases, keys = [], []
    for number, (name, case) in enumerate(sorted(CASES.items())):
        for debug in (False, True):
            tail = f"{number:04d}{int(debug):04d}0000"
            request_id, instance = f"req-5e1f0000-0000-4000-8000-{tail}", f"9a7b0000-0000-4000-8000-{tail}"
            cases.append(
                {
                    "id": f"{name}-{debug}",
                    "placement": placement.url,
                    "log_file": str(folder / f"{name}-{'debug' if debug else 'info'}.log"),
                    "debug": debug,
                    "request_id": request_id,
                    "instance_uuid": instance,
                    "flavor": case["flavor"],
                    "enabled_filters": case["filters"],
                    "pci_aliases": ALIASES,
                    "retries_exhausted": bool(case.get("retries_exhausted")),
                    "http_debug": debug,
                    "hosts": {
                        uuid: {
                            "name": host,
                            "disabled": False,
                            "numa_cells": CELLS,
                            "pci_pools": POOLS[host],
                            "aggregates": [{"metadata": TIER["metadata"]}],
                        }
                        for uuid, host in HOSTS.items()
                    },
                }
            )
            keys.append((name, debug, request_id, instance))
    results = nova_scheduler_log_oracle.ask(cases)
    out = {}
    for (name, debug, request_id, instance), case, result in zip(keys, cases, results, strict=True):
        with open(case["log_file"], encoding="utf-8") as handle:
            out[(name, debug)] = (request_id, instance, handle.read(), result)
    if os.environ.get("ACCEL_FORENSICS_SAMPLES"):
        with open(os.environ["ACCEL_FORENSICS_SAMPLES"], "w", encoding="utf-8") as handle:
            json.dump({f"{n}-{'debug' if d else 'info'}": v[2] for (n, d), v in out.items()}, handle, indent=1)
    return out


@pytest.mark.parametrize("debug", [False, True], ids=["info", "debug"])
def test_no_allocation_candidates_is_explained_as_the_exhausted_device(logs, debug):
    request_id, instance, text, result = logs[("no_candidates", debug)]
    assert result["outcome"] == "no_valid_host", result
    assert "Got no allocation candidates from the Placement API." in text
    for wanted in (request_id, instance):
        evidence = forensics.read_request([text], wanted)
        assert evidence["placement"] == "no_candidates" and evidence["failure"] == "NoValidHost"
        # The conductor's own line, not the scheduler's inference.
        assert evidence["failure_message"] == "No valid host was found."
        answer = forensics.explain(evidence, CASES["no_candidates"]["flavor"], FLEET)
        assert answer["agrees"] is True, answer["disagreement"]
        assert answer["replay"]["reason"]["code"] == "in_use"
        by_host = {c["host"]: c for c in answer["constraints"]}
        assert set(by_host) == {"gpu1", "cpu1", "cpu2"}
        assert all(c["kind"] == "resource" for c in by_host.values())
        assert "CUSTOM_NVIDIA_H100" in by_host["gpu1"]["detail"] and "CUSTOM_NVIDIA_H100" in by_host["cpu1"]["detail"]
        assert answer["summary"].startswith("NoValidHost: Placement returned no allocation candidates")
        # At DEBUG with keystoneauth's request lines the query Nova sent is in the log: it is the flavor's.
        assert evidence["queries"] == (answer["replay"]["queries"] if debug else [])
    if debug:
        assert evidence["queries"] == [
            "limit=1000&resources=CUSTOM_NVIDIA_H100:1,DISK_GB:20,MEMORY_MB:8192,VCPU:4"
            "&root_required=OWNER_NOVA,!COMPUTE_STATUS_DISABLED"
        ]
        other = forensics.explain(evidence, dict(CASES["no_candidates"]["flavor"], ram=4096), FLEET)
        assert other["agrees"] is False
        assert other["disagreement"].startswith("the flavor given is not the one this request asked for")
        assert "MEMORY_MB:4096" in other["disagreement"] and "MEMORY_MB:8192" in other["disagreement"]


@pytest.mark.parametrize("debug", [False, True], ids=["info", "debug"])
def test_filter_that_removes_every_host_is_named_with_each_host(logs, debug):
    request_id, instance, text, result = logs[("aggregate", debug)]
    assert result["outcome"] == "no_valid_host", result
    assert "Filter AggregateInstanceExtraSpecsFilter returned 0 hosts" in text
    evidence = forensics.read_request([text], instance)
    assert evidence["requests"] == [request_id]
    assert evidence["hosts_from_placement"] == 3
    assert evidence["zeroed_by"] == "AggregateInstanceExtraSpecsFilter"
    assert [(f["name"], f["end"]) for f in evidence["filters"]] == [
        ("ComputeFilter", 3),
        ("AggregateInstanceExtraSpecsFilter", 0),
    ]
    assert evidence["removed_last"] == (["cpu1", "cpu2", "gpu1"] if debug else [])
    answer = forensics.explain(evidence, CASES["aggregate"]["flavor"], FLEET, aggregates_metadata=[TIER])
    said = "aggregate_instance_extra_specs: fails flavor extra_specs requirements. '{'a100'}' do not match 'h100'"
    assert answer["log"]["host_reasons"] == ({h: [said] for h in ("gpu1", "cpu1", "cpu2")} if debug else {})
    assert answer["agrees"] is True, answer["disagreement"]
    assert {c["host"]: c["kind"] for c in answer["constraints"]} == dict.fromkeys(
        ("cpu1", "cpu2", "gpu1"), "AggregateInstanceExtraSpecsFilter"
    )
    assert all("gpu_tier=h100" in c["detail"] for c in answer["constraints"])


def test_replay_says_when_capacity_was_freed_since_the_log(logs):
    _request_id, instance, text, _result = logs[("no_candidates", True)]
    freed = json.loads(json.dumps(FLEET))
    freed["resource_providers"][1]["usages"] = {"CUSTOM_NVIDIA_H100": 0}
    answer = forensics.explain(forensics.read_request([text], instance), CASES["no_candidates"]["flavor"], freed)
    assert answer["agrees"] is False
    assert "today it returns 1 host(s)" in answer["disagreement"] and "freed" in answer["disagreement"]


@pytest.mark.parametrize("debug", [False, True], ids=["info", "debug"])
def test_numa_layout_no_host_holds_is_named_on_every_host(logs, debug):
    request_id, instance, text, result = logs[("numa", debug)]
    assert result["outcome"] == "no_valid_host", result
    evidence = forensics.read_request([text], request_id)
    assert evidence["zeroed_by"] == "NUMATopologyFilter" and evidence["hosts_from_placement"] == 3
    if debug:
        assert evidence["instances"] == [instance]
        said = "numa_topology_filter: fails NUMA topology requirements. The instance does not fit on this host."
        assert evidence["host_reasons"] == {h: [said] for h in ("gpu1", "cpu1", "cpu2")}
    answer = forensics.explain(evidence, CASES["numa"]["flavor"], FLEET)
    assert answer["agrees"] is True, answer["disagreement"]
    assert {c["host"]: c["detail"] for c in answer["constraints"]} == dict.fromkeys(
        ("cpu1", "cpu2", "gpu1"), "NUMATopologyFilter: the guest asks 2 NUMA node(s); the host has 1 NUMA cell(s)"
    )


@pytest.mark.parametrize(
    "prefix", ["Dec 02 08:06:15 ctl1 nova-scheduler[26839]: ", "2026-12-02T08:06:15+0000 ctl1 nova-scheduler[26839]: "]
)
def test_nova_lines_read_through_journald_give_the_same_evidence(logs, prefix):
    request_id, _instance, text, _result = logs[("aggregate", True)]
    journal = "\n".join(prefix + row for row in text.splitlines())
    assert forensics.read_request(journal, request_id) == forensics.read_request(text, request_id)


@pytest.mark.parametrize("debug", [False, True], ids=["info", "debug"])
def test_pci_alias_no_host_has_is_named_with_the_free_count(logs, debug):
    request_id, _instance, text, result = logs[("pci", debug)]
    assert result["outcome"] == "no_valid_host", result
    evidence = forensics.read_request([text], request_id)
    assert evidence["zeroed_by"] == "PciPassthroughFilter" and evidence["hosts_from_placement"] == 3
    if debug:
        assert set(evidence["host_reasons"]) == {"gpu1", "cpu1", "cpu2"}
        assert all(
            r[0].startswith("pci_passthrough_filter: doesn't have the required PCI devices")
            for r in evidence["host_reasons"].values()
        )
    answer = forensics.explain(evidence, CASES["pci"]["flavor"], FLEET, pci_aliases=ALIASES)
    assert answer["agrees"] is True, answer["disagreement"]
    assert {c["host"]: c["detail"] for c in answer["constraints"]} == dict.fromkeys(
        ("cpu1", "cpu2", "gpu1"), "PciPassthroughFilter: alias a40 needs 1 device(s); the host has 0 free"
    )


@pytest.mark.parametrize("debug", [False, True], ids=["info", "debug"])
def test_conductor_max_retries_exceeded_is_told_apart(logs, debug):
    request_id, instance, text, result = logs[("retries", debug)]
    assert result["outcome"] == "max_retries", result
    evidence = forensics.read_request([text], instance)
    assert evidence["requests"] == [request_id]
    assert evidence["failure"] == "MaxRetriesExceeded"
    assert evidence["failure_message"] == (
        "Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for "
        f"instance {instance}."
    )
    answer = forensics.explain(evidence, CASES["retries"]["flavor"], FLEET)
    assert answer["replay"]["outcome"] == "fits" and answer["agrees"] is False
    assert "the log does not say what Placement answered" in answer["disagreement"]
    assert answer["summary"].startswith("MaxRetriesExceeded: the scheduler's lines do not say where the hosts went")


def test_the_lookup_explains_nova_s_own_log_as_a_playbook_runs_it(logs, tmp_path):
    from tests.support.ansible_runner import run_expression

    request_id, instance, text, _result = logs[("pci", True)]
    log = tmp_path / "nova-scheduler.log"
    log.write_text(text)
    fleet_file = tmp_path / "fleet.json"
    fleet_file.write_text(json.dumps(FLEET))
    data = {"logs": [str(log)], "flavor": CASES["pci"]["flavor"], "fleet_file": str(fleet_file), "aliases": ALIASES}
    expression = (
        f"{{{{ query('accel.openstack.novalidhost', '{instance}', logs=logs, flavor=flavor, "
        "fleet_file=fleet_file, pci_aliases=aliases) | to_json }}"
    )
    done = run_expression(tmp_path, expression, data)
    assert done.returncode == 0, done.stdout + done.stderr
    (answer,) = json.loads(json.loads(done.stdout.split("=>", 1)[1])["msg"])
    assert answer["request"] == request_id and answer["failure"] == "NoValidHost" and answer["agrees"] is True
    assert answer["log"]["zeroed_by"] == "PciPassthroughFilter"
    assert {c["host"] for c in answer["constraints"]} == {"cpu1", "cpu2", "gpu1"}
    assert all(c["kind"] == "PciPassthroughFilter" for c in answer["constraints"])
