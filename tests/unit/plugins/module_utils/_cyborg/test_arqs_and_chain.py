"""The ARQ report (classification, commands, findings) and the device profile chain, on API-shaped data."""

from __future__ import annotations

import datetime
import json

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.arqs import (
    ArqReportError,
    arq_findings,
    arq_report,
    parse_duration,
)
from ansible_collections.accel.openstack.plugins.module_utils._cyborg.chain import chain_findings, walk_chain

NOW = datetime.datetime(2026, 1, 2, 12, 0, tzinfo=datetime.UTC)
LIVE = "11111111-1111-4111-8111-111111111111"
GONE = "22222222-2222-4222-8222-222222222222"


def arq(n: int, state: str, instance=None, project="p1", created="2026-01-02T11:59:00+00:00", updated=None):
    return {"uuid": f"aaaaaaaa-aaaa-4aaa-8aaa-{n:012d}", "state": state, "device_profile_name": "gpu",
            "device_profile_group_id": 0, "hostname": "h1" if instance else None, "instance_uuid": instance,
            "project_id": project, "created_at": created, "updated_at": updated}  # fmt: skip


def test_classes_commands_and_order():
    arqs = [
        arq(1, "Bound", LIVE),
        arq(2, "Bound", GONE),
        arq(3, "Initial", created="2026-01-02T10:00:00"),
        arq(4, "BindFailed", LIVE, created="2026-01-01T00:00:00Z", updated="2026-01-02T11:30:00+00:00"),
        arq(5, "Initial", project=None),
        arq(6, "Bound", GONE, project=None),
    ]
    report = arq_report(arqs, [LIVE], "1h", now=NOW)
    got = {r["uuid"][-1]: (r["classification"], r["problems"]) for r in report["arqs"]}
    assert got == {"1": ("ok", []), "2": ("orphaned", ["orphaned"]), "3": ("stale", ["stale"]),
                   "4": ("ok", []), "5": ("no_project", ["no_project"]),
                   "6": ("orphaned", ["orphaned", "no_project"])}  # fmt: skip
    assert [r["classification"] for r in report["arqs"]][:2] == ["orphaned", "orphaned"]
    orphan = next(r for r in report["arqs"] if r["uuid"].endswith("2"))
    assert orphan["command"] == (
        'curl -sS --fail-with-body -X DELETE -H "X-Auth-Token: $USER_TOKEN" -H "X-Service-Token: $SERVICE_TOKEN" '
        f"-H 'OpenStack-API-Version: accelerator 2.0' \"$CYBORG_ENDPOINT/accelerator_requests?arqs={orphan['uuid']}\""
    )
    assert report["summary"] == {"orphaned": 2, "stale": 1, "no_project": 1, "ok": 2}
    findings = arq_findings(report)
    assert {f["code"] for f in findings} == {"cyborg_arq_orphaned", "cyborg_arq_stale", "cyborg_arq_no_project"}
    assert all(set(f) == {"host", "area", "code", "severity", "message", "fix"} for f in findings)
    assert sum(f["code"] == "cyborg_arq_no_project" for f in findings) == 2


@pytest.mark.parametrize(
    ("state", "age", "stale"),
    [("Unbound", "2025-12-31T12:00:00Z", True), ("Unbound", "2026-01-02T11:30:00Z", False),
     ("Initial", "2025-12-31T12:00:00Z", True), ("BindFailed", "2025-12-31T12:00:00Z", True),
     ("Bound", "2025-12-31T12:00:00Z", False), ("Deleting", "2025-12-31T12:00:00Z", False)],
)  # fmt: skip
def test_old_unbound_arqs_are_stale_like_initial_and_bind_failed(state, age, stale):
    (row,) = arq_report([arq(1, state, LIVE if state == "Bound" else None, created=age)], [LIVE], "1h", now=NOW)["arqs"]
    assert row["classification"] == ("stale" if stale else "ok")
    if stale:
        assert row["reasons"] == [f"{state} since {age.replace('Z', '+00:00')}, longer than 3600 s"]
        # Not bound to an instance: the administrator's token is enough, no service token.
        assert (
            "X-Service-Token" not in row["command"] and "SERVICE_TOKEN" not in arq_findings({"arqs": [row]})[0]["fix"]
        )


def test_the_command_quotes_a_valid_endpoint_and_names_both_tokens():
    report = arq_report([arq(2, "Bound", GONE)], [LIVE], now=NOW, endpoint="https://cyborg.example.org:6666/v2/")
    (row,) = report["arqs"]
    assert row["command"].endswith(f" 'https://cyborg.example.org:6666/v2/accelerator_requests?arqs={row['uuid']}'")
    (finding,) = arq_findings(report)
    assert "export USER_TOKEN=$(openstack token issue -f value -c id)" in finding["fix"]
    assert "export SERVICE_TOKEN=" in finding["fix"] and f"then run: {row['command']}." in finding["fix"]
    assert f"openstack server show {GONE} --all-projects" in finding["fix"]


def test_what_could_not_be_read_becomes_a_finding():
    gaps = [{"what": "other projects' ARQs", "reason": "not admin", "needs": "the admin role"}, {"what": 1}, "x"]
    report = arq_report([], [], now=NOW, not_read=gaps)
    assert report["not_read"] == gaps[:1]
    assert arq_findings(report) == [
        {"host": "cyborg", "area": "cyborg", "code": "cyborg_arq_scope_limited", "severity": "warning",
         "message": "could not read other projects' ARQs: not admin",
         "fix": "run the report with credentials that hold the admin role"}
    ]  # fmt: skip


def test_unknown_instances_call_nothing_orphaned_and_say_so():
    report = arq_report([arq(1, "Bound", GONE)], None, now=NOW)
    assert report["arqs"][0]["classification"] == "ok" and report["warnings"]


def test_hostile_answers_never_reach_a_command():
    evil = dict(arq(1, "Bound", GONE), uuid="x; rm -rf /", state="B" * 1000, created_at=["not", "a", "time"])
    (row,) = arq_report([evil, "junk", None], [], now=NOW)["arqs"]
    assert row["command"] is None and row["age_seconds"] is None
    assert row["state"] == "(a value of 1000 characters, more than 255)"
    assert row["invalid"] == ['its uuid "x; rm -rf /" is not a UUID']
    planted = dict(arq(2, "Bound"), instance_uuid="$(touch /tmp/x)")
    (row,) = arq_report([planted], [LIVE], now=NOW)["arqs"]
    assert (row["classification"], row["command"]) == ("orphaned", None)
    (finding,) = arq_findings({"arqs": [row]})
    assert finding["fix"].startswith(
        "no command is given because Cyborg's answer is not well formed (its instance_uuid \"$(touch"
    )


@pytest.mark.parametrize(("value", "seconds"), [(90, 90), ("90", 90), ("15m", 900), ("2h", 7200), ("1w", 604800)])
def test_durations(value, seconds):
    assert parse_duration(value) == seconds


@pytest.mark.parametrize("value", ["soon", "-1h", "99999999999d", True, None, "1y"])
def test_bad_durations_name_the_option(value):
    with pytest.raises(ArqReportError, match="stale_after"):
        parse_duration(value)


RP = "33333333-3333-4333-8333-333333333333"
PROFILES = [{"name": "good", "groups": [{"resources:PGPU": "1", "trait:CUSTOM_GPU_A100": "required"}]},
            {"name": "typo", "groups": [{"resources:PGPU": "1", "trait:CUSTOM_NVIDIA_A100": "required"}]}]  # fmt: skip
DEVICES = [{"uuid": "d1", "status": "enabled"}]
DEPLOYABLES = [{"uuid": "x", "name": "h1_gpu0", "rp_uuid": RP,
                "attributes_list": json.dumps([{"rc": "PGPU"}, {"trait0": "CUSTOM_GPU_A100"}])}]  # fmt: skip
FLEET = {"resource_providers": [{"uuid": RP, "name": "h1_gpu0", "inventories": {"PGPU": {"total": 1}},
                                 "traits": ["OWNER_CYBORG", "CUSTOM_GPU_A100"]}]}  # fmt: skip


@pytest.mark.parametrize(
    ("profile", "devices", "deployables", "fleet", "broken", "words"),
    [
        ("good", DEVICES, DEPLOYABLES, FLEET, None, None),
        ("typo", DEVICES, DEPLOYABLES, FLEET, "profile", "did you mean CUSTOM_GPU_A100"),
        ("nope", DEVICES, DEPLOYABLES, FLEET, "profile", "does not exist"),
        ("good", [], DEPLOYABLES, FLEET, "cyborg", "no enabled device"),
        ("good", [{"status": "maintaining"}], DEPLOYABLES, FLEET, "cyborg", "no enabled device"),
        ("good", DEVICES, [dict(DEPLOYABLES[0], rp_uuid=None)], FLEET, "cyborg", "no deployable"),
        ("good", DEVICES, DEPLOYABLES, {"resource_providers": []}, "placement", "is not in Placement"),
        ("good", DEVICES, DEPLOYABLES,
         {"resource_providers": [dict(FLEET["resource_providers"][0], traits=["CUSTOM_GPU_A100"])]},
         "placement", "lacks OWNER_CYBORG"),
    ],
)  # fmt: skip
def test_the_chain_names_the_first_broken_link(profile, devices, deployables, fleet, broken, words):
    walked = walk_chain(profile, PROFILES, devices, deployables, fleet)
    assert walked["broken"] == broken
    if words:
        assert words in walked["message"] and walked["fix"]


def test_chain_findings_only_for_device_profile_flavors_that_break():
    flavors = [{"name": "a", "extra_specs": {"accel:device_profile": "typo"}}, {"name": "b", "extra_specs": {}},
               {"name": "c", "extra_specs": {"accel:device_profile": "good"}}]  # fmt: skip
    cyborg = {"device_profiles": PROFILES, "devices": DEVICES, "deployables": DEPLOYABLES}
    (finding,) = chain_findings(flavors, cyborg, FLEET)
    assert (finding["flavor"], finding["broken"], finding["kind"]) == ("a", "profile", "device_profile_chain")
