"""cyborg_arq_info against the real Cyborg 17 API with ARQs in every state it classifies.

The device profile is made with cyborg_device_profile against the same Cyborg. A device, its deployable
and attach handles are inserted with Cyborg's own objects (as cyborg-agent reports them); ARQs are
created through the API as Nova creates them and bound with Nova's PATCH (service token). A deployable
with one attach handle bound twice gives a real BindFailed; an unbind (Nova's PATCH remove) a real Unbound.
Age is seeded in Cyborg's database (created_at, updated_at), never waited for.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.arqs import arq_findings, arq_report
from tests.support.ansible_runner import run_module
from tests.support.cyborg_server import ADMIN_PROJECT, TENANT_PROJECT

pytestmark = pytest.mark.xdist_group("cyborg")

PROFILE = "accel-test-h100"
GROUPS = [{"resources:PGPU": "1", "trait:CUSTOM_GPU_H100": "required"}]
STALE_AFTER = "1h"
# Two days: older than STALE_AFTER by far, as the ARQs an operator finds after a weekend.
OLD = 48 * 3600


def _create_arq(cyborg, project: str | None = ADMIN_PROJECT, roles: str = "admin,member,reader") -> str:
    status, body = cyborg.request(
        "POST", "/v2/accelerator_requests", {"device_profile_name": PROFILE}, project=project, roles=roles
    )
    assert status == 201, body
    return body["arqs"][0]["uuid"]


def _bind(cyborg, arq: str, host: str, rp_uuid: str, instance: str, expect: int = 202) -> None:
    patch = {arq: [{"path": "/hostname", "op": "add", "value": host},
                   {"path": "/device_rp_uuid", "op": "add", "value": rp_uuid},
                   {"path": "/instance_uuid", "op": "add", "value": instance}]}  # fmt: skip
    status, body = cyborg.request("PATCH", "/v2/accelerator_requests", patch, service=True)
    assert status == expect, body


def _unbind(cyborg, arq: str) -> None:
    patch = {arq: [{"path": f"/{field}", "op": "remove"} for field in ("hostname", "device_rp_uuid", "instance_uuid")]}
    status, body = cyborg.request("PATCH", "/v2/accelerator_requests", patch, service=True)
    assert status == 202, body


def _state(cyborg, arq: str, states: tuple[str, ...]) -> dict:
    for _try in range(100):
        _status, body = cyborg.request("GET", f"/v2/accelerator_requests/{arq}")
        if body["state"] in states:
            return body
        time.sleep(0.1)  # the conductor's bind runs after the API answers
    raise AssertionError(f"ARQ {arq} stayed {body['state']}")


@pytest.fixture(scope="module")
def arqs(cyborg):
    """ARQs in every class; returns {role: uuid} and the live instances."""
    created = run_module("cyborg_device_profile", {"cloud": cyborg.cloud, "name": PROFILE, "groups": GROUPS})
    assert created["changed"] and created["actions"] == ["create"], created
    again = run_module("cyborg_device_profile", {"cloud": cyborg.cloud, "name": PROFILE, "groups": GROUPS})
    assert again["changed"] is False
    rp_busy, rp_free, rp_spare = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    attributes = {"rc": "PGPU", "trait0": "CUSTOM_GPU_H100"}
    gpu = {"vendor": "10de", "model": "H100", "address": "0000:41:00.0", "handles": 1, "attributes": attributes}
    cyborg.seed(
        dict(gpu, hostname="gpu-a", rp_uuid=rp_busy, name="gpu-a_0000:41:00.0"),
        dict(gpu, hostname="gpu-b", rp_uuid=rp_free, name="gpu-b_0000:41:00.0"),
        dict(gpu, hostname="gpu-c", rp_uuid=rp_spare, name="gpu-c_0000:41:00.0", handles=4),
    )
    live, deleted, failed_for = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
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
    # Bound, then unbound by Nova and never deleted: Unbound for two days, and Unbound just now.
    roles["stale_unbound"], roles["fresh_unbound"] = _create_arq(cyborg), _create_arq(cyborg)
    for role, instance in (("stale_unbound", str(uuid.uuid4())), ("fresh_unbound", str(uuid.uuid4()))):
        _bind(cyborg, roles[role], "gpu-c", rp_spare, instance)
        _state(cyborg, roles[role], ("Bound",))
        _unbind(cyborg, roles[role])
        _state(cyborg, roles[role], ("Unbound",))
    for role in ("stale_initial", "bind_failed", "orphaned", "stale_unbound"):
        cyborg.age(roles[role], OLD)
    roles["fresh_initial"] = _create_arq(cyborg)
    roles["no_project"] = _create_arq(cyborg, project=None)
    # The server whose build failed still exists (in ERROR): its BindFailed ARQ is stale, not orphaned.
    yield roles, [live, failed_for]
    # The Cyborg serves the whole session: leave no ARQ of this profile behind for the next test module.
    _status, body = cyborg.request("GET", "/v2/accelerator_requests")
    for arq in body["arqs"]:
        if arq["device_profile_name"] == PROFILE:
            status, _body = cyborg.request("DELETE", f"/v2/accelerator_requests?arqs={arq['uuid']}", service=True)
            assert status == 204, (arq, status)


def _by_uuid(result: dict) -> dict:
    return {row["uuid"]: row for row in result["arqs"]}


def _run_printed(command: str, **tokens: str) -> subprocess.CompletedProcess:
    """Run a command exactly as the report prints it, through a shell, with the tokens a person exports."""
    env = {"PATH": os.environ["PATH"], **tokens}
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_every_state_is_classified_and_nothing_is_deleted(cyborg, arqs):
    roles, live = arqs
    _status, before = cyborg.request("GET", "/v2/accelerator_requests")
    result = run_module("cyborg_arq_info", {"cloud": cyborg.cloud, "instances": live, "stale_after": STALE_AFTER})
    assert result["changed"] is False, result
    rows = _by_uuid(result)
    expected = {"stale_initial": ("stale", "Initial"), "bind_failed": ("stale", "BindFailed"),
                "bound_live": ("ok", "Bound"), "orphaned": ("orphaned", "Bound"),
                "stale_unbound": ("stale", "Unbound"), "fresh_unbound": ("ok", "Unbound"),
                "no_project": ("no_project", "Initial"), "fresh_initial": ("ok", "Initial")}  # fmt: skip
    for role, (classification, state) in expected.items():
        row = rows[roles[role]]
        assert (row["classification"], row["state"]) == (classification, state), (role, row)
        assert row["device_profile_name"] == PROFILE and row["age_seconds"] >= 0
    assert rows[roles["stale_unbound"]]["age_seconds"] >= OLD
    assert rows[roles["stale_unbound"]]["reasons"][0].startswith("Unbound since ")
    orphan = rows[roles["orphaned"]]
    endpoint = cyborg.url + "/v2"
    assert orphan["command"] == (
        'curl -sS --fail-with-body -X DELETE -H "X-Auth-Token: $USER_TOKEN" -H "X-Service-Token: $SERVICE_TOKEN" '
        f"-H 'OpenStack-API-Version: accelerator 2.0' '{endpoint}/accelerator_requests?arqs={roles['orphaned']}'"
    )
    # An unbound ARQ needs no service token.
    assert "X-Service-Token" not in rows[roles["stale_unbound"]]["command"]
    assert (orphan["hostname"], orphan["project_id"]) == ("gpu-b", ADMIN_PROJECT)
    assert "command" not in rows[roles["bound_live"]]
    assert result["summary"] == {"orphaned": 1, "stale": 3, "no_project": 1, "ok": 3}
    assert [r["classification"] for r in result["arqs"]][0] == "orphaned"
    assert result["not_read"] == []
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
    (orphan_finding,) = [f for f in result["findings"] if f["code"] == "cyborg_arq_orphaned"]
    assert orphan["command"] in orphan_finding["fix"] and "SERVICE_TOKEN" in orphan_finding["fix"]


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


def test_a_project_member_is_told_what_it_cannot_see(cyborg, arqs):
    roles, live = arqs
    own = _create_arq(cyborg, project=TENANT_PROJECT, roles="member,reader")
    cyborg.set_servers(live)
    try:
        member = run_module("cyborg_arq_info", {"cloud": cyborg.keystone_cloud("tenant-member")})
        admin = run_module("cyborg_arq_info", {"cloud": cyborg.keystone_cloud("cloud-admin")})
    finally:
        cyborg.set_servers([])
    # Cyborg lists the member only its own project's ARQ; Nova refuses it every project's servers.
    assert [r["uuid"] for r in member["arqs"]] == [own], member
    assert [gap["what"] for gap in member["not_read"]] == ["other projects' ARQs", "every project's servers"]
    assert f"project {TENANT_PROJECT}, roles member, reader" in member["not_read"][0]["reason"]
    assert member["summary"] == {"orphaned": 0, "stale": 0, "no_project": 0, "ok": 1}
    scope = [f for f in member["findings"] if f["code"] == "cyborg_arq_scope_limited"]
    assert [f["message"].split(":")[0] for f in scope] == [
        "could not read other projects' ARQs",
        "could not read every project's servers",
    ]
    assert all("admin role" in f["fix"] and f["severity"] == "warning" for f in scope)
    # The same Cyborg, read by an administrator: every project's ARQs, nothing missed.
    assert admin["not_read"] == [] and {own, roles["orphaned"]} <= set(_by_uuid(admin))
    assert _by_uuid(admin)[roles["orphaned"]]["classification"] == "orphaned"
    # Given the live instances, the member still learns that other projects' ARQs were not read.
    given = run_module("cyborg_arq_info", {"cloud": cyborg.keystone_cloud("tenant-member"), "instances": live})
    assert [gap["what"] for gap in given["not_read"]] == ["other projects' ARQs"]
    status, _body = cyborg.request("DELETE", f"/v2/accelerator_requests?arqs={own}", project=TENANT_PROJECT,
                                   roles="member,reader")  # fmt: skip
    assert status == 204


def test_the_printed_commands_delete_the_orphan_and_the_stale_arq(cyborg, arqs):
    roles, live = arqs
    orphan, unbound = roles["orphaned"], roles["stale_unbound"]
    result = run_module(
        "cyborg_arq_info", {"cloud": cyborg.keystone_cloud("cloud-admin"), "instances": live, "stale_after": "1h"}
    )
    rows = _by_uuid(result)
    commands = {role: rows[roles[role]]["command"] for role in ("orphaned", "stale_unbound")}
    admin, nova = cyborg.token("cloud-admin"), cyborg.token("nova")
    # An administrator's token alone is refused, as the operator saw: Cyborg wants a service token.
    refused = _run_printed(commands["orphaned"], USER_TOKEN=admin, SERVICE_TOKEN=admin)
    assert refused.returncode == 22 and "is bound to instance" in refused.stdout, refused
    done = _run_printed(commands["orphaned"], USER_TOKEN=admin, SERVICE_TOKEN=nova)
    assert done.returncode == 0, done
    done = _run_printed(commands["stale_unbound"], USER_TOKEN=admin)
    assert done.returncode == 0, done
    for arq in (orphan, unbound):
        status, _body = cyborg.request("GET", f"/v2/accelerator_requests/{arq}")
        assert status == 404
    after = run_module("cyborg_arq_info", {"cloud": cyborg.cloud, "instances": live, "stale_after": "1h"})
    assert {orphan, unbound}.isdisjoint(_by_uuid(after)) and after["summary"]["orphaned"] == 0
    # The orphan's device is free again: a new server binds to gpu-b's only attach handle.
    arq = _create_arq(cyborg)
    rp_b = rows[orphan]["device_rp_uuid"]
    _bind(cyborg, arq, "gpu-b", rp_b, str(uuid.uuid4()))
    assert _state(cyborg, arq, ("Bound", "BindFailed"))["state"] == "Bound"


def test_bad_stale_after_fails_naming_it(cyborg):
    result = run_module("cyborg_arq_info", {"cloud": cyborg.cloud, "instances": [], "stale_after": "soon"})
    assert result["failed"] and "stale_after 'soon'" in result["msg"]
