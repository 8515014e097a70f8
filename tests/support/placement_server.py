"""Start and stop the real OpenStack Placement service (openstack-placement, SQLite, noauth2) for tests.

The service runs in its own venv (``make placement-venv``, path in ``ACCEL_PLACEMENT_VENV``) because it
pins its own SQLAlchemy and oslo versions. Each server gets its own database file; ``reset()`` gives a
fresh database in about two seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from tests.support.service_process import ServiceProcess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MICROVERSION = "1.39"


# The section of each Placement option the tests set (oslo.config reads OS_<SECTION>__<OPTION>).
CONFIG_GROUPS = {
    "max_allocation_candidates": "placement",
    "allocation_candidates_generation_strategy": "placement",
    "randomize_allocation_candidates": "placement",
    "optimize_for_wide_provider_trees": "workarounds",
}


def config_variable(name: str) -> str:
    """The environment variable that sets Placement's option ``name``."""
    return f"OS_{CONFIG_GROUPS[name].upper()}__{name.upper()}"


def placement_venv() -> str:
    return os.environ.get("ACCEL_PLACEMENT_VENV") or os.path.join(REPO, ".venv-placement")


class PlacementUnavailable(RuntimeError):
    pass


class PlacementServer(ServiceProcess):
    """One real Placement process on 127.0.0.1 with a private SQLite database."""

    stop_timeout = 10

    def __init__(self, workdir: str | None = None, config: dict | None = None):
        self.config = dict(config or {})
        self.venv = placement_venv()
        self.python = os.path.join(self.venv, "bin", "python")
        if not os.path.exists(self.python):
            raise PlacementUnavailable(
                f"no Placement venv at {self.venv}; run `make placement-venv` (tests need the real service)"
            )
        self.workdir = workdir or tempfile.mkdtemp(prefix="placement-")
        self._own_workdir = workdir is None
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self._generation = 0

    # -- lifecycle -------------------------------------------------------------------------------
    def _env(self) -> dict:
        env = dict(os.environ)
        env["OS_API__AUTH_STRATEGY"] = "noauth2"
        env["OS_PLACEMENT_DATABASE__CONNECTION"] = f"sqlite:///{self.db_path}"
        env.pop("PYTHONPATH", None)
        for name, value in self.config.items():
            env[config_variable(name)] = str(value).lower() if isinstance(value, bool) else str(value)
        return env

    @property
    def db_path(self) -> str:
        return os.path.join(self.workdir, f"placement-{self._generation}.sqlite")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, sync: bool = True) -> PlacementServer:
        if sync and not os.path.exists(self.db_path):
            # The schema is made once per server (placement-manage db sync, about 2 s) into a template; each
            # fresh database is a copy of it. A database that exists is served as it is (a restart).
            template = os.path.join(self.workdir, "template.sqlite")
            if not os.path.exists(template):
                manage = os.path.join(self.venv, "bin", "placement-manage")
                env = dict(self._env(), OS_PLACEMENT_DATABASE__CONNECTION=f"sqlite:///{template}.new")
                subprocess.run([manage, "db", "sync"], env=env, check=True, capture_output=True)
                os.replace(template + ".new", template)
            shutil.copyfile(template, self.db_path)
        port_file = os.path.join(self.workdir, f"port-{self._generation}")
        self.launch([self.python, os.path.join(HERE, "placement_wsgi.py"), port_file], self._env(), "placement.log")

        def ready() -> bool:
            if not os.path.exists(port_file):
                return False
            with open(port_file) as handle:
                self.port = int(handle.read())
            self.request("GET", "/")
            return True

        return self.await_ready(ready, PlacementUnavailable, "Placement", f"{self.workdir}/placement.log", 0.05)

    def reconfigure(self, config: dict | None = None) -> PlacementServer:
        """The same database served by a new process started with these settings (Placement's own option
        names, see ``CONFIG_GROUPS``; None or {} is Placement's defaults)."""
        self.stop()
        self.config = dict(config or {})
        port_file = os.path.join(self.workdir, f"port-{self._generation}")
        if os.path.exists(port_file):
            os.remove(port_file)
        return self.start(sync=False)

    def reset(self) -> PlacementServer:
        """A fresh, empty database (a new process on a new port)."""
        self.stop()
        self._generation += 1
        return self.start()

    # -- raw HTTP (tests use it to seed and to read back) ----------------------------------------
    def request(self, method: str, path: str, body=None, microversion: str = MICROVERSION):
        headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": f"placement {microversion}"}
        return self.json_request(method, path, body, headers)

    @property
    def auth(self) -> dict:
        """The module options that reach this server (DESIGN: admin_token against noauth2)."""
        return {"auth_type": "admin_token", "auth": {"endpoint": self.url, "token": "admin"}}


if __name__ == "__main__":  # manual use: python -m tests.support.placement_server
    with PlacementServer() as server:
        print(server.url, flush=True)
        try:
            server.proc.wait()
        except KeyboardInterrupt:
            sys.exit(0)
