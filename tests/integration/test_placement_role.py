"""playbooks/placement.yml on the demo fleet against the real Placement, read back with osc-placement."""

from __future__ import annotations

import json
import sys

import pytest

from tests.support import fake_sysfs
from tests.support.ansible_runner import run_playbook, task_results, total_changed
from tests.support.openstack_cli import osc

pytestmark = pytest.mark.placement


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    dest = tmp_path_factory.mktemp("demo")
    fake_sysfs.build_inventory_roots(fake_sysfs.DEMO_INVENTORY, str(dest / "roots"))
    return str(dest)


def test_role_registers_the_demo_fleet_as_nova_reports_it_and_converges(placement, demo_dir):
    extra = {"accel_placement_auth": placement.auth}
    first = run_playbook("playbooks/placement.yml", "inventories/demo", extra, ACCEL_DEMO_DIR=demo_dir)
    assert first["rc"] == 0, first["stderr"] + first["stdout"]
    registered = task_results(first, "Register every host's providers in one call")
    (result,) = registered.values()
    assert result["changed"] is True
    calls = sum(result["api_calls"].values())
    assert calls <= 4 * len(result["providers"]), result["api_calls"]

    providers = {row["name"]: row for row in osc(placement, "resource", "provider", "list")}
    node = providers["hgx-01"]
    gpus = [name for name in providers if name.startswith("hgx-01_0000:")]
    assert len(gpus) == 8 and all(providers[g]["parent_provider_uuid"] == node["uuid"] for g in gpus)
    assert any(name.startswith("vgpu-a16-01_pci_0000_") for name in providers)
    inventory = {
        row["resource_class"] for row in osc(placement, "resource", "provider", "inventory", "list", node["uuid"])
    }
    assert {"VCPU", "MEMORY_MB", "DISK_GB"} <= inventory
    gpu_inventory = osc(placement, "resource", "provider", "inventory", "list", providers[gpus[0]]["uuid"])
    assert [row["resource_class"] for row in gpu_inventory] == ["CUSTOM_NVIDIA_H100"]
    gpu_traits = {
        row["name"] for row in osc(placement, "resource", "provider", "trait", "list", providers[gpus[0]]["uuid"])
    }
    assert {"CUSTOM_GPU_NVLINK", "COMPUTE_MANAGED_PCI_DEVICE"} <= gpu_traits
    traits = {row["name"] for row in osc(placement, "trait", "list")}
    assert {"CUSTOM_GPU_NVLINK", "CUSTOM_VGPU_A16"} <= traits
    summary = task_results(first, "Summarise the providers in Placement")
    assert f"{len(providers)} providers registered" in next(iter(summary.values()))["msg"]

    checked = run_playbook("playbooks/placement.yml", "inventories/demo", extra, check=True, ACCEL_DEMO_DIR=demo_dir)
    assert checked["rc"] == 0 and total_changed(checked) == 0, checked["stats"]
    second = run_playbook("playbooks/placement.yml", "inventories/demo", extra, ACCEL_DEMO_DIR=demo_dir)
    assert second["rc"] == 0 and total_changed(second) == 0, second["stats"]
    (again,) = task_results(second, "Register every host's providers in one call").values()
    # an unchanged provider costs its inventory read; the rest is shared: the provider list and one
    # filtered list per distinct trait set of the fleet (the demo policy has a handful)
    assert set(again["api_calls"]) == {"GET"}
    assert again["api_calls"]["GET"] - len(again["providers"]) <= 8, again["api_calls"]


def test_role_takes_an_explicit_provider_list(placement):
    explicit = [
        {"name": "lab-1", "parent_name": None, "inventories": {"VCPU": {"total": 8, "reserved": 0, "min_unit": 1,
         "max_unit": 8, "step_size": 1, "allocation_ratio": 4.0}}, "traits": ["COMPUTE_NODE"], "aggregates": []},
        {"name": "lab-1_0000:41:00.0", "parent_name": "lab-1", "inventories": {"CUSTOM_PCI_10DE_1EB8": {"total": 1}},
         "traits": ["CUSTOM_NVIDIA_T4"], "aggregates": []},
    ]  # fmt: skip
    extra = {
        "accel_placement_auth": placement.auth,
        "accel_placement_simulate_compute": True,
        "accel_placement_providers": explicit,
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
    }
    first = run_playbook("playbooks/placement.yml", "lab-1,", extra)
    assert first["rc"] == 0, first["stderr"] + first["stdout"]
    providers = {row["name"]: row for row in osc(placement, "resource", "provider", "list")}
    assert providers["lab-1_0000:41:00.0"]["parent_provider_uuid"] == providers["lab-1"]["uuid"]
    missing = run_playbook("playbooks/placement.yml", "lab-1,", {"accel_placement_providers": explicit})
    assert missing["rc"] != 0 and "accel_placement_auth is empty" in json.dumps(missing)
