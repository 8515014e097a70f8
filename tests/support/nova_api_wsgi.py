"""Serve Nova 34's own compute API (osapi_compute) on loopback, for reading and writing flavors.

Run with the nova venv's interpreter: ``python nova_api_wsgi.py CONFIG_DIR PORT_FILE``. CONFIG_DIR holds
nova.conf (SQLite API and cell databases) and an api-paste.ini whose pipeline has Keystone's context
filter without the auth_token middleware; every request is given the identity auth_token would set
for an admin (``X-User-Id``, ``X-Project-Id``, ``X-Roles``), since Nova 34 has no no-auth mode.
"""

import os
import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass


def main() -> None:
    config_dir, port_file = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[:1]  # Nova parses the command line for its own options
    os.environ["OS_NOVA_CONFIG_DIR"] = config_dir
    from nova.wsgi import osapi_compute

    application = osapi_compute.application

    def as_admin(environ, start_response):
        environ.update(HTTP_X_USER_ID="admin", HTTP_X_PROJECT_ID="admin", HTTP_X_ROLES="admin,member,reader")
        return application(environ, start_response)

    server = make_server("127.0.0.1", 0, as_admin, handler_class=QuietHandler)
    with open(port_file + ".tmp", "w") as handle:
        handle.write(str(server.server_port))
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
