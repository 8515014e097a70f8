"""playbooks/replace_hardware.yml on two demo hosts against the real Placement.

A GPU board of hgx-01 is swapped at the same address while an instance still holds its provider: the
playbook recognises it from the facts (the board serial nvidia-smi reports), renders Nova's configuration
and registers Placement again for hgx-01 only, reports the provider with its allocation, deletes nothing,
and reports nothing on the next run.
"""

from __future__ import annotations

import json
import os

import pytest
import yaml

from tests.support.ansible_runner import REPO, run_module, run_playbook, task_results
from tests.support.fake_nvidia_smi import STATE, render_recorded
from tests.support.fake_sysfs import build_root

pytestmark = pytest.mark.placement

HOSTS = {"hgx-01": "hgx-h100", "mig-01": "mig-a100"}
SWAPPED = "0000:18:00.0"
INSTANCE = "9e0c5d1a-6f0e-4c1b-8e7a-7d1f3c2b9a10"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    demo = tmp_path_factory.mktemp("replace")
    inventory = demo / "inventory"
    inventory.mkdir()
    hosts = {"all": {"children": {"compute": {"hosts": {h: {"accel_profile": p} for h, p in HOSTS.items()}}}}}
    (inventory / "hosts.yml").write_text(yaml.safe_dump(hosts))
    os.symlink(os.path.join(REPO, "inventories", "demo", "group_vars"), inventory / "group_vars")
    for host, profile in HOSTS.items():
        build_root(profile, str(demo / "roots" / host))
    return str(demo), str(inventory)


def _facts(root: str) -> list[dict]:
    return run_module("pci_facts", {"root": root})["ansible_facts"]["accel_pci_devices"]


def test_a_swapped_board_re_registers_only_its_host_and_its_provider_is_kept(placement, fleet):
    demo, inventory = fleet
    extra = {"accel_placement_auth": placement.auth}
    registered = run_playbook("playbooks/placement.yml", inventory, extra, ACCEL_DEMO_DIR=demo)
    assert registered["rc"] == 0, registered["stderr"] + registered["stdout"]
    for host in HOSTS:  # the record of the hardware as it was
        root = os.path.join(demo, "roots", host)
        assert run_module("hardware_record", {"root": root, "devices": _facts(root), "save": True})["changed"]
    gpu = placement.request("GET", f"/resource_providers?name=hgx-01_{SWAPPED.upper()}")[1]["resource_providers"][0]
    inventories = placement.request("GET", f"/resource_providers/{gpu['uuid']}/inventories")[1]["inventories"]
    (rc,) = inventories
    body = {
        "allocations": {gpu["uuid"]: {"resources": {rc: 1}}},
        "project_id": "p1",
        "user_id": "u1",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    assert placement.request("PUT", f"/allocations/{INSTANCE}", body)[0] == 204

    root = os.path.join(demo, "roots", "hgx-01")
    with open(root + STATE) as handle:
        state = json.load(handle)
    next(g for g in state["gpus"] if g["address"] == SWAPPED)["serial"] = "1652000000042"
    render_recorded(root, state)

    swapped = run_playbook("playbooks/replace_hardware.yml", inventory, extra, ACCEL_DEMO_DIR=demo)
    assert swapped["rc"] == 0, swapped["stderr"] + swapped["stdout"]
    said = task_results(swapped, "Say what changed")
    assert [r["item"]["address"] for r in said["hgx-01"]["results"]] == [SWAPPED]
    assert "skipped" in json.dumps(said.get("mig-01", {"skipped": True}))
    second_play_hosts = {h for task in swapped["plays"][1]["tasks"] for h in task["hosts"]}
    assert second_play_hosts == {"hgx-01"}
    reported = task_results(
        swapped, "Report the old providers (none is deleted; one with allocations keeps them until its instances leave)"
    )
    (line,) = [r["msg"] for r in reported["hgx-01"]["results"]]
    assert line.startswith(f"hgx-01_{SWAPPED.upper()}: holds") and rc in line
    assert placement.request("GET", f"/allocations/{INSTANCE}")[1]["allocations"][gpu["uuid"]]["resources"] == {rc: 1}

    again = run_playbook("playbooks/replace_hardware.yml", inventory, extra, ACCEL_DEMO_DIR=demo)
    assert again["rc"] == 0 and again["plays"][1]["tasks"] == [], again["stderr"]
