"""Bare-metal GPU nodes classed by Ironic's own inspection rules: playbooks/baremetal.yml and the
ironic_inspection_rule module against the real Ironic 39 (fake hardware, SQLite, noauth).

Each node is inspected with the agent inspect interface: the test posts to ``/v1/continue_inspection``
the inventory the inspection agent sends for a host of a hardware profile (roles/simulated_fleet/files/hardware), and
reads the node back from Ironic: matching nodes carry the policy's resource class and traits, the
others nothing. Nodes are then put in maintenance and inspected again with GPUs missing (their class
and the collection's traits are taken away) and repaired (they come back); a renamed entry's rules are
removed; a 64-GPU node is classed.
"""

from __future__ import annotations

import sys
import time

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._ironic.node_classes import baremetal_rules
from tests.support.ansible_runner import run_module, run_playbook, task_results, total_changed
from tests.support.fake_sysfs import load_profile
from tests.support.ironic_server import agent_inventory

POLICY = [
    # A passthrough entry of the same model: the Nova stages use it, the Ironic side ignores it.
    {"name": "h100", "vendor_id": "10de", "product_id": "2330", "mode": "passthrough"},
    {"name": "hgx-h100x8", "vendor_id": "10de", "product_id": "2330", "mode": "baremetal", "count": 8,
     "model": "H100", "interconnect": "nvswitch", "resource_class": "GPU_H100X8", "traits": ["CUSTOM_HGX"],
     "fallback_resource_class": "GPU_DEGRADED"},
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


HGX_TRAITS = ["CUSTOM_GPU_COUNT_8", "CUSTOM_GPU_H100", "CUSTOM_GPU_NVLINK", "CUSTOM_GPU_NVSWITCH", "CUSTOM_HGX"]


@pytest.fixture
def rules_cleanup(ironic):
    yield
    run_module("ironic_inspection_rule", {"cloud": ironic.cloud, "prefix": "accel-baremetal-", "state": "absent"})
    assert not [r for r in _rules(ironic).values() if r["description"].startswith("accel-baremetal-")]


def _extra(ironic, policy) -> dict:
    return {
        "accel_ironic_auth": {"cloud": ironic.cloud},
        "accel_device_policy": policy,
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
    }


def _node(ironic, name) -> tuple:
    status, node = ironic.request("GET", f"/v1/nodes/{name}")
    assert status == 200, node
    _status, body = ironic.request("GET", f"/v1/nodes/{name}/traits")
    return node["resource_class"], sorted(body["traits"])


def _rules(ironic) -> dict:
    status, body = ironic.request("GET", "/v1/inspection_rules?detail=true")
    assert status == 200
    return {r["uuid"]: r for r in body["inspection_rules"]}


def test_role_converges_the_rules_and_inspection_classes_only_matching_nodes(ironic, rules_cleanup):
    extra = _extra(ironic, POLICY)
    checked = run_playbook("playbooks/baremetal.yml", extra_vars=extra, check=True, diff=True)
    assert checked["rc"] == 0, checked["stderr"] + checked["stdout"]
    assert total_changed(checked) == 1 and _rules(ironic) == {}

    applied = run_playbook("playbooks/baremetal.yml", extra_vars=extra)
    assert applied["rc"] == 0, applied["stderr"] + applied["stdout"]
    (converged,) = task_results(applied, "Converge the inspection rules in Ironic").values()
    assert [r["actions"] for r in converged["results"]] == [["create"]] * 4
    rules = _rules(ironic)
    assert {r["rule"]["uuid"] for r in converged["results"]} == set(rules)
    assert sorted(r["priority"] for r in rules.values()) == [50, 50, 51, 51]
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


def test_reinspection_takes_the_class_and_traits_away_and_gives_them_back(ironic, rules_cleanup):
    applied = run_playbook("playbooks/baremetal.yml", extra_vars=_extra(ironic, POLICY))
    assert applied["rc"] == 0, applied["stderr"] + applied["stdout"]
    nodes = {"re-hgx": agent_inventory(HGX), "re-pair": agent_inventory(HGX, _two_gpus)}
    try:
        for name, data in nodes.items():
            assert ironic.inspect(name, data)["provision_state"] == "manageable"
        assert _node(ironic, "re-hgx") == ("GPU_H100X8", HGX_TRAITS)
        # A trait the operator set is not the collection's: it stays through every re-inspection.
        assert ironic.request("PUT", "/v1/nodes/re-hgx/traits/CUSTOM_RACK_A")[0] == 204

        # Unchanged hardware: the node is reset and classed again within the same inspection.
        assert ironic.reinspect("re-hgx", nodes["re-hgx"])["provision_state"] == "manageable"
        assert _node(ironic, "re-hgx") == ("GPU_H100X8", sorted(HGX_TRAITS + ["CUSTOM_RACK_A"]))

        # A GPU failed: in maintenance and inspected with 7, the node falls back and is no 8-GPU node any more.
        node = ironic.reinspect("re-hgx", agent_inventory(HGX, _seven_gpus), maintenance="GPU 7 failed")
        assert (node["provision_state"], node["maintenance"]) == ("manageable", True), node["last_error"]
        assert _node(ironic, "re-hgx") == ("GPU_DEGRADED", ["CUSTOM_RACK_A"])
        # The entry without fallback_resource_class: one of two GPUs gone leaves the node without a class.
        ironic.reinspect("re-pair", agent_inventory(HGX, lambda d: _two_gpus(d) and d != H100[1]), maintenance="x")
        assert _node(ironic, "re-pair") == (None, [])
        # Inspected again without PCI data: nothing proves the GPUs, so nothing is given.
        ironic.reinspect("re-pair", dict(nodes["re-pair"], pci_devices=None))
        assert _node(ironic, "re-pair") == (None, [])

        # Repaired: all 8 GPUs back, the class and traits come back.
        ironic.reinspect("re-hgx", nodes["re-hgx"])
        assert _node(ironic, "re-hgx") == ("GPU_H100X8", sorted(HGX_TRAITS + ["CUSTOM_RACK_A"]))
    finally:
        for name in nodes:
            ironic.delete_node(name)


def test_renamed_and_removed_entries_lose_their_rules(ironic, rules_cleanup):
    applied = run_playbook("playbooks/baremetal.yml", extra_vars=_extra(ironic, POLICY))
    assert applied["rc"] == 0, applied["stderr"] + applied["stdout"]
    before = _rules(ironic)
    # A rule by hand whose description names a collection rule is not the collection's: it stays.
    by_hand = {"description": "accel-baremetal-h100x2: made by hand", "conditions": [],
               "actions": [{"op": "add-trait", "args": {"name": "CUSTOM_BY_HAND"}}]}  # fmt: skip
    status, made = ironic.request("POST", "/v1/inspection_rules", by_hand)
    assert status == 201, made

    renamed = [POLICY[0], dict(POLICY[1], name="hgx8")]  # h100x2 removed, hgx-h100x8 renamed hgx8
    extra = _extra(ironic, renamed)
    checked = run_playbook("playbooks/baremetal.yml", extra_vars=extra, check=True, diff=True)
    assert checked["rc"] == 0, checked["stderr"] + checked["stdout"]
    (preview,) = task_results(checked, "Remove the rules of entries that left the policy or were renamed").values()
    gone = ["accel-baremetal-h100x2", "accel-baremetal-h100x2:reset", "accel-baremetal-hgx-h100x8",
            "accel-baremetal-hgx-h100x8:reset"]  # fmt: skip
    assert preview["changed"] and [r["name"] for r in preview["removed"]] == gone
    assert sorted(preview["diff"]["before"]) == sorted(gone) and preview["diff"]["after"] == {}
    assert preview["diff"]["before"]["accel-baremetal-h100x2"]["actions"][0]["args"]["value"] == "gpu-h100x2"
    assert _rules(ironic) == dict(before, **{made["uuid"]: _rules(ironic)[made["uuid"]]})

    applied = run_playbook("playbooks/baremetal.yml", extra_vars=extra, diff=True)
    assert applied["rc"] == 0, applied["stderr"] + applied["stdout"]
    (pruned,) = task_results(applied, "Remove the rules of entries that left the policy or were renamed").values()
    assert pruned["actions"] == ["delete"] * 4
    assert pruned["kept"] == ["accel-baremetal-hgx8", "accel-baremetal-hgx8:reset"]
    now = _rules(ironic)
    assert not set(before) & set(now) and made["uuid"] in now
    assert sorted(r["description"].split(":")[0] for r in now.values()) == [
        "accel-baremetal-h100x2", "accel-baremetal-hgx8", "accel-baremetal-hgx8"]  # fmt: skip
    again = run_playbook("playbooks/baremetal.yml", extra_vars=extra)
    assert again["rc"] == 0 and total_changed(again) == 0, again["stats"]
    assert ironic.request("DELETE", f"/v1/inspection_rules/{made['uuid']}")[0] == 204


def test_a_64_gpu_node_is_classed_in_linear_time(ironic, rules_cleanup):
    policy = [{"name": "gpu64", "vendor_id": "10de", "product_id": "2330", "mode": "baremetal", "count": 64,
               "model": "H100", "resource_class": "GPU_H100X64"}]  # fmt: skip
    for rule in baremetal_rules(policy):
        assert run_module("ironic_inspection_rule", dict(rule, cloud=ironic.cloud))["changed"]
    gpu = {"vendor_id": "10de", "product_id": "2330", "class_code": "030200"}
    nic = {"vendor_id": "15b3", "product_id": "1021", "class_code": "020000"}
    devices = [dict(gpu if n % 9 else nic, address=f"0000:{n:02x}:00.0") for n in range(72)]
    big = {"devices": devices}
    assert sum(1 for d in devices if d["product_id"] == "2330") == 64
    try:
        started = time.monotonic()
        node = ironic.inspect("bm-64", agent_inventory(big))
        elapsed = time.monotonic() - started
        assert node["provision_state"] == "manageable", node["last_error"]
        assert _node(ironic, "bm-64") == ("GPU_H100X64", ["CUSTOM_GPU_COUNT_64", "CUSTOM_GPU_H100"])
        # 63 GPUs: the failing match is the one that used to backtrack; it must complete too.
        node = ironic.reinspect("bm-64", agent_inventory(big, lambda d: d["address"] != "0000:01:00.0"))
        assert node["provision_state"] == "manageable" and _node(ironic, "bm-64") == (None, [])
        print(f"64-GPU node enrolled, managed and inspected in {elapsed:.2f} s")
    finally:
        ironic.delete_node("bm-64")


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
        # Deleting by prefix needs state absent; a rule to create needs actions; neither changes anything.
        by_prefix = run_module("ironic_inspection_rule", {"cloud": ironic.cloud, "prefix": "accel-test-"})
        assert by_prefix["failed"] and "give state: absent" in by_prefix["msg"]
        no_actions = run_module("ironic_inspection_rule", {"cloud": ironic.cloud, "name": "accel-test-module"})
        assert no_actions["failed"] and "actions is missing" in no_actions["msg"]
        short = run_module("ironic_inspection_rule", {"cloud": ironic.cloud, "prefix": "acc", "state": "absent"})
        assert short["failed"] and "prefix 'acc' must be 4 to 200" in short["msg"]
        assert uuid in _rules(ironic)
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
