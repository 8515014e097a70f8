"""The hand-built example cloud of ``make audit-example`` (inventories/audit-example, docs/audit.md).

``build(dest)`` makes the fake roots of its hosts (hardware profiles, with today's host state: the T4 of
t4-b back on the nvidia driver after a driver update), copies the deployed Kolla-Ansible overrides
(inventories/audit-example/kolla-config) and returns the Placement content nova-compute reports for that
config, plus what hand work left there: a resource class created for a vGPU flavor and the provider of
a GPU that fell off t4-a's bus, with an instance still on it. ``main()`` loads that into a local
Placement and runs playbooks/audit.yml on the example inventory.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys

import yaml

importlib.import_module("conftest")  # run as a script: makes ansible_collections.accel.openstack importable
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover  # noqa: E402
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot  # noqa: E402
from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import adopt  # noqa: E402
from ansible_collections.accel.openstack.plugins.module_utils._nova.deployed import read_kolla  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import nova_fleet  # noqa: E402
from tests.support.fake_sysfs import build_root, load_profile  # noqa: E402
from tests.support.placement_server import REPO, PlacementServer  # noqa: E402

EXAMPLE = os.path.join(REPO, "inventories", "audit-example")
ORPHAN = "6a7d0000-0000-4000-8000-0000000000b1"


def hosts() -> dict[str, str]:
    with open(os.path.join(EXAMPLE, "hosts.yml")) as handle:
        inventory = yaml.safe_load(handle)
    found = inventory["all"]["children"]["compute"]["hosts"]
    return {name: found[name]["accel_profile"] for name in found}


def build(dest: str) -> dict:
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    facts = {}
    for host, name in hosts().items():
        profile = load_profile(name)
        if host == "t4-b":  # a driver update rebound the T4 to nvidia
            for device in profile["devices"]:
                if device.get("product_id") == "1eb8":
                    device["driver"] = "nvidia"
        facts[host] = discover(build_root(profile, os.path.join(dest, "roots", host)))[0]
    config_dir = os.path.join(dest, "kolla-config")
    shutil.copytree(os.path.join(EXAMPLE, "kolla-config"), config_dir)
    read = read_kolla(HostRoot("/"), config_dir, {h: ["compute"] for h in facts})
    read.update(read_kolla(HostRoot("/"), config_dir, {"ctl-a": ["api", "scheduler", "conductor"]}))
    deployed = {h: entry["services"] for h, entry in read.items()}
    adopted = adopt({h: deployed[h]["compute"] for h in facts}, facts)
    fleet = nova_fleet(facts, adopted["accel_device_policy"], report_in_placement=True, disk_gb=800)
    for record in fleet["resource_providers"]:
        for key in ("numa_cells", "pci_pools", "disabled"):
            record.pop(key, None)
    t4_a = next(r for r in fleet["resource_providers"] if r["name"] == "t4-a")
    fleet["resource_providers"].append(
        {
            "uuid": ORPHAN,
            "name": "t4-a_0000:B1:00.0",
            "parent_provider_uuid": t4_a["uuid"],
            "inventories": {"CUSTOM_NVIDIA_T4": {"total": 1, "max_unit": 1}},
            "usages": {"CUSTOM_NVIDIA_T4": 1},
            "traits": ["COMPUTE_MANAGED_PCI_DEVICE", "OWNER_NOVA"],
            "aggregates": [],
        }
    )
    fleet["resource_classes"] = ["CUSTOM_VGPU_A16_4Q"]
    with open(os.path.join(EXAMPLE, "group_vars", "all", "audit.yml")) as handle:
        flavors = yaml.safe_load(handle)["accel_audit_flavors"]
    return {"hosts": facts, "deployed": deployed, "fleet": fleet, "flavors": flavors}


def main() -> int:
    from tests.support.placement_loader import load_fleet

    dest = os.environ.get("ACCEL_AUDIT_EXAMPLE_DIR") or os.path.join(REPO, ".audit-example")
    cloud = build(dest)
    os.makedirs(os.path.join(dest, "placement"))
    server = PlacementServer(os.path.join(dest, "placement"))
    print(f"starting a local Placement (SQLite in {dest}/placement) ...", flush=True)
    server.start()
    try:
        load_fleet(server, cloud["fleet"])
        extra = json.dumps({"accel_placement_auth": server.auth, "accel_audit_fail_on": "never"})
        playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
        env = dict(os.environ, ACCEL_AUDIT_EXAMPLE_DIR=dest)
        cmd = [playbook, "playbooks/audit.yml", "-i", "inventories/audit-example", "-e", extra]
        status = subprocess.call(cmd, cwd=REPO, env=env)
        print(f"\nreport: {dest}/accel-audit.json; adopted policy: {dest}/accel-adopted-policy.yml", flush=True)
        return status
    finally:
        server.close()


if __name__ == "__main__":
    sys.exit(main())
