"""What the test servers share: one real service process, stopped gently, and its work directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable


class ServiceProcess:
    """Owns ``proc`` (the service's process) and ``workdir``; subclasses implement ``start()`` and set
    ``url``.

    ``stop()`` terminates the process, killing it after ``stop_timeout`` seconds; ``close()`` also removes
    the work directory when the server made it (``_own_workdir``)."""

    stop_timeout = 15
    proc: subprocess.Popen | None = None
    workdir: str
    url: str
    _own_workdir = False

    def start(self):
        raise NotImplementedError

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def close(self) -> None:
        self.stop()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def launch(self, argv: list[str], env: dict, log: str) -> None:
        """Start the service's process in its own session, its output appended to ``log`` (in the workdir)."""
        out = open(os.path.join(self.workdir, log), "ab")  # noqa: SIM115 - owned by proc
        self.proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def await_ready(
        self,
        ready: Callable[[], bool],
        unavailable: Callable[[str], Exception],
        name: str,
        logs: str,
        pause: float,
        give_up: Callable[[], None] | None = None,
    ):
        """Poll ``ready()`` (a connection error is "not yet") every ``pause`` seconds for 120 s. If the
        process ends first, raise ``unavailable`` naming its ``logs``; after 120 s, give up (``stop()``
        unless ``give_up``) and raise ``unavailable`` saying so."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise unavailable(f"{name} exited; see {logs}")
            try:
                if ready():
                    return self
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(pause)
        (give_up or self.stop)()
        raise unavailable(f"{name} did not answer within 120 s")

    def json_request(self, method: str, path: str, body, headers: dict[str, str]) -> tuple[int, object]:
        """One JSON call to the service at ``self.url`` (see ``json_call``)."""
        return json_call(self.url, method, path, body, headers)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def json_call(url: str, method: str, path: str, body, headers: dict[str, str]) -> tuple[int, object]:
    """One JSON call: its status and its body (decoded JSON, None when empty; an error's text when it is
    not JSON). Standard library only: the Nova oracles run it under the nova venv too."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method)
    req.add_header("Accept", "application/json")
    for name, value in headers.items():
        req.add_header(name, value)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw = resp.read()
            return resp.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as err:
        raw = err.read()
        try:
            return err.code, json.loads(raw)
        except ValueError:
            return err.code, raw.decode(errors="replace")
