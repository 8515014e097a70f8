"""cyborg_device_profile at the request level.

These tests run the real module against a small local HTTP server that records every request and
answers as Cyborg's v2 device profile API does, so they pin the requests the module sends (paths,
bodies, microversion), not Cyborg's behaviour; the module against the real Cyborg 17 is in
test_cyborg_arqs.py (see docs/cyborg.md).
"""

from __future__ import annotations

import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
import yaml

from tests.support.ansible_runner import run_module, run_playbook, task_results

pytestmark = pytest.mark.xdist_group("cyborg")


class CyborgShaped(BaseHTTPRequestHandler):
    profiles: dict[str, dict] = {}
    requests: list[tuple[str, str, object, str | None]] = []

    def log_message(self, *args):  # quiet
        pass

    def _reply(self, status: int, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self, body=None):
        self.requests.append((self.command, self.path, body, self.headers.get("OpenStack-API-Version")))

    def do_GET(self):  # noqa: N802 - http.server's naming
        self._record()
        url = urlparse(self.path)
        if url.path.rstrip("/") in ("", "/v2"):
            base = f"http://{self.headers['Host']}/v2"
            return self._reply(200, {"versions": [{"id": "v2.0", "status": "CURRENT", "min_version": "2.0",
                                                   "max_version": "2.2",
                                                   "links": [{"rel": "self", "href": base}]}]})  # fmt: skip
        if url.path == "/v2/device_profiles":
            names = parse_qs(url.query).get("name", [""])[0].split(",")
            found = [p for p in self.profiles.values() if p["name"] in names]
            return self._reply(200, {"device_profiles": found})
        return self._reply(404, {"error_message": "not found"})

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self._record(body)
        if self.path != "/v2/device_profiles" or not isinstance(body, list) or len(body) != 1:
            return self._reply(400, {"error_message": "Only one device profile allowed per POST request for now."})
        profile = dict(body[0], uuid=str(uuid.uuid4()))
        profile.setdefault("description", None)
        self.profiles[profile["uuid"]] = profile
        return self._reply(201, profile)

    def do_DELETE(self):  # noqa: N802
        self._record()
        profile_uuid = self.path.rsplit("/", 1)[-1]
        if self.profiles.pop(profile_uuid, None) is None:
            return self._reply(404, {"error_message": "not found"})
        return self._reply(204)


@pytest.fixture
def cyborg():
    CyborgShaped.profiles, CyborgShaped.requests = {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), CyborgShaped)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, {"auth_type": "admin_token", "auth": {"endpoint": f"http://127.0.0.1:{server.server_port}/v2",
                                                        "token": "admin"}}  # fmt: skip
    server.shutdown()


def writes(requests):
    return [(m, p, b) for m, p, b, _unused in requests if m in ("POST", "DELETE", "PUT", "PATCH")]


FLEET = {
    "resource_providers": [
        {"uuid": "u1", "name": "gpu-1_0000:41:00.0", "parent_provider_uuid": "n1",
         "inventories": {"PGPU": {"total": 1, "reserved": 0, "min_unit": 1, "max_unit": 1, "step_size": 1,
                                  "allocation_ratio": 1.0}},
         "usages": {"PGPU": 0}, "traits": ["CUSTOM_NVIDIA_T4", "OWNER_CYBORG"], "aggregates": []},
    ]
}  # fmt: skip
GROUPS = [{"resources:PGPU": "1", "trait:CUSTOM_NVIDIA_T4": "required"}]


def test_profile_create_noop_replace_delete_requests(cyborg):
    _unused, auth = cyborg
    args = dict(auth, name="t4-passthrough", groups=GROUPS, fleet=FLEET)
    check = run_module("cyborg_device_profile", args, check=True, diff=True)
    assert check["changed"] and check["actions"] == ["create"] and writes(CyborgShaped.requests) == []

    created = run_module("cyborg_device_profile", args)
    assert created["changed"] is True
    assert writes(CyborgShaped.requests) == [
        ("POST", "/v2/device_profiles", [{"name": "t4-passthrough", "groups": GROUPS}])
    ]
    assert all(version == "accelerator 2.0" for m, p, b, version in CyborgShaped.requests if p.startswith("/v2/dev"))

    CyborgShaped.requests.clear()
    again = run_module("cyborg_device_profile", args)
    assert again["changed"] is False and writes(CyborgShaped.requests) == []

    replaced = run_module("cyborg_device_profile", dict(args, groups=[{"resources:PGPU": "1"}]), diff=True)
    assert replaced["actions"] == ["delete", "create"] and replaced["warnings"]
    assert [m for m, _unused, _unused in writes(CyborgShaped.requests)] == ["DELETE", "POST"]
    assert replaced["diff"]["before"]["groups"] == GROUPS

    CyborgShaped.requests.clear()
    deleted = run_module("cyborg_device_profile", dict(auth, name="t4-passthrough", state="absent"))
    assert deleted["changed"] is True and CyborgShaped.profiles == {}
    assert [m for m, _unused, _unused in writes(CyborgShaped.requests)] == ["DELETE"]
    gone = run_module("cyborg_device_profile", dict(auth, name="t4-passthrough", state="absent"))
    assert gone["changed"] is False


def test_profile_asking_a_trait_the_fleet_names_differently_is_refused_with_a_suggestion(cyborg):
    _unused, auth = cyborg
    wrong = [{"resources:PGPU": "1", "trait:CUSTOM_GPU_T4": "required"}]
    result = run_module("cyborg_device_profile", dict(auth, name="t4", groups=wrong, fleet=FLEET))
    assert result["failed"]
    assert "no provider of the fleet has trait CUSTOM_GPU_T4; did you mean CUSTOM_NVIDIA_T4?" in result["msg"]
    assert writes(CyborgShaped.requests) == []


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ([{"resource:PGPU": "1"}], "must start with resources:, trait: or accel:"),
        ([{"resources:PGPU": "1", "trait:HW_GPU_API_VULKAN": "required"}], "must be a custom trait"),
        ([{"resources:PGPU": "1", "trait:CUSTOM_X": "yes"}], "'required' or 'forbidden'"),
        ([{"resources:VCPU": "1"}], "is not one Cyborg accepts"),
        ([{"resources:PGPU": "one"}], "is not an integer"),
    ],
)
def test_groups_cyborg_would_refuse_fail_before_any_request(cyborg, groups, message):
    _unused, auth = cyborg
    result = run_module("cyborg_device_profile", dict(auth, name="bad", groups=groups))
    assert result["failed"] and message in result["msg"], result
    assert CyborgShaped.requests == []


def test_openstack_action_group_carries_the_connection_to_cyborg_device_profile(cyborg, tmp_path):
    """module_defaults for group/accel.openstack.openstack reach the module through meta/runtime.yml."""
    _unused, auth = cyborg
    playbook = tmp_path / "grouped.yml"
    playbook.write_text(
        yaml.safe_dump(
            [
                {
                    "hosts": "localhost",
                    "connection": "local",
                    "gather_facts": False,
                    "module_defaults": {"group/accel.openstack.openstack": auth},
                    "tasks": [
                        {
                            "name": "A profile with no connection options of its own",
                            "accel.openstack.cyborg_device_profile": {"name": "grouped", "groups": GROUPS},
                        }
                    ],
                }
            ]
        )
    )
    report = run_playbook(str(playbook), extra_vars={"ansible_python_interpreter": sys.executable})
    assert report["rc"] == 0, report["stderr"] + report["stdout"]
    (result,) = task_results(report, "A profile with no connection options of its own").values()
    assert result["changed"] is True
    assert writes(CyborgShaped.requests) == [("POST", "/v2/device_profiles", [{"name": "grouped", "groups": GROUPS}])]
