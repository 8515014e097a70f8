"""recycle_devices against the real Placement, with Nova 34's own one-time-use reservation.

nova-compute (Nova's report client and PCI translator, in the nova venv) reserves two one-time-use GPUs
an instance used; the instances go; the role cleans them on their host and returns only the one whose
cleaning succeeded. Nova's next updates leave both as the role left them.
"""

from __future__ import annotations

import os
import shlex
import sys

import pytest
import yaml

from tests.support.ansible_runner import run_playbook, task_results, total_changed
from tests.support.nova_compute import compute_case, update

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
    devices = [_gpu(GOOD), _gpu(BAD)]
    case = compute_case(
        HOST, None, [COMPUTE], node_uuid=COMPUTE_UUID, devices=devices, allocated_rounds=list(allocated_rounds)
    )
    return update(placement.url, [case])[0]["rounds"]


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
    assert [r["item"]["address"] for r in said] == [GOOD, BAD]
    assert said[0]["msg"] == (
        f"{HOST}_{GOOD.upper()} (CUSTOM_PCI_10DE_2331): run sh -c {shlex.quote(script)} sh {shlex.quote(str(marks))} "
        f"{GOOD} on {HOST}, then set reserved to 0"
    )
    assert reserved(placement) == {GOOD: 1, BAD: 1} and sorted(os.listdir(marks)) == [f"fail-{BAD}"]

    applied = run_playbook("playbooks/recycle_devices.yml", str(inventory), extra)
    assert applied["rc"] != 0
    failure = task_results(applied, "Fail for the devices not cleaned (they stay reserved)")["localhost"]
    assert failure["msg"].startswith(f"cleaning failed on {HOST}_{BAD.upper()} (exit status 1); those devices stay")
    assert f"{HOST}_{GOOD.upper()}" not in failure["msg"]
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


ODD_HOST = "cn-otu-odd"
ODD_ROOT = "5a1c7e42-2b6d-4f0e-8a3c-1d9e7f5b3c21"
ODD = "6b2d8f53-3c7e-4a1f-9b4d-2e0f8a6c4d32"


def _odd_device(placement) -> None:
    """A one-time-use device provider whose name carries no PCI address, reserved whole and unused."""
    assert placement.request("POST", "/resource_providers", {"name": ODD_HOST, "uuid": ODD_ROOT})[0] == 200
    child = {"name": f"{ODD_HOST}_spare-gpu", "uuid": ODD, "parent_provider_uuid": ODD_ROOT}
    assert placement.request("POST", "/resource_providers", child)[0] == 200
    placement.request("PUT", "/resource_classes/CUSTOM_PCI_10DE_2331")
    body = {"resource_provider_generation": 0, "inventories": {"CUSTOM_PCI_10DE_2331": {"total": 1, "reserved": 1}}}
    assert placement.request("PUT", f"/resource_providers/{ODD}/inventories", body)[0] == 200
    generation = placement.request("GET", f"/resource_providers/{ODD}")[1]["generation"]
    traits = {"resource_provider_generation": generation, "traits": ["HW_PCI_ONE_TIME_USE"]}
    assert placement.request("PUT", f"/resource_providers/{ODD}/traits", traits)[0] == 200


def _odd_reserved(placement) -> int:
    return placement.request("GET", f"/resource_providers/{ODD}/inventories")[1]["inventories"]["CUSTOM_PCI_10DE_2331"][
        "reserved"
    ]


def test_a_device_whose_address_is_unknown_is_never_cleaned_blind_nor_returned(placement, tmp_path):
    _odd_device(placement)
    inventory = tmp_path / "hosts.yml"
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": local, ODD_HOST: local}}}))
    ran = tmp_path / "ran"
    ran.mkdir()
    extra = {
        "accel_placement_auth": placement.auth,
        "recycle_devices_hosts": [ODD_HOST],
        "recycle_devices_command": ["sh", "-c", 'touch "$1/address=$2" "$1/bus_id=$3"', "sh", str(ran), "{address}",
                                    "{bus_id}"],
    }  # fmt: skip

    checked = run_playbook("playbooks/recycle_devices.yml", str(inventory), extra, check=True)
    assert checked["rc"] != 0 and _odd_reserved(placement) == 1 and os.listdir(ran) == []
    applied = run_playbook("playbooks/recycle_devices.yml", str(inventory), extra)
    assert applied["rc"] != 0
    failure = task_results(applied, "Fail for the devices not cleaned (they stay reserved)")["localhost"]
    assert failure["msg"] == (
        f"provider {ODD_HOST}_spare-gpu ({ODD}): its name carries no PCI address (Nova names a device's provider "
        "<host>_<ADDRESS>), so the cleaning command cannot be told which device to clean and the device stays "
        f'reserved; give its address in recycle_devices_addresses (e.g. {{{ODD}: "0000:41:00.0"}}) and run again, '
        f"or clean it by hand and return it with accel.openstack.one_time_use_device provider={ODD}"
    ), failure
    assert os.listdir(ran) == []  # no command ran with an empty address or a bus id of "0000"
    assert _odd_reserved(placement) == 1  # still out of the pool

    # A value that is not a PCI address is refused the same way; nothing runs, nothing is returned.
    hostile = dict(extra, recycle_devices_addresses={ODD: "0000:41:00.0; rm -rf $HOME"})
    refused = run_playbook("playbooks/recycle_devices.yml", str(inventory), hostile)
    failure = task_results(refused, "Fail for the devices not cleaned (they stay reserved)")["localhost"]
    assert refused["rc"] != 0 and "'0000:41:00.0; rm -rf $HOME', which is not a full PCI address" in failure["msg"]
    assert os.listdir(ran) == [] and _odd_reserved(placement) == 1

    # Its address given by the operator: cleaned on that address, then returned.
    given = dict(extra, recycle_devices_addresses={ODD: "0000:4A:00.0"})
    cleaned = run_playbook("playbooks/recycle_devices.yml", str(inventory), given)
    assert cleaned["rc"] == 0, cleaned["stderr"] + cleaned["stdout"]
    assert sorted(os.listdir(ran)) == ["address=0000:4a:00.0", "bus_id=00000000:4A:00.0"]
    assert _odd_reserved(placement) == 0


def test_a_command_that_names_no_device_is_refused_before_anything_runs(placement, tmp_path):
    extra = {
        "accel_placement_auth": placement.auth,
        "recycle_devices_command": ["/usr/local/sbin/gpu-scrub", "--all"],
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
    }
    result = run_playbook("playbooks/recycle_devices.yml", "localhost,", extra)
    assert result["rc"] != 0
    refused = task_results(result, "Resolve each device's address and its cleaning command")["localhost"]
    assert refused.get("failed") and "recycle_devices_command names no device: put {address}" in refused["msg"]
    assert "Run the cleaning command on each device's host" not in str(result["plays"])
