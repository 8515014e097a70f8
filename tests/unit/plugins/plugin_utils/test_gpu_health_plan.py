"""The gpu_health role's decisions and metrics, from the module's facts and a Placement snapshot.

The facts are what the gpu_health module gives for the recorded failing GPUs (tests/fixtures/nvidia/health);
the snapshot has the host's PCI providers as nova-compute names them, and a quarantine planted as
placement_info returns it with ``quarantines: true``.
"""

from __future__ import annotations

import calendar
import os

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_health
from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine
from ansible_collections.accel.openstack.plugins.plugin_utils.gpu_health import (
    DEFAULT_POLICY,
    HealthPlanError,
    health_metrics,
    health_plan,
    health_table,
)

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "..", "fixtures", "nvidia", "health")
NOW = calendar.timegm((2026, 12, 1, 17, 0, 0, 0, 0, 0))
HOST = "gpu-node-2"
ADDRESSES = ("0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0")
RC = "CUSTOM_PCI_10DE_2330"


def facts(name: str = "q-x-failing.xml", log: str | None = None) -> dict:
    with open(os.path.join(FIXTURES, name)) as handle:
        smi = gpu_health.parse_smi(handle.read(), name)
    events = []
    if log:
        with open(os.path.join(FIXTURES, log)) as handle:
            events = gpu_health.xids.parse_kernel_log(handle.read(), log, NOW)[0]
    return {"devices": gpu_health.assess(smi, events, NOW, 3600), "window": 3600}


def fleet(quarantined: dict[str, str] | None = None, provided=ADDRESSES) -> dict:
    """The host's providers; ``quarantined`` maps an address to the reason its quarantine records."""
    providers = [{"uuid": "0f1e2d3c-4b5a-4968-8778-695a4b3c2d1e", "name": HOST, "inventories": {}}]
    quarantines = {}
    for index, address in enumerate(provided):
        uuid = f"0f1e2d3c-4b5a-4968-8778-{index:012d}"
        held = address in (quarantined or {})
        providers.append(
            {"uuid": uuid, "name": f"{HOST}_{address.upper()}", "parent_provider_uuid": providers[0]["uuid"],
             "inventories": {RC: {"total": 1, "reserved": 0, "min_unit": 1, "max_unit": 1, "step_size": 1,
                                  "allocation_ratio": 1.0}}, "usages": {RC: 1 if held else 0}}
        )  # fmt: skip
        if held:
            quarantines[quarantine.consumer_uuid(uuid)] = {
                "project_id": quarantine.QUARANTINE_PROJECT,
                "user_id": quarantined[address],
                "allocations": {uuid: {"resources": {RC: 1}}},
            }
    return {"resource_providers": providers, "quarantines": quarantines}


def actions(plan: dict) -> dict[str, str]:
    return {row["address"]: row["action"] for row in plan["devices"]}


def test_failed_gpus_are_quarantined_degraded_ones_reported():
    plan = health_plan({HOST: facts()}, fleet())
    assert actions(plan) == {
        "0000:18:00.0": "quarantine",  # row remap failure, uncorrectable ECC
        "0000:2a:00.0": "report",  # a pending row remap: reset when idle
        "0000:3a:00.0": "report",  # pages pending retirement
        "0000:5d:00.0": "quarantine",  # lost
    }
    assert [row["reason"] for row in plan["quarantine"]] == [
        "gpu_health: row_remap_failure, uncorrectable_ecc (row remapping failed: the GPU has no spare row left for a "
        "failing memory row; volatile uncorrectable ECC errors since the driver loaded)",
        "gpu_health: gpu_lost (nvidia-smi cannot reach the GPU (its fields read Unknown Error or GPU is lost))",
    ]
    assert health_table(plan) == [
        "host | address | state | classes | action",
        f"{HOST} | 0000:18:00.0 | failed | row_remap_failure, uncorrectable_ecc | quarantine",
        f"{HOST} | 0000:2a:00.0 | degraded | row_remap_pending | report",
        f"{HOST} | 0000:3a:00.0 | degraded | retired_pages_pending | report",
        f"{HOST} | 0000:5d:00.0 | failed | gpu_lost | quarantine",
    ]


def test_the_reason_carries_the_xid_and_its_meaning_and_fits_placement():
    recent = facts("q-x-healthy.xml")
    recent["devices"][0]["state"], recent["devices"][0]["classes"] = "failed", ["fell_off_bus"]
    recent["devices"][0]["events"] = [
        {"current": True, "class": "fell_off_bus", "xid": 79, "meaning": "GPU has fallen off the bus"}
    ]
    plan = health_plan({HOST: recent}, fleet())
    assert plan["quarantine"][0]["reason"] == "gpu_health: fell_off_bus (Xid 79: GPU has fallen off the bus)"
    recent["devices"][0]["events"][0]["meaning"] = "x" * 400
    assert health_plan({HOST: recent}, fleet())["quarantine"][0]["reason"] == "gpu_health: fell_off_bus"


def test_a_policy_decides_per_class():
    plan = health_plan({HOST: facts()}, fleet(), policy={"row_remap_pending": "quarantine", "gpu_lost": "report"})
    assert actions(plan) == {
        "0000:18:00.0": "quarantine", "0000:2a:00.0": "quarantine", "0000:3a:00.0": "report", "0000:5d:00.0": "report"
    }  # fmt: skip
    assert DEFAULT_POLICY["fell_off_bus"] == "quarantine" and DEFAULT_POLICY["contained_ecc"] == "report"


def test_release_only_what_this_role_quarantined_and_only_when_healthy():
    healthy = facts("q-x-healthy.xml")
    reasons = {
        "0000:18:00.0": "gpu_health: fell_off_bus",
        "0000:2a:00.0": "Xid 79 on 2026-11-30, RMA 4711",  # the operator's own quarantine
    }
    plan = health_plan(
        {HOST: healthy}, fleet(reasons), health_command=["/usr/local/sbin/gpu-burn", "--bus", "{bus_id}"]
    )
    assert actions(plan) == {
        "0000:18:00.0": "release", "0000:2a:00.0": "held", "0000:3a:00.0": "report", "0000:5d:00.0": "report"
    }  # fmt: skip
    row = plan["release"][0]
    assert row["argv"] == ["/usr/local/sbin/gpu-burn", "--bus", "00000000:18:00.0"]
    assert row["command"] == "/usr/local/sbin/gpu-burn --bus 00000000:18:00.0" and row["inventory_host"] == HOST
    # Still failed (lost): held, not released
    plan = health_plan({HOST: facts()}, fleet({"0000:5d:00.0": "gpu_health: gpu_lost"}))
    assert actions(plan)["0000:5d:00.0"] == "held" and plan["release"] == []


def test_a_gpu_without_a_provider_is_reported_and_hypervisor_names_are_followed():
    plan = health_plan({"inv-2": facts()}, fleet(provided=["0000:18:00.0"]), hypervisor_hostnames={"inv-2": HOST})
    assert actions(plan)["0000:18:00.0"] == "quarantine" and actions(plan)["0000:5d:00.0"] == "no_provider"
    assert plan["quarantine"][0]["host"] == HOST and plan["quarantine"][0]["inventory_host"] == "inv-2"
    assert health_plan({"inv-2": None}, fleet())["devices"] == []  # a host that was not read


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"policy": {"gpu_on_fire": "quarantine"}}, "gpu_health_policy names the event class gpu_on_fire, which"),
        ({"policy": {"fell_off_bus": "drain"}}, "gpu_health_policy fell_off_bus is drain; give report or quarantine"),
        ({"policy": ["fell_off_bus"]}, "gpu_health_policy is a list; give a mapping of event class"),
        ({"health_command": "nvidia-smi -q"}, "gpu_health_health_command must be a command as a list of strings"),
        ({"health_command": ["", "-q"]}, "gpu_health_health_command's program is empty"),
        ({"hypervisor_hostnames": ["a"]}, "gpu_health_hypervisor_hostnames must map inventory hostnames"),
    ],
)
def test_bad_options_are_refused_with_the_fix(kwargs, message):
    with pytest.raises(HealthPlanError) as caught:
        health_plan({HOST: facts()}, fleet(), **kwargs)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("device", "message"),
    [
        (
            {"address": "0000:18:00.0; reboot", "state": "failed", "classes": []},
            "address '0000:18:00.0; reboot' is not",
        ),
        ({"address": "0000:18:00.0", "state": "on fire", "classes": []}, "state 'on fire' is not one of healthy"),
        ({"address": "0000:18:00.0", "state": "failed", "classes": "gpu_lost"}, "classes must be a list"),
        ("0000:18:00.0", "is a string, not a device of the gpu_health module"),
    ],
)
def test_facts_of_the_wrong_shape_name_the_host_and_device(device, message):
    with pytest.raises(HealthPlanError) as caught:
        health_plan({HOST: {"devices": [device]}}, fleet())
    assert str(caught.value).startswith(f"host {HOST} device 1") and message in str(caught.value)


def test_the_metrics_parse_with_prometheus_client_and_use_dcgm_exporter_labels():
    host = 'gpu "node" 2\\'
    text = health_metrics(facts(log="journal-ecc.txt"), host, quarantined=["0000:18:00.0"])
    samples = {}
    for family in text_string_to_metric_families(text):
        assert family.type == "gauge" and family.name.startswith("accel_gpu_health")
        for sample in family.samples:
            labels = dict(sample.labels)
            assert labels.pop("Hostname") == host
            samples[(sample.name, labels["pci_bus_id"], labels.get("state") or labels.get("class") or "")] = (
                sample.value
            )
            assert set(labels) >= {"gpu", "UUID", "pci_bus_id", "device", "modelName"}
    assert samples[("accel_gpu_health", "00000000:18:00.0", "failed")] == 1
    assert samples[("accel_gpu_health", "00000000:18:00.0", "healthy")] == 0
    assert samples[("accel_gpu_health_events", "00000000:3A:00.0", "uncorrectable_ecc")] == 1  # Xid 95, 16:03
    assert samples[("accel_gpu_health_events", "00000000:5D:00.0", "row_remap_failure")] == 1  # Xid 64, 16:10
    assert samples[("accel_gpu_health_quarantined", "00000000:18:00.0", "")] == 1
    assert samples[("accel_gpu_health_quarantined", "00000000:2A:00.0", "")] == 0
    assert samples[("accel_gpu_health_last_event_timestamp_seconds", "00000000:5D:00.0", "")] == calendar.timegm(
        (2026, 12, 1, 16, 10, 45, 0, 0, 0)
    )
    assert 'device="nvidia0"' in text and 'modelName="NVIDIA H100 80GB HBM3"' in text
