"""playbooks/audit.yml changes nothing anywhere: against the real Placement and checksummed fake roots.

The healthy cloud of tests/support/audit_cloud.py is loaded into a real Placement (its providers as
nova-compute reports them), its hosts are fake roots built from hardware profiles, and its Nova config
lies in Kolla-Ansible's override layout. The playbook runs once with --check (the nova.conf.d layout: the same
config as files on each host) and once without (the kolla layout, with a planted error, so that it also
fails as it should); before and after each run every table of Placement's
database and a checksum of every file, link and mode under the roots must be the same. In between, a
device quarantined with device_quarantine is reported (and Placement still unchanged by the audit), and
its release, run as the finding's fix says, makes the finding go away.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import sqlite3
import sys
import uuid

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
from tests.support import audit_cloud as world
from tests.support.ansible_runner import REPO, run_module, run_playbook, task_results
from tests.support.placement_loader import load_fleet

pytestmark = [pytest.mark.placement, pytest.mark.xdist_group("nova_api")]


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
        "playbooks/audit.yml",
        cloud["inventory"],
        extra_vars={"accel_nova_layout": "nova_conf_d", "accel_audit_gpu_health": True},
        check=True,
    )
    assert report["rc"] == 0, failures(report)
    assert state(cloud, placement) == before
    assert changed_tasks(report) <= REPORT_TASKS
    written = json.loads(read(cloud, "accel-audit.json"))
    assert [f for f in written["findings"] if f["severity"] != "info"] == []
    assert written["counts"]["error"] == 0
    health = task_results(report, "Read the GPUs' health (nvidia-smi, the kernel log's Xid events), read-only")
    assert {h: (r["changed"], r["counts"]["failed"]) for h, r in health.items()} == {
        h: (False, 0) for h in world.PROFILES
    }
    adopted = yaml.safe_load(read(cloud, "accel-adopted-policy.yml"))
    assert {e["name"] for e in adopted["accel_device_policy"]} >= {"t4"}


RELEASE_TASK = re.compile(r"accel\.openstack\.device_quarantine: \{[^{}]*\}")


def test_audit_reports_a_quarantined_device_and_forgets_it_once_released(cloud, placement):
    """device_quarantine takes an A16 VF out of scheduling: the audit (read-only) reports exactly one
    device_quarantined finding for it, whose fix, run as written, releases it; then the finding is gone."""
    start = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    device = {"host": "a16-01", "address": "0000:84:00.4"}
    held = run_module("device_quarantine", dict(placement.auth, **device, reason="Xid 79: GPU has fallen off the bus"))
    assert held["changed"] is True, held.get("msg")
    end = datetime.datetime.now(datetime.UTC)
    before = state(cloud, placement)
    report = run_playbook("playbooks/audit.yml", cloud["inventory"])
    assert report["rc"] == 0, failures(report)
    assert state(cloud, placement) == before
    assert changed_tasks(report) <= REPORT_TASKS
    quarantined = json.loads(read(cloud, "accel-audit.json"))["findings"]
    item = next((f for f in quarantined if f["code"] == "device_quarantined"), None)
    assert item is not None, quarantined
    assert (item["host"], item["area"], item["severity"]) == ("a16-01", "placement", "info")
    for words in ("0000:84:00.4", held["provider"]["name"], "Xid 79: GPU has fallen off the bus"):
        assert words in item["message"]
    since = datetime.datetime.strptime(re.search(r"since (\S+Z):", item["message"]).group(1), "%Y-%m-%dT%H:%M:%SZ")
    assert start <= since.replace(tzinfo=datetime.UTC) <= end
    (task,) = RELEASE_TASK.findall(item["fix"])
    release = yaml.safe_load(task)["accel.openstack.device_quarantine"]
    assert release == dict(device, state="released")
    assert item["fix"].endswith(f"allocation delete {held['consumer']}")

    assert "plus health_command (the command that proves the device healthy" in item["fix"]
    released = run_module("device_quarantine", dict(placement.auth, **release, health_command=["true"]))
    assert released["changed"] is True and released["held"] == {}, released.get("msg")
    report = run_playbook("playbooks/audit.yml", cloud["inventory"], check=True)
    assert report["rc"] == 0, failures(report)
    healthy = json.loads(read(cloud, "accel-audit.json"))["findings"]
    assert [f for f in quarantined if f not in healthy] == [item]  # exactly that finding, nothing else
    assert [f for f in healthy if f not in quarantined] == []


def test_the_audit_reads_the_servers_and_reports_an_allocation_no_server_holds(cloud, placement, nova_api):
    """accel_audit_servers: the role reads every project's servers from Nova 34's own compute API (which has
    none); an instance-shaped consumer in Placement is then no server's: exactly one allocation_leaked."""
    mig = next(p for p in cloud["healthy"]["fleet"]["resource_providers"] if p["name"] == "mig-01")
    consumer = str(uuid.uuid4())
    status, _body = placement.request(
        "PUT",
        f"/allocations/{consumer}",
        {"allocations": {mig["uuid"]: {"resources": {"VCPU": 2, "MEMORY_MB": 2048}}}, "project_id": str(uuid.uuid4()),
         "user_id": str(uuid.uuid4()), "consumer_generation": None, "consumer_type": "INSTANCE"},
    )  # fmt: skip
    assert status == 204
    try:
        before = state(cloud, placement)
        extra = {"accel_audit_servers": True, "accel_audit_servers_auth": nova_api.auth}
        report = run_playbook("playbooks/audit.yml", cloud["inventory"], extra_vars=extra, check=True)
        assert report["rc"] == 0, failures(report)
        assert state(cloud, placement) == before
        (item,) = [f for f in json.loads(read(cloud, "accel-audit.json"))["findings"] if f["severity"] != "info"]
        assert (item["code"], item["host"], item["severity"]) == ("allocation_leaked", "mig-01", "warning")
        assert (
            f"consumer {consumer} holds mig-01: MEMORY_MB 2048, VCPU 2 but is not in the server list"
            in (item["message"])
        )
        assert item["fix"].endswith(f"openstack resource provider allocation delete {consumer}")
        # the live instances given instead: nothing is read from Nova and the consumer is one of them
        report = run_playbook(
            "playbooks/audit.yml", cloud["inventory"], extra_vars={"accel_audit_instances": [consumer]}, check=True
        )
        assert report["rc"] == 0, failures(report)
        assert [f for f in json.loads(read(cloud, "accel-audit.json"))["findings"] if f["severity"] != "info"] == []
    finally:
        placement.request("DELETE", f"/allocations/{consumer}")


def kolla_inventory(cloud, tmp_path, **changes) -> str:
    """The cloud's inventory with Kolla's globals.yml in ``tmp_path`` (node_custom_config: Kolla's override
    directory unless ``node_custom_config`` says another) instead of accel_kolla_config_dir, and with no report
    path, so the audit writes where ansible-playbook runs; ``changes`` are further variables."""
    with open(cloud["inventory"]) as handle:
        inventory = yaml.safe_load(handle)
    variables = inventory["all"]["vars"]
    del variables["accel_kolla_config_dir"], variables["accel_audit_report"]
    node_custom_config = changes.pop("node_custom_config", os.path.join(cloud["top"], "kolla"))
    (tmp_path / "globals.yml").write_text(yaml.safe_dump({"node_custom_config": node_custom_config}))
    variables.update(accel_kolla_globals_file=str(tmp_path / "globals.yml"), **changes)
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    return str(tmp_path / "hosts.yml")


AUDIT = os.path.join(REPO, "playbooks", "audit.yml")


def test_audit_reads_kollas_node_custom_config_and_writes_where_ansible_playbook_runs(cloud, placement, tmp_path):
    """No accel_kolla_config_dir: the directory comes from globals.yml, as for the nova_config stage; no
    report path: the report and the adopted policy go to ansible-playbook's working directory."""
    work = tmp_path / "work"
    work.mkdir()
    before = sorted(os.listdir(os.path.join(REPO, "playbooks")))
    report = run_playbook(AUDIT, kolla_inventory(cloud, tmp_path), cwd=str(work))
    assert report["rc"] == 0, failures(report)
    assert sorted(os.listdir(work)) == ["accel-adopted-policy.yml", "accel-audit.json"]
    written = json.loads((work / "accel-audit.json").read_text())
    assert [f for f in written["findings"] if f["severity"] != "info"] == []
    assert {e["name"] for e in yaml.safe_load((work / "accel-adopted-policy.yml").read_text())["accel_device_policy"]}
    assert sorted(os.listdir(os.path.join(REPO, "playbooks"))) == before
    (counted,) = task_results(report, "Show the counts").values()
    info = written["counts"]["info"]
    assert counted["msg"] == f"audit: 0 errors, 0 warnings and {info} info finding{'' if info == 1 else 's'}"


@pytest.mark.parametrize("chosen_by", ["node_custom_config", "accel_kolla_config_dir"])
def test_a_missing_kolla_config_dir_is_one_finding_and_no_adopted_policy(cloud, placement, tmp_path, chosen_by):
    """With the device policy set, an unread directory used to read as a cloud without any override: a drift
    and an inventory mismatch per host, each telling to restart nova-compute, and an empty adopted policy."""
    missing = str(tmp_path / "no-such-kolla-config")
    changes = {chosen_by: missing}
    inventory = kolla_inventory(cloud, tmp_path, **changes)
    (tmp_path / "work").mkdir()
    before = state(cloud, placement)
    report = run_playbook(AUDIT, inventory, cwd=str(tmp_path / "work"))
    assert report["rc"] != 0
    assert state(cloud, placement) == before
    assert sorted(os.listdir(tmp_path / "work")) == ["accel-audit.json"]  # no adopted policy
    written = json.loads((tmp_path / "work" / "accel-audit.json").read_text())
    (item,) = [f for f in written["findings"] if f["severity"] != "info"]
    assert (item["host"], item["area"], item["code"], item["severity"]) == (
        None,
        "nova",
        "nova_config_unreadable",
        "error",
    )
    assert f"Kolla-Ansible's config directory {missing} does not exist" in item["message"]
    if chosen_by == "node_custom_config":
        assert f"chosen by node_custom_config (Kolla-Ansible's globals: {tmp_path}/globals.yml and its globals.d)" in (
            " ".join(item["message"].split())
        )
    else:
        assert item["message"].rstrip().endswith("The directory is chosen by accel_kolla_config_dir.")
    assert "restart nova-compute" not in json.dumps(written["findings"])
    (failed,) = task_results(report, "Fail when a finding reaches accel_audit_fail_on").values()
    assert re.match(r"The audit found 1 error, 0 warnings and \d+ info findings?; it fails at error\.", failed["msg"])
    assert "{" not in failed["msg"]


def test_report_paths_are_checked_before_anything_is_read(cloud, placement, tmp_path):
    (tmp_path / "work").mkdir()
    refused = run_playbook(AUDIT, cloud["inventory"], {"accel_audit_report": str(tmp_path / "gone" / "a.json")})
    assert refused["rc"] != 0
    task = "Refuse a report or policy path whose directory does not exist, before anything is read"
    (failed,) = task_results(refused, task).values()
    assert failed["results"][0]["msg"] == (
        f"accel_audit_report is {tmp_path}/gone/a.json, but its directory {tmp_path}/gone does not exist: create it, "
        "or give an existing directory with accel_audit_dir (or another file with accel_audit_report); an empty "
        "accel_audit_report writes no file."
    )
    assert task_results(refused, "Read the host's accelerators, IOMMU groups, VFs, vGPU types and MIG state") == {}
    none = run_playbook(AUDIT, kolla_inventory(cloud, tmp_path, accel_audit_dir=""), cwd=str(tmp_path / "work"))
    assert none["rc"] == 0, failures(none)
    assert os.listdir(tmp_path / "work") == []
    (skipped,) = task_results(none, "Write the JSON report (on the controller, in check mode too)").values()
    assert skipped.get("skipped") is True


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
        {"allocations": {orphan: {"resources": {"CUSTOM_NVIDIA_T4": 1}},
                         t4["uuid"]: {"resources": {"VCPU": 4, "MEMORY_MB": 8192}}},  # as every instance holds
         "project_id": str(uuid.uuid4()),
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
