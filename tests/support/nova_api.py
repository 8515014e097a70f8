"""Start and stop Nova 34's own compute API (nova-api's osapi_compute) for tests that read flavors.

Nova runs from its own venv (``make nova-venv``) with SQLite API and cell databases created by
``nova-manage api_db sync`` and ``db sync`` (about 8 s), then serves on 127.0.0.1 (ready in about 10 s).
Flavors and their extra specs are created through the API itself (``create_flavor``), as an operator
creates them.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import urllib.error
import urllib.request

from tests.support.nova_venv import nova_python
from tests.support.service_process import ServiceProcess

HERE = os.path.dirname(os.path.abspath(__file__))
MICROVERSION = "2.61"  # flavors carry their extra specs in the answer from 2.61 on

NOVA_CONF = """\
[DEFAULT]
transport_url = fake://
use_stderr = true
[api_database]
connection = sqlite:///{workdir}/nova-api.sqlite
[database]
connection = sqlite:///{workdir}/nova-cell.sqlite
"""


class NovaApiServer(ServiceProcess):
    """One nova-api (compute API) process on 127.0.0.1 with private SQLite databases."""

    stop_timeout = 10

    def __init__(self, workdir: str | None = None):
        self.python = nova_python()
        self.workdir = workdir or tempfile.mkdtemp(prefix="nova-api-")
        self._own_workdir = workdir is None
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v2.1"

    @property
    def auth(self) -> dict:
        """The OpenStack module options that reach this API."""
        return {"auth_type": "admin_token", "auth": {"endpoint": self.url, "token": "admin"}}

    def _configure(self) -> None:
        with open(os.path.join(self.workdir, "nova.conf"), "w") as handle:
            handle.write(NOVA_CONF.format(workdir=self.workdir))
        paste = os.path.join(os.path.dirname(os.path.dirname(self.python)), "etc", "nova", "api-paste.ini")
        with open(paste) as handle:
            text = handle.read()
        # Keystone's context filter reads the identity headers; auth_token (which needs Keystone) goes.
        with open(os.path.join(self.workdir, "api-paste.ini"), "w") as handle:
            handle.write(text.replace(" authtoken keystonecontext ", " keystonecontext "))
        manage = os.path.join(os.path.dirname(self.python), "nova-manage")
        config = ["--config-file", os.path.join(self.workdir, "nova.conf")]
        for command in (["api_db", "sync"], ["db", "sync"]):
            subprocess.run([manage, *config, *command], check=True, capture_output=True, timeout=300)

    def start(self) -> NovaApiServer:
        self._configure()
        port_file = os.path.join(self.workdir, "port")
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        self.launch([self.python, os.path.join(HERE, "nova_api_wsgi.py"), self.workdir, port_file], env, "nova-api.log")

        def ready() -> bool:
            if not os.path.exists(port_file):
                return False
            with open(port_file) as handle:
                self.port = int(handle.read())
            self.request("GET", "/flavors")
            return True

        return self.await_ready(ready, RuntimeError, "nova-api", f"{self.workdir}/nova-api.log", 0.1, self.close)

    def request(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("X-Auth-Token", "admin")
        req.add_header("X-OpenStack-Nova-API-Version", MICROVERSION)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw = resp.read()
            return json.loads(raw) if raw else None

    def create_flavor(self, flavor: dict) -> dict:
        """Create a flavor (compute_flavor's keys) and its extra specs through Nova's API."""
        body = {key: flavor[key] for key in ("name", "vcpus", "ram", "disk") if key in flavor}
        body.update({"OS-FLV-EXT-DATA:ephemeral": flavor.get("ephemeral", 0)})
        if flavor.get("swap"):
            body["swap"] = flavor["swap"]
        created = self.request("POST", "/flavors", {"flavor": body})["flavor"]
        if flavor.get("extra_specs"):
            self.request("POST", f"/flavors/{created['id']}/os-extra_specs", {"extra_specs": flavor["extra_specs"]})
        return created
