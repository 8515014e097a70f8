"""The Placement modules against the real Placement service, read back with the real osc-placement CLI.

Every change follows one rhythm: check mode (changed, nothing written) -> apply (changed) -> check mode
again (not changed) -> apply again (not changed) -> verify from outside.
"""

from __future__ import annotations

import sys
import uuid

import pytest
import yaml

from tests.support.ansible_runner import run_module, run_playbook, task_results
from tests.support.openstack_cli import osc

pytestmark = pytest.mark.placement

AGGREGATE = "7d1b4e2c-1111-4a5b-9c3d-000000000001"
# These tests play nova-compute (no nova-compute runs against this Placement); the ownership guard
# that refuses that on a real cloud is pinned in test_placement_ownership.py.
SIMULATE = {"simulate_compute": True}
OTHER_AGGREGATE = "7d1b4e2c-1111-4a5b-9c3d-000000000002"


def rhythm(name: str, args: dict) -> dict:
    """check -> apply -> check -> apply; returns the first apply's result."""
    first_check = run_module(name, args, check=True, diff=True)
    assert first_check.get("changed") is True, first_check
    applied = run_module(name, args, diff=True)
    assert applied.get("changed") is True, applied
    assert applied["diff"]["after"] == first_check["diff"]["after"] or name == "placement_provider"
    second_check = run_module(name, args, check=True)
    assert second_check.get("changed") is False, second_check
    again = run_module(name, args)
    assert again.get("changed") is False, again
    return applied


def provider_state(placement, name: str) -> dict:
    _unused, found = placement.request("GET", f"/resource_providers?name={name}")
    assert found["resource_providers"], f"provider {name} does not exist"
    record = found["resource_providers"][0]
    _unused, inv = placement.request("GET", f"/resource_providers/{record['uuid']}/inventories")
    _unused, traits = placement.request("GET", f"/resource_providers/{record['uuid']}/traits")
    _unused, aggs = placement.request("GET", f"/resource_providers/{record['uuid']}/aggregates")
    return dict(record, inventories=inv["inventories"], traits=sorted(traits["traits"]), aggregates=aggs["aggregates"])


# -- traits and resource classes ------------------------------------------------------------------
def test_trait_module_creates_checks_and_deletes_custom_traits(placement):
    args = dict(placement.auth, names=["CUSTOM_NVIDIA_T4", "CUSTOM_NVIDIA_A100", "HW_GPU_API_VULKAN"])
    check = run_module("placement_trait", args, check=True)
    assert check["created"] == ["CUSTOM_NVIDIA_A100", "CUSTOM_NVIDIA_T4"]
    assert placement.request("GET", "/traits?name=in:CUSTOM_NVIDIA_T4")[1]["traits"] == []
    applied = rhythm("placement_trait", args)
    assert applied["standard"] == ["HW_GPU_API_VULKAN"]
    listed = {row["name"] for row in osc(placement, "trait", "list")}
    assert {"CUSTOM_NVIDIA_T4", "CUSTOM_NVIDIA_A100", "HW_GPU_API_VULKAN"} <= listed

    removed = rhythm("placement_trait", dict(placement.auth, names=["CUSTOM_NVIDIA_A100"], state="absent"))
    assert removed["deleted"] == ["CUSTOM_NVIDIA_A100"]
    listed = {row["name"] for row in osc(placement, "trait", "list")}
    assert "CUSTOM_NVIDIA_A100" not in listed and "CUSTOM_NVIDIA_T4" in listed


def test_trait_module_refuses_bad_names_and_changes_nothing(placement):
    bad = run_module("placement_trait", dict(placement.auth, names=["CUSTOM_OK_ONE", "custom-gpu t4"]))
    assert bad["failed"] and "'CUSTOM_GPU_T4'" in bad["msg"], bad
    assert placement.request("GET", "/traits?name=in:CUSTOM_OK_ONE")[1]["traits"] == []
    unknown = run_module("placement_trait", dict(placement.auth, names=["CUSTOM_OK_ONE", "HW_GPU_API_VULKANN"]))
    assert unknown["failed"] and "did you mean HW_GPU_API_VULKAN" in unknown["msg"], unknown
    assert placement.request("GET", "/traits?name=in:CUSTOM_OK_ONE")[1]["traits"] == []
    standard = run_module("placement_trait", dict(placement.auth, names=["COMPUTE_NODE"], state="absent"))
    assert standard["failed"] and "never deleted" in standard["msg"]
    assert "COMPUTE_NODE" in placement.request("GET", "/traits?name=in:COMPUTE_NODE")[1]["traits"]


def test_resource_class_module_round_trip(placement):
    args = dict(placement.auth, names=["CUSTOM_PCI_10DE_1EB8", "VGPU", "CUSTOM_PCI_10DE_20B5"])
    applied = rhythm("placement_resource_class", args)
    assert applied["created"] == ["CUSTOM_PCI_10DE_1EB8", "CUSTOM_PCI_10DE_20B5"]
    assert applied["standard"] == ["VGPU"]
    names = {row["name"] for row in osc(placement, "resource", "class", "list")}
    assert {"CUSTOM_PCI_10DE_1EB8", "CUSTOM_PCI_10DE_20B5", "VGPU"} <= names
    rhythm("placement_resource_class", dict(placement.auth, names=["CUSTOM_PCI_10DE_20B5"], state="absent"))
    names = {row["name"] for row in osc(placement, "resource", "class", "list")}
    assert "CUSTOM_PCI_10DE_20B5" not in names and "CUSTOM_PCI_10DE_1EB8" in names
    bad = run_module("placement_resource_class", dict(placement.auth, names=["PCI_10DE_XXXX"]))
    assert bad["failed"] and "never created" in bad["msg"]


# -- providers ------------------------------------------------------------------------------------
def nova_like_compute_node(placement, name: str) -> str:
    """A compute node as nova-compute leaves it: VCPU with its ratio, COMPUTE_* traits and OWNER_NOVA."""
    node = str(uuid.uuid4())
    assert placement.request("POST", "/resource_providers", {"name": name, "uuid": node})[0] == 200
    inventories = {
        "VCPU": {"total": 32, "reserved": 0, "min_unit": 1, "max_unit": 32, "step_size": 1, "allocation_ratio": 4.0},
        "MEMORY_MB": {"total": 65536, "reserved": 512, "min_unit": 1, "max_unit": 65536, "step_size": 1,
                      "allocation_ratio": 1.0},
    }  # fmt: skip
    status, _unused = placement.request(
        "PUT",
        f"/resource_providers/{node}/inventories",
        {"resource_provider_generation": 0, "inventories": inventories},
    )
    assert status == 200
    status, _unused = placement.request(
        "PUT",
        f"/resource_providers/{node}/traits",
        {"resource_provider_generation": 1, "traits": ["COMPUTE_NODE", "COMPUTE_VOLUME_EXTEND", "OWNER_NOVA"]},
    )
    assert status == 200
    return node


def test_provider_merge_keeps_what_nova_set(placement):
    node = nova_like_compute_node(placement, "gpu-node-1")
    args = dict(
        placement.auth,
        **SIMULATE,
        name="gpu-node-1",
        inventories={"DISK_GB": {"total": 900, "reserved": 20}},
        traits=["CUSTOM_GPU_HOST"],
        aggregates=[AGGREGATE],
    )
    applied = rhythm("placement_provider", args)
    assert applied["providers"][0]["uuid"] == node
    assert applied["providers"][0]["actions"] == ["set inventories", "set traits", "set aggregates"]
    state = provider_state(placement, "gpu-node-1")
    assert state["traits"] == ["COMPUTE_NODE", "COMPUTE_VOLUME_EXTEND", "CUSTOM_GPU_HOST", "OWNER_NOVA"]
    assert state["inventories"]["VCPU"]["allocation_ratio"] == 4.0
    assert state["inventories"]["DISK_GB"]["reserved"] == 20
    traits = {row["name"] for row in osc(placement, "resource", "provider", "trait", "list", node)}
    assert traits == {"COMPUTE_NODE", "COMPUTE_VOLUME_EXTEND", "CUSTOM_GPU_HOST", "OWNER_NOVA"}
    inventory = {
        row["resource_class"]: row for row in osc(placement, "resource", "provider", "inventory", "list", node)
    }
    assert inventory["DISK_GB"]["total"] == 900 and inventory["VCPU"]["total"] == 32
    aggregates = osc(placement, "resource", "provider", "aggregate", "list", node)
    assert [row["uuid"] for row in aggregates] == [AGGREGATE]


def test_provider_tree_create_update_replace_and_delete(placement):
    node = dict(
        placement.auth, **SIMULATE, name="gpu-node-2", inventories={"VCPU": 64, "MEMORY_MB": 262144, "DISK_GB": 1800}
    )
    rhythm("placement_provider", node)
    gpu = dict(
        placement.auth,
        **SIMULATE,
        name="gpu-node-2_0000:41:00.0",
        parent="gpu-node-2",
        inventories={"CUSTOM_PCI_10DE_2331": {"total": 1, "max_unit": 1}},
        traits=["CUSTOM_NVIDIA_H100", "COMPUTE_MANAGED_PCI_DEVICE"],
    )
    created = rhythm("placement_provider", gpu)
    assert created["providers"][0]["actions"] == ["create", "set inventories", "set traits"]
    listed = {row["name"]: row for row in osc(placement, "resource", "provider", "list")}
    assert listed["gpu-node-2_0000:41:00.0"]["parent_provider_uuid"] == listed["gpu-node-2"]["uuid"]

    # update: a new total and a field change, merge keeps the trait the declaration does not list
    placement_uuid = listed["gpu-node-2_0000:41:00.0"]["uuid"]
    _unused, body = placement.request("GET", f"/resource_providers/{placement_uuid}/traits")
    placement.request(
        "PUT",
        f"/resource_providers/{placement_uuid}/traits",
        {
            "resource_provider_generation": body["resource_provider_generation"],
            "traits": body["traits"] + ["OWNER_NOVA"],
        },
    )
    kept = run_module("placement_provider", dict(gpu, traits=["CUSTOM_NVIDIA_H100"]))  # merge: nothing to add
    assert kept["changed"] is False and not kept.get("failed"), kept

    replaced = rhythm("placement_provider", dict(gpu, traits=["CUSTOM_NVIDIA_H100"], traits_mode="replace"))
    assert replaced["providers"][0]["actions"] == ["set traits"]
    assert replaced["diff"]["before"]["gpu-node-2_0000:41:00.0"]["traits"] == [
        "COMPUTE_MANAGED_PCI_DEVICE", "CUSTOM_NVIDIA_H100", "OWNER_NOVA"
    ]  # fmt: skip
    assert provider_state(placement, "gpu-node-2_0000:41:00.0")["traits"] == ["CUSTOM_NVIDIA_H100"]

    inv_replace = rhythm("placement_provider", dict(node, inventories={"VCPU": 48}, inventories_mode="replace"))
    assert inv_replace["diff"]["after"]["gpu-node-2"]["inventories"] == {
        "VCPU": {"total": 48, "reserved": 0, "min_unit": 1, "max_unit": 48, "step_size": 1, "allocation_ratio": 1.0}
    }
    assert set(provider_state(placement, "gpu-node-2")["inventories"]) == {"VCPU"}

    refused = run_module("placement_provider", dict(placement.auth, **SIMULATE, name="gpu-node-2", state="absent"))
    assert refused["failed"] and "child providers" in refused["msg"]
    both = dict(
        placement.auth,
        **SIMULATE,
        providers=[{"name": "gpu-node-2", "state": "absent"}, {"name": "gpu-node-2_0000:41:00.0", "state": "absent"}],
    )
    rhythm("placement_provider", both)
    names = {row["name"] for row in osc(placement, "resource", "provider", "list")}
    assert not names & {"gpu-node-2", "gpu-node-2_0000:41:00.0"}


def allocate(placement, provider_uuid: str, resources: dict) -> str:
    consumer = str(uuid.uuid4())
    body = {
        "allocations": {provider_uuid: {"resources": resources}},
        "project_id": str(uuid.uuid4()),
        "user_id": str(uuid.uuid4()),
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    status, answer = placement.request("PUT", f"/allocations/{consumer}", body)
    assert status == 204, answer
    return consumer


def test_inventory_below_usage_and_delete_with_allocations_are_refused(placement):
    args = dict(placement.auth, **SIMULATE, name="busy-node", inventories={"VCPU": 16, "CUSTOM_PCI_10DE_1EB8": 4})
    applied = run_module("placement_provider", args)
    node = applied["providers"][0]["uuid"]
    allocate(placement, node, {"VCPU": 10, "CUSTOM_PCI_10DE_1EB8": 3})

    lower = run_module("placement_provider", dict(args, inventories={"VCPU": 8, "CUSTOM_PCI_10DE_1EB8": 4}))
    assert lower["failed"], lower
    assert "VCPU capacity would be 8" in lower["msg"] and "10 is in use" in lower["msg"]
    assert "keep total at least 10" in lower["msg"] and "nothing was changed" in lower["msg"]
    dropped = run_module(
        "placement_provider", dict(args, inventories={"VCPU": 16}, inventories_mode="replace"), check=True
    )
    assert dropped["failed"] and "removing CUSTOM_PCI_10DE_1EB8 refused, 3 in use" in dropped["msg"]
    assert provider_state(placement, "busy-node")["inventories"]["VCPU"]["total"] == 16

    gone = run_module("placement_provider", dict(placement.auth, **SIMULATE, name="busy-node", state="absent"))
    assert gone["failed"] and "has allocations" in gone["msg"] and "'VCPU': 10" in gone["msg"]
    assert provider_state(placement, "busy-node")["uuid"] == node

    raised = run_module("placement_provider", dict(args, inventories={"VCPU": {"total": 32, "allocation_ratio": 2.0}}))
    assert raised["changed"] and not raised.get("failed")


def test_bad_declarations_fail_before_any_call(placement):
    bad = run_module("placement_provider", dict(placement.auth, name="x", traits=["CUSTOM_gpu"]))
    assert bad["failed"] and "CUSTOM_GPU" in bad["msg"] and bad.get("api_calls", {}) == {}
    bad = run_module("placement_provider", dict(placement.auth, name="x", aggregates=["not-a-uuid"]))
    assert bad["failed"] and "UUIDs" in bad["msg"]
    bad = run_module("placement_provider", dict(placement.auth, name="x", inventories={"VCPU": {"totl": 4}}))
    assert bad["failed"] and "needs at least total" in bad["msg"]
    bad = run_module("placement_provider", dict(placement.auth, name="x", parent="no-such-parent"))
    assert bad["failed"] and "parent 'no-such-parent' does not exist" in bad["msg"]
    assert placement.request("GET", "/resource_providers?name=x")[1]["resource_providers"] == []


# -- the snapshot ---------------------------------------------------------------------------------
def test_placement_info_snapshot_tree_name_and_query(placement):
    tree = [
        {"name": "info-node", "inventories": {"VCPU": 8}, "traits": ["COMPUTE_NODE"]},
        {"name": "info-node_0000:41:00.0", "parent": "info-node", "inventories": {"CUSTOM_PCI_10DE_1EB8": 1},
         "traits": ["CUSTOM_NVIDIA_T4"], "aggregates": [OTHER_AGGREGATE]},
        {"name": "info-node_0000:42:00.0", "parent": "info-node", "inventories": {"CUSTOM_PCI_10DE_1EB8": 1},
         "traits": ["CUSTOM_NVIDIA_T4"]},
        {"name": "info-other", "inventories": {"VCPU": 4}},
    ]  # fmt: skip
    run_module("placement_provider", dict(placement.auth, **SIMULATE, providers=tree))
    root = provider_state(placement, "info-node")
    allocate(placement, root["uuid"], {"VCPU": 3})

    whole = run_module("placement_info", dict(placement.auth, tree="info-node"))
    assert whole["changed"] is False
    providers = {p["name"]: p for p in whole["fleet"]["resource_providers"]}
    assert set(providers) == {"info-node", "info-node_0000:41:00.0", "info-node_0000:42:00.0"}
    assert providers["info-node"]["usages"] == {"VCPU": 3}
    assert providers["info-node_0000:41:00.0"]["traits"] == ["CUSTOM_NVIDIA_T4"]
    assert providers["info-node_0000:41:00.0"]["aggregates"] == [OTHER_AGGREGATE]
    assert providers["info-node_0000:42:00.0"]["root_provider_uuid"] == root["uuid"]
    assert providers["info-node_0000:42:00.0"]["inventories"]["CUSTOM_PCI_10DE_1EB8"]["max_unit"] == 1
    # the same providers through the real CLI
    cli = {row["name"] for row in osc(placement, "resource", "provider", "list", "--in-tree", root["uuid"])}
    assert cli == set(providers)

    named = run_module("placement_info", dict(placement.auth, name=["info-*"], query="resource_providers[].name"))
    assert sorted(named["query_result"]) == sorted(set(providers) | {"info-other"})
    exact = run_module("placement_info", dict(placement.auth, name=["info-other"], usages=False))
    assert [p["name"] for p in exact["fleet"]["resource_providers"]] == ["info-other"]
    assert exact["api_calls"]["GET"] == 6  # list by name, traits, inventories, aggregates, custom names (2)
    present = run_module("placement_info", dict(placement.auth, name=["info-*"], details=False))
    assert present["api_calls"] == {"GET": 1}  # which providers exist: the provider list only
    assert {p["name"]: p for p in present["fleet"]["resource_providers"]}["info-node_0000:42:00.0"] == {
        key: providers["info-node_0000:42:00.0"][key]
        for key in ("uuid", "name", "parent_provider_uuid", "root_provider_uuid")
    }
    bad = run_module("placement_info", dict(placement.auth, query="resource_providers[?"))
    assert bad["failed"] and "not valid JMESPath" in bad["msg"]


# -- action groups --------------------------------------------------------------------------------
@pytest.mark.parametrize("group", ["placement", "openstack"])
def test_action_groups_carry_the_connection_to_the_placement_modules(placement, group, tmp_path):
    """module_defaults for either group reach a Placement module through meta/runtime.yml."""
    playbook = tmp_path / "grouped.yml"
    play = {
        "hosts": "localhost",
        "connection": "local",
        "gather_facts": False,
        "module_defaults": {f"group/accel.openstack.{group}": placement.auth},
        "tasks": [
            {"name": "Create a trait", "accel.openstack.placement_trait": {"names": [f"CUSTOM_GROUP_{group.upper()}"]}},
            {"name": "Read the fleet", "accel.openstack.placement_info": {"name": ["nothing-by-this-name"]}},
        ],
    }
    playbook.write_text(yaml.safe_dump([play]))
    report = run_playbook(str(playbook), extra_vars={"ansible_python_interpreter": sys.executable})
    assert report["rc"] == 0, report["stderr"] + report["stdout"]
    (created,) = task_results(report, "Create a trait").values()
    assert created["changed"] is True
    (read,) = task_results(report, "Read the fleet").values()
    assert read["fleet"]["resource_providers"] == []
    assert f"CUSTOM_GROUP_{group.upper()}" in {row["name"] for row in osc(placement, "trait", "list")}
