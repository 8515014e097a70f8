"""playbooks/audit.yml reads Cyborg's ARQs when asked and reports the bad ones under area cyborg.

Against the real Cyborg 17 (session fixture) and a real Placement: a device on t4-a is seeded with
Cyborg's own objects, ARQs are created through the API as Nova creates them, one bound (Nova's PATCH with a
service token) to an instance that still exists, one to an instance that is gone, one without a project.
The audit's report must hold exactly cyborg_arq_info's findings for them (the module's classification,
joined through the role), and Cyborg must hold the same ARQs afterwards.
"""

from __future__ import annotations

import json
import os
import time
import uuid

import pytest

from tests.support import audit_example
from tests.support.ansible_runner import run_module, run_playbook

pytestmark = [pytest.mark.placement, pytest.mark.xdist_group("cyborg")]

PROFILE = "accel-audit-t4"
GROUPS = [{"resources:CUSTOM_NVIDIA_T4": "1"}]


def _arq(cyborg, project: bool = True) -> str:
    kwargs = {} if project else {"project": None}
    status, body = cyborg.request("POST", "/v2/accelerator_requests", {"device_profile_name": PROFILE}, **kwargs)
    assert status == 201, body
    return body["arqs"][0]["uuid"]


def _bind(cyborg, arq: str, rp_uuid: str, instance: str) -> None:
    patch = {arq: [{"path": "/hostname", "op": "add", "value": "t4-a"},
                   {"path": "/device_rp_uuid", "op": "add", "value": rp_uuid},
                   {"path": "/instance_uuid", "op": "add", "value": instance}]}  # fmt: skip
    status, body = cyborg.request("PATCH", "/v2/accelerator_requests", patch, service=True)
    assert status == 202, body
    for _try in range(100):
        _status, found = cyborg.request("GET", f"/v2/accelerator_requests/{arq}")
        if found["state"] == "Bound":
            return
        time.sleep(0.1)
    raise AssertionError(f"ARQ {arq} stayed {found['state']}")


@pytest.fixture()
def arqs(cyborg):
    created = run_module("cyborg_device_profile", {"cloud": cyborg.cloud, "name": PROFILE, "groups": GROUPS})
    assert created.get("failed") is not True, created.get("msg")
    rp_uuid = str(uuid.uuid4())
    device = {"hostname": "t4-a", "vendor": "10de", "model": "T4", "address": "0000:b0:00.0", "handles": 2}
    cyborg.seed(dict(device, rp_uuid=rp_uuid, name="t4-a_0000:B0:00.0", attributes={"rc": "CUSTOM_NVIDIA_T4"}))
    live, gone = str(uuid.uuid4()), str(uuid.uuid4())
    roles = {"live": _arq(cyborg), "orphaned": _arq(cyborg), "no_project": _arq(cyborg, project=False)}
    _bind(cyborg, roles["live"], rp_uuid, live)
    _bind(cyborg, roles["orphaned"], rp_uuid, gone)
    cyborg.set_servers([live])
    yield roles
    cyborg.set_servers([])
    for arq in roles.values():
        status, _body = cyborg.request("DELETE", f"/v2/accelerator_requests?arqs={arq}", service=True)
        assert status == 204, (arq, status)
    run_module("cyborg_device_profile", {"cloud": cyborg.cloud, "name": PROFILE, "state": "absent"})


def test_audit_reports_the_arqs_cyborg_arq_info_classifies(cyborg, placement, arqs, tmp_path):
    dest = str(tmp_path / "example")
    audit_example.healthy(dest)
    _status, before = cyborg.request("GET", "/v2/accelerator_requests")
    extra = {
        "accel_placement_auth": placement.auth,
        "accel_audit_flavors": [],
        "accel_audit_fail_on": "never",
        "accel_audit_cyborg": True,
        "accel_audit_cyborg_auth": {"cloud": cyborg.cloud},
    }
    report = run_playbook("playbooks/audit.yml", "inventories/audit-example", extra, ACCEL_AUDIT_EXAMPLE_DIR=dest)
    assert report["rc"] == 0, report["stderr"] + report["stdout"]
    with open(os.path.join(dest, "accel-audit.json")) as handle:
        findings = json.load(handle)["findings"]
    ours = [f for f in findings if any(arq in f["message"] for arq in arqs.values())]
    assert {(f["area"], f["code"], f["host"], f["severity"]) for f in ours} == {
        ("cyborg", "cyborg_arq_orphaned", "t4-a", "error"),
        ("cyborg", "cyborg_arq_no_project", "cyborg", "warning"),
    }
    assert not any(arqs["live"] in f["message"] for f in ours)
    # The role joins exactly what the module reports, every ARQ included (other tests' ARQs too).
    module = run_module("cyborg_arq_info", {"cloud": cyborg.cloud})
    assert [f for f in findings if f["area"] == "cyborg"] == module["findings"]
    _status, after = cyborg.request("GET", "/v2/accelerator_requests")
    assert after == before
