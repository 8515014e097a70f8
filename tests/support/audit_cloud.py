"""A small healthy GPU cloud for the audit: fake roots from hardware profiles, the Nova config its policy
renders (as deployed files in the kolla layout), the providers nova-compute reports, a flavor catalog.

Hosts: ``t4-01`` (configured-t4: a T4 on vfio-pci, passthrough), ``a16-01`` (vgpu-a16: vGPU type
nvidia-735 on the A16's VFs), ``mig-01`` (mig-a100: one GPU with a MIG layout the policy keeps) and the
control host ``ctl-01`` (nova-api, nova-scheduler, nova-conductor). ``healthy(dest, sriov=True)`` adds
``nic-01`` (sriov-nic: a ConnectX-6 with 8 VFs handed out for passthrough) and ``l40s-01`` (vgpu-l40s:
vGPU 17 with type 1155 on four VFs of each L40S, as the prepare stage leaves them). Tests plant one defect
at a time.
"""

from __future__ import annotations

import copy
import json
import os

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import Options, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import host_inputs
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import nova_fleet
from tests.support.fake_sysfs import build_root, load_profile

PROFILES = {"t4-01": "configured-t4", "a16-01": "vgpu-a16", "mig-01": "mig-a100"}
SRIOV_PROFILES = {"nic-01": "sriov-nic", "l40s-01": "vgpu-l40s"}
GPU_HOSTS = ("t4-01", "a16-01", "nic-01", "l40s-01")
L40S_TYPE = "1155"
CONTROL = "ctl-01"
GPU_HOST_TRAIT = "CUSTOM_GPU_HOST"
POLICY = [
    {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough",
     "resource_class": "CUSTOM_NVIDIA_T4"},
    {"name": "a16-4q", "vendor_id": "10de", "product_id": "25b6", "mode": "vgpu", "mdev_type": "nvidia-735",
     "mdev_class": "CUSTOM_VGPU_A16_4Q"},
    {"name": "a100-mig", "vendor_id": "10de", "product_id": "20f1", "mode": "mig", "addresses": ["0000:3b:00.0"],
     "mig_layout": [{"profile": "3g.20gb", "count": 1}, {"profile": "2g.10gb", "count": 1},
                    {"profile": "1g.5gb", "count": 2}]},
]  # fmt: skip
SRIOV_POLICY = [
    {"name": "cx6-vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough"},
    {"name": "l40s-4q", "vendor_id": "10de", "product_id": "26b9", "mode": "vgpu", "mdev_type": L40S_TYPE, "vfs": 4},
]
GPU_IMAGE = {"hw_machine_type": "q35", "hw_firmware_type": "uefi"}
FLAVORS = [
    {"name": "gpu.t4", "vcpus": 4, "ram": 8192, "disk": 20, "extra_specs": {"pci_passthrough:alias": "t4:1"},
     "image_properties": GPU_IMAGE},
    {"name": "vgpu.a16", "vcpus": 4, "ram": 8192, "disk": 20,
     "extra_specs": {"resources:CUSTOM_VGPU_A16_4Q": "1"}, "image_properties": GPU_IMAGE},
    {"name": "m1.small", "vcpus": 2, "ram": 2048, "disk": 20,
     "extra_specs": {f"trait:{GPU_HOST_TRAIT}": "forbidden"}},
]  # fmt: skip


SRIOV_FLAVORS = [
    {"name": "net.cx6", "vcpus": 4, "ram": 8192, "disk": 20, "extra_specs": {"pci_passthrough:alias": "cx6-vf:1"}},
    {"name": "vgpu.l40s", "vcpus": 4, "ram": 8192, "disk": 20, "extra_specs": {"pci_passthrough:alias": "l40s-4q:1"},
     "image_properties": GPU_IMAGE},
]  # fmt: skip


def build_facts(dest: str, profiles: dict | None = None) -> tuple[dict, dict]:
    """``({host: facts}, {host: root})``; ``profiles`` may replace a host's profile (name or dict) or add hosts.
    The L40S VFs get the vGPU type the prepare stage gives them (nvidia/current_vgpu_type)."""
    facts, roots = {}, {}
    for host, profile in {**PROFILES, **(profiles or {})}.items():
        roots[host] = build_root(profile, os.path.join(dest, host))
        if profile == "vgpu-l40s":
            set_vgpu_type(roots[host], L40S_TYPE)
        facts[host] = discover(roots[host])[0]
    return facts, roots


def set_vgpu_type(root: str, vgpu_type: str, addresses: list[str] | None = None) -> None:
    """Write ``vgpu_type`` to nvidia/current_vgpu_type of the VFs (all of them, or ``addresses``)."""
    devices = os.path.join(root, "sys", "bus", "pci", "devices")
    for address in sorted(os.listdir(devices)):
        path = os.path.join(devices, address, "nvidia", "current_vgpu_type")
        wanted = addresses is None or address in addresses
        if wanted and os.path.exists(os.path.join(devices, address, "physfn")) and os.path.exists(path):
            with open(path, "w") as handle:
                handle.write(f"{vgpu_type}\n")


def profile(name: str) -> dict:
    return copy.deepcopy(load_profile(name))


def deployed_config(facts: dict, policy: list | None = None) -> dict:
    """``{host: {service: config sections}}`` as the nova_config stage renders the policy."""
    rendering = render_fleet(
        host_inputs([{"name": h, "facts": facts[h]} for h in sorted(facts)]),
        policy or POLICY,
        Options(report_in_placement=True, pci_in_placement=True),
    )
    found = {h: {"compute": copy.deepcopy(rendering.compute[h])} for h in sorted(facts)}
    found[CONTROL] = {
        "api": copy.deepcopy(rendering.api),
        "scheduler": copy.deepcopy(rendering.scheduler),
        "conductor": copy.deepcopy(rendering.conductor),
    }
    return found


def fleet(facts: dict, policy: list | None = None) -> dict:
    """What nova-compute reports for these hosts, with the operator's GPU-host trait on the GPU roots."""
    snapshot = nova_fleet(dict(facts), policy or POLICY, report_in_placement=True, disk_gb=500)
    for provider in snapshot["resource_providers"]:
        for key in ("numa_cells", "pci_pools", "disabled"):
            provider.pop(key, None)
        if provider["parent_provider_uuid"] is None and provider["name"] in GPU_HOSTS:
            provider["traits"] = sorted({*provider["traits"], GPU_HOST_TRAIT})
    return snapshot


def healthy(dest: str, sriov: bool = False) -> dict:
    facts, roots = build_facts(dest, SRIOV_PROFILES if sriov else None)
    policy = POLICY + SRIOV_POLICY if sriov else POLICY
    return {
        "hosts": facts,
        "roots": roots,
        "deployed": deployed_config(facts, policy),
        "fleet": fleet(facts, policy),
        "flavors": copy.deepcopy(FLAVORS + (SRIOV_FLAVORS if sriov else [])),
        "policy": copy.deepcopy(policy),
    }


def write_kolla(config_dir: str, deployed: dict) -> None:
    """The deployed config as Kolla-Ansible override files (the layout the nova_config stage writes)."""
    files = {}
    for host, services in deployed.items():
        if "compute" in services:
            files[f"nova/{host}/nova.conf"] = services["compute"]
        for service in ("api", "scheduler", "conductor"):
            if service in services:
                files[f"nova/nova-{service}.conf"] = services[service]
    for path, sections in files.items():
        full = os.path.join(config_dir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as handle:
            handle.write(render_text(sections))


def dumps(value) -> str:
    return json.dumps(value, sort_keys=True)
