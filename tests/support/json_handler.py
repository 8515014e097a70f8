"""A quiet HTTP handler that answers JSON, the base of the tests' lying services."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler


class JsonHandler(BaseHTTPRequestHandler):
    """Logs nothing; :meth:`_reply` sends one JSON answer with its length."""

    def log_message(self, *args):
        pass

    def _reply(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
