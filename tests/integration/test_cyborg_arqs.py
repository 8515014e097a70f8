"""cyborg_arq_info against the real Cyborg 17 API with ARQs in every state it classifies.

The device profile is made with cyborg_device_profile against the same Cyborg. A device, its deployable
and attach handles are inserted with Cyborg's own objects (as cyborg-agent reports them); ARQs are
created through the API as Nova creates them and bound with Nova's PATCH (service token). A deployable
with one attach handle bound twice gives a real BindFailed.
"""

from __future__ import annotations

import time
import uuid

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.arqs import arq_findings, arq_report
from tests.support.ansible_runner import run_module

PROFILE = "accel-test-h100"
GROUPS = [{"resources:PGPU": "1", "trait:CUSTOM_GPU_H100": "required"}]
STALE_AFTER = 12


def _create_arq(cyborg, project=True) -> str:
    kwargs = {} if project else {"project": None}
    status, body = cyborg.request("POST", "/v2/accelerator_requests", {"device_profile_name": PROFILE}, **kwargs)
    assert status == 201, body
    return body["arqs"][0]["uuid"]


def _bind(cyborg, arq: str, host: str, rp_uuid: str, instance: str, expect: int = 202) -> None:
    patch = {arq: [{"path": "/hostname", "op": "add", "value": host},
                   {"path": "/device_rp_uuid", "op": "add", "value": rp_uuid},
                   {"path": "/instance_uuid", "op": "add", "value": instance}]}  # fmt: skip
    status, body = cyborg.request("PATCH", "/v2/accelerator_requests", patch, service=True)
    assert status == expect, body


def _state(cyborg, arq: str, states: tuple[str, ...]) -> dict:
    for _try in range(100):
        _status, body = cyborg.request("GET", f"/v2/accelerator_requests/{arq}")
        if body["state"] in states:
            return body
        time.sleep(0.1)
    raise AssertionError(f"ARQ {arq} stayed {body['state']}")


@pytest.fixture(scope="module")
def arqs(cyborg):
    """ARQs in every class; returns {role: uuid} and the live instances."""
    created = run_module("cyborg_device_profile", {"cloud": cyborg.cloud, "name": PROFILE, "groups": GROUPS})
    assert created["changed"] and created["actions"] == ["create"], created
    again = run_module("cyborg_device_profile", {"cloud": cyborg.cloud, "name": PROFILE, "groups": GROUPS})
    assert again["changed"] is False
    rp_busy, rp_free = str(uuid.uuid4()), str(uuid.uuid4())
    attributes = {"rc": "PGPU", "trait0": "CUSTOM_GPU_H100"}
    gpu = {"vendor": "10de", "model": "H100", "address": "0000:41:00.0", "handles": 1, "attributes": attributes}
    cyborg.seed(
        dict(gpu, hostname="gpu-a", rp_uuid=rp_busy, name="gpu-a_0000:41:00.0"),
        dict(gpu, hostname="gpu-b", rp_uuid=rp_free, name="gpu-b_0000:41:00.0"),
    )
    live, deleted, failed_for = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    started = time.monotonic()
    roles = {"stale_initial": _create_arq(cyborg), "bind_failed": _create_arq(cyborg)}
    roles["bound_live"] = _create_arq(cyborg)
    _bind(cyborg, roles["bound_live"], "gpu-a", rp_busy, live)
    _state(cyborg, roles["bound_live"], ("Bound",))
    # gpu-a's only attach handle is taken: the conductor fails this bind (the API answers 404 for the
    # missing handle) and leaves the ARQ BindFailed.
    _bind(cyborg, roles["bind_failed"], "gpu-a", rp_busy, failed_for, expect=404)
    _state(cyborg, roles["bind_failed"], ("BindFailed",))
    roles["orphaned"] = _create_arq(cyborg)
    _bind(cyborg, roles["orphaned"], "gpu-b", rp_free, deleted)
    _state(cyborg, roles["orphaned"], ("Bound",))
    time.sleep(max(0.0, STALE_AFTER + 2 - (time.monotonic() - started)))
    roles["fresh_initial"] = _create_arq(cyborg)
    roles["no_project"] = _create_arq(cyborg, project=False)
    # The server whose build failed still exists (in ERROR): its BindFailed ARQ is stale, not orphaned.
    return roles, [live, failed_for]


def _by_uuid(result: dict) -> dict:
    return {row["uuid"]: row for row in result["arqs"]}


def test_every_state_is_classified_and_nothing_is_deleted(cyborg, arqs):
    roles, live = arqs
    _status, before = cyborg.request("GET", "/v2/accelerator_requests")
    result = run_module("cyborg_arq_info", {"cloud": cyborg.cloud, "instances": live, "stale_after": f"{STALE_AFTER}s"})
    assert result["changed"] is False, result
    rows = _by_uuid(result)
    expected = {"stale_initial": ("stale", "Initial"), "bind_failed": ("stale", "BindFailed"),
                "bound_live": ("ok", "Bound"), "orphaned": ("orphaned", "Bound"),
                "no_project": ("no_project", "Initial"), "fresh_initial": ("ok", "Initial")}  # fmt: skip
    for role, (classification, state) in expected.items():
        row = rows[roles[role]]
        assert (row["classification"], row["state"]) == (classification, state), (role, row)
        assert row["device_profile_name"] == PROFILE and row["age_seconds"] >= 0
    orphan = rows[roles["orphaned"]]
    assert orphan["command"] == f"openstack accelerator arq delete {roles['orphaned']}"
    assert (orphan["hostname"], orphan["project_id"]) == ("gpu-b", cyborg_project(cyborg))
    assert "command" not in rows[roles["bound_live"]]
    assert result["summary"] == {"orphaned": 1, "stale": 2, "no_project": 1, "ok": 2}
    assert [r["classification"] for r in result["arqs"]][0] == "orphaned"
    _status, after = cyborg.request("GET", "/v2/accelerator_requests")
    assert after == before

    codes = {(f["code"], f["host"], f["severity"]) for f in result["findings"]}
    assert codes == {
        ("cyborg_arq_orphaned", "gpu-b", "error"),
        ("cyborg_arq_stale", "cyborg", "warning"),
        ("cyborg_arq_stale", "gpu-a", "warning"),
        ("cyborg_arq_no_project", "cyborg", "warning"),
    }
    assert result["findings"] == arq_findings(result)
    assert all(f["area"] == "cyborg" and f["fix"] and f["message"] for f in result["findings"])


def test_servers_are_read_through_the_cloud_when_no_list_is_given(cyborg, arqs):
    roles, live = arqs
    cyborg.set_servers(live)
    result = run_module("cyborg_arq_info", {"cloud": cyborg.cloud, "with_inventory": True})
    rows = _by_uuid(result)
    assert rows[roles["orphaned"]]["classification"] == "orphaned"
    assert rows[roles["bound_live"]]["classification"] == "ok"
    assert {d["name"] for d in result["deployables"]} >= {"gpu-a_0000:41:00.0", "gpu-b_0000:41:00.0"}
    assert PROFILE in {p["name"] for p in result["device_profiles"]}
    cyborg.set_servers([])
    nobody = run_module("cyborg_arq_info", {"cloud": cyborg.cloud})
    assert nobody["summary"]["orphaned"] == sum(1 for r in nobody["arqs"] if r["instance_uuid"]) > 0
    # The module hands the warning to AnsibleModule.warn, which in-process test runs may route to the
    # controller's display; the report it warns from is checked directly on Cyborg's own answer.
    _status, body = cyborg.request("GET", "/v2/accelerator_requests")
    warnings = arq_report(body["arqs"], [])["warnings"]
    assert any("no instance was found at all" in w for w in warnings), warnings


def test_the_orphan_command_works_for_nova_s_service_user_only(cyborg, arqs):
    roles, live = arqs
    orphan = roles["orphaned"]
    status, _body = cyborg.request("DELETE", f"/v2/accelerator_requests?arqs={orphan}")
    assert status == 403
    status, _body = cyborg.request("DELETE", f"/v2/accelerator_requests?arqs={orphan}", service=True)
    assert status == 204
    result = run_module("cyborg_arq_info", {"cloud": cyborg.cloud, "instances": live, "stale_after": "1w"})
    assert orphan not in _by_uuid(result) and result["summary"]["orphaned"] == 0


def test_bad_stale_after_fails_naming_it(cyborg):
    result = run_module("cyborg_arq_info", {"cloud": cyborg.cloud, "instances": [], "stale_after": "soon"})
    assert result["failed"] and "stale_after 'soon'" in result["msg"]


def cyborg_project(cyborg) -> str:
    from tests.support.cyborg_server import ADMIN_PROJECT

    return ADMIN_PROJECT
