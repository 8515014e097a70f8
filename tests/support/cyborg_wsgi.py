"""Run the real Cyborg 17 in one process (started by cyborg_server.py with Cyborg's own venv).

Cyborg has no noauth mode and no server command that works here, and every write goes from the API to
the conductor over RPC. This script does what DESIGN.md describes: ``prepare_service``, the conductor's
``RPCService`` over ``transport_url = fake://`` (oslo.messaging's in-process bus), and the API app from
``load_app()`` (an api-paste.ini without the Keystone filter) served by wsgiref on 127.0.0.1, at ``/``
and at ``/accelerator``. Identity comes from the request headers (``X-Roles``, ``X-Project-Id``,
``X-Service-Roles``) as Keystone's middleware would set them; a request that carries only a token (an
openstacksdk client with ``auth_type: admin_token``) gets the identity of an administrator of
``PROJECT``, which is what Keystone would resolve such a token to.

Tokens can also come from a small Keystone v3 stand-in (``POST /v3/auth/tokens`` with a password, for the
users of ``USERS_FILE``: ``{name: {password, project_id, roles}}``), which answers with the roles, the
project and a catalog (accelerator, compute, identity) as Keystone does. A request to Cyborg with such a
token gets that user's headers, as keystonemiddleware sets them: the headers a client sent itself are
dropped, and an ``X-Service-Token`` becomes ``X-Service-Roles`` (the roles of its user); an unknown
service token is refused with 401. The compute stand-in refuses a listing of all projects' servers to a
token without the admin role (403), as Nova's policy ``os_compute_api:servers:index:get_all_tenants`` does.

Cyborg calls Nova (``os-server-external-events`` after a bind) and discovers the versions of Nova and
Placement; a small stand-in answers those on a second port and records the events. It also lists the
servers a test declares alive (``SERVERS_FILE``, a JSON list of UUIDs) at ``/v2.1/servers``, so a
report can read servers through openstacksdk. The subject under test is Cyborg's API, not those calls.

Usage: python cyborg_wsgi.py CONFIG_FILE PORT STANDIN_PORT EVENTS_FILE SERVERS_FILE PROJECT USERS_FILE
"""

import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse
from wsgiref import simple_server

# Issued tokens: {token: {"user", "project", "roles"}}; written by the Keystone stand-in, read by both servers.
TOKENS: dict[str, dict] = {}
IDENTITY_HEADERS = ("HTTP_X_ROLES", "HTTP_X_PROJECT_ID", "HTTP_X_TENANT_ID", "HTTP_X_USER_ID", "HTTP_X_SERVICE_ROLES")


def issue_token(users_file: str, body: dict, catalog: list) -> tuple[str, dict] | None:
    """A Keystone v3 token for a password authentication, or None for a wrong user or password."""
    with open(users_file) as handle:
        users = json.load(handle)
    identity = (body.get("auth") or {}).get("identity") or {}
    user = ((identity.get("password") or {}).get("user")) or {}
    known = users.get(user.get("name"))
    if not known or known["password"] != user.get("password"):
        return None
    token = uuid.uuid4().hex
    TOKENS[token] = {"user": user["name"], "project": known["project_id"], "roles": list(known["roles"])}
    domain = {"id": "default", "name": "Default"}
    return token, {
        "token": {
            "methods": ["password"],
            "user": {"id": f"id-{user['name']}", "name": user["name"], "domain": domain},
            "project": {"id": known["project_id"], "name": known["project_id"], "domain": domain},
            "roles": [{"id": f"role-{r}", "name": r} for r in known["roles"]],
            "catalog": catalog,
            "issued_at": "2026-01-01T00:00:00.000000Z",
            "expires_at": "2099-01-01T00:00:00.000000Z",
        }
    }


def standin(port: int, events_file: str, servers_file: str, users_file: str, cyborg_port: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):  # noqa: N802 - http.server's naming
            base = f"http://127.0.0.1:{port}"
            if urlparse(self.path).path.rstrip("/") == "/v3":
                return self._reply(200, {"version": {"id": "v3.14", "status": "stable",
                                                     "links": [{"rel": "self", "href": base + "/v3/"}]}})  # fmt: skip
            versions = [
                {"id": "v2.1", "status": "CURRENT", "version": "2.96", "min_version": "2.1",
                 "links": [{"rel": "self", "href": base + "/v2.1/"}]},
                {"id": "v1.0", "status": "CURRENT", "max_version": "1.39", "min_version": "1.0",
                 "links": [{"rel": "self", "href": base + "/"}]},
            ]  # fmt: skip
            path = urlparse(self.path).path.rstrip("/")
            if path in ("", "/v2.1"):
                return self._reply(200, {"versions": versions} if not path else {"version": versions[0]})
            if path in ("/v2.1/servers", "/v2.1/servers/detail"):
                caller = TOKENS.get(self.headers.get("X-Auth-Token") or "")
                query = parse_qs(urlparse(self.path).query)
                if caller and "admin" not in caller["roles"] and "all_tenants" in query:
                    rule = "os_compute_api:servers:index:get_all_tenants"
                    return self._reply(
                        403, {"forbidden": {"code": 403, "message": f"Policy doesn't allow {rule} to be performed."}}
                    )
                with open(servers_file) as handle:
                    alive = json.load(handle)
                return self._reply(200, {"servers": [{"id": u, "name": f"server-{u[:8]}", "links": []} for u in alive]})
            return self._reply(404, {"error": f"the stand-in answers no {self.path}"})

        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if urlparse(self.path).path.rstrip("/") == "/v3/auth/tokens":
                issued = issue_token(users_file, body, catalog(port, cyborg_port))
                if issued is None:
                    return self._reply(
                        401, {"error": {"code": 401, "message": "The request you have made requires authentication."}}
                    )
                token, answer = issued
                data = json.dumps(answer).encode()
                self.send_response(201)
                self.send_header("X-Subject-Token", token)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return None
            if self.path.endswith("/os-server-external-events"):
                with open(events_file, "a") as handle:
                    handle.write(json.dumps(body) + "\n")
                events = [dict(e, code=200, status="completed") for e in body.get("events", [])]
                return self._reply(200, {"events": events})
            return self._reply(404, {"error": f"the stand-in answers no {self.path}"})

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def catalog(port: int, cyborg_port: int) -> list:
    def service(kind: str, url: str) -> dict:
        endpoints = [{"id": f"{kind}-{i}", "interface": i, "region": "RegionOne", "region_id": "RegionOne", "url": url}
                     for i in ("public", "internal", "admin")]  # fmt: skip
        return {"id": kind, "type": kind, "name": kind, "endpoints": endpoints}

    return [
        service("identity", f"http://127.0.0.1:{port}/v3"),
        service("compute", f"http://127.0.0.1:{port}/v2.1"),
        service("accelerator", f"http://127.0.0.1:{cyborg_port}/v2"),
    ]


def keystone_identity(environ: dict) -> int | None:
    """Set the identity headers of a token the Keystone stand-in issued, as keystonemiddleware does;
    401 for an unknown service token, None when the request goes on."""
    caller = TOKENS.get(environ.get("HTTP_X_AUTH_TOKEN") or "")
    if caller is None:
        return None
    for header in IDENTITY_HEADERS:
        environ.pop(header, None)
    environ.update(HTTP_X_ROLES=",".join(caller["roles"]), HTTP_X_PROJECT_ID=caller["project"],
                   HTTP_X_USER_ID=f"id-{caller['user']}")  # fmt: skip
    service_token = environ.get("HTTP_X_SERVICE_TOKEN")
    if service_token:
        service = TOKENS.get(service_token)
        if service is None:
            return 401
        environ["HTTP_X_SERVICE_ROLES"] = ",".join(service["roles"])
    return None


def main() -> None:
    config_file, port, standin_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    standin(standin_port, sys.argv[4], sys.argv[5], sys.argv[7], port)

    from cyborg.api import app as cyborg_app
    from cyborg.common import constants
    from cyborg.common import service as cyborg_service

    cyborg_service.prepare_service(["cyborg-test", "--config-file", config_file])
    conductor = cyborg_service.RPCService("cyborg.conductor.manager", "ConductorManager", constants.CONDUCTOR_TOPIC)
    conductor.start()
    api = cyborg_app.load_app()

    project = sys.argv[6]

    def application(environ, start_response):
        if keystone_identity(environ) == 401:
            start_response("401 Unauthorized", [("Content-Type", "application/json")])
            return [b'{"error": {"code": 401, "message": "The service token is not valid."}}']
        if environ.get("HTTP_X_AUTH_TOKEN") and not environ.get("HTTP_X_ROLES"):
            environ.update(HTTP_X_ROLES="admin,member,reader", HTTP_X_PROJECT_ID=project, HTTP_X_USER_ID="admin")
        path = environ.get("PATH_INFO", "")
        if path == "/accelerator" or path.startswith("/accelerator/"):
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + "/accelerator"
            environ["PATH_INFO"] = path[len("/accelerator") :] or "/"
        return api(environ, start_response)

    class Quiet(simple_server.WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = simple_server.make_server("127.0.0.1", port, application, handler_class=Quiet)
    server.serve_forever()


if __name__ == "__main__":
    main()
