"""Serve the real Placement WSGI application on loopback, single-threaded (SQLite takes one writer).

Run with the Placement venv's interpreter: ``python placement_wsgi.py PORT_FILE``. The environment
carries the configuration (OS_API__AUTH_STRATEGY, OS_PLACEMENT_DATABASE__CONNECTION). The chosen port
is written to PORT_FILE once the socket listens.

With ACCEL_PLACEMENT_ECHO_TOKEN set, a middleware in front of Placement plays a proxy that quotes what it
received: a request carrying that token is served by Placement as the admin when it reads (GET); any other
request with it is refused with ACCEL_PLACEMENT_ECHO_STATUS (401 or 500) in Placement's error document,
whose detail quotes the token and the request's body. Requests with other tokens reach Placement unchanged.
"""

import io
import json
import os
import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass


def echoing(app, token, status):
    def middleware(environ, start_response):
        if environ.get("HTTP_X_AUTH_TOKEN") != token:
            return app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length).decode("utf-8", "replace") if length else ""
        if environ["REQUEST_METHOD"] == "GET":
            environ["HTTP_X_AUTH_TOKEN"] = "admin"
            environ["wsgi.input"] = io.BytesIO(body.encode())
            return app(environ, start_response)
        detail = f"token {token} refused for {environ['REQUEST_METHOD']} {environ.get('PATH_INFO')}: body {body}"
        answer = json.dumps({"errors": [{"status": status, "title": "Refused", "detail": detail}]}).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(answer)))]
        start_response(f"{status} Refused", headers)
        return [answer]

    return middleware


def main() -> None:
    port_file = sys.argv[1]
    from placement.wsgi.api import application

    if os.environ.get("ACCEL_PLACEMENT_ECHO_TOKEN"):
        status = int(os.environ.get("ACCEL_PLACEMENT_ECHO_STATUS") or 401)
        application = echoing(application, os.environ["ACCEL_PLACEMENT_ECHO_TOKEN"], status)

    server = make_server("127.0.0.1", 0, application, handler_class=QuietHandler)
    with open(port_file + ".tmp", "w") as handle:
        handle.write(str(server.server_port))
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
