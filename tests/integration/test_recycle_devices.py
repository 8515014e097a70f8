"""recycle_devices against the real Placement, with Nova 34's own one-time-use reservation.

nova-compute (Nova's report client and PCI translator, in the nova venv) reserves two one-time-use GPUs
an instance used; the instances go; the role cleans them on their host and returns only the one whose
cleaning succeeded. Nova's next updates leave both as the role left them.
"""

from __future__ import annotations

import os
import sys

import pytest
import yaml

from tests.support import nova_compute_update
from tests.support.ansible_runner import run_playbook, task_results, total_changed

pytestmark = pytest.mark.placement

HOST = "cn-otu"
COMPUTE_UUID = "4b0e4a6e-9f55-4a0d-8c36-0c3a7c6e2b10"
GOOD, BAD = "0000:41:00.0", "0000:42:00.0"
COMPUTE = """
[pci]
report_in_placement = True
device_spec = {"vendor_id": "10de", "product_id": "2331", "one_time_use": "true"}
"""


def _gpu(address: str) -> dict:
    return {"address": address, "vendor_id": "10de", "product_id": "2331", "class_code": "030200", "numa_node": 0}


def nova_compute(placement, *allocated_rounds: dict) -> list[dict]:
    """One nova-compute start; one periodic update per map of {address: instance holding it}."""
    case = {
        "placement": placement.url,
        "hostname": HOST,
        "compute_uuid": COMPUTE_UUID,
        "compute": COMPUTE,
        "devices": [_gpu(GOOD), _gpu(BAD)],
        "allocated_rounds": list(allocated_rounds),
    }
    return nova_compute_update.ask([case])[0]["rounds"]


def reserved(placement) -> dict:
    body = placement.request("GET", f"/resource_providers?in_tree={COMPUTE_UUID}")[1]
    out = {}
    for provider in body["resource_providers"]:
        if provider["parent_provider_uuid"]:
            inv = placement.request("GET", f"/resource_providers/{provider['uuid']}/inventories")[1]["inventories"]
            out[provider["name"][len(HOST) + 1 :].lower()] = inv["CUSTOM_PCI_10DE_2331"]["reserved"]
    return out


def test_role_cleans_and_returns_only_what_it_cleaned(placement, tmp_path):
    # An instance used each device: Nova reserves them; the instances are deleted: Nova keeps them reserved.
    used = {GOOD: "0d5b6a1e-0000-4000-8000-000000000001", BAD: "0d5b6a1e-0000-4000-8000-000000000002"}
    assert nova_compute(placement, used, {}) == [{"ok": True}, {"ok": True}]
    assert reserved(placement) == {GOOD: 1, BAD: 1}

    inventory = tmp_path / "hosts.yml"
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": local, HOST: local}}}))
    marks = tmp_path / "marks"
    marks.mkdir()
    (marks / f"fail-{BAD}").write_text("ECC errors remain\n")
    # Data reaches the command as arguments, never inside the shell text.
    script = 'test ! -e "$1/fail-$2" && touch "$1/cleaned-$2"'
    extra = {
        "accel_placement_auth": placement.auth,
        "recycle_devices_command": ["sh", "-c", script, "sh", str(marks), "{address}"],
    }

    checked = run_playbook("playbooks/recycle_devices.yml", str(inventory), extra, check=True)
    assert checked["rc"] == 0, checked["stderr"] + checked["stdout"]
    said = task_results(checked, "Say what would be cleaned and returned")["localhost"]["results"]
    assert [r["item"]["address"] for r in said] == [GOOD, BAD] and "then set reserved to 0" in said[0]["msg"]
    assert reserved(placement) == {GOOD: 1, BAD: 1} and sorted(os.listdir(marks)) == [f"fail-{BAD}"]

    applied = run_playbook("playbooks/recycle_devices.yml", str(inventory), extra)
    assert applied["rc"] != 0
    failure = task_results(applied, "Fail for the devices whose cleaning failed (they stay reserved)")["localhost"]
    assert f"{HOST}_{BAD.upper()}" in failure["msg"] and f"{HOST}_{GOOD.upper()}" not in failure["msg"]
    assert reserved(placement) == {GOOD: 0, BAD: 1}
    assert sorted(os.listdir(marks)) == [f"cleaned-{GOOD}", f"fail-{BAD}"]

    # nova-compute's next update neither reserves the returned device again nor frees the other.
    assert nova_compute(placement, {}) == [{"ok": True}]
    assert reserved(placement) == {GOOD: 0, BAD: 1}

    (marks / f"fail-{BAD}").unlink()
    again = run_playbook("playbooks/recycle_devices.yml", str(inventory), extra)
    assert again["rc"] == 0, again["stderr"] + again["stdout"]
    assert reserved(placement) == {GOOD: 0, BAD: 0}
    last = run_playbook("playbooks/recycle_devices.yml", str(inventory), extra)
    assert last["rc"] == 0 and total_changed(last) == 0, last["stats"]


def test_role_refuses_a_shell_string_as_command(placement, tmp_path):
    extra = {
        "accel_placement_auth": placement.auth,
        "recycle_devices_command": "gpu-scrub {address}",
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
    }
    result = run_playbook("playbooks/recycle_devices.yml", "localhost,", extra)
    assert result["rc"] != 0
    refused = task_results(result, "Check the cleaning command")["localhost"]
    assert refused.get("failed") and "list of strings" in refused["msg"], refused
    assert "Read the providers" not in str(result["plays"])
