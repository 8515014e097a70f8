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
INSTANCE = "6a7d0000-0000-4000-8000-00000000c001"


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
    # The instance on the lost GPU holds its VCPU and memory on t4-a too, as every Nova instance does.
    t4_a["usages"] = dict(t4_a.get("usages") or {}, VCPU=4, MEMORY_MB=8192)
    fleet["consumers"] = [
        {
            "uuid": INSTANCE,
            "allocations": {
                t4_a["uuid"]: {"resources": {"VCPU": 4, "MEMORY_MB": 8192}},
                ORPHAN: {"resources": {"CUSTOM_NVIDIA_T4": 1}},
            },
        }
    ]
    fleet["resource_classes"] = ["CUSTOM_VGPU_A16_4Q"]
    with open(os.path.join(EXAMPLE, "group_vars", "all", "audit.yml")) as handle:
        flavors = yaml.safe_load(handle)["accel_audit_flavors"]
    return {"hosts": facts, "deployed": deployed, "fleet": fleet, "flavors": flavors}


HEALTHY_ALIAS = json.dumps(
    {
        "name": "t4",
        "vendor_id": "10de",
        "product_id": "1eb8",
        "device_type": "type-PCI",
        "resource_class": "CUSTOM_NVIDIA_T4",
    }
)
A16_VFS = ",".join(f"0000:{bus}:00.{fn}" for bus in (84, 85, 86, 87) for fn in (4, 5, 6, 7))


def healthy_files() -> dict[str, str]:
    """The example's overrides without its defects, written by hand: the alias once in nova.conf (every
    service reads it), pci_in_placement on nova-api, nova-scheduler and nova-conductor, one vGPU type."""
    spec = '{"vendor_id": "10de", "product_id": "1eb8", "resource_class": "CUSTOM_NVIDIA_T4"}'
    t4 = f"# Written by hand.\n[pci]\ndevice_spec = {spec}\nreport_in_placement = true\n"
    filters = "ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,ServerGroupAntiAffinityFilter,"
    return {
        "nova.conf": f"[pci]\nalias = {HEALTHY_ALIAS}\n",
        "nova/nova-api.conf": "[filter_scheduler]\npci_in_placement = True\n",
        "nova/nova-scheduler.conf": (
            f"[filter_scheduler]\npci_in_placement = true\nenabled_filters = {filters}"
            "ServerGroupAffinityFilter, PciPassthroughFilter\n"
        ),
        "nova/nova-conductor.conf": "[filter_scheduler]\npci_in_placement = true\n",
        "nova/t4-a/nova.conf": t4,
        "nova/t4-b/nova.conf": t4,
        "nova/a16-a/nova.conf": (
            "[pci]\nreport_in_placement = true\n[devices]\nenabled_mdev_types = nvidia-735\n"
            f"[mdev_nvidia-735]\ndevice_addresses = {A16_VFS}\n"
        ),
    }


def healthy(dest: str) -> dict:
    """The example cloud as a careful operator built it by hand: roots with every T4 on vfio-pci and the
    overrides of :func:`healthy_files` under ``dest/kolla-config``; returns the hosts' facts."""
    shutil.rmtree(dest, ignore_errors=True)
    facts = {}
    for host, name in hosts().items():
        facts[host] = discover(build_root(load_profile(name), os.path.join(dest, "roots", host)))[0]
    for name, text in healthy_files().items():
        path = os.path.join(dest, "kolla-config", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)
    return facts


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
