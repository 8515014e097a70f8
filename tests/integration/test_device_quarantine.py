"""device_quarantine against the real Placement, with nova-compute's own update code run over it.

nova-compute (Nova 34's report client, provider tree and PCI translator, in the nova venv) creates the
host's providers; the module quarantines a device; nova-compute starts again and runs its periodic
update: the quarantine must still hold the device, Placement must offer no candidate on it, and Nova's
update must succeed. Then the module releases it and the device is a candidate again.
"""

from __future__ import annotations

import json
import shlex
import time

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import fleet_snapshot
from ansible_collections.accel.openstack.plugins.module_utils._placement.module import placement_client
from tests.support.ansible_runner import run_module
from tests.support.nova_compute import compute_case, update

pytestmark = pytest.mark.placement

HOST = "cn-quarantine"
COMPUTE_UUID = "1f7e1d2a-5b41-4bb5-9d53-2a7d5e0c0a01"
INSTANCE = "6a3c3f3e-0d9c-4c53-8f0a-3b2f8c1d0e77"
GPU_RC = "CUSTOM_PCI_10DE_2331"


def _gpu(address: str, product: str = "2331", mdev_types=None) -> dict:
    return {
        "address": address,
        "vendor_id": "10de",
        "product_id": product,
        "class_code": "030200",
        "physfn": None,
        "sriov_totalvfs": None,
        "numa_node": 0,
        "mdev_types": mdev_types or [],
    }


DEVICES = [
    _gpu("0000:41:00.0"),
    _gpu("0000:42:00.0"),
    _gpu("0000:43:00.0"),
    _gpu(
        "0000:84:00.0",
        "25b6",
        [{"type": "nvidia-701", "name": "A16-4Q", "available_instances": 4, "device_api": "vfio-pci"}],
    ),
]
COMPUTE = """
[pci]
report_in_placement = True
device_spec = {"vendor_id": "10de", "product_id": "2331"}
[devices]
enabled_mdev_types = nvidia-701
[mdev_nvidia-701]
device_addresses = 0000:84:00.0
"""


def nova_compute(placement, rounds: int = 2, allocated: dict | None = None, devices=None) -> list[dict]:
    """One nova-compute start and ``rounds`` periodic updates; every round must succeed."""
    devices = DEVICES if devices is None else devices
    case = compute_case(
        HOST, None, [COMPUTE], node_uuid=COMPUTE_UUID, devices=devices, allocated=allocated, rounds=rounds
    )
    return update(placement.url, [case])[0]["rounds"]


def providers(placement) -> dict:
    body = placement.request("GET", f"/resource_providers?in_tree={COMPUTE_UUID}")[1]
    return {p["name"]: p for p in body["resource_providers"]}


def inventory(placement, uuid: str) -> dict:
    return placement.request("GET", f"/resource_providers/{uuid}/inventories")[1]["inventories"]


def candidate_providers(placement, query: str) -> set[str]:
    body = placement.request("GET", f"/allocation_candidates?{query}")[1]
    return {rp for request in body["allocation_requests"] for rp in request["allocations"]}


@pytest.fixture(scope="module")
def cloud(placement):
    rounds = nova_compute(placement, rounds=1)
    assert rounds == [{"ok": True}], rounds
    return placement


def test_nova_compute_created_the_device_providers(cloud):
    names = set(providers(cloud))
    assert {f"{HOST}_0000:41:00.0", f"{HOST}_0000:42:00.0", f"{HOST}_0000:43:00.0", f"{HOST}_pci_0000_84_00_0"} <= names


def test_quarantine_survives_nova_compute_and_release_returns_the_device(cloud):
    gpu = providers(cloud)[f"{HOST}_0000:41:00.0"]
    args = dict(cloud.auth, host=HOST, address="0000:41:00.0", reason="Xid 79: fell off the bus")
    check = run_module("device_quarantine", args, check=True, diff=True)
    assert check["changed"] is True and check["held"] == {GPU_RC: 1}, check
    assert gpu["uuid"] in candidate_providers(cloud, f"resources={GPU_RC}:1")  # check mode wrote nothing
    applied = run_module("device_quarantine", args, diff=True)
    assert applied["changed"] is True, applied
    assert json.loads(applied["diff"]["after"])["quarantined"] is True
    assert run_module("device_quarantine", args, check=True)["changed"] is False
    assert run_module("device_quarantine", args)["changed"] is False
    before_inventory = inventory(cloud, gpu["uuid"])
    # What the quarantine does not use, and why: nova-compute undoes both on its next update.
    cloud.request("PUT", "/traits/CUSTOM_QUARANTINED")
    traits = cloud.request("GET", f"/resource_providers/{gpu['uuid']}/traits")[1]
    marked = sorted(traits["traits"] + ["CUSTOM_QUARANTINED"])
    body = {"resource_provider_generation": traits["resource_provider_generation"], "traits": marked}
    assert cloud.request("PUT", f"/resource_providers/{gpu['uuid']}/traits", body)[0] == 200
    vgpu = providers(cloud)[f"{HOST}_pci_0000_84_00_0"]
    vgpu_inventory = cloud.request("GET", f"/resource_providers/{vgpu['uuid']}/inventories/VGPU")[1]
    vgpu_inventory["reserved"] = vgpu_inventory["total"]
    assert cloud.request("PUT", f"/resource_providers/{vgpu['uuid']}/inventories/VGPU", vgpu_inventory)[0] == 200

    # nova-compute restarts (empty cache) and runs two periodic updates: no error, nothing undone.
    assert nova_compute(cloud) == [{"ok": True}, {"ok": True}]
    # A device added to the host changes the tree: nova-compute writes inventories again.
    grown = DEVICES + [_gpu("0000:44:00.0")]
    assert nova_compute(cloud, rounds=1, devices=grown) == [{"ok": True}]
    assert inventory(cloud, gpu["uuid"]) == before_inventory
    after_traits = cloud.request("GET", f"/resource_providers/{gpu['uuid']}/traits")[1]["traits"]
    assert "CUSTOM_QUARANTINED" not in after_traits
    assert inventory(cloud, vgpu["uuid"])["VGPU"]["reserved"] == 0
    consumer = quarantine.consumer_uuid(gpu["uuid"])
    held = cloud.request("GET", f"/allocations/{consumer}")[1]
    assert held["allocations"][gpu["uuid"]]["resources"] == {GPU_RC: 1}
    assert held["user_id"] == "Xid 79: fell off the bus"
    free = candidate_providers(cloud, f"resources={GPU_RC}:1")
    assert gpu["uuid"] not in free and len(free) == 3  # the other three GPUs

    # The audit's view from a snapshot.
    client = placement_client(cloud.auth)
    fleet = fleet_snapshot(client)
    listed = quarantine.quarantined_devices(fleet, quarantine.read_quarantines(client, fleet))
    assert [(d["host"], d["address"], d["reason"], d["held"]) for d in listed] == [
        (HOST, "0000:41:00.0", "Xid 79: fell off the bus", {GPU_RC: 1})
    ]

    # A failing health command keeps it quarantined and says how it failed; a passing one releases it.
    release = dict(cloud.auth, provider=gpu["name"], state="released")
    script = "echo probing bus; echo 'Unable to determine the device handle for GPU0000:41:00.0: Unknown Error' >&2"
    script += "; exit 9"
    failed = run_module("device_quarantine", dict(release, health_command=["sh", "-c", script]))
    assert failed.get("failed") and failed["msg"] == (
        f"health_command sh -c {shlex.quote(script)} exited with status 9; its stderr: Unable to determine the device "
        "handle for GPU0000:41:00.0: Unknown Error; its stdout: probing bus; the device stays quarantined"
    ), failed
    assert failed["health"]["rc"] == 9 and failed["health"]["timed_out"] is False
    assert gpu["uuid"] not in candidate_providers(cloud, f"resources={GPU_RC}:1")
    released = run_module("device_quarantine", dict(release, health_command=["true"]), diff=True)
    assert released["changed"] is True and released["health"]["rc"] == 0, released
    assert run_module("device_quarantine", dict(release, health_check=False))["changed"] is False
    assert gpu["uuid"] in candidate_providers(cloud, f"resources={GPU_RC}:1")
    assert cloud.request("GET", f"/allocations/{consumer}")[1]["allocations"] == {}


def test_vgpu_provider_quarantine_holds_what_instances_leave_free(cloud):
    vgpu = providers(cloud)[f"{HOST}_pci_0000_84_00_0"]
    total = inventory(cloud, vgpu["uuid"])["VGPU"]["total"]
    body = {
        "allocations": {vgpu["uuid"]: {"resources": {"VGPU": 1}}},
        "project_id": "p1",
        "user_id": "u1",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    cloud.request("PUT", f"/allocations/{INSTANCE}", body)
    applied = run_module("device_quarantine", dict(cloud.auth, provider=vgpu["uuid"], reason="ECC errors"))
    assert applied["held"] == {"VGPU": total - 1} and applied["in_use_by"] == {"VGPU": [INSTANCE]}, applied
    assert nova_compute(cloud, rounds=1) == [{"ok": True}]
    assert candidate_providers(cloud, "resources=VGPU:1") == set()
    # The instance leaves: its unit is schedulable until the quarantine runs again.
    cloud.request("DELETE", f"/allocations/{INSTANCE}")
    assert candidate_providers(cloud, "resources=VGPU:1") == {vgpu["uuid"]}
    again = run_module("device_quarantine", dict(cloud.auth, provider=vgpu["uuid"], reason="ECC errors"))
    assert again["changed"] is True and again["held"] == {"VGPU": total}
    assert candidate_providers(cloud, "resources=VGPU:1") == set()


def test_bad_input_names_the_fix_and_changes_nothing(cloud):
    gpu = providers(cloud)[f"{HOST}_0000:42:00.0"]
    cases = [
        (dict(host=HOST, address="41:00", reason="x"), "not a full PCI address"),
        (dict(host=HOST, address="0000:99:00.0", reason="x"), "devices with providers there"),
        (dict(host="no-such-host", address="0000:41:00.0", reason="x"), "no compute node provider"),
        (dict(host="../etc", address="0000:41:00.0", reason="x"), "not a plain file or host name"),
        (dict(provider=HOST, reason="x"), "is a compute node"),
        (dict(provider=gpu["name"], reason="a\nb"), "control character"),
        (dict(provider=gpu["name"], reason="x" * 300), "at most 255"),
    ]
    for args, words in cases:
        result = run_module("device_quarantine", dict(cloud.auth, **args))
        assert result.get("failed") and words in result["msg"], (args, result)
    assert gpu["uuid"] in candidate_providers(cloud, f"resources={GPU_RC}:1")


def test_a_device_an_instance_holds_whole_is_refused_with_the_instance_named(cloud):
    gpu = providers(cloud)[f"{HOST}_0000:43:00.0"]
    body = {
        "allocations": {gpu["uuid"]: {"resources": {GPU_RC: 1}}},
        "project_id": "p1",
        "user_id": "u1",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    cloud.request("PUT", f"/allocations/{INSTANCE}", body)
    refused = run_module("device_quarantine", dict(cloud.auth, provider=gpu["uuid"], reason="Xid 48"))
    assert refused.get("failed") and INSTANCE in refused["msg"], refused
    consumer = quarantine.consumer_uuid(gpu["uuid"])
    assert cloud.request("GET", f"/allocations/{consumer}")[1]["allocations"] == {}
    cloud.request("DELETE", f"/allocations/{INSTANCE}")
    # Reserved whole (a one-time-use device Nova reserved): nothing to hold, said so.
    record = cloud.request("GET", f"/resource_providers/{gpu['uuid']}/inventories/{GPU_RC}")[1]
    cloud.request("PUT", f"/resource_providers/{gpu['uuid']}/inventories/{GPU_RC}", dict(record, reserved=1))
    reserved = run_module("device_quarantine", dict(cloud.auth, provider=gpu["uuid"], reason="Xid 48"))
    assert reserved.get("failed") and "reserved whole" in reserved["msg"], reserved


def test_a_quarantined_device_that_leaves_nova_s_view_blocks_its_update_until_released(cloud):
    """The documented limit: release a device before it leaves [pci] device_spec or the host."""
    gpu = providers(cloud)[f"{HOST}_0000:42:00.0"]
    args = dict(cloud.auth, provider=gpu["uuid"], reason="board pulled")
    assert run_module("device_quarantine", args)["changed"] is True
    without = [d for d in DEVICES if d["address"] != "0000:42:00.0"]
    (blocked,) = nova_compute(cloud, rounds=1, devices=without)
    # Placement keeps a provider in use (409); the resource tracker gives up the sync, as nova-compute logs it
    assert blocked["ok"] is False and blocked["error"].startswith("ResourceProviderSyncFailed"), blocked
    assert f"{HOST}_0000:42:00.0" in providers(cloud)
    assert run_module("device_quarantine", dict(args, state="released", health_check=False))["changed"] is True
    assert nova_compute(cloud, rounds=1, devices=without) == [{"ok": True}]
    assert f"{HOST}_0000:42:00.0" not in providers(cloud)


def test_the_resource_tracker_s_own_update_leaves_the_quarantine_alone(cloud):
    """The same proof through ResourceTracker._update_to_placement itself (tests/support/nova_compute.py)."""
    from tests.support import nova_compute

    host = "cn-tracker"
    config = ['[pci]\nreport_in_placement = True\ndevice_spec = {"vendor_id": "10de", "product_id": "2331"}\n']
    case = nova_compute.compute_case(host, {"accel_pci_devices": DEVICES[:2]}, config=config)
    (first,) = nova_compute.update(cloud.url, [case])
    assert first["ok"], first
    gpu = next(p for p in first["providers"] if p["name"] == f"{host}_0000:41:00.0")
    assert run_module("device_quarantine", dict(cloud.auth, host=host, address="0000:41:00.0", reason="Xid 79"))[
        "changed"
    ]
    before = inventory(cloud, gpu["uuid"])
    again = nova_compute.update(cloud.url, [case, case])  # a restart, then a periodic update
    assert [r["ok"] for r in again] == [True, True], again
    assert inventory(cloud, gpu["uuid"]) == before
    held = cloud.request("GET", f"/allocations/{quarantine.consumer_uuid(gpu['uuid'])}")[1]
    assert held["allocations"][gpu["uuid"]]["resources"] == {GPU_RC: 1} and held["user_id"] == "Xid 79"
    assert gpu["uuid"] not in candidate_providers(cloud, f"resources={GPU_RC}:1&in_tree={gpu['uuid']}")


WIDE = "cn-wide"
WIDE_UUID = "7c2d4a51-3e0b-4d7a-9f1e-5b8a6c4d2e10"
WIDE_ADDRESS = "0000:45:00.0"


def _provider(placement, name: str, uuid: str | None = None, parent: str | None = None) -> str:
    body = {"name": name, **({"uuid": uuid} if uuid else {}), **({"parent_provider_uuid": parent} if parent else {})}
    status, created = placement.request("POST", "/resource_providers", body)
    assert status == 200, created
    return created["uuid"]


def _inventory(placement, rp: str, rc: str, **fields) -> None:
    placement.request("PUT", f"/resource_classes/{rc}")
    generation = placement.request("GET", f"/resource_providers/{rp}")[1]["generation"]
    body = {"resource_provider_generation": generation, "inventories": {rc: fields}}
    assert placement.request("PUT", f"/resource_providers/{rp}/inventories", body)[0] == 200


@pytest.fixture(scope="module")
def wide(cloud):
    """A host whose device has a PCI provider (total 4, max_unit 1) and a vGPU provider (total 4, max_unit 2)."""
    _provider(cloud, WIDE, WIDE_UUID)
    pci_rp = _provider(cloud, f"{WIDE}_{WIDE_ADDRESS.upper()}", parent=WIDE_UUID)
    vgpu_rp = _provider(cloud, f"{WIDE}_pci_0000_45_00_0", parent=WIDE_UUID)
    _inventory(cloud, pci_rp, GPU_RC, total=4, max_unit=1)
    _inventory(cloud, vgpu_rp, "VGPU", total=4, max_unit=2)
    return {"pci": pci_rp, "vgpu": vgpu_rp}


def test_max_unit_below_total_and_both_providers_are_held_until_released(cloud, wide):
    pci_rp, vgpu_rp = wide["pci"], wide["vgpu"]
    tree = f"in_tree={WIDE_UUID}"
    # Before: Placement offers the device through both providers.
    assert candidate_providers(cloud, f"resources={GPU_RC}:1&{tree}") == {pci_rp}
    assert candidate_providers(cloud, f"resources=VGPU:1&{tree}") == {vgpu_rp}
    instance = {
        "allocations": {pci_rp: {"resources": {GPU_RC: 1}}},
        "project_id": "p1",
        "user_id": "u1",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    assert cloud.request("PUT", f"/allocations/{INSTANCE}", instance)[0] == 204
    args = dict(cloud.auth, host=WIDE, address=WIDE_ADDRESS, reason="Xid 79: fell off the bus")

    check = run_module("device_quarantine", args, check=True, diff=True)
    assert check["changed"] is True and check["held"] == {GPU_RC: 3, "VGPU": 4}, check
    assert "candidates" not in check
    assert candidate_providers(cloud, f"resources={GPU_RC}:1&{tree}") == {pci_rp}  # check mode wrote nothing

    applied = run_module("device_quarantine", args, diff=True)
    assert applied["changed"] is True, applied
    assert applied["held"] == {GPU_RC: 3, "VGPU": 4} and applied["in_use_by"] == {GPU_RC: [INSTANCE]}
    by_name = {p["name"]: p for p in applied["providers"]}
    assert by_name[f"{WIDE}_{WIDE_ADDRESS.upper()}"]["held"] == {GPU_RC: 3}
    assert by_name[f"{WIDE}_pci_0000_45_00_0"]["held"] == {"VGPU": 4}
    pci_consumers = [quarantine.consumer_uuid(pci_rp, n) for n in range(3)]
    vgpu_consumers = [quarantine.consumer_uuid(vgpu_rp, n) for n in range(2)]
    assert by_name[f"{WIDE}_{WIDE_ADDRESS.upper()}"]["consumers"] == sorted(pci_consumers)
    assert [c["offered"] for c in applied["candidates"]] == [False, False], applied["candidates"]
    assert json.loads(applied["diff"]["after"])["held"] == {
        f"{WIDE}_{WIDE_ADDRESS.upper()}": {GPU_RC: 3},
        f"{WIDE}_pci_0000_45_00_0": {"VGPU": 4},
    }
    # From outside: one unit per consumer on the PCI provider (max_unit 1), two on the vGPU provider (max_unit 2).
    on_pci = cloud.request("GET", f"/resource_providers/{pci_rp}/allocations")[1]["allocations"]
    assert {c: a["resources"] for c, a in on_pci.items()} == {
        INSTANCE: {GPU_RC: 1},
        **{c: {GPU_RC: 1} for c in pci_consumers},
    }
    on_vgpu = cloud.request("GET", f"/resource_providers/{vgpu_rp}/allocations")[1]["allocations"]
    assert {c: a["resources"] for c, a in on_vgpu.items()} == {c: {"VGPU": 2} for c in vgpu_consumers}
    for consumer in pci_consumers + vgpu_consumers:
        body = cloud.request("GET", f"/allocations/{consumer}")[1]
        assert (body["project_id"], body["user_id"]) == (quarantine.QUARANTINE_PROJECT, "Xid 79: fell off the bus")
    assert candidate_providers(cloud, f"resources={GPU_RC}:1&{tree}") == set()
    assert candidate_providers(cloud, f"resources=VGPU:1&{tree}") == set()
    assert run_module("device_quarantine", args, check=True)["changed"] is False
    assert run_module("device_quarantine", args)["changed"] is False

    # The audit adds up every consumer of a provider.
    client = placement_client(cloud.auth)
    fleet = fleet_snapshot(client)
    listed = [d for d in quarantine.quarantined_devices(fleet, quarantine.read_quarantines(client, fleet))
              if d["host"] == WIDE]  # fmt: skip
    assert [(d["provider"], d["held"], d["consumers"], d["schedulable"]) for d in listed] == [
        (f"{WIDE}_{WIDE_ADDRESS.upper()}", {GPU_RC: 3}, pci_consumers, {}),
        (f"{WIDE}_pci_0000_45_00_0", {"VGPU": 2 * 2}, vgpu_consumers, {}),
    ]

    # The instance leaves: its unit is schedulable until the quarantine runs again, named by the vGPU provider.
    cloud.request("DELETE", f"/allocations/{INSTANCE}")
    assert candidate_providers(cloud, f"resources={GPU_RC}:1&{tree}") == {pci_rp}
    again = run_module("device_quarantine", dict(cloud.auth, provider=vgpu_rp, reason="Xid 79: fell off the bus"))
    assert again["changed"] is True and again["held"] == {GPU_RC: 4, "VGPU": 4}, again
    assert candidate_providers(cloud, f"resources={GPU_RC}:1&{tree}") == set()

    # Released whole: every consumer of both providers is gone, and the device is offered again.
    release = dict(cloud.auth, host=WIDE, address=WIDE_ADDRESS, state="released", health_command=["true"])
    released = run_module("device_quarantine", release)
    assert released["changed"] is True and released["held"] == {}, released
    for consumer in [quarantine.consumer_uuid(pci_rp, n) for n in range(4)] + vgpu_consumers:
        assert cloud.request("GET", f"/allocations/{consumer}")[1]["allocations"] == {}
    assert candidate_providers(cloud, f"resources={GPU_RC}:1&{tree}") == {pci_rp}
    assert candidate_providers(cloud, f"resources=VGPU:1&{tree}") == {vgpu_rp}
    assert run_module("device_quarantine", release)["changed"] is False


def test_a_health_command_that_never_exits_is_killed_and_the_device_stays_quarantined(cloud, wide):
    args = dict(cloud.auth, host=WIDE, address=WIDE_ADDRESS)
    assert run_module("device_quarantine", dict(args, reason="Xid 79"))["changed"] is True
    started = time.monotonic()
    hung = run_module(
        "device_quarantine", dict(args, state="released", health_command=["sleep", "600"], health_timeout=2)
    )
    took = time.monotonic() - started
    assert hung.get("failed") and hung["msg"] == (
        "health_command sleep 600 was still running after 2 seconds (health_timeout) and was killed; it printed "
        "nothing; the device stays quarantined"
    ), hung
    assert hung["health"]["timed_out"] is True and hung["health"]["rc"] is None
    assert took < 30, took
    tree = f"in_tree={WIDE_UUID}"
    assert candidate_providers(cloud, f"resources={GPU_RC}:1&{tree}") == set()
    assert candidate_providers(cloud, f"resources=VGPU:1&{tree}") == set()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"health_command": []}, "health_command is empty; give the command that proves the device healthy"),
        ({}, "state=released needs health_command"),
        ({"health_command": [""]}, "health_command's first item (the program) is empty"),
        ({"health_command": ["true"], "health_timeout": 0}, "health_timeout is 0; give the seconds"),
        ({"health_command": ["true"], "health_check": False}, "health_check is false but health_command is given"),
        ({"health_command": ["/no/such/health-tool"]}, "health_command /no/such/health-tool could not start"),
    ],
)
def test_a_release_without_a_real_check_is_refused_and_the_device_stays_quarantined(cloud, wide, options, words):
    args = dict(cloud.auth, host=WIDE, address=WIDE_ADDRESS)
    run_module("device_quarantine", dict(args, reason="Xid 79"))
    refused = run_module("device_quarantine", dict(args, state="released", **options))
    assert refused.get("failed") and words in refused["msg"], refused
    tree = f"in_tree={WIDE_UUID}"
    assert candidate_providers(cloud, f"resources={GPU_RC}:1&{tree}") == set()
    assert candidate_providers(cloud, f"resources=VGPU:1&{tree}") == set()
