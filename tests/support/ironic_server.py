"""Start and stop the real Ironic 39 (all-in-one ``ironic``: API + conductor, SQLite, noauth) for tests.

Ironic runs from its own venv (``make ironic-venv``, path in ``ACCEL_IRONIC_VENV``). The configuration
is the standalone one DESIGN.md describes: ``rpc_transport = none`` (API and conductor in one process),
the ``fake-hardware`` type with fake interfaces, and the ``agent`` inspect interface so that inspection
rules run when an inventory is posted to ``/v1/continue_inspection``. One server serves a whole test
session (ready in about 8 s); tests create their own nodes and rules and delete them afterwards.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from tests.support.service_process import ServiceProcess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# Inspection rules need 1.96.
MICROVERSION = "1.96"

CONFIG = """[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = accel-test-conductor
debug = false
log_file = {workdir}/ironic.log
enabled_hardware_types = fake-hardware
enabled_boot_interfaces = fake
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake
enabled_inspect_interfaces = agent,fake,no-inspect
default_inspect_interface = agent
enabled_management_interfaces = fake
enabled_power_interfaces = fake
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_vendor_interfaces = fake,no-vendor
enabled_bios_interfaces = fake,no-bios
enabled_firmware_interfaces = fake,no-firmware
enabled_network_interfaces = noop
enabled_storage_interfaces = noop
default_network_interface = noop
default_storage_interface = noop

[api]
host_ip = 127.0.0.1
port = {port}

[dhcp]
dhcp_provider = none

[conductor]
automated_clean = false

[inspector]
require_managed_boot = false

[database]
connection = sqlite:///{workdir}/ironic.sqlite
"""


def ironic_venv() -> str:
    return os.environ.get("ACCEL_IRONIC_VENV") or os.path.join(REPO, ".venv-ironic")


def agent_inventory(profile: dict, keep=None, mac: str = "52:54:00:00:00:01") -> dict:
    """What the inspection agent posts to ``/v1/continue_inspection`` for a host of ``profile``.

    ``profile`` is a hardware profile (roles/simulated_fleet/files/hardware, through ``fake_sysfs.load_profile``);
    ``keep(device)`` chooses the devices the node holds (all by default). The PCI devices go in the
    top-level ``pci_devices`` list, one ``{vendor_id, product_id, class, revision, bus}`` each, as the
    agent's PCI collector sends them; ``interfaces``, ``cpu.architecture`` and ``memory`` are required.
    """
    devices = [d for d in profile["devices"] if keep is None or keep(d)]
    cpus = sum(len(_cpu_list(n["cpus"])) for n in profile.get("numa_nodes", [])) or 8
    memory_mb = sum(n.get("memory_mb", 0) for n in profile.get("numa_nodes", [])) or 65536
    return {
        "inventory": {
            "interfaces": [{"name": "eth0", "mac_address": mac, "ipv4_address": "192.0.2.10"}],
            "cpu": {"architecture": "x86_64", "count": cpus, "model_name": (profile.get("cpu") or {}).get("model")},
            "memory": {"physical_mb": memory_mb, "total": memory_mb * 1024 * 1024},
            "disks": [{"name": "/dev/nvme0n1", "size": 3840755982336}],
        },
        "pci_devices": [
            {
                "vendor_id": str(d["vendor_id"]),
                "product_id": str(d["product_id"]),
                "class": str(d["class_code"]),
                "revision": "a1",
                "bus": d["address"],
            }
            for d in devices
        ],
    }


def _cpu_list(text: str) -> list[int]:
    out: list[int] = []
    for part in str(text).split(","):
        low, _sep, high = part.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    return out


class IronicUnavailable(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class IronicServer(ServiceProcess):
    """One real Ironic process on 127.0.0.1 with a private SQLite database."""

    def __init__(self, workdir: str | None = None):
        self.venv = ironic_venv()
        self.bin = os.path.join(self.venv, "bin")
        if not os.path.exists(os.path.join(self.bin, "ironic")):
            raise IronicUnavailable(
                f"no Ironic venv at {self.venv}; run `make ironic-venv` (tests need the real service)"
            )
        self.workdir = workdir or tempfile.mkdtemp(prefix="ironic-")
        self._own_workdir = workdir is None
        self.proc: subprocess.Popen | None = None
        self.port = free_port()
        self.config = os.path.join(self.workdir, "ironic.conf")
        self._nodes = 0
        self._macs: dict[str, str] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def cloud(self) -> dict:
        """The module ``cloud`` option that reaches this server (no authentication, fixed endpoint)."""
        return {"auth_type": "none", "baremetal_endpoint_override": self.url}

    def start(self) -> IronicServer:
        with open(self.config, "w") as handle:
            handle.write(CONFIG.format(workdir=self.workdir, port=self.port))
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        subprocess.run(
            [os.path.join(self.bin, "ironic-dbsync"), "--config-file", self.config, "create_schema"],
            env=env,
            check=True,
            capture_output=True,
        )
        self.launch([os.path.join(self.bin, "ironic"), "--config-file", self.config], env, "ironic.out")

        def ready() -> bool:
            status, body = self.request("GET", "/v1/conductors")
            return status == 200 and bool(body.get("conductors"))

        logs = f"{self.workdir}/ironic.log and ironic.out"
        return self.await_ready(ready, IronicUnavailable, "Ironic", logs, 0.2)

    # -- raw HTTP (tests use it to create nodes, drive inspection and read back) -----------------
    def request(self, method: str, path: str, body=None, microversion: str = MICROVERSION):
        return self.json_request(method, path, body, {"X-OpenStack-Ironic-API-Version": microversion})

    def wait_state(self, node: str, states: tuple[str, ...], timeout: float = 60, settled: bool = True) -> dict:
        """Poll the node until its provision_state is one of ``states`` (and, when ``settled``, no
        transition is under way); return the node."""
        deadline = time.monotonic() + timeout
        body: dict = {}
        while time.monotonic() < deadline:
            status, body = self.request("GET", f"/v1/nodes/{node}")
            if status == 200 and body["provision_state"] in states and not (settled and body["target_provision_state"]):
                return body
            time.sleep(0.1)
        raise AssertionError(f"node {node} did not reach {states}: {body}")

    def inspect(self, node: str, data: dict) -> dict:
        """Enroll ``node`` (fake hardware), run inspection with the agent interface and post ``data`` as the
        agent would (its interface MAC made unique per node: Ironic looks nodes up by MAC too); return the
        node afterwards."""
        self._nodes += 1
        status, body = self.request("POST", "/v1/nodes", {"name": node, "driver": "fake-hardware"})
        assert status == 201, body
        self._macs[node] = f"52:54:00:00:{self._nodes // 256:02x}:{self._nodes % 256:02x}"
        self.request("PUT", f"/v1/nodes/{node}/states/provision", {"target": "manage"})
        self.wait_state(node, ("manageable",))
        return self.reinspect(node, data)

    def reinspect(self, node: str, data: dict, maintenance: str | None = None) -> dict:
        """Inspect the ``manageable`` node ``node`` again, the agent now sending ``data`` (with the node's own
        MAC); with ``maintenance`` (a reason), the node is put in maintenance first, as an operator does
        with a node whose hardware is being repaired. Return the node afterwards."""
        data = json.loads(json.dumps(data))
        data["inventory"]["interfaces"][0]["mac_address"] = self._macs[node]
        if maintenance is not None:
            status, answer = self.request("PUT", f"/v1/nodes/{node}/maintenance", {"reason": maintenance})
            assert status == 202, answer
        status, body = self.request("GET", f"/v1/nodes/{node}")
        assert status == 200, body
        self.request("PUT", f"/v1/nodes/{node}/states/provision", {"target": "inspect"})
        self.wait_state(node, ("inspect wait",), settled=False)
        status, answer = self.request("POST", f"/v1/continue_inspection?node_uuid={body['uuid']}", data)
        assert status == 202, answer
        return self.wait_state(node, ("manageable", "inspect failed"))

    def delete_node(self, node: str) -> None:
        self.request("DELETE", f"/v1/nodes/{node}")


if __name__ == "__main__":  # manual use: python -m tests.support.ironic_server
    with IronicServer() as server:
        print(server.url, flush=True)
        try:
            server.proc.wait()
        except KeyboardInterrupt:
            sys.exit(0)
