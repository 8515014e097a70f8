"""Who owns what in Placement, proved with Nova 34's own code playing nova-compute (tests/support/nova_compute.py).

Nova's periodic update reports two GPU hosts to the real Placement; then the collection's placement
stage runs on a real cloud (``accel_placement_simulate_compute: false``), through ansible-playbook and
the module; then Nova's update runs again. Nova raises nothing (no 409, no
ResourceProviderCreationFailed), nothing Nova wrote is rewritten (names, uuids, parents, inventories),
and the custom traits the collection adds survive Nova's second update. A host where nova-compute has
not run yet gets no provider from the stage (it is reported missing, and the play fails unless told
not to), and Nova's first update of it then succeeds. The control: a root created by simulating
nova-compute makes Nova's own update fail.
"""

from __future__ import annotations

import json
import sys

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import HostInput, Options, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import provider_config_text
from tests.support import nova_compute
from tests.support.ansible_runner import run_module, run_playbook, task_results, total_changed
from tests.support.fake_sysfs import build_root

pytestmark = [pytest.mark.placement, pytest.mark.nova]

with open("inventories/demo/group_vars/all/device_policy.yml") as handle:
    POLICY = yaml.safe_load(handle)["accel_device_policy"]
HOSTS = {"gpu-01": "hgx-h100", "vgpu-01": "vgpu-a16", "gpu-02": "configured-t4"}
# What nova-compute is configured with beyond the collection's fragment (Nova's defaults otherwise).
NOVA_SETTINGS = "[DEFAULT]\nreserved_host_memory_mb = 4096\ncpu_allocation_ratio = 1.0\n"
ROOT_TRAIT = "CUSTOM_ACCEL_MANAGED"
# Declared through Nova's provider config (the Nova config stage's accel_nova_compute_node_traits).
PROVIDER_CONFIG_TRAIT = "CUSTOM_GPU_HOST"


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    """Each host's fake root, facts, and the Nova case with what the Nova config stage renders for it."""
    base = tmp_path_factory.mktemp("ownership")
    roots = {name: build_root(profile, str(base / name)) for name, profile in HOSTS.items()}
    facts = {name: discover(root)[0] for name, root in roots.items()}
    inputs = [HostInput(name, facts[name], compute_node_traits=(PROVIDER_CONFIG_TRAIT,)) for name in HOSTS]
    rendering = render_fleet(inputs, POLICY, Options(report_in_placement=True))
    out = {}
    for name in HOSTS:
        config = [NOVA_SETTINGS, render_text(rendering.compute[name])]
        provider_config = provider_config_text(rendering.provider_configs.get(name))
        case = nova_compute.compute_case(name, facts[name], config, provider_config=provider_config)
        out[name] = {"root": roots[name], "case": case}
    inventory = {
        "all": {
            "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
            "children": {
                "compute": {"hosts": {name: {"accel_root": out[name]["root"]} for name in HOSTS}},
                "control": {"hosts": {"ctl-01": {}}},
            },
        }
    }
    path = base / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    return {"hosts": out, "inventory": str(path)}


def stage(placement, hosts, limit: str, **extra) -> dict:
    variables = {
        "accel_placement_auth": placement.auth,
        "accel_device_policy": POLICY,
        "accel_nova_report_in_placement": True,
        "accel_nova_compute_node_traits": [PROVIDER_CONFIG_TRAIT],
        "accel_placement_root_traits": [ROOT_TRAIT],
        "accel_placement_wait_retries": 0,
        "accel_placement_wait_delay": 1,
        "accel_placement_summary": False,
        **extra,
    }
    return run_playbook("playbooks/placement.yml", hosts["inventory"], variables, limit=limit)


def failures(report: dict) -> str:
    """The failed task results of a playbook report, for assertion messages."""
    failed = [
        f"{task['task']['name']} on {host}: {result.get('msg')}"
        for play in report.get("plays", [])
        for task in play.get("tasks", [])
        for host, result in task["hosts"].items()
        if result.get("failed") and not result.get("ignored")
    ]
    return "\n".join(failed) + json.dumps(report.get("stats")) + report["stderr"] + report["stdout"]


def snapshot(placement) -> dict:
    """Every provider as Placement holds it: name -> uuid, parent, root, inventories, traits."""
    _status, body = placement.request("GET", "/resource_providers")
    out = {}
    for record in body["resource_providers"]:
        uuid = record["uuid"]
        out[record["name"]] = {
            "uuid": uuid,
            "parent": record["parent_provider_uuid"],
            "root": record["root_provider_uuid"],
            "inventories": placement.request("GET", f"/resource_providers/{uuid}/inventories")[1]["inventories"],
            "traits": set(placement.request("GET", f"/resource_providers/{uuid}/traits")[1]["traits"]),
        }
    return out


def nova_owned(state: dict) -> dict:
    """What nova-compute owns of each provider: identity, parent and inventories."""
    return {name: (p["uuid"], p["parent"], p["root"], p["inventories"]) for name, p in state.items()}


def nova_update(placement, hosts, *names) -> list[dict]:
    results = nova_compute.update(placement.url, [hosts["hosts"][n]["case"] for n in names])
    for result in results:
        assert result["ok"], result
    return results


def test_nova_then_the_stage_then_nova_again_rewrite_nothing_and_keep_the_collection_traits(placement, hosts):
    reported = nova_update(placement, hosts, "gpu-01", "vgpu-01")
    by_name = {p["name"]: p for r in reported for p in r["providers"]}
    assert by_name["gpu-01"]["inventories"]["MEMORY_MB"]["reserved"] == 4096
    assert by_name["gpu-01"]["inventories"]["DISK_GB"]["total"] == 1800
    assert PROVIDER_CONFIG_TRAIT in by_name["gpu-01"]["traits"]  # Nova applied the rendered provider config
    pci = sorted(n for n in by_name if n.startswith("gpu-01_0000:"))
    vgpu = sorted(n for n in by_name if n.startswith("vgpu-01_pci_"))
    assert len(pci) == 8 and vgpu, sorted(by_name)
    before = snapshot(placement)

    # the stage on a real cloud: controllers and the host nova-compute has not reported (gpu-02) get no
    # provider; gpu-02 is reported missing, and the play goes on as told
    first = stage(placement, hosts, "all", accel_placement_fail_on_missing=False)
    assert first["rc"] == 0, failures(first)
    (report,) = task_results(first, "Report the providers nova-compute has not reported").values()
    expected = "providers (Placement read 1 time(s), 1 s apart): gpu-02: gpu-02, gpu-02_0000:"
    assert expected in report["msg"], report["msg"]
    assert "hypervisor hostname" in report["msg"]
    assert all(r.get("skipped") for r in task_results(first, "Register every host's providers in one call").values())
    (added,) = task_results(first, "Add the collection's custom traits to nova-compute's providers").values()
    assert added["changed"] is True
    assert {p["name"] for p in added["providers"]} == {"gpu-01", "vgpu-01", *vgpu}
    after_stage = snapshot(placement)
    assert nova_owned(after_stage) == nova_owned(before)
    assert not {"ctl-01", "localhost"} & set(after_stage)
    assert not any(name.startswith("gpu-02") for name in after_stage)
    assert after_stage["gpu-01"]["traits"] == before["gpu-01"]["traits"] | {ROOT_TRAIT}
    for name in vgpu:  # the policy's vGPU trait, declared by the stage and by the rendered provider config
        assert after_stage[name]["traits"] == before[name]["traits"] | {"CUSTOM_VGPU_A16"}
    pool = run_module("placement_provider", dict(placement.auth, name=vgpu[0], traits=["CUSTOM_TENANT_POOL"]))
    assert pool["changed"] and not pool.get("failed"), pool  # a custom trait on a vGPU provider: allowed
    after_stage = snapshot(placement)
    for name in pci:
        assert after_stage[name]["traits"] == before[name]["traits"]

    # the module refuses to play nova-compute on a real cloud, and changes nothing
    predicted = [
        dict(p, inventories={rc: dict(inv, allocation_ratio=4.0) for rc, inv in p["inventories"].items()})
        for p in by_name.values()
        if p["name"].startswith("gpu-01")
    ]
    declared = [{k: p[k] for k in ("name", "inventories", "traits")} for p in predicted]
    refused = run_module("placement_provider", dict(placement.auth, providers=declared))
    assert refused.get("failed") and "nova-compute owns it" in refused["msg"], refused
    assert "writing inventories" in refused["msg"]
    created = run_module("placement_provider", dict(placement.auth, name="gpu-03", inventories={"VCPU": 8}))
    assert created.get("failed") and "creating a compute node root" in created["msg"], created
    child = run_module(
        "placement_provider",
        dict(placement.auth, name="gpu-01_0000:99:00.0", parent="gpu-01", inventories={"CUSTOM_X": 1}),
    )
    assert child.get("failed") and "a provider of a nova-compute tree" in child["msg"], child
    tagged = run_module("placement_provider", dict(placement.auth, name=pci[0], traits=["CUSTOM_NOT_KEPT"]))
    assert tagged.get("failed") and "device_spec" in tagged["msg"], tagged
    deleted = run_module("placement_provider", dict(placement.auth, name=vgpu[0], state="absent"))
    assert deleted.get("failed") and "deleting it refused" in deleted["msg"], deleted
    assert snapshot(placement) == after_stage

    # Nova's next periodic update: no conflict, nothing of Nova's changed, the collection's traits kept
    again = nova_update(placement, hosts, "gpu-01", "vgpu-01")
    assert {p["uuid"] for r in again for p in r["providers"]} == {p["uuid"] for p in by_name.values()}
    after_nova = snapshot(placement)
    assert nova_owned(after_nova) == nova_owned(before)
    assert ROOT_TRAIT in after_nova["gpu-01"]["traits"]
    assert all("CUSTOM_VGPU_A16" in after_nova[name]["traits"] for name in vgpu)
    assert "CUSTOM_TENANT_POOL" in after_nova[vgpu[0]]["traits"]

    second = stage(placement, hosts, "all", accel_placement_fail_on_missing=False)
    assert second["rc"] == 0 and total_changed(second) == 0, second["stats"]
    assert snapshot(placement) == after_nova


def test_a_host_nova_has_not_reported_fails_the_stage_and_nova_then_creates_its_own(placement, hosts):
    failing = stage(placement, hosts, "gpu-02", accel_placement_wait_retries=2)
    assert failing["rc"] != 0
    (waited,) = task_results(failing, "Wait for the providers nova-compute reports").values()
    assert waited["attempts"] == 3 and not waited.get("failed")
    # What is awaited and for how long at most, before the wait; how long it took, after it.
    (before,) = task_results(failing, "Say what is awaited and for how long at most").values()
    assert before["msg"].startswith("Waiting for nova-compute to report ")
    assert "every 1 s, for at most 2 s" in before["msg"]
    (after,) = task_results(failing, "Say how long the wait took").values()
    assert after["msg"] == "Placement was read 3 time(s) over about 2 s."
    (failed,) = task_results(failing, "Fail when predicted providers are missing").values()
    assert failed["failed"] and "gpu-02_0000:" in failed["msg"] and "accel_placement_fail_on_missing" in failed["msg"]
    assert not any(name.startswith("gpu-02") for name in snapshot(placement))

    # The control, in the same Nova run: a root created by playing nova-compute (what the stage did before
    # it knew who owns what, and what simulate_compute still does) makes Nova's own creation fail.
    early = run_module(
        "placement_provider",
        dict(placement.auth, simulate_compute=True, name="gpu-09", inventories={"VCPU": 8, "DISK_GB": 100}),
    )
    assert early["changed"], early
    guarded = run_module("placement_provider", dict(placement.auth, name="gpu-10", inventories={"VCPU": 8}))
    assert guarded.get("failed") and "409" in guarded["msg"]
    assert placement.request("GET", "/resource_providers?name=gpu-10")[1]["resource_providers"] == []
    control = nova_compute.compute_case("gpu-09", None, [NOVA_SETTINGS])
    reported, refused = nova_compute.update(placement.url, [hosts["hosts"]["gpu-02"]["case"], control])
    assert not refused["ok"] and refused["error"].startswith("ResourceProviderCreationFailed"), refused
    assert reported["ok"] and reported["providers"][0]["uuid"] == nova_compute.node_uuid("gpu-02"), reported

    found = stage(placement, hosts, "gpu-02", accel_placement_summary=True)
    assert found["rc"] == 0, failures(found)
    skipped = task_results(found, "Report the providers nova-compute has not reported").values()
    assert all(r.get("skipped") for r in skipped)
    (summary,) = task_results(found, "Summarise the providers in Placement").values()
    assert "reported by nova-compute" in summary["msg"] and "gpu-02_0000:" in summary["msg"]
    state = snapshot(placement)
    assert ROOT_TRAIT in state["gpu-02"]["traits"]
    assert state["gpu-02"]["inventories"]["VCPU"]["allocation_ratio"] == 1.0
