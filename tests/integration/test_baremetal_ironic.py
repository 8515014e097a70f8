"""Bare-metal GPU nodes classed by Ironic's own inspection rules: playbooks/baremetal.yml and the
ironic_inspection_rule module against the real Ironic 39 (fake hardware, SQLite, noauth).

Each node is inspected with the agent inspect interface: the test posts to ``/v1/continue_inspection``
the inventory the inspection agent sends for a host of a hardware profile (roles/simulated_fleet/files/hardware), and
reads the node back from Ironic: matching nodes carry the policy's resource class and traits, the
others nothing.
"""

from __future__ import annotations

import sys

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._ironic.node_classes import baremetal_rules
from tests.support.ansible_runner import run_module, run_playbook, task_results, total_changed
from tests.support.fake_sysfs import load_profile
from tests.support.ironic_server import agent_inventory

POLICY = [
    # A passthrough entry of the same model: the Nova stages use it, the Ironic side ignores it.
    {"name": "h100", "vendor_id": "10de", "product_id": "2330", "mode": "passthrough"},
    {"name": "hgx-h100x8", "vendor_id": "10de", "product_id": "2330", "mode": "baremetal", "count": 8,
     "model": "H100", "interconnect": "nvswitch", "resource_class": "GPU_H100X8", "traits": ["CUSTOM_HGX"]},
    {"name": "h100x2", "vendor_id": "10de", "product_id": "2330", "mode": "baremetal", "count": 2,
     "model": "H100", "resource_class": "gpu-h100x2"},
]  # fmt: skip
HGX = load_profile("hgx-h100")
H100 = [d for d in HGX["devices"] if d["product_id"] == "2330"]


def _no_nvswitch(device):
    return device["class_code"] != "068000"


def _two_gpus(device):
    return _no_nvswitch(device) and (
        device["product_id"] != "2330" or device["address"] in {g["address"] for g in H100[:2]}
    )


def _seven_gpus(device):
    return device["address"] != H100[-1]["address"]


NODES = {
    # node name: (inventory the agent sends, expected resource class, expected traits)
    "bm-hgx": (agent_inventory(HGX), "GPU_H100X8",
               ["CUSTOM_GPU_COUNT_8", "CUSTOM_GPU_H100", "CUSTOM_GPU_NVLINK", "CUSTOM_GPU_NVSWITCH", "CUSTOM_HGX"]),
    "bm-pair": (agent_inventory(HGX, _two_gpus), "gpu-h100x2", ["CUSTOM_GPU_COUNT_2", "CUSTOM_GPU_H100"]),
    # one GPU failed: 7 is neither 8 nor 2, so the node keeps no class rather than a wrong one
    "bm-hgx-7": (agent_inventory(HGX, _seven_gpus), None, []),
    # two H100 on a board with NVSwitch: the pcie entry must not take it
    "bm-pair-nvswitch": (agent_inventory(HGX, lambda d: d["product_id"] != "2330" or d in H100[:2]), None, []),
    "bm-l40s": (agent_inventory(load_profile("vgpu-l40s")), None, []),
    "bm-nic": (agent_inventory(load_profile("sriov-nic")), None, []),
    "bm-no-pci": (dict(agent_inventory(HGX), pci_devices=None), None, []),
}  # fmt: skip


@pytest.fixture(scope="module")
def rules_cleanup(ironic):
    yield
    for rule in baremetal_rules(POLICY):
        run_module("ironic_inspection_rule", {"cloud": ironic.cloud, "name": rule["name"], "state": "absent"})


def _rules(ironic) -> dict:
    status, body = ironic.request("GET", "/v1/inspection_rules?detail=true")
    assert status == 200
    return {r["uuid"]: r for r in body["inspection_rules"]}


def test_role_converges_the_rules_and_inspection_classes_only_matching_nodes(ironic, rules_cleanup):
    extra = {
        "accel_ironic_auth": {"cloud": ironic.cloud},
        "accel_device_policy": POLICY,
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
    }
    checked = run_playbook("playbooks/baremetal.yml", extra_vars=extra, check=True, diff=True)
    assert checked["rc"] == 0, checked["stderr"] + checked["stdout"]
    assert total_changed(checked) == 1 and _rules(ironic) == {}

    applied = run_playbook("playbooks/baremetal.yml", extra_vars=extra)
    assert applied["rc"] == 0, applied["stderr"] + applied["stdout"]
    (converged,) = task_results(applied, "Converge the inspection rules in Ironic").values()
    assert [r["actions"] for r in converged["results"]] == [["create"], ["create"]]
    rules = _rules(ironic)
    assert {r["rule"]["uuid"] for r in converged["results"]} == set(rules)
    assert {r["priority"] for r in rules.values()} == {50}
    (summary,) = task_results(applied, "Report what each node class becomes in Placement").values()
    assert [c["placement_resource_class"] for c in summary["msg"]] == ["CUSTOM_GPU_H100X8", "CUSTOM_GPU_H100X2"]

    again = run_playbook("playbooks/baremetal.yml", extra_vars=extra)
    assert again["rc"] == 0 and total_changed(again) == 0, again["stats"]

    try:
        seen = {name: ironic.inspect(name, data) for name, (data, _rc, _traits) in NODES.items()}
        for name, (_data, resource_class, traits) in NODES.items():
            node = seen[name]
            assert node["provision_state"] == "manageable", (name, node["last_error"])
            _status, body = ironic.request("GET", f"/v1/nodes/{name}/traits")
            assert (node["resource_class"], sorted(body["traits"])) == (resource_class, traits), name
    finally:
        for name in NODES:
            ironic.delete_node(name)


def test_module_updates_in_place_reports_a_diff_and_deletes(ironic):
    base = {"cloud": ironic.cloud, "name": "accel-test-module", "priority": 10,
            "conditions": [{"op": "eq", "args": {"values": ["{inventory[cpu][architecture]}", "x86_64"]}}],
            "actions": [{"op": "add-trait", "args": {"name": "CUSTOM_X86"}}]}  # fmt: skip
    try:
        created = run_module("ironic_inspection_rule", base, diff=True)
        assert created["changed"] and created["actions"] == ["create"] and created["diff"]["before"] == {}
        uuid = created["rule"]["uuid"]
        assert _rules(ironic)[uuid]["conditions"] == base["conditions"]
        assert run_module("ironic_inspection_rule", base)["changed"] is False

        moved = dict(base, priority=20, actions=[{"op": "add-trait", "args": {"name": "CUSTOM_AMD64"}}])
        preview = run_module("ironic_inspection_rule", moved, check=True, diff=True)
        assert preview["changed"] and preview["actions"] == ["update"] and _rules(ironic)[uuid]["priority"] == 10
        assert preview["diff"]["before"]["priority"] == 10 and preview["diff"]["after"]["priority"] == 20
        updated = run_module("ironic_inspection_rule", moved)
        assert updated["actions"] == ["update"]
        assert (_rules(ironic)[uuid]["priority"], _rules(ironic)[uuid]["actions"]) == (20, moved["actions"])

        bad = dict(moved, actions=[{"op": "set-trait", "args": {"name": "CUSTOM_X"}}], priority=10000)
        refused = run_module("ironic_inspection_rule", bad)
        assert refused["failed"] and "set-trait" in refused["msg"] and "0 to 9999" in refused["msg"]
        assert _rules(ironic)[uuid]["priority"] == 20
    finally:
        gone = run_module(
            "ironic_inspection_rule", {"cloud": ironic.cloud, "name": "accel-test-module", "state": "absent"}
        )
    assert gone["actions"] == ["delete"] and uuid not in _rules(ironic)
    assert (
        run_module("ironic_inspection_rule", {"cloud": ironic.cloud, "name": "accel-test-module", "state": "absent"})[
            "changed"
        ]
        is False
    )
