"""playbooks/audit.yml changes nothing anywhere: against the real Placement and checksummed fake roots.

The healthy cloud of tests/support/audit_cloud.py is loaded into a real Placement (its providers as
nova-compute reports them), its hosts are fake roots built from hardware profiles, and its Nova config
lies in Kolla-Ansible's override layout. The playbook runs once with --check (the nova.conf.d layout: the same
config as files on each host) and once without (the kolla layout, with a planted error, so that it also
fails as it should); before and after each run every table of Placement's
database and a checksum of every file, link and mode under the roots must be the same.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import uuid

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
from tests.support import audit_cloud as world
from tests.support.ansible_runner import run_playbook, task_results
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement


def tree_checksum(top: str) -> str:
    digest = hashlib.sha256()
    for base, dirs, files in os.walk(top, followlinks=False):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(base, name)
            info = os.lstat(path)
            digest.update(f"{os.path.relpath(path, top)}|{info.st_mode}|".encode())
            if os.path.islink(path):
                digest.update(os.readlink(path).encode())
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    digest.update(handle.read())
    return digest.hexdigest()


def database_dump(path: str) -> list[str]:
    """Every table of Placement's database, row by row."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        return list(connection.iterdump())


@pytest.fixture(scope="module")
def cloud(tmp_path_factory, placement):
    top = tmp_path_factory.mktemp("audit")
    healthy = world.healthy(str(top / "roots"))
    world.write_kolla(str(top / "kolla"), healthy["deployed"])
    for host in world.PROFILES:  # the same config as nova.conf.d files on each host
        conf_d = os.path.join(healthy["roots"][host], "etc", "nova", "nova.conf.d")
        os.makedirs(conf_d, exist_ok=True)
        with open(os.path.join(conf_d, "50-accel-openstack.conf"), "w") as handle:
            handle.write(render_text(healthy["deployed"][host]["compute"]))
    load_fleet(placement, healthy["fleet"])
    hosts = {name: {"accel_root": healthy["roots"][name]} for name in world.PROFILES}
    inventory = {
        "all": {
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "accel_nova_layout": "kolla",
                "accel_kolla_config_dir": str(top / "kolla"),
                "accel_placement_auth": placement.auth,
                "accel_audit_control_hosts": [world.CONTROL],
                "accel_audit_flavors": healthy["flavors"],
                "accel_device_policy": healthy["policy"],
                "accel_audit_report": str(top / "out" / "accel-audit.json"),
            },
            "children": {"compute": {"hosts": hosts}},
        }
    }
    os.makedirs(top / "out")
    (top / "hosts.yml").write_text(yaml.safe_dump(inventory))
    return {"top": str(top), "inventory": str(top / "hosts.yml"), "healthy": healthy}


# The only tasks that write: the report and the adopted policy, on the controller.
REPORT_TASKS = {
    "Write the JSON report (on the controller, in check mode too)",
    "Write the adopted device policy beside the report",
}


def changed_tasks(report: dict) -> set[str]:
    return {
        task["task"]["name"].split(" : ")[-1]
        for play in report["plays"]
        for task in play["tasks"]
        if any(result.get("changed") for result in task["hosts"].values())
    }


def failures(report: dict) -> str:
    """What failed, for the assertion message (the json callback keeps it in the task results)."""
    found = [
        f"{task['task']['name']}: {result.get('msg')}"
        for play in report.get("plays", [])
        for task in play["tasks"]
        for result in task["hosts"].values()
        if result.get("failed")
    ]
    return "\n".join(found) or (report["stderr"][-3000:] + report["stdout"][-3000:])


def read(cloud, name: str) -> str:
    with open(os.path.join(cloud["top"], "out", name)) as handle:
        return handle.read()


def state(cloud, placement) -> tuple:
    return (
        tree_checksum(os.path.join(cloud["top"], "roots")),
        tree_checksum(os.path.join(cloud["top"], "kolla")),
        database_dump(placement.db_path),
    )


def test_audit_in_check_mode_changes_nothing_and_reports_a_healthy_cloud(cloud, placement):
    """The nova_conf_d layout: each host's nova.conf and nova.conf.d, read under its root."""
    before = state(cloud, placement)
    report = run_playbook(
        "playbooks/audit.yml", cloud["inventory"], extra_vars={"accel_nova_layout": "nova_conf_d"}, check=True
    )
    assert report["rc"] == 0, failures(report)
    assert state(cloud, placement) == before
    assert changed_tasks(report) <= REPORT_TASKS
    written = json.loads(read(cloud, "accel-audit.json"))
    assert [f for f in written["findings"] if f["severity"] != "info"] == []
    assert written["counts"]["error"] == 0
    adopted = yaml.safe_load(read(cloud, "accel-adopted-policy.yml"))
    assert {e["name"] for e in adopted["accel_device_policy"]} >= {"t4"}


def test_audit_fails_at_an_error_and_still_changes_nothing(cloud, placement):
    # Plant a provider of a GPU the host no longer has, with an instance on it (before the snapshot).
    t4 = next(p for p in cloud["healthy"]["fleet"]["resource_providers"] if p["name"] == "t4-01")
    orphan = str(uuid.uuid4())
    status, _body = placement.request(
        "POST",
        "/resource_providers",
        {"uuid": orphan, "name": "t4-01_0000:B1:00.0", "parent_provider_uuid": t4["uuid"]},
    )
    assert status == 200
    status, _body = placement.request(
        "PUT",
        f"/resource_providers/{orphan}/inventories",
        {"resource_provider_generation": 0, "inventories": {"CUSTOM_NVIDIA_T4": {"total": 1, "max_unit": 1}}},
    )
    assert status == 200
    consumer = str(uuid.uuid4())
    status, _body = placement.request(
        "PUT",
        f"/allocations/{consumer}",
        {"allocations": {orphan: {"resources": {"CUSTOM_NVIDIA_T4": 1}}}, "project_id": str(uuid.uuid4()),
         "user_id": str(uuid.uuid4()), "consumer_generation": None, "consumer_type": "INSTANCE"},
    )  # fmt: skip
    assert status == 204
    before = state(cloud, placement)
    report = run_playbook("playbooks/audit.yml", cloud["inventory"])
    assert report["rc"] != 0
    assert state(cloud, placement) == before
    assert changed_tasks(report) <= REPORT_TASKS
    written = json.loads(read(cloud, "accel-audit.json"))
    serious = [(f["code"], f["host"]) for f in written["findings"] if f["severity"] != "info"]
    assert serious == [("provider_orphaned", "t4-01")]
    (shown,) = task_results(report, "Show the findings, one table per area").values()
    assert any("provider_orphaned" in line for line in shown["msg"]["placement"])
    (failed,) = task_results(report, "Fail when a finding reaches accel_audit_fail_on").values()
    assert failed.get("failed") and "fails at error" in failed["msg"]
