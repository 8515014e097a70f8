# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A local OpenStack Placement for trying the collection: SQLite, no authentication, 127.0.0.1 only.

Needs a venv with the Placement service (``python3 -m venv VENV && VENV/bin/pip install
openstack-placement==16.0.0``). Any Python 3 runs this script; it starts the service with the venv's.

    local_placement.py start --venv VENV --workdir DIR [--port N] [--settings JSON]
    local_placement.py stop --workdir DIR

``start`` writes ``DIR/placement.conf`` (``[api] auth_strategy = noauth2``, ``[placement_database]
connection = sqlite:///DIR/placement.sqlite`` and the ``--settings``: a JSON object with Placement's own
option names, as the collection's ``accel_placement_config`` gives them), creates the schema with
``placement-manage db sync`` when the database is new, serves Placement's WSGI application on
127.0.0.1 (port N, or a free one) in the background, waits until it answers, and prints one JSON line:
``{"url", "pid", "auth"}``, where ``auth`` is the ``accel_placement_auth`` that reaches it (an admin
token, which noauth2 accepts). A server this script started before in DIR is stopped first. ``stop`` ends
it (only a process whose command line names DIR). Its log is ``DIR/placement.log``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

START_TIMEOUT = 120
# The section of each Placement setting the collection knows (accel_placement_config).
SECTIONS = {
    "max_allocation_candidates": "placement",
    "allocation_candidates_generation_strategy": "placement",
    "optimize_for_wide_provider_trees": "workarounds",
}


def _conf(workdir: str, settings: dict) -> str:
    sections: dict[str, dict[str, str]] = {
        "DEFAULT": {"debug": "false"},
        "api": {"auth_strategy": "noauth2"},
        "placement_database": {"connection": f"sqlite:///{os.path.join(workdir, 'placement.sqlite')}"},
    }
    for name, value in sorted(settings.items()):
        if name not in SECTIONS:
            raise SystemExit(
                f"--settings: {name} is not a Placement setting this script knows; give {', '.join(SECTIONS)}"
            )
        if isinstance(value, bool):
            value = str(value).lower()
        if not isinstance(value, (int, str)) or "\n" in str(value):
            raise SystemExit(f"--settings: {name} must be one number, word or true/false")
        sections.setdefault(SECTIONS[name], {})[name] = str(value)
    return "".join(
        f"[{section}]\n" + "".join(f"{key} = {value}\n" for key, value in values.items()) + "\n"
        for section, values in sections.items()
    )


def _ours(pid: int, workdir: str) -> bool:
    """Whether ``pid`` is a server this script started for ``workdir`` (its command line says so)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return False
    return "serve" in argv and os.path.abspath(workdir) in argv


def stop(workdir: str) -> bool:
    pid_file = os.path.join(workdir, "placement.pid")
    try:
        with open(pid_file) as handle:
            pid = int(handle.read().strip())
    except (OSError, ValueError):
        return False
    stopped = False
    if _ours(pid, workdir):
        os.kill(pid, signal.SIGTERM)
        for _attempt in range(100):
            if not _ours(pid, workdir):
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
        stopped = True
    os.unlink(pid_file)
    return stopped


def start(venv: str, workdir: str, port: int, settings: dict) -> dict:
    python = os.path.join(venv, "bin", "python")
    manage = os.path.join(venv, "bin", "placement-manage")
    if not os.path.exists(manage):
        raise SystemExit(
            f"{venv} has no placement-manage: create it with python3 -m venv {venv} && "
            f"{venv}/bin/pip install openstack-placement==16.0.0"
        )
    workdir = os.path.abspath(workdir)
    text = _conf(workdir, settings)  # refuses a bad setting before anything is written
    os.makedirs(workdir, exist_ok=True)
    stop(workdir)
    conf = os.path.join(workdir, "placement.conf")
    with open(conf, "w") as handle:
        handle.write(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_") and k != "PYTHONPATH"}
    env["OS_PLACEMENT_CONFIG_DIR"] = workdir
    if not os.path.exists(os.path.join(workdir, "placement.sqlite")):
        sync = subprocess.run(
            [manage, "--config-file", conf, "db", "sync"], env=env, capture_output=True, text=True, check=False
        )
        if sync.returncode:
            raise SystemExit(f"placement-manage db sync failed:\n{sync.stdout}{sync.stderr}")
    port_file = os.path.join(workdir, "placement.port")
    if os.path.exists(port_file):
        os.unlink(port_file)
    with open(os.path.join(workdir, "placement.log"), "ab") as log:
        proc = subprocess.Popen(
            [python, os.path.abspath(__file__), "serve", "--workdir", workdir, "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    with open(os.path.join(workdir, "placement.pid"), "w") as handle:
        handle.write(f"{proc.pid}\n")
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"Placement exited with status {proc.returncode}; see {workdir}/placement.log")
        if os.path.exists(port_file):
            with open(port_file) as handle:
                url = f"http://127.0.0.1:{int(handle.read())}"
            try:
                with urllib.request.urlopen(url + "/", timeout=5) as answer:  # noqa: S310 - loopback only
                    answer.read()
                auth = {"auth_type": "admin_token", "auth": {"endpoint": url, "token": "admin"}}
                return {"url": url, "pid": proc.pid, "auth": auth}
            except (urllib.error.URLError, OSError):
                pass
        time.sleep(0.2)
    stop(workdir)
    raise SystemExit(f"Placement did not answer within {START_TIMEOUT} s; see {workdir}/placement.log")


def serve(workdir: str, port: int) -> None:
    """Run in the Placement venv: Placement's WSGI application, one request at a time (SQLite)."""
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from placement.wsgi.api import application

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 - the base class names it so
            pass

    server = make_server("127.0.0.1", port, application, handler_class=QuietHandler)
    port_file = os.path.join(workdir, "placement.port")
    with open(port_file + ".new", "w") as handle:
        handle.write(str(server.server_port))
    os.replace(port_file + ".new", port_file)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop", "serve"])
    parser.add_argument("--workdir", required=True, help="the directory of the config, database, log and pid")
    parser.add_argument("--venv", help="the venv where openstack-placement is installed (start)")
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--settings", default="{}", help="Placement settings as a JSON object (accel_placement_config)")
    args = parser.parse_args(argv)
    if args.action == "serve":
        serve(args.workdir, args.port)
    elif args.action == "stop":
        print(json.dumps({"stopped": stop(os.path.abspath(args.workdir))}))
    else:
        if not args.venv:
            parser.error("start needs --venv (a venv with openstack-placement 16.0.0)")
        try:
            settings = json.loads(args.settings)
        except ValueError as exc:
            parser.error(f"--settings is not JSON: {exc}")
        if not isinstance(settings, dict):
            parser.error('--settings must be a JSON object, e.g. {"max_allocation_candidates": 1000}')
        print(json.dumps(start(args.venv, args.workdir, args.port, settings)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
