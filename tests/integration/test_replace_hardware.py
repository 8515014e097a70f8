"""playbooks/replace_hardware.yml on three demo hosts against the real Placement.

- In check mode nothing is written anywhere: no host root, no Kolla config, no Placement provider, and no
  task runs on a host outside the compute group (the deploy host of the inventory).
- A GPU board of hgx-01 is swapped at the same address while an instance still holds its provider: the
  playbook recognises it from the facts (the board serial nvidia-smi reports), renders Nova's configuration
  for the whole compute group (nothing changes for the others) and registers Placement again for hgx-01
  only, reports the provider with its allocation, deletes nothing, and reports nothing on the next run.
- An A16 board (four GPUs under one board serial) loses one GPU: the GPU UUIDs tell the three that stayed
  from the one that is gone, and a run limited to that host names the one host it read when a policy
  entry matches no device.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest
import yaml

from tests.support.ansible_runner import REPO, run_module, run_playbook, task_results
from tests.support.fake_nvidia_smi import STATE, render_recorded
from tests.support.fake_sysfs import build_root, load_profile

pytestmark = pytest.mark.placement

HOSTS = {"hgx-01": "hgx-h100", "mig-01": "mig-a100", "a16-01": "vgpu-a16"}
SWAPPED = "0000:18:00.0"
INSTANCE = "9e0c5d1a-6f0e-4c1b-8e7a-7d1f3c2b9a10"
A16_SERIAL = "1321021012345"  # one board serial for the board's four GPUs, as nvidia-smi reports an A16
A16_GPUS = {f"0000:{bus}:00.0": f"GPU-0a16b0a2-5d1f-4c6d-9e0f-0000000000{bus}" for bus in ("84", "85", "86", "87")}
GONE = "0000:87:00.0"
NOVA_TASK = "Write the Kolla-Ansible overrides on the deploy host"


def a16_profile(gone: str | None = None) -> dict:
    """The vgpu-a16 profile with its board serial and GPU UUIDs, without the GPU at ``gone``."""
    profile = load_profile("vgpu-a16")
    for device in profile["devices"]:
        if device["address"] in A16_GPUS:
            device.update(serial=A16_SERIAL, gpu_uuid=A16_GPUS[device["address"]])
    if gone:
        profile["devices"] = [d for d in profile["devices"] if gone not in (d["address"], d.get("physfn"))]
    return profile


def make_fleet(demo: str) -> str:
    """Fake roots for HOSTS (compute) and a deploy host outside the compute group; returns the inventory."""
    inventory = os.path.join(demo, "inventory")
    os.makedirs(inventory)
    compute = {h: {"accel_profile": p} for h, p in HOSTS.items()}
    hosts = {"all": {"children": {"compute": {"hosts": compute}, "deploy": {"hosts": {"deploy-01": {}}}}}}
    with open(os.path.join(inventory, "hosts.yml"), "w") as handle:
        yaml.safe_dump(hosts, handle)
    os.symlink(os.path.join(REPO, "inventories", "demo", "group_vars"), os.path.join(inventory, "group_vars"))
    for host, profile in HOSTS.items():
        build_root(a16_profile() if profile == "vgpu-a16" else profile, os.path.join(demo, "roots", host))
    os.makedirs(os.path.join(demo, "roots", "deploy-01", "etc"))
    return inventory


@pytest.fixture
def fleet(tmp_path):
    demo = str(tmp_path / "demo")
    return demo, make_fleet(demo)


def _facts(root: str) -> list[dict]:
    return run_module("pci_facts", {"root": root})["ansible_facts"]["accel_pci_devices"]


def _save_records(demo: str) -> None:
    for host in HOSTS:  # the record of the hardware as it was
        root = os.path.join(demo, "roots", host)
        assert run_module("hardware_record", {"root": root, "devices": _facts(root), "save": True})["changed"]


def _tree(path: str) -> dict:
    """Every directory, file and link under ``path`` with what it holds (links are not followed)."""
    out = {}
    for base, dirs, files in os.walk(path):
        for name in dirs:
            out[os.path.join(base, name)] = "dir"
        for name in files:
            full = os.path.join(base, name)
            if os.path.islink(full):
                out[full] = "link " + os.readlink(full)
            else:
                with open(full, "rb") as handle:
                    out[full] = hashlib.sha256(handle.read()).hexdigest()
    return out


def _placement_state(placement) -> dict:
    providers = placement.request("GET", "/resource_providers")[1]["resource_providers"]
    return {
        "providers": sorted((p["name"], p["generation"]) for p in providers),
        "classes": sorted(c["name"] for c in placement.request("GET", "/resource_classes")[1]["resource_classes"]),
        "traits": sorted(placement.request("GET", "/traits?name=startswith:CUSTOM_")[1]["traits"]),
    }


def _hosts_of(play: dict) -> set[str]:
    return {host for task in play["tasks"] for host in task["hosts"]}


def test_check_mode_writes_nothing_anywhere_and_runs_on_the_compute_group_only(placement, fleet):
    demo, inventory = fleet
    extra = {"accel_placement_auth": placement.auth}
    assert run_playbook("playbooks/placement.yml", inventory, extra, ACCEL_DEMO_DIR=demo)["rc"] == 0
    _save_records(demo)
    root = os.path.join(demo, "roots", "hgx-01")
    with open(root + STATE) as handle:
        state = json.load(handle)
    next(g for g in state["gpus"] if g["address"] == SWAPPED)["serial"] = "1652000000042"
    render_recorded(root, state)
    os.remove(os.path.join(demo, "roots", "mig-01", "var/lib/accel-openstack/devices.json"))  # a host never seen
    files, cloud = _tree(demo), _placement_state(placement)

    checked = run_playbook(
        "playbooks/replace_hardware.yml", inventory, extra, check=True, diff=True, ACCEL_DEMO_DIR=demo
    )
    assert checked["rc"] == 0, checked["stderr"] + checked["stdout"]
    said = task_results(checked, "Say what changed")
    assert [r["item"]["change"] for r in said["hgx-01"]["results"]] == ["replaced"]
    # the Nova config and Placement plays ran (in check mode), on the compute hosts only
    check, recognise, nova, register = checked["plays"]
    assert _hosts_of(recognise) == set(HOSTS) and _hosts_of(nova) == set(HOSTS)
    assert _hosts_of(register) == {"hgx-01", "mig-01"}
    saved = task_results(checked, "Save the record of this host's devices")
    assert saved["mig-01"]["changed"] and saved["hgx-01"]["changed"]  # would be written ...
    assert all("deploy-01" not in _hosts_of(play) for play in checked["plays"])
    assert _tree(demo) == files  # ... and nothing was
    assert _placement_state(placement) == cloud
    assert not os.path.exists(os.path.join(demo, "roots", "deploy-01", "var"))


def test_a_swapped_board_re_registers_only_its_host_and_its_provider_is_kept(placement, fleet):
    demo, inventory = fleet
    extra = {"accel_placement_auth": placement.auth}
    registered = run_playbook("playbooks/placement.yml", inventory, extra, ACCEL_DEMO_DIR=demo)
    assert registered["rc"] == 0, registered["stderr"] + registered["stdout"]
    _save_records(demo)
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
    check, recognise, nova, register = swapped["plays"]
    assert _hosts_of(register) == {"hgx-01"}
    # Nova's config is rendered from every compute host, so the aliases stay those of the whole fleet
    (nova_result,) = task_results(swapped, NOVA_TASK).values()
    rendered = {os.path.relpath(path, os.path.join(demo, "kolla-config")) for path in nova_result["rendered"]}
    assert {f"nova/{host}/nova.conf" for host in HOSTS} <= rendered, sorted(rendered)
    (warning,) = [w for w in nova_result["policy_warnings"] if "(name: mi210)" in w]
    assert "matches no device on any of the 3 hosts given (a16-01, hgx-01, mig-01)" in warning
    reported = task_results(
        swapped, "Report the old providers (none is deleted; one with allocations keeps them until its instances leave)"
    )
    (line,) = [r["msg"] for r in reported["hgx-01"]["results"]]
    assert line.startswith(f"hgx-01_{SWAPPED.upper()}: holds") and rc in line
    assert placement.request("GET", f"/allocations/{INSTANCE}")[1]["allocations"][gpu["uuid"]]["resources"] == {rc: 1}

    again = run_playbook("playbooks/replace_hardware.yml", inventory, extra, ACCEL_DEMO_DIR=demo)
    assert again["rc"] == 0, again["stderr"]
    assert all(not play["tasks"] or _hosts_of(play) <= {"localhost"} for play in again["plays"][2:]), again["plays"][2:]


def test_a_gpu_gone_from_an_a16_board_is_one_removal_and_a_limited_run_names_the_host_it_read(placement, fleet):
    demo, inventory = fleet
    extra = {"accel_placement_auth": placement.auth}
    assert run_playbook("playbooks/placement.yml", inventory, extra, ACCEL_DEMO_DIR=demo)["rc"] == 0
    _save_records(demo)
    root = os.path.join(demo, "roots", "a16-01")
    before = {d["address"]: d for d in _facts(root)}
    assert {before[a]["serial"] for a in A16_GPUS} == {A16_SERIAL}
    assert {a: before[a]["gpu_uuid"] for a in A16_GPUS} == A16_GPUS
    build_root(a16_profile(gone=GONE), root)  # the GPU fell off the bus: it and its VFs are gone
    vfs = sorted(a for a, d in before.items() if d["physfn"] == GONE)
    assert len(vfs) == 4

    limited = run_playbook("playbooks/replace_hardware.yml", inventory, extra, limit="a16-01", ACCEL_DEMO_DIR=demo)
    assert limited["rc"] == 0, limited["stderr"] + limited["stdout"]
    said = task_results(limited, "Say what changed")
    assert sorted((r["item"]["change"], r["item"]["address"]) for r in said["a16-01"]["results"]) == [
        ("removed", a) for a in sorted([GONE, *vfs])
    ]
    (gone,) = [r["item"] for r in said["a16-01"]["results"] if r["item"]["address"] == GONE]
    assert gone["was"]["gpu_uuid"] == A16_GPUS[GONE] and gone["was"]["serial"] == A16_SERIAL
    (line,) = [r["msg"] for r in said["a16-01"]["results"] if r["item"]["address"] == GONE]
    assert line == f"removed {GONE}: 25b6/{A16_SERIAL}/{A16_GPUS[GONE]} -> -/-/-", line
    # the run read one host: the entries no device of that host matches say so, and none speaks of any host
    (nova_result,) = task_results(limited, NOVA_TASK).values()
    unmatched = [w for w in nova_result["policy_warnings"] if "matches no device" in w]
    assert len(unmatched) == 9 and all("on the only host given (a16-01);" in w for w in unmatched), unmatched
    assert not any("any host" in w for w in nova_result["policy_warnings"])
    assert {h for play in limited["plays"][1:] for h in _hosts_of(play)} == {"a16-01"}

    with open(os.path.join(root, "var/lib/accel-openstack/devices.json")) as handle:
        record = json.load(handle)["devices"]
    assert sorted(d["gpu_uuid"] for d in record if d["gpu_uuid"]) == sorted(v for a, v in A16_GPUS.items() if a != GONE)
    again = run_module("hardware_record", {"root": root, "devices": _facts(root)})
    assert again["changes"] == [] and again["first_run"] is False
