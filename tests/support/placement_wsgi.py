"""Serve the real Placement WSGI application on loopback, single-threaded (SQLite takes one writer).

Run with the Placement venv's interpreter: ``python placement_wsgi.py PORT_FILE``. The environment
carries the configuration (OS_API__AUTH_STRATEGY, OS_PLACEMENT_DATABASE__CONNECTION). The chosen port
is written to PORT_FILE once the socket listens.
"""

import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass


def main() -> None:
    port_file = sys.argv[1]
    from placement.wsgi.api import application

    server = make_server("127.0.0.1", 0, application, handler_class=QuietHandler)
    with open(port_file + ".tmp", "w") as handle:
        handle.write(str(server.server_port))
    import os

    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
