"""Quarantined devices in the audit: one device_quarantined finding each, whose fix is the release task.

The cloud is tests/support/audit_cloud.py's healthy one; a quarantine is planted in its Placement snapshot
as placement_info returns it with ``quarantines: true`` (the held units counted in the provider's usage).
"""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import CODES
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.quarantines import quarantine_findings
from tests.support import audit_cloud as world

VGPU = "a16-01_pci_0000_84_00_4"
SINCE = "2026-12-01T17:51:31Z"
TASK = re.compile(r"accel\.openstack\.device_quarantine: \{[^{}]*\}")


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    return world.healthy(str(tmp_path_factory.mktemp("cloud")))


def run(cloud: dict, **options) -> list[dict]:
    return audit_cloud(cloud["hosts"], cloud["deployed"], cloud["fleet"], cloud["flavors"], cloud["policy"],
                       **options)["findings"]  # fmt: skip


def plant(cloud: dict, name: str, held: int, used: int, reason: str = "Xid 79: GPU has fallen off the bus") -> dict:
    """A quarantine holding ``held`` units of the provider ``name``, whose usage is ``used``."""
    cloud = copy.deepcopy(cloud)
    provider = next(p for p in cloud["fleet"]["resource_providers"] if p["name"] == name)
    (rc,) = provider["inventories"]
    provider["usages"] = {rc: used}
    cloud["fleet"]["quarantines"] = {
        quarantine.consumer_uuid(provider["uuid"]): {
            "allocations": {provider["uuid"]: {"generation": 3, "resources": {rc: held}}},
            "project_id": quarantine.QUARANTINE_PROJECT,
            "user_id": reason,
            "consumer_generation": 1,
            "consumer_type": quarantine.CONSUMER_TYPE,
            "last_modified": SINCE,
        }
    }
    return cloud


def task(fix: str) -> dict:
    """The device_quarantine task a fix names, parsed as a playbook would parse it."""
    (text,) = TASK.findall(fix)
    return yaml.safe_load(text)["accel.openstack.device_quarantine"]


def test_a_quarantined_device_is_exactly_one_info_finding_whose_fix_releases_it(healthy):
    baseline = run(healthy)
    planted = plant(healthy, VGPU, held=1, used=1)
    found = run(planted)
    added = [f for f in found if f not in baseline]
    assert [f for f in baseline if f not in found] == []
    (item,) = added  # no inventory_mismatch: the held unit is an allocation, not an mdev
    assert (item["host"], item["area"], item["code"], item["severity"]) == (
        "a16-01", "placement", "device_quarantined", "info"
    )  # fmt: skip
    for words in ("0000:84:00.4", VGPU, "Xid 79: GPU has fallen off the bus", SINCE, "CUSTOM_VGPU_A16_4Q: 1"):
        assert words in item["message"]
    assert task(item["fix"]) == {"host": "a16-01", "address": "0000:84:00.4", "state": "released"}
    consumer = quarantine.consumer_uuid(next(p["uuid"] for p in planted["fleet"]["resource_providers"]
                                             if p["name"] == VGPU))  # fmt: skip
    assert item["fix"].endswith(f"openstack resource provider allocation delete {consumer}")
    assert CODES["device_quarantined"] == ("placement", "info")


def test_without_the_snapshot_s_quarantines_nothing_is_reported(healthy):
    planted = plant(healthy, VGPU, held=1, used=1)
    del planted["fleet"]["quarantines"]
    assert not any(f["code"].startswith(("device_quarantined", "quarantine_")) for f in run(planted))


def test_findings_use_the_inventory_hostname_of_the_compute_node(healthy):
    planted = plant(healthy, VGPU, held=1, used=1)
    for provider in planted["fleet"]["resource_providers"]:
        provider["name"] = provider["name"].replace("a16-01", "a16-01.cloud")
    found = run(planted, hypervisor_hostnames={"a16-01": "a16-01.cloud"})
    (item,) = [f for f in found if f["code"] == "device_quarantined"]
    assert item["host"] == "a16-01"
    assert task(item["fix"]) == {"host": "a16-01.cloud", "address": "0000:84:00.4", "state": "released"}


def test_a_unit_freed_since_the_quarantine_ran_is_a_warning_with_the_task_that_takes_it_back():
    device = {"host": "cn1", "provider": "cn1_pci_0000_84_00_0", "provider_uuid": "u-1", "address": "0000:84:00.0",
              "reason": "ECC", "held": {"VGPU": 2}, "schedulable": {"VGPU": 1}, "consumer": "c-1",
              "since": None}  # fmt: skip
    info, warning = quarantine_findings([device])
    assert info["code"] == "device_quarantined" and "a time Placement does not say" in info["message"]
    assert (warning["code"], warning["severity"], warning["host"]) == ("quarantine_incomplete", "warning", "cn1")
    assert "VGPU: 1" in warning["message"]
    assert task(warning["fix"]) == {"host": "cn1", "address": "0000:84:00.0", "reason": "ECC"}


def test_a_provider_whose_name_carries_no_address_is_named_by_uuid():
    device = {"host": "cn1", "provider": "cn1_GPU0", "provider_uuid": "8c0c2b5e-2f0e-4a39-9d5c-6d2b0c3f3b1a",
              "address": None, "reason": "fan failure", "held": {"CUSTOM_GPU": 1}, "schedulable": {},
              "consumer": "c-1", "since": SINCE}  # fmt: skip
    (item,) = quarantine_findings([device], {"cn1": "gpu-1"})
    assert item["host"] == "gpu-1" and "device provider cn1_GPU0" in item["message"]
    assert task(item["fix"]) == {"provider": "8c0c2b5e-2f0e-4a39-9d5c-6d2b0c3f3b1a", "state": "released"}


def test_what_placement_stored_stays_on_one_line_and_quoted():
    device = {"host": 'cn"1', "provider": "cn1_x", "provider_uuid": "u", "address": "0000:41:00.0",
              "reason": "line one\nline two: }{", "held": {"X": 1}, "schedulable": {"X": 1}, "consumer": "c",
              "since": None}  # fmt: skip
    info, warning = quarantine_findings([device])
    assert "\n" not in info["message"] + warning["message"] + info["fix"] + warning["fix"]
    parsed = yaml.safe_load(warning["fix"].split("run the quarantine again: ")[1].split(" with the cloud")[0])
    assert parsed["accel.openstack.device_quarantine"] == {
        "host": 'cn"1', "address": "0000:41:00.0", "reason": "line one line two: }{"
    }  # fmt: skip
