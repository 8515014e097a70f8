"""GPU health in the audit (area health): from the gpu_health module's fact, matched with the quarantines.

The cloud is tests/support/audit_cloud.py's healthy one. Its T4 host gets the fact the gpu_health module
gives for the recorded failing GPUs (tests/fixtures/nvidia/health), moved to the T4's address; a quarantine is
planted in the snapshot as placement_info returns it with ``quarantines: true``.
"""

from __future__ import annotations

import copy
import os
import re

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_health
from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import AREAS, CODES
from tests.support import audit_cloud as world
from tests.unit.plugins.plugin_utils.test_audit_quarantines import plant, run

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "..", "fixtures", "nvidia", "health")
T4 = "0000:b0:00.0"
TASK = re.compile(r"accel\.openstack\.device_quarantine: \{[^{}]*\}")


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    return world.healthy(str(tmp_path_factory.mktemp("cloud")))


def with_health(cloud: dict, xml: str, index: int) -> dict:
    """The cloud whose T4 host carries the health of the fixture's GPU ``index``, at the T4's address."""
    with open(os.path.join(FIXTURES, xml)) as handle:
        devices = gpu_health.assess(gpu_health.parse_smi(handle.read(), xml), [], 0, 3600)
    device = dict(devices[index], address=T4, bus_id="00000000:B0:00.0")
    cloud = copy.deepcopy(cloud)
    cloud["hosts"]["t4-01"]["accel_gpu_health"] = {"devices": [device], "window": 3600}
    return cloud


def task(fix: str) -> dict:
    (text,) = TASK.findall(fix)
    return yaml.safe_load(text)["accel.openstack.device_quarantine"]


def added(cloud: dict, baseline: list[dict]) -> list[dict]:
    found = run(cloud)
    assert [f for f in baseline if f not in found] == []
    return [f for f in found if f not in baseline]


def test_the_health_area_and_its_codes():
    assert AREAS[-1] == "health"
    assert CODES["gpu_failed"] == ("health", "error") and CODES["gpu_healthy_quarantined"] == ("health", "info")


def test_a_failed_gpu_not_quarantined_is_an_error_whose_fix_quarantines_it(healthy):
    baseline = run(healthy)
    (item,) = added(with_health(healthy, "q-x-failing.xml", 3), baseline)  # the lost GPU
    assert (item["host"], item["area"], item["code"], item["severity"]) == ("t4-01", "health", "gpu_failed", "error")
    assert item["message"].startswith(f"GPU {T4} of t4-01 is failed (gpu_lost) and not quarantined")
    assert "drain the host, then reset the GPU or power-cycle the host" in item["message"]
    assert task(item["fix"]) == {"host": "t4-01", "address": T4, "reason": "gpu_health: gpu_lost"}


def test_a_degraded_gpu_is_a_warning_with_the_recommended_action(healthy):
    (item,) = added(with_health(healthy, "q-x-failing.xml", 1), run(healthy))  # a row remap pending
    assert (item["code"], item["severity"]) == ("gpu_degraded", "warning")
    assert item["fix"] == "reset the GPU when it is idle so that the remapping takes effect"


def test_a_quarantined_gpu_healthy_now_is_info_whose_fix_releases_it_and_a_failed_quarantined_one_is_quiet(healthy):
    baseline = run(healthy)
    quarantined = plant(healthy, "t4-01_0000:B0:00.0", held=1, used=1, reason="gpu_health: fell_off_bus")
    quiet = run(quarantined)
    found = added(with_health(quarantined, "q-x-healthy.xml", 0), quiet)
    assert [(f["code"], f["severity"]) for f in found] == [("gpu_healthy_quarantined", "info")]
    assert "is quarantined (gpu_health: fell_off_bus) and healthy now" in found[0]["message"]
    command = ["nvidia-smi", "-q", "-i", "00000000:B0:00.0"]
    assert task(found[0]["fix"]) == {"host": "t4-01", "address": T4, "state": "released", "health_command": command}
    provider = next(p for p in quarantined["fleet"]["resource_providers"] if p["name"] == "t4-01_0000:B0:00.0")
    assert found[0]["fix"].endswith(
        "; without Ansible, after that command exits 0 on the host: openstack resource provider allocation delete "
        + quarantine.consumer_uuid(provider["uuid"])
    )
    assert added(with_health(quarantined, "q-x-failing.xml", 3), quiet) == []  # failed and held: nothing to do
    assert [f for f in quiet if f["area"] == "health"] == [] and [f for f in baseline if f["area"] == "health"] == []


def test_a_host_name_that_is_no_hostname_is_quoted_in_the_fix(healthy):
    cloud = with_health(healthy, "q-x-failing.xml", 3)
    cloud["hosts"]['t4-01"; rm -rf /'] = cloud["hosts"].pop("t4-01")
    cloud["deployed"]['t4-01"; rm -rf /'] = cloud["deployed"].pop("t4-01")
    (item,) = [f for f in run(cloud) if f["area"] == "health"]
    assert task(item["fix"])["host"] == 't4-01"; rm -rf /'
