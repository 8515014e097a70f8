"""Run the real Cyborg 17 in one process (started by cyborg_server.py with Cyborg's own venv).

Cyborg has no noauth mode and no server command that works here, and every write goes from the API to
the conductor over RPC. This script does what DESIGN.md describes: ``prepare_service``, the conductor's
``RPCService`` over ``transport_url = fake://`` (oslo.messaging's in-process bus), and the API app from
``load_app()`` (an api-paste.ini without the Keystone filter) served by wsgiref on 127.0.0.1, at ``/``
and at ``/accelerator``. Identity comes from the request headers (``X-Roles``, ``X-Project-Id``,
``X-Service-Roles``) as Keystone's middleware would set them; a request that carries only a token (an
openstacksdk client with ``auth_type: admin_token``) gets the identity of an administrator of
``PROJECT``, which is what Keystone would resolve such a token to.

Cyborg calls Nova (``os-server-external-events`` after a bind) and discovers the versions of Nova and
Placement; a small stand-in answers those on a second port and records the events. It also lists the
servers a test declares alive (``SERVERS_FILE``, a JSON list of UUIDs) at ``/v2.1/servers``, so a
report can read servers through openstacksdk. The subject under test is Cyborg's API, not those calls.

Usage: python cyborg_wsgi.py CONFIG_FILE PORT STANDIN_PORT EVENTS_FILE SERVERS_FILE PROJECT
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse
from wsgiref import simple_server


def standin(port: int, events_file: str, servers_file: str) -> None:
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
                with open(servers_file) as handle:
                    alive = json.load(handle)
                return self._reply(200, {"servers": [{"id": u, "name": f"server-{u[:8]}", "links": []} for u in alive]})
            return self._reply(404, {"error": f"the stand-in answers no {self.path}"})

        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if self.path.endswith("/os-server-external-events"):
                with open(events_file, "a") as handle:
                    handle.write(json.dumps(body) + "\n")
                events = [dict(e, code=200, status="completed") for e in body.get("events", [])]
                return self._reply(200, {"events": events})
            return self._reply(404, {"error": f"the stand-in answers no {self.path}"})

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def main() -> None:
    config_file, port, standin_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    standin(standin_port, sys.argv[4], sys.argv[5])

    from cyborg.api import app as cyborg_app
    from cyborg.common import constants
    from cyborg.common import service as cyborg_service

    cyborg_service.prepare_service(["cyborg-test", "--config-file", config_file])
    conductor = cyborg_service.RPCService("cyborg.conductor.manager", "ConductorManager", constants.CONDUCTOR_TOPIC)
    conductor.start()
    api = cyborg_app.load_app()

    project = sys.argv[6]

    def application(environ, start_response):
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
