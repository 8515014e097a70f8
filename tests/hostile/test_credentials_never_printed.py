"""No credential the collection holds is ever printed, whatever a service answers.

A liar stands in for Keystone, Placement, Cyborg, Ironic and nova-api: it issues a token, then refuses every
request (401 or 500) with a body that quotes the token it received, the JSON body it received and the password
Keystone was sent, in each place the clients read an error from (Placement's ``errors``, Ironic's
``error_message``, nova's fault, the raw text), JSON-escaped where the secret holds characters JSON escapes.
Credentials come inline, from clouds.yaml (``OS_CLIENT_CONFIG_FILE``) or from ``OS_*`` variables; each module
that talks to OpenStack runs against it, in this process and through ``ansible-playbook -vvv``.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from http.server import ThreadingHTTPServer

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._openstack.redaction import MASK, Redactor, encodings
from tests.support.ansible_runner import BIN, REPO, ansible_env, run_module
from tests.support.json_handler import JsonHandler
from tests.support.placement_server import PlacementServer

CASE_SECONDS = 240
# Characters JSON escapes (a quote, a backslash, a non-ASCII letter): a body quoting them shows another form.
PASSWORD = 'keystone-Pa"ss\\wörd-41'
ADMIN_TOKEN = "admin-token-5e1d9c7b3a"
IPMI_PASSWORD = 'ipmi-Secret-"9f3c'
ISSUED = "tok-" + "4b7e2a9c1d0f" * 3
RULE_ACTIONS = [{"op": "set-attribute", "args": {"path": "/driver_info/ipmi_password", "value": IPMI_PASSWORD}}]

# Every module that talks to OpenStack, with arguments that make it send a request.
MODULES = {
    "placement_info": {},
    "placement_trait": {"names": ["CUSTOM_LEAK_TEST"]},
    "placement_resource_class": {"names": ["CUSTOM_LEAK_TEST"]},
    "placement_provider": {"name": "leak-host", "inventories": {"VCPU": {"total": 4}}},
    "device_quarantine": {"provider": "leak-host", "reason": "leak test", "health_check": False},
    "one_time_use_device": {"provider": "leak-host"},
    "cyborg_arq_info": {"instances": []},
    "cyborg_device_profile": {"name": "gpu", "state": "absent"},
    "ironic_inspection_rule": {"name": "leak", "sensitive": True, "actions": RULE_ACTIONS},
    "nova_flavor_info": {"names": ["m1.gpu"]},
}
PLACEMENT_MODULES = [name for name in MODULES if name.startswith("placement") or name in ("device_quarantine",
                     "one_time_use_device")]  # fmt: skip


class Liar(JsonHandler):
    """Keystone that issues :data:`ISSUED` (or refuses, quoting the password), and every service refusing
    with ``status`` and a body quoting the token and the body it received."""

    status = 401
    keystone_refuses = False
    password = ""
    protocol_version = "HTTP/1.1"

    def _body(self) -> str:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")

    def _refuse(self, status: int, received: str) -> None:
        token = self.headers.get("X-Auth-Token") or self.headers.get("Authorization") or ""
        detail = f"refused {self.command} {self.path} with token {token} body {received} password {Liar.password}"
        fault = {"message": detail, "code": status}
        body = {
            "errors": [{"status": status, "title": "Refused", "detail": detail, "code": "liar.refused"}],
            "error_message": detail,
            "faultstring": detail,
            "badRequest": fault,
            "computeFault": fault,
            "unauthorized": fault,
            "error": fault,
        }
        self._reply(status, json.dumps(body).encode())

    def do_POST(self):  # noqa: N802 - http.server's naming
        received = self._body()
        if self.path.rstrip("/").endswith("/auth/tokens"):
            identity = json.loads(received)["auth"]["identity"]
            Liar.password = identity["password"]["user"]["password"]
            if Liar.keystone_refuses:
                return self._refuse(401, received)
            return self._token()
        return self._refuse(Liar.status, received)

    def do_GET(self):  # noqa: N802
        path = self.path.split("?")[0].rstrip("/")
        base = f"http://{self.headers['Host']}"
        if path in ("", "/v2", "/v2.1"):
            return self._reply(300 if not path else 200, b'{"versions": []}')
        if path == "/placement":
            link = [{"rel": "self", "href": base + "/placement/"}]
            version = {"id": "v1.0", "max_version": "1.39", "min_version": "1.0", "status": "CURRENT", "links": link}
            return self._reply(200, json.dumps({"versions": [version]}).encode())
        if path in ("/baremetal", "/baremetal/v1"):
            link = [{"rel": "self", "href": base + "/baremetal/v1/"}]
            version = {"id": "v1", "version": "1.96", "min_version": "1.1", "status": "CURRENT", "links": link}
            listing = {"versions": [version], "default_version": version}
            body = listing if path == "/baremetal" else {"id": "v1", "links": link, "version": version}
            return self._reply(200, json.dumps(body).encode())
        if path.endswith("/inspection_rules"):  # an empty fleet of rules, so that the rule is sent
            return self._reply(200, b'{"inspection_rules": []}')
        if "/inspection_rules/" in path:
            return self._reply(404, b"{}")
        return self._refuse(Liar.status, "")

    def do_PUT(self):  # noqa: N802
        self._refuse(Liar.status, self._body())

    do_PATCH = do_PUT  # noqa: N815
    do_DELETE = do_PUT  # noqa: N815

    def _token(self) -> None:
        base = f"http://{self.headers['Host']}"
        services = (("placement", "/placement"), ("accelerator", "/v2"), ("baremetal", "/baremetal"),
                    ("compute", "/v2.1"), ("identity", "/v3"))  # fmt: skip
        where = {"interface": "public", "region": "RegionOne", "region_id": "RegionOne"}
        catalog = [
            {"type": kind, "name": kind, "id": kind, "endpoints": [dict(where, id=kind, url=base + path)]}
            for kind, path in services
        ]
        domain = {"id": "default", "name": "Default"}
        token = {"token": {"methods": ["password"], "user": {"id": "u", "name": "u", "domain": domain},
                           "project": {"id": "p", "name": "p", "domain": domain},
                           "roles": [{"id": "r", "name": "admin"}], "catalog": catalog,
                           "issued_at": "2026-01-01T00:00:00Z", "expires_at": "2099-01-01T00:00:00Z"}}  # fmt: skip
        self._reply(201, json.dumps(token).encode(), {"X-Subject-Token": ISSUED})


@pytest.fixture
def liar():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Liar)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Liar.status, Liar.keystone_refuses, Liar.password = 401, False, ""
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def _cloud(url: str) -> dict:
    return {"auth_type": "v3password", "auth": {"auth_url": url + "/v3", "username": "u", "password": PASSWORD,
            "project_id": "p", "user_domain_name": "Default"}}  # fmt: skip


def credentials(where: str, url: str, tmp_path, monkeypatch) -> dict:
    """The module options for credentials given ``where``; clouds.yaml and OS_* set up as a user would."""
    for name in [name for name in os.environ if name.startswith("OS_")]:
        monkeypatch.delenv(name)
    if where == "options":
        return {"cloud": _cloud(url)}
    if where == "admin_token":
        return {"auth_type": "admin_token", "auth": {"endpoint": url + "/placement", "token": ADMIN_TOKEN}}
    if where == "clouds.yaml":
        config = tmp_path / "clouds.yaml"
        config.write_text(json.dumps({"clouds": {"liar": _cloud(url)}}))
        monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(config))
        return {"cloud": "liar"}
    assert where == "environment"
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tmp_path / "none.yaml"))
    for name, value in {"OS_AUTH_TYPE": "v3password", "OS_AUTH_URL": url + "/v3", "OS_USERNAME": "u",
                        "OS_PASSWORD": PASSWORD, "OS_PROJECT_ID": "p", "OS_USER_DOMAIN_NAME": "Default",
                        "OS_REGION_NAME": "RegionOne"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    return {}


SECRETS = (PASSWORD, ADMIN_TOKEN, IPMI_PASSWORD, ISSUED)


def leaks(text: str) -> list[str]:
    """Each form of each secret found in ``text`` (the secret itself, JSON-escaped, URL-encoded ...)."""
    return sorted({form for secret in SECRETS for form in encodings(secret) if form in text})


def printed(result: dict) -> str:
    return json.dumps(result) + json.dumps(result, ensure_ascii=False)


@pytest.mark.parametrize("status", [401, 500])
@pytest.mark.parametrize("where", ["options", "clouds.yaml", "environment"])
@pytest.mark.parametrize("module", list(MODULES))
def test_a_refusal_quoting_credentials_is_masked_in_every_module(liar, tmp_path, monkeypatch, module, where, status):
    Liar.status = status
    result = run_module(module, dict(MODULES[module], **credentials(where, liar, tmp_path, monkeypatch)))
    assert result.get("failed"), result
    assert not leaks(printed(result)), (leaks(printed(result)), result)
    # The refusal was quoted (the check above could not pass by the body being dropped): masked, not cut.
    assert "refused " in result["msg"] and MASK in result["msg"], result
    assert str(status) in result["msg"], result


@pytest.mark.parametrize("status", [401, 500])
@pytest.mark.parametrize("module", PLACEMENT_MODULES)
def test_an_admin_token_quoted_by_placement_is_masked(liar, tmp_path, monkeypatch, module, status):
    Liar.status = status
    result = run_module(module, dict(MODULES[module], **credentials("admin_token", liar, tmp_path, monkeypatch)))
    assert result.get("failed") and not leaks(printed(result)), result
    assert f"with token {MASK}" in result["msg"], result


@pytest.mark.parametrize("where", ["options", "clouds.yaml", "environment"])
def test_keystone_refusing_with_the_password_is_masked(liar, tmp_path, monkeypatch, where):
    Liar.keystone_refuses = True
    for module in ("placement_info", "cyborg_arq_info", "ironic_inspection_rule", "nova_flavor_info"):
        result = run_module(module, dict(MODULES[module], **credentials(where, liar, tmp_path, monkeypatch)))
        assert result.get("failed") and not leaks(printed(result)), result
        assert MASK in result["msg"], result


def test_a_sensitive_rule_value_is_masked_and_a_plain_one_is_not_taken_for_a_secret(liar, tmp_path, monkeypatch):
    args = dict(MODULES["ironic_inspection_rule"], **credentials("options", liar, tmp_path, monkeypatch))
    masked = run_module("ironic_inspection_rule", args)
    assert IPMI_PASSWORD not in printed(masked) and '"value": "********"' in masked["msg"].replace('\\"', '"')
    # Without sensitive, the value is an ordinary value the user chose to show: the redaction does not guess.
    plain = run_module("ironic_inspection_rule", dict(args, sensitive=False, actions=[{"op": "set-attribute",
                       "args": {"path": "/extra/owner", "value": "team-gpu-42"}}]))  # fmt: skip
    assert "team-gpu-42" in plain["msg"] and ISSUED not in printed(plain), plain


def test_the_redactor_masks_every_form_and_leaves_the_noauth2_token(monkeypatch):
    monkeypatch.setenv("OS_APPLICATION_CREDENTIAL_SECRET", "app-cred-secret-77")
    monkeypatch.setenv("OS_USERNAME", "operator")
    redactor = Redactor({"auth": {"token": "admin", "password": PASSWORD}}, extra=[IPMI_PASSWORD])
    text = f"{PASSWORD} {json.dumps(PASSWORD)} {json.dumps(IPMI_PASSWORD)} app-cred-secret-77 operator admin"
    assert redactor.mask(text) == f'{MASK} "{MASK}" "{MASK}" {MASK} operator admin'
    value = {"a": [PASSWORD, ("x", IPMI_PASSWORD)], PASSWORD: 1}
    assert redactor.mask_value(value) == {"a": [MASK, ("x", MASK)], MASK: 1}


@pytest.mark.parametrize("where", ["options", "clouds.yaml", "environment"])
def test_nothing_leaks_through_ansible_playbook_vvv(liar, tmp_path, monkeypatch, where):
    Liar.status = 500
    creds = credentials(where, liar, tmp_path, monkeypatch)
    tasks = [
        {"name": f"run {module}", "accel.openstack." + module: dict(args, **creds), "ignore_errors": True}
        for module, args in MODULES.items()
    ]
    playbook = tmp_path / "leak.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
    env = ansible_env(ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_PYTHON_INTERPRETER=os.path.join(BIN, "python"))
    proc = subprocess.run(
        [os.path.join(BIN, "ansible-playbook"), "-vvv", "-i", "localhost,", "-c", "local", str(playbook)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=200, check=False,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert out.count("refused ") >= len(MODULES), out[-3000:]
    assert not leaks(out), (leaks(out), out[-3000:])


# -- the real Placement behind a proxy that quotes the token and the body -------------------------------------
REAL_TOKEN = 'real-placement-Tok"en-8d2f'
REAL_MODULES = {
    "placement_trait": {"names": ["CUSTOM_LEAK_TEST"]},
    "placement_resource_class": {"names": ["CUSTOM_LEAK_TEST"]},
    "placement_provider": {"name": "leak-host", "inventories": {"VCPU": {"total": 4}}, "simulate_compute": True},
}


@pytest.mark.parametrize("status", [401, 500])
@pytest.mark.parametrize("where", ["options", "clouds.yaml", "environment"])
def test_the_real_placement_refusing_with_the_token_and_body_is_masked(tmp_path, monkeypatch, where, status):
    monkeypatch.setenv("ACCEL_PLACEMENT_ECHO_TOKEN", REAL_TOKEN)
    monkeypatch.setenv("ACCEL_PLACEMENT_ECHO_STATUS", str(status))
    for name in [name for name in os.environ if name.startswith("OS_") and not name.startswith("OS_PLACEMENT")]:
        monkeypatch.delenv(name)
    (tmp_path / "placement").mkdir()
    with PlacementServer(str(tmp_path / "placement")) as placement:
        cloud = {"auth_type": "admin_token", "auth": {"endpoint": placement.url, "token": REAL_TOKEN}}
        creds: dict = {"cloud": cloud}
        if where == "clouds.yaml":
            (tmp_path / "clouds.yaml").write_text(json.dumps({"clouds": {"real": cloud}}))
            monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tmp_path / "clouds.yaml"))
            creds = {"cloud": "real"}
        elif where == "environment":
            monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tmp_path / "none.yaml"))
            monkeypatch.setenv("OS_AUTH_TYPE", "admin_token")
            monkeypatch.setenv("OS_ENDPOINT", placement.url)
            monkeypatch.setenv("OS_TOKEN", REAL_TOKEN)
            creds = {}
        for module, args in REAL_MODULES.items():
            result = run_module(module, dict(args, **creds))
            assert result.get("failed") and f"Placement answered {status} to " in result["msg"], result
            assert f"token {MASK} refused for " in result["msg"], result
            assert not any(form in printed(result) for form in encodings(REAL_TOKEN)), result
        # Placement itself served the reads: the refusal came only where the proxy stood.
        assert placement.request("GET", "/resource_providers")[0] == 200


@pytest.mark.parametrize("where", ["options", "admin_token", "clouds.yaml", "environment"])
def test_the_fleet_inventory_never_prints_a_credential(liar, tmp_path, monkeypatch, where):
    Liar.status = 500
    config = {"plugin": "accel.openstack.fleet", "sources": ["placement"]}
    config.update(credentials(where, liar, tmp_path, monkeypatch))
    source = tmp_path / "gpu.fleet.yml"
    source.write_text(json.dumps(config))
    env = ansible_env(ANSIBLE_INVENTORY_UNPARSED_FAILED="true")
    proc = subprocess.run(
        [os.path.join(BIN, "ansible-inventory"), "-vvv", "-i", str(source), "--list"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Placement answered 500 to GET /resource_providers" in out, out[-3000:]
    assert "with token ********" in out and not leaks(out), (leaks(out), out[-3000:])
