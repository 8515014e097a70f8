"""Start and stop the real Cyborg 17 (API + conductor in one process, SQLite, no Keystone) for tests.

Cyborg runs from its own venv (``make cyborg-venv``, path in ``ACCEL_CYBORG_VENV``); ``cyborg_wsgi.py``
explains how the process is put together. One server serves a whole test session; ``seed()`` inserts a
device with its deployable and attach handles as Cyborg's agent would, with Cyborg's own objects.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import urllib.request

from tests.support.ironic_server import free_port
from tests.support.service_process import ServiceProcess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MICROVERSION = "2.0"
ADMIN_PROJECT = "0d4c0d6a8e4b4f0c9a1d7b1e2f3a4b5c"
SERVICE_PROJECT = "5e7a0b1c2d3e4f5061728394a5b6c7d8"
TENANT_PROJECT = "9a8b7c6d5e4f40312233445566778899"
# The users the Keystone stand-in authenticates: a cloud administrator, Nova's service user (roles admin and
# service in the service project, as deployment tools create it) and a member of one project.
USERS = {
    "cloud-admin": {"password": "admin-password-1", "project_id": ADMIN_PROJECT, "roles": ["admin", "member"]},
    "nova": {"password": "nova-service-password-1", "project_id": SERVICE_PROJECT, "roles": ["admin", "service"]},
    "tenant-member": {"password": "member-password-1", "project_id": TENANT_PROJECT, "roles": ["member", "reader"]},
}

CONFIG = """[DEFAULT]
transport_url = fake://
host = accel-test-cyborg
debug = false
log_file = {workdir}/cyborg.log

[api]
api_paste_config = {workdir}/api-paste.ini
host_ip = 127.0.0.1
port = {port}

[database]
connection = sqlite:///{workdir}/cyborg.sqlite

[placement]
auth_type = none
endpoint_override = http://127.0.0.1:{standin}

[nova]
auth_type = none
endpoint_override = http://127.0.0.1:{standin}/v2.1

[oslo_policy]
enforce_scope = false
enforce_new_defaults = false
"""

# Cyborg's own pipeline without the Keystone filter: identity comes from the request headers.
API_PASTE = """[pipeline:main]
pipeline = request_id api_v2

[app:api_v2]
paste.app_factory = cyborg.api.app:app_factory

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory
"""


def cyborg_venv() -> str:
    return os.environ.get("ACCEL_CYBORG_VENV") or os.path.join(REPO, ".venv-cyborg")


class CyborgUnavailable(RuntimeError):
    pass


class CyborgServer(ServiceProcess):
    """One real Cyborg process on 127.0.0.1 with a private SQLite database."""

    def __init__(self, workdir: str | None = None):
        self.venv = cyborg_venv()
        self.python = os.path.join(self.venv, "bin", "python")
        if not os.path.exists(os.path.join(self.venv, "bin", "cyborg-dbsync")):
            raise CyborgUnavailable(
                f"no Cyborg venv at {self.venv}; run `make cyborg-venv` (tests need the real service)"
            )
        self.workdir = workdir or tempfile.mkdtemp(prefix="cyborg-")
        self._own_workdir = workdir is None
        self.proc: subprocess.Popen | None = None
        self.port = free_port()
        self.standin_port = free_port()
        self.config = os.path.join(self.workdir, "cyborg.conf")
        self.events_file = os.path.join(self.workdir, "nova-events.jsonl")
        self.servers_file = os.path.join(self.workdir, "servers.json")
        self.users_file = os.path.join(self.workdir, "users.json")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def cloud(self) -> dict:
        """The module ``cloud`` option that reaches this server: a token (an administrator of ADMIN_PROJECT
        here) and the endpoints of Cyborg and of the compute stand-in."""
        return {
            "auth_type": "admin_token",
            "auth": {"endpoint": self.url + "/v2", "token": "admin"},
            "compute_endpoint_override": f"http://127.0.0.1:{self.standin_port}/v2.1",
        }

    @property
    def auth_url(self) -> str:
        return f"http://127.0.0.1:{self.standin_port}/v3"

    def keystone_cloud(self, user: str) -> dict:
        """The module ``cloud`` option for one of USERS, authenticated through the Keystone stand-in, which
        hands out the roles, the project and the catalog (Cyborg, compute)."""
        return {
            "auth_type": "v3password",
            "auth": {"auth_url": self.auth_url, "username": user, "password": USERS[user]["password"],
                     "project_id": USERS[user]["project_id"], "user_domain_name": "Default"},
        }  # fmt: skip

    def token(self, user: str) -> str:
        """A token of one of USERS, as ``openstack token issue`` gives it."""
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"name": "Default"}, "password": USERS[user]["password"]}}},
            "scope": {"project": {"id": USERS[user]["project_id"]}}}}  # fmt: skip
        request = urllib.request.Request(
            self.auth_url + "/auth/tokens", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.headers["X-Subject-Token"]

    def _env(self) -> dict:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        return env

    def start(self) -> CyborgServer:
        with open(self.config, "w") as handle:
            handle.write(CONFIG.format(workdir=self.workdir, port=self.port, standin=self.standin_port))
        with open(os.path.join(self.workdir, "api-paste.ini"), "w") as handle:
            handle.write(API_PASTE)
        self.set_servers([])
        with open(self.users_file, "w") as handle:
            json.dump(USERS, handle)
        subprocess.run(
            [os.path.join(self.venv, "bin", "cyborg-dbsync"), "--config-file", self.config, "create_schema"],
            env=self._env(),
            check=True,
            capture_output=True,
        )
        argv = [self.python, os.path.join(HERE, "cyborg_wsgi.py"), self.config, str(self.port), str(self.standin_port),
                self.events_file, self.servers_file, ADMIN_PROJECT, self.users_file]  # fmt: skip
        self.launch(argv, self._env(), "cyborg.out")

        def ready() -> bool:
            status, _body = self.request("GET", "/v2/device_profiles")
            return status == 200

        return self.await_ready(ready, CyborgUnavailable, "Cyborg", f"{self.workdir}/cyborg.out and cyborg.log", 0.2)

    # -- raw HTTP, as a project member, an admin or Nova's service user ----------------------------
    def request(
        self,
        method: str,
        path: str,
        body=None,
        project: str | None = ADMIN_PROJECT,
        roles: str = "admin,member,reader",
        service: bool = False,
        microversion: str = MICROVERSION,
    ):
        headers = {
            "OpenStack-API-Version": f"accelerator {microversion}",
            "X-Roles": roles,
            "X-User-Id": "accel-test-user",
        }
        if project is not None:
            headers["X-Project-Id"] = project
        if service:
            headers["X-Service-Roles"] = "service"
        return self.json_request(method, path, body, headers)

    def seed(self, *specs: dict) -> list[dict]:
        """For each spec: a device, its control path, one deployable (provider ``rp_uuid``), attributes and
        attach handles (see cyborg_seed.py), all in one process."""
        proc = subprocess.run(
            [self.python, os.path.join(HERE, "cyborg_seed.py"), self.config, json.dumps(list(specs))],
            env=self._env(),
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def age(self, arq_uuid: str, seconds: int) -> None:
        """Set an ARQ's created_at and updated_at ``seconds`` back in Cyborg's database, as if it had been
        left alone that long (the report counts from the last update)."""
        when = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=seconds)).replace(tzinfo=None)
        with contextlib.closing(sqlite3.connect(os.path.join(self.workdir, "cyborg.sqlite"), timeout=10)) as db:
            changed = db.execute(
                "UPDATE extended_accelerator_requests SET created_at = ?, updated_at = ? WHERE uuid = ?",
                (when.isoformat(sep=" "), when.isoformat(sep=" "), arq_uuid),
            ).rowcount
            db.commit()
        assert changed == 1, f"no ARQ {arq_uuid} in Cyborg's database"

    def set_servers(self, alive: list[str]) -> None:
        """The servers the compute stand-in lists (the instances that exist)."""
        with open(self.servers_file, "w") as handle:
            json.dump(list(alive), handle)

    def events(self) -> list[dict]:
        """The external events Cyborg sent to Nova (the stand-in's record)."""
        if not os.path.exists(self.events_file):
            return []
        with open(self.events_file) as handle:
            return [json.loads(line) for line in handle if line.strip()]


if __name__ == "__main__":  # manual use: python -m tests.support.cyborg_server
    with CyborgServer() as server:
        print(server.url, flush=True)
        try:
            server.proc.wait()
        except KeyboardInterrupt:
            sys.exit(0)
