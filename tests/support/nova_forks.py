"""Run the Nova oracle scripts in processes forked from one nova-venv Python that has imported Nova already.

Each oracle (``nova_oracle.py``, ``nova_compute.py``, ``nova_flavor_oracle.py`` ...) is a script that reads
JSON cases on stdin and writes JSON results on stdout. Started as ``.venv-nova/bin/python <script>`` each
run spends two to three seconds of CPU importing Nova, oslo and eventlet before its first case. Here a
server, started once per test process, imports those modules once (``PRELOAD``) and forks a child for every
run: the child takes the script's stdin, runs the script as ``__main__`` (``runpy.run_path``) with its
stdout and stderr in files, and exits with the script's exit status. Every run is a process of its own, as
before: nothing one run sets (oslo.config's options, Nova's object registry, a monkey patch) reaches the
next, and a run that crashes takes only its child down.

Client side (the test process): ``run(script, stdin_text, timeout)`` returns a CompletedProcess as
``subprocess.run`` would; a run past ``timeout`` raises ``subprocess.TimeoutExpired`` and ends the server
(the next run starts another). ``ACCEL_NOVA_FORKS=off`` runs every script in a new interpreter instead.

Server side: ``python nova_forks.py`` under the nova venv reads one JSON request per line on stdin
(``{"script": path, "stdin": text}``) and writes one JSON reply per line (``{"rc", "stdout", "stderr"}``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# The modules the oracle scripts import at their start; a name this Nova lacks is skipped.
PRELOAD = (
    "eventlet",
    "keystoneauth1.adapter",
    "keystoneauth1.session",
    "keystoneauth1.token_endpoint",
    "oslo_config.cfg",
    "oslo_log.log",
    "os_traits",
    "os_resource_classes",
    "nova.conf",
    "nova.context",
    "nova.exception",
    "nova.objects",
    "nova.accelerator.cyborg",
    "nova.api.validation.extra_specs.validators",
    "nova.compute.api",
    "nova.compute.pci_placement_translator",
    "nova.compute.provider_config",
    "nova.compute.resource_tracker",
    "nova.compute.utils",
    "nova.pci.request",
    "nova.pci.stats",
    "nova.pci.whitelist",
    "nova.scheduler.client.report",
    "nova.scheduler.filters",
    "nova.scheduler.host_manager",
    "nova.scheduler.manager",
    "nova.scheduler.request_filter",
    "nova.scheduler.utils",
    "nova.scheduler.weights",
    "nova.virt.fake",
    "nova.virt.hardware",
    "nova.virt.libvirt.driver",
)


# -- client (test process) -----------------------------------------------------------------------------
class _Server:
    """One server process of this test process, its reply pipe and its log."""

    def __init__(self, python: str):
        self.log = tempfile.NamedTemporaryFile(prefix="nova-forks-", suffix=".log", delete=False)  # noqa: SIM115
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            start_new_session=True,
        )
        self.buffer = b""

    def ask(self, script: str, stdin_text: str, timeout: float) -> dict:
        request = json.dumps({"script": os.path.abspath(script), "stdin": stdin_text}).encode() + b"\n"
        self.proc.stdin.write(request)
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise subprocess.TimeoutExpired([script], timeout)
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise RuntimeError(f"the Nova fork server ended: {self.log_tail()}")
            self.buffer += chunk
        line, _newline, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def log_tail(self) -> str:
        try:
            with open(self.log.name, errors="replace") as handle:
                return handle.read()[-3000:]
        except OSError:
            return ""

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, 9)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        self.log.close()
        os.unlink(self.log.name)


_lock = threading.Lock()
_servers: dict[str, _Server] = {}


def _close_all() -> None:
    for server in _servers.values():
        server.close()
    _servers.clear()


atexit.register(_close_all)


def run(python: str, script: str, stdin_text: str, timeout: float) -> subprocess.CompletedProcess:
    """``python script`` with ``stdin_text`` on stdin, as ``subprocess.run(..., capture_output=True,
    text=True)`` returns it, run in a child of this process's server for ``python``."""
    if os.environ.get("ACCEL_NOVA_FORKS") == "off":
        return subprocess.run(
            [python, os.path.abspath(script)],
            input=stdin_text,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    with _lock:
        server = _servers.get(python)
        if server is None or server.proc.poll() is not None:
            if server is not None:
                server.close()
            server = _servers[python] = _Server(python)
        try:
            reply = server.ask(script, stdin_text, timeout)
        except BaseException:
            server.close()
            del _servers[python]
            raise
    return subprocess.CompletedProcess([python, script], reply["rc"], reply["stdout"], reply["stderr"])


# -- server (nova venv) --------------------------------------------------------------------------------
def _child(script: str, stdin_text: str, out_path: str, err_path: str) -> int:
    import io
    import runpy
    import traceback

    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the server's request pipe is not the script's
    os.close(devnull)
    for fd, path in ((1, out_path), (2, err_path)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the child's own stdout, flushed below
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    sys.stdin = io.StringIO(stdin_text)
    sys.argv = [script]
    sys.path[0] = os.path.dirname(script)
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        if stop.code is None:
            code = 0
        elif isinstance(stop.code, int):
            code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:  # the script's own failure, as the interpreter would print it
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _serve() -> int:
    import importlib
    import warnings

    warnings.simplefilter("ignore")
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what an import prints goes to the log, never into a reply
    sys.stdout = sys.stderr
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError as error:
            print(f"nova_forks: {name} not preloaded: {error}", file=sys.stderr)
    workdir = tempfile.mkdtemp(prefix="nova-forks-")
    for line in sys.stdin:
        request = json.loads(line)
        out_path, err_path = os.path.join(workdir, "stdout"), os.path.join(workdir, "stderr")
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os._exit(_child(request["script"], request["stdin"], out_path, err_path))
        status = os.waitpid(pid, 0)[1]
        rc = os.waitstatus_to_exitcode(status)
        answer = {"rc": rc}
        for key, path in (("stdout", out_path), ("stderr", err_path)):
            try:
                with open(path, errors="replace") as handle:
                    answer[key] = handle.read()
                os.unlink(path)
            except OSError:
                answer[key] = ""
        replies.write(json.dumps(answer) + "\n")
        replies.flush()
    os.rmdir(workdir)
    return 0


if __name__ == "__main__":
    sys.exit(_serve())
