"""Hostile input for the Ironic and Cyborg side: policy values that would turn into Ironic's template
syntax or regular expressions, wrong types at the filters, and API answers shaped to break a report."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from http.server import ThreadingHTTPServer

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter import baremetal, cyborg
from ansible_collections.accel.openstack.plugins.module_utils._cyborg.arqs import (
    arq_report,
    delete_command,
    usable_endpoint,
)
from ansible_collections.accel.openstack.plugins.module_utils._cyborg.client import CyborgClient, CyborgError
from ansible_collections.accel.openstack.plugins.module_utils._ironic.client import IronicClient, IronicError
from ansible_collections.accel.openstack.plugins.module_utils._ironic.inspection_rules import declared_rule, prune_rules
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError, parse_policy
from tests.support.ansible_runner import run_module
from tests.support.json_handler import JsonHandler

ENTRY = {"name": "hgx", "vendor_id": "10de", "product_id": "2330", "mode": "baremetal", "count": 8,
         "resource_class": "GPU_H100X8"}  # fmt: skip


@pytest.mark.parametrize(
    ("key", "value"),
    [
        # Ironic formats a set-attribute value: this would copy the BMC password into the node's class.
        ("resource_class", "{node.driver_info[ipmi_password]}"),
        ("resource_class", "x" * 81),
        ("resource_class", "a\nb"),
        ("fallback_resource_class", "{node.driver_info[ipmi_password]}"),
        ("fallback_resource_class", ["GPU_DEGRADED"]),
        ("model", "H100{inventory}"),
        ("model", "(.*)"),
        ("vendor_id", "10de')|(.*"),
        ("product_id", ".*"),
        ("count", 10**9),
        ("count", "8"),
        ("traits", ["CUSTOM_{node.uuid}"]),
        ("interconnect", {"nvswitch": True}),
    ],
)
def test_policy_values_never_reach_ironic_as_templates_or_patterns(key, value):
    with pytest.raises(PolicyError):
        parse_policy([dict(ENTRY, **{key: value})])


@pytest.mark.parametrize(
    ("function", "args", "fragment"),
    [
        (baremetal.baremetal_inspection_rules, ("policy",), "_input is a string"),
        (baremetal.baremetal_inspection_rules, ([ENTRY], "high"), "priority is a string"),
        (baremetal.baremetal_inspection_rules, ([ENTRY], 10000), "give 0 to 9998"),
        (baremetal.baremetal_inspection_rules, ([ENTRY], 9999), "priority is 9999; give 0 to 9998"),
        (baremetal.baremetal_inspection_rules, ([ENTRY], -1), "priority is -1"),
        (baremetal.baremetal_node_classes, ({"hgx": ENTRY},), "_input is a mapping"),
        (baremetal.baremetal_node_classes, ([dict(ENTRY, count=0)],), "count 0"),
        (cyborg.device_profile_chain, ("flavors", {}, {}), "_input is a string"),
        (cyborg.device_profile_chain, ([], [], {}), "cyborg is a list"),
        (cyborg.device_profile_chain, ([], {}, "fleet"), "fleet is a string"),
        (cyborg.cyborg_arq_findings, (["report"],), "_input is a list"),
    ],
)
def test_filters_refuse_wrong_types_naming_the_argument(function, args, fragment):
    with pytest.raises(AnsibleFilterError) as caught:
        function(*args)
    assert fragment in str(caught.value) and "Traceback" not in str(caught.value)


class Answer:
    def __init__(self, status: int, body: bytes):
        self.status_code, self.content, self.text, self.reason = status, body, body.decode(errors="replace"), "x"

    def json(self):
        import json

        return json.loads(self.content)


class Pages:
    """An Ironic that answers every listing with ``body`` and says another page follows (it never ends)."""

    def __init__(self, body: dict):
        import json

        self.answer = Answer(200, json.dumps(dict(body, next="http://ironic/v1/inspection_rules?marker=x")).encode())

    def get(self, *_args, **_kwargs):
        return self.answer


class Service:
    """An API that answers with a fixed (hostile) body: what the client makes of the answer is the subject."""

    def __init__(self, status: int, body: bytes):
        self.answer = Answer(status, body)

    def get(self, *_args, **_kwargs):
        return self.answer


@pytest.mark.parametrize(
    "body",
    [b"<html>proxy error</html>", b'{"inspection_rules": "all"}', b'{"inspection_rules": [1, 2]}', b"[]", b"null"],
)
def test_ironic_answers_of_the_wrong_shape_are_errors_not_tracebacks(body):
    client = IronicClient(Service(200, body))
    try:
        rules = client.list_rules()
    except IronicError as exc:
        assert "inspection_rules" in str(exc)
    else:
        assert rules == []


def test_a_listing_that_claims_rules_deletes_only_rules_whose_uuid_is_their_name():
    made = declared_rule("accel-baremetal-hgx", [], [{"op": "add-trait", "args": {"name": "CUSTOM_X"}}])
    listing = [
        made,
        # descriptions that name a collection rule, on rules whose uuid is not derived from that name
        {"uuid": "3f8e1b1c-0000-4000-8000-000000000000", "description": "accel-baremetal-hgx: by hand"},
        {"uuid": made["uuid"].upper(), "description": made["description"]},
        {"uuid": made["uuid"], "description": {"text": "accel-baremetal-hgx"}},
        {"uuid": ["x"], "description": "accel-baremetal-hgx"},
        "accel-baremetal-hgx",
    ]
    client = IronicClient(Pages({"inspection_rules": listing}))
    result = prune_rules(client, "accel-baremetal-", [], check_mode=True)
    assert result["removed"] == [{"name": "accel-baremetal-hgx", "uuid": made["uuid"]}] and result["kept"] == []
    # A listing that says another page follows and sends the same page again is an error, not a loop.
    with pytest.raises(IronicError, match="same page again"):
        prune_rules(IronicClient(Pages({"inspection_rules": [made]})), "accel-baremetal-", [], check_mode=True)


@pytest.mark.parametrize("body", [b"<html>", b'{"arqs": {"a": 1}}', b'{"arqs": null}', b"[1]"])
def test_cyborg_answers_of_the_wrong_shape_are_errors_not_tracebacks(body):
    with pytest.raises(CyborgError):
        CyborgClient(Service(200, body)).arqs()


def test_an_arq_answer_cannot_smuggle_a_command_or_grow_the_report():
    evil = {"uuid": "$(reboot)", "state": "Bound", "instance_uuid": "gone;" * 500, "project_id": {"x": 1},
            "created_at": "9" * 10000, "device_profile_group_id": "0; drop"}  # fmt: skip
    (row,) = arq_report([evil] * 1, [], "1h")["arqs"]
    assert row["classification"] == "orphaned" and row["command"] is None
    assert len(row["instance_uuid"]) <= 255 and row["created_at"] is None and row["device_profile_group_id"] is None


# -- a lying Cyborg behind a Keystone-shaped token service -------------------------------------------------
EVIL = "$(touch {marker})"
GONE = "7d3c1a2b-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
ARQ = "6c7c1f7e-8d7e-4b4b-9a3c-2f2d6c1e5a10"
PASSWORD = "lying-service-password-7"


class Lying(JsonHandler):
    """Issues a token as Keystone does (with a catalog that points at itself), then answers
    ``GET /v2/accelerator_requests`` with ``arqs_answer``: (status, body), where ``{token}`` and
    ``{password}`` in the body become the token it issued and the password it was sent."""

    arqs_answer: tuple[int, str] = (200, '{"arqs": []}')
    issued: dict[str, str] = {}

    def do_POST(self):  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.issued.update(
            token="tok-" + "9f8e7d6c5b4a" * 3, password=body["auth"]["identity"]["password"]["user"]["password"]
        )
        base = f"http://{self.headers['Host']}"
        services = (("accelerator", base + "/v2"), ("compute", base + "/v2.1"), ("identity", base + "/v3"))
        where = {"interface": "public", "region": "RegionOne", "region_id": "RegionOne"}
        catalog = [
            {"type": kind, "name": kind, "id": kind, "endpoints": [dict(where, id=kind, url=url)]}
            for kind, url in services
        ]
        domain = {"id": "default", "name": "Default"}
        token = {"token": {"methods": ["password"], "user": {"id": "u", "name": "u", "domain": domain},
                           "project": {"id": "p", "name": "p", "domain": domain},
                           "roles": [{"id": "r", "name": "admin"}], "catalog": catalog,
                           "issued_at": "2026-01-01T00:00:00Z", "expires_at": "2099-01-01T00:00:00Z"}}  # fmt: skip
        self._reply(201, json.dumps(token).encode(), {"X-Subject-Token": self.issued["token"]})

    def do_GET(self):  # noqa: N802
        path = self.path.split("?")[0].rstrip("/")
        if path in ("/v2/accelerator_requests", "/v2/device_profiles"):
            status, text = self.arqs_answer
            text = text.replace("{token}", self.issued.get("token", "")).replace(
                "{password}", self.issued.get("password", "")
            )
            return self._reply(status, text.encode())
        if path in ("/v2.1/servers", "/v2.1/servers/detail"):
            return self._reply(200, b'{"servers": []}')
        if path in ("", "/v2", "/v2.1"):
            return self._reply(300 if not path else 200, b'{"versions": []}')
        return self._reply(404, b"{}")


@pytest.fixture
def lying():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Lying)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Lying.issued = {}
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def _cloud(url: str) -> dict:
    return {"auth_type": "v3password", "auth": {"auth_url": url + "/v3", "username": "u", "password": PASSWORD,
            "project_id": "p", "user_domain_name": "Default"}}  # fmt: skip


def test_a_lying_arq_answer_never_reaches_a_command(lying, tmp_path):
    marker = tmp_path / "x"
    evil = EVIL.format(marker=marker)
    answers = [
        {"uuid": evil, "state": "Bound", "instance_uuid": GONE, "project_id": "p", "hostname": "h"},
        {"uuid": ARQ, "state": "Bound", "instance_uuid": evil, "project_id": "p", "hostname": "h"},
        {"uuid": ARQ.replace("6c", "7d"), "state": "Unbound", "project_id": "p", "created_at": "2026-01-01T00:00:00"},
        {"uuid": ARQ.replace("6c", "8e"), "state": "Bound", "instance_uuid": GONE, "project_id": "p", "hostname": "h"},
    ]
    Lying.arqs_answer = (200, json.dumps({"arqs": answers}))
    result = run_module("cyborg_arq_info", {"cloud": _cloud(lying), "instances": []})
    rows = {(r["uuid"], r["state"]): r for r in result["arqs"]}
    evil_uuid, evil_instance = rows[(evil, "Bound")], rows[(ARQ, "Bound")]
    assert evil_uuid["command"] is None and evil_uuid["invalid"] == [f"its uuid {json.dumps(evil)} is not a UUID"]
    assert evil_instance["command"] is None
    assert evil_instance["invalid"] == [f"its instance_uuid {json.dumps(evil)} is not a UUID"]
    assert evil_instance["classification"] == "orphaned"
    commands = [r["command"] for r in result["arqs"] if r.get("command")]
    assert len(commands) == 2 and not any(evil in c or "$(" in c for c in commands)
    for finding in result["findings"]:
        assert evil not in finding["fix"].replace(json.dumps(evil), ""), finding
    # Everything printed as a command runs (against the liar) without ever running what it planted.
    for command in commands:
        env = {"PATH": os.environ["PATH"], "USER_TOKEN": "t", "SERVICE_TOKEN": "t"}
        subprocess.run(["bash", "-c", command], env=env, capture_output=True, timeout=30, check=False)
    assert not marker.exists()


@pytest.mark.parametrize("status", [401, 500])
@pytest.mark.parametrize("where", ["options", "clouds.yaml"])
def test_a_refusal_quoting_the_credentials_is_masked(lying, tmp_path, monkeypatch, status, where):
    Lying.arqs_answer = (status, '{"error": "bad token {token} for password {password}"}')
    cloud = _cloud(lying)
    if where == "clouds.yaml":
        config = tmp_path / "clouds.yaml"
        config.write_text(json.dumps({"clouds": {"liar": cloud}}))
        monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(config))
        cloud = "liar"
    for module, args, path in (
        ("cyborg_arq_info", {"instances": []}, "/accelerator_requests"),
        ("cyborg_device_profile", {"name": "gpu", "state": "absent"}, "/device_profiles?name=gpu"),
    ):
        result = run_module(module, dict(args, cloud=cloud))
        assert result["failed"] and f"Cyborg answered {status} to GET {path}" in result["msg"], result
        assert Lying.issued["token"] not in result["msg"] and PASSWORD not in result["msg"]
        assert "bad token ******** for password ********" in result["msg"]


@pytest.mark.parametrize(
    "endpoint",
    ["http://c:6666/v2'; touch /tmp/x; '", "http://c/v2 -o /etc/passwd", "file:///etc/passwd", "http://c/v2?x=1", None],
)
def test_a_hostile_endpoint_is_not_printed_into_a_command(endpoint):
    command = delete_command(ARQ, endpoint)
    assert command.endswith(f'"$CYBORG_ENDPOINT/accelerator_requests?arqs={ARQ}"')
    assert usable_endpoint(endpoint) is None
