"""Quarantines in the audit as a hostile Placement (or a hand-edited snapshot) could shape them: dates that
are not dates, reasons over several lines, consumers of other projects at a quarantine's UUID, snapshots
whose quarantines are not a mapping, and option combinations placement_info cannot honour."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter.audit import _audit_cloud
from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import http_date
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.quarantines import quarantine_findings
from tests.hostile.conftest import no_traceback
from tests.support.ansible_runner import run_module

ROOT = "11111111-1111-4111-8111-111111111111"
GPU = "22222222-2222-4222-8222-222222222222"
FLEET = {
    "resource_providers": [
        {"uuid": ROOT, "name": "cn1", "parent_provider_uuid": None, "inventories": {}, "usages": {}},
        {"uuid": GPU, "name": "cn1_0000:41:00.0", "parent_provider_uuid": ROOT,
         "inventories": {"CUSTOM_PCI_10DE_2331": {"total": 1, "reserved": 0}},
         "usages": {"CUSTOM_PCI_10DE_2331": 1}},
    ]
}  # fmt: skip


def _held(**changes) -> dict:
    body = {
        "allocations": {GPU: {"resources": {"CUSTOM_PCI_10DE_2331": 1}}},
        "project_id": quarantine.QUARANTINE_PROJECT,
        "user_id": "Xid 79",
        "last_modified": "2026-12-01T17:51:31Z",
    }
    return {**body, **changes}


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("Tue, 01 Dec 2026 17:51:31 GMT", "2026-12-01T17:51:31Z"),
        ("Tue, 01 Dec 2026 18:51:31 +0100", "2026-12-01T17:51:31Z"),
        ("Tue, 01 Dec 2026 17:51:31", None),  # no zone: not a time we can state
        ("yesterday", None),
        ("", None),
        ("Tue, 01 Dec 2026 17:51:31 GMT" * 10, None),
        (None, None),
        (17, None),
        (["Tue, 01 Dec 2026 17:51:31 GMT"], None),
    ],
)
def test_last_modified_headers_that_are_not_dates_give_no_date(header, expected):
    assert http_date(header) == expected


@pytest.mark.parametrize("value", ["2026-12-01", "2026-13-01T17:51:31Z", "x" * 20, 1733075491, None, {"a": 1}])
def test_a_snapshot_s_odd_dates_are_not_repeated(value):
    (device,) = quarantine.quarantined_devices(FLEET, {quarantine.consumer_uuid(GPU): _held(last_modified=value)})
    assert device["since"] is None
    (item,) = quarantine_findings([device])
    assert "a time Placement does not say" in item["message"]


def test_a_consumer_of_another_project_at_the_quarantine_s_uuid_is_not_reported():
    body = _held(project_id="6b4a3c2e-0000-4000-8000-000000000001")
    assert quarantine.quarantined_devices(FLEET, {quarantine.consumer_uuid(GPU): body}) == []


@pytest.mark.parametrize("reason", ["a\nb\r\nc\x1b[31m", None, 12, "r" * 5000, ["x"]])
def test_reasons_stay_bounded_and_on_one_line(reason):
    (device,) = quarantine.quarantined_devices(FLEET, {quarantine.consumer_uuid(GPU): _held(user_id=reason)})
    (item,) = quarantine_findings([device])
    assert item["message"].isprintable() and item["fix"].isprintable()
    assert len(item["message"]) < 700


@pytest.mark.parametrize("quarantines", [["x"], "x", 3])
def test_snapshot_quarantines_of_the_wrong_type_are_named(quarantines):
    fleet = dict(copy.deepcopy(FLEET), quarantines=quarantines)
    with pytest.raises(AnsibleFilterError, match="quarantines must map consumer uuids"):
        _audit_cloud({}, {}, fleet)


@pytest.mark.parametrize("off", [{"usages": False}, {"details": False}])
def test_placement_info_refuses_quarantines_without_usages(off):
    auth = {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": "admin"}}
    result = run_module("placement_info", {**auth, "quarantines": True, **off})
    assert result.get("failed") and "leave usages and details at true" in result["msg"], result
    no_traceback(result)


def test_a_snapshot_s_consumer_list_keeps_only_this_provider_s_quarantine_consumers():
    first, second = quarantine.consumer_uuid(GPU), quarantine.consumer_uuid(GPU, 1)
    foreign = quarantine.consumer_uuid(ROOT, 1)  # a quarantine consumer, but of another provider
    listed = [second, "; rm -rf /", foreign, 7, None, first, second]
    (device,) = quarantine.quarantined_devices(FLEET, {first: _held(consumers=listed)})
    assert device["consumers"] == [first, second]
    (item,) = quarantine_findings([device])
    assert item["fix"].endswith(
        f"openstack resource provider allocation delete {first}; openstack resource provider allocation delete {second}"
    )
    assert "rm -rf" not in item["fix"] and foreign not in item["fix"]


@pytest.mark.parametrize("consumers", ["x", {"a": 1}, None, 3])
def test_a_snapshot_s_odd_consumer_lists_fall_back_to_the_first_consumer(consumers):
    first = quarantine.consumer_uuid(GPU)
    (device,) = quarantine.quarantined_devices(FLEET, {first: _held(consumers=consumers)})
    assert device["consumers"] == [first]
