"""playbooks/health.yml against the real Placement and a simulated host whose GPU fell off the bus.

The host is a simulated root of the hgx-h100 profile with ``health: {xid: [79]}`` planted on 0000:18:00.0:
its kernel log (/var/log/kern.log) shows the driver's Xid 79 line a minute ago, and its simulated nvidia-smi
(installed in the root as /usr/bin/nvidia-smi) answers the health command. Placement holds the host's
compute node and one PCI provider per GPU, as nova-compute names them. The playbook runs in check mode
(nothing written anywhere), then for real (the GPU is quarantined: Placement offers it no more, and the
metrics say failed and quarantined), then again (nothing changes), then after the repair (the Xid is older
than the cooldown): the audit's health check now says the quarantined GPU is healthy, and the playbook runs
the health command, which passes, and releases the GPU.
"""

from __future__ import annotations

import os
import re
import sys
import time
import uuid

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine
from ansible_collections.accel.openstack.plugins.module_utils._simulate.nvidia_smi import install
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.health_checks import health_findings
from tests.support.ansible_runner import REPO, run_module, run_playbook, task_results, total_changed
from tests.support.fake_sysfs import build_root, load_profile
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement

HOST = "cn-health-1"
RC = "CUSTOM_PCI_10DE_2330"
FAILED = "0000:18:00.0"
COOLDOWN = 600
GPUS = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
        "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"]  # fmt: skip
DOC = os.path.join(REPO, "docs", "health.md")


def fleet() -> dict:
    node = str(uuid.uuid5(uuid.NAMESPACE_DNS, HOST))
    inventory = {"total": 1, "reserved": 0, "min_unit": 1, "max_unit": 1, "step_size": 1, "allocation_ratio": 1.0}
    providers = [{"uuid": node, "name": HOST, "inventories": {}}]
    for address in GPUS:
        providers.append(
            {"uuid": str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{HOST}_{address}")), "name": f"{HOST}_{address.upper()}",
             "parent_provider_uuid": node, "inventories": {RC: dict(inventory)}}
        )  # fmt: skip
    return {"resource_providers": providers}


def plant(root: str, xid_age: int) -> None:
    """Build the host's root with Xid 79 on the failed GPU ``xid_age`` seconds ago."""
    profile = load_profile("hgx-h100")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - xid_age))
    for device in profile["devices"]:
        if device["address"] == FAILED:
            device["health"] = {"xid": [79], "xid_time": stamp}
    build_root(profile, root)
    os.makedirs(os.path.join(root, "usr", "bin"), exist_ok=True)
    install(root)


def candidates(placement) -> set[str]:
    body = placement.request("GET", f"/allocation_candidates?resources={RC}:1")[1]
    names = {p["uuid"]: p["name"] for p in placement.request("GET", "/resource_providers")[1]["resource_providers"]}
    return {names[rp] for request in body["allocation_requests"] for rp in request["allocations"]}


def metrics(path: str) -> dict[tuple, float]:
    with open(path) as handle:
        text = handle.read()
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            key = (sample.name, labels["pci_bus_id"], labels.get("state") or labels.get("class") or "")
            found[key] = sample.value
            assert labels["Hostname"] == HOST and set(labels) >= {"gpu", "UUID", "device", "modelName"}
    return found


def audit(placement, root: str) -> list[dict]:
    """The audit's health findings from the module's fact and Placement's snapshot with its quarantines."""
    fleet = run_module("placement_info", dict(placement.auth, quarantines=True))["fleet"]
    health = run_module("gpu_health", {"root": root, "window": COOLDOWN})["ansible_facts"]["accel_gpu_health"]
    return health_findings({HOST: {"accel_gpu_health": health}}, quarantine.quarantined_devices(fleet), str)


def changed_tasks(report: dict) -> set[str]:
    return {
        task["task"]["name"].split(" : ")[-1]
        for play in report["plays"]
        for task in play["tasks"]
        if any(result.get("changed") for result in task["hosts"].values())
    }


@pytest.fixture(scope="module")
def cloud(tmp_path_factory, placement):
    top = tmp_path_factory.mktemp("health")
    root = str(top / HOST)
    plant(root, 60)
    load_fleet(placement, fleet())
    (top / "textfile").mkdir()
    inventory = {
        "all": {
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "accel_placement_auth": placement.auth,
                "gpu_health_cooldown": COOLDOWN,
                "gpu_health_textfile_dir": str(top / "textfile"),
                "gpu_health_health_command": [f"{root}/usr/bin/nvidia-smi", "--root", root, "-q", "-i", "{bus_id}"],
            },
            "children": {"compute": {"hosts": {HOST: {"accel_root": root}}}},
        }
    }
    (top / "hosts.yml").write_text(yaml.safe_dump(inventory))
    return {
        "top": str(top),
        "root": root,
        "inventory": str(top / "hosts.yml"),
        "prom": str(top / "textfile" / "accel_gpu_health.prom"),
    }


def test_a_gpu_that_fell_off_the_bus_is_quarantined_then_released_after_the_cooldown(cloud, placement):
    assert candidates(placement) == {f"{HOST}_{a.upper()}" for a in GPUS}
    # check mode: the plan and the diff, nothing written
    check = run_playbook("playbooks/health.yml", cloud["inventory"], check=True, diff=True)
    assert check["rc"] == 0, check["stderr"][-3000:] + check["stdout"][-3000:]
    assert changed_tasks(check) == {
        "Take each failed GPU out of scheduling",
        "Write the metrics for node_exporter's textfile collector (atomically)",
    }
    assert f"{HOST}_{FAILED.upper()}" in candidates(placement) and not os.path.exists(cloud["prom"])
    written = task_results(check, "Write the metrics for node_exporter's textfile collector (atomically)")[HOST]
    diff = written["diff"][0] if isinstance(written["diff"], list) else written["diff"]
    assert diff["before"] == "" and 'pci_bus_id="00000000:18:00.0"' in diff["after"], diff
    table = task_results(check, "Show the GPUs that are not healthy or are acted on")[HOST]["msg"]
    assert table == [
        "host | address | state | classes | action",
        f"{HOST} | {FAILED} | failed | fell_off_bus | quarantine",
    ]

    applied = run_playbook("playbooks/health.yml", cloud["inventory"])
    assert applied["rc"] == 0, applied["stderr"][-3000:]
    held = task_results(applied, "Take each failed GPU out of scheduling")[HOST]["results"][0]
    assert held["changed"] is True and held["held"] == {RC: 1} and held["candidates"][0]["offered"] is False
    assert candidates(placement) == {f"{HOST}_{a.upper()}" for a in GPUS if a != FAILED}
    consumer = quarantine.consumer_uuid(held["provider"]["uuid"])
    reason = placement.request("GET", f"/allocations/{consumer}")[1]["user_id"]
    assert (
        reason == "gpu_health: fell_off_bus (Xid 79: GPU has fallen off the bus (it no longer answers on PCI Express))"
    )
    found = metrics(cloud["prom"])
    assert found[("accel_gpu_health", "00000000:18:00.0", "failed")] == 1
    assert found[("accel_gpu_health", "00000000:18:00.0", "healthy")] == 0
    assert found[("accel_gpu_health", "00000000:2A:00.0", "healthy")] == 1
    assert found[("accel_gpu_health_events", "00000000:18:00.0", "fell_off_bus")] == 1
    assert found[("accel_gpu_health_quarantined", "00000000:18:00.0", "")] == 1
    assert found[("accel_gpu_health_quarantined", "00000000:2A:00.0", "")] == 0
    with open(cloud["prom"]) as handle:
        quarantined_metrics = handle.read()

    again = run_playbook("playbooks/health.yml", cloud["inventory"])
    assert again["rc"] == 0 and total_changed(again) == 0, changed_tasks(again)
    held_table = task_results(again, "Show the GPUs that are not healthy or are acted on")[HOST]["msg"]
    assert held_table[1] == f"{HOST} | {FAILED} | failed | fell_off_bus | held"

    assert audit(placement, cloud["root"]) == []  # failed and quarantined: nothing for the audit to say

    # The repair: the GPU answers again and its Xid is older than the cooldown.
    plant(cloud["root"], 2 * COOLDOWN)
    (finding,) = audit(placement, cloud["root"])
    assert (finding["code"], finding["severity"], finding["host"]) == ("gpu_healthy_quarantined", "info", HOST)
    assert "state: released, health_command: " in finding["fix"]
    # A health command that fails keeps the GPU quarantined, and the run says why.
    failing = run_playbook(
        "playbooks/health.yml", cloud["inventory"], {"gpu_health_health_command": ["false", "{bus_id}"]}
    )
    assert failing["rc"] == 0 and f"{HOST}_{FAILED.upper()}" not in candidates(placement)
    said = task_results(failing, "Say which GPUs stay quarantined because their health command failed")
    assert said[HOST]["results"][0]["msg"] == f"{FAILED} stays quarantined: false 00000000:18:00.0 exited with status 1"
    assert metrics(cloud["prom"])[("accel_gpu_health_quarantined", "00000000:18:00.0", "")] == 1
    released = run_playbook("playbooks/health.yml", cloud["inventory"], diff=True)
    assert released["rc"] == 0, released["stderr"][-3000:]
    ran = task_results(released, "Run the health command on each GPU healthy for the cooldown (on its host)")
    assert ran[HOST]["results"][0]["rc"] == 0 and "00000000:18:00.0" in ran[HOST]["results"][0]["cmd"]
    back = task_results(released, "Put back each GPU whose health command exited 0 (it ran in the task above)")
    assert back[HOST]["results"][0]["changed"] is True
    assert candidates(placement) == {f"{HOST}_{a.upper()}" for a in GPUS}
    assert placement.request("GET", f"/allocations/{consumer}")[1]["allocations"] == {}
    found = metrics(cloud["prom"])
    assert found[("accel_gpu_health", "00000000:18:00.0", "healthy")] == 1
    assert found[("accel_gpu_health_quarantined", "00000000:18:00.0", "")] == 0
    assert ("accel_gpu_health_events", "00000000:18:00.0", "fell_off_bus") not in found
    check_doc_sample(table, quarantined_metrics)


def check_doc_sample(table: list[str], text: str) -> None:
    """docs/health.md shows this run's table and the metrics of its first two GPUs (the time of the Xid differs
    per run: it is masked in the comparison)."""

    def masked(value: str) -> str:
        return re.sub(r"(_timestamp_seconds\{[^}]*\}) \d+", r"\1 TIME", value)

    shown = [line for line in text.splitlines() if line.startswith("#") or re.search(r'"00000000:(18|2A):00.0"', line)]
    wanted = "\n".join(table) + "\n\n" + "\n".join(shown) + "\n"
    with open(DOC) as handle:
        doc = handle.read()
    match = re.search(
        r"<!-- sample output: tests/integration/test_gpu_health_role.py -->\n```text\n(.*?)```", doc, re.S
    )
    assert match, "docs/health.md has no sample output block"
    if os.environ.get("ACCEL_WRITE_DOCS") == "1":
        with open(DOC, "w") as handle:
            handle.write(doc[: match.start(1)] + wanted + doc[match.end(1) :])
        return
    assert masked(match.group(1)) == masked(wanted), f"docs/health.md: the sample differs from this run:\n{wanted}"
