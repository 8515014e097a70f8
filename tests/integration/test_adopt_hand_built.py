"""A cloud built by hand, audited and adopted, sees no change from the nova_config stage.

The healthy variant of the audit example (tests/support/audit_example.py) holds its Nova config in the
operator's own files and words: the alias once in Kolla's global nova.conf, booleans and lists spelt
their own way, no ownership header, no provider config. The audit's adopted variables given back to
nova_config change nothing (check mode and a real run, in both layouts) and write nothing; a policy that
changes what Nova reads, or ``take_ownership``, still writes.
"""

from __future__ import annotations

import hashlib
import os

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import adopt
from ansible_collections.accel.openstack.plugins.module_utils._nova.deployed import read_kolla, read_nova_conf_d
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import nova_fleet
from tests.integration.test_audit_playbook import database_dump, tree_checksum
from tests.support import audit_example
from tests.support.ansible_runner import run_module, run_playbook, task_results, total_changed
from tests.support.placement_loader import load_fleet


def checksums(top: str) -> dict:
    found = {}
    for base, _dirs, names in os.walk(top):
        for name in names:
            with open(os.path.join(base, name), "rb") as handle:
                found[os.path.join(base, name)] = hashlib.sha256(handle.read()).hexdigest()
    return found


def adopted_args(adopted: dict) -> dict:
    return {
        "policy": adopted["accel_device_policy"],
        "report_in_placement": adopted["accel_nova_report_in_placement"],
        "pci_in_placement": adopted["accel_nova_pci_in_placement"],
    }


@pytest.fixture(scope="module")
def cloud(tmp_path_factory):
    dest = str(tmp_path_factory.mktemp("hand-built"))
    facts = audit_example.healthy(dest)
    config_dir = os.path.join(dest, "kolla-config")
    read = read_kolla(HostRoot("/"), config_dir, {h: ["compute"] for h in facts})
    read.update(read_kolla(HostRoot("/"), config_dir, {"ctl-a": ["api", "scheduler", "conductor"]}))
    result = audit_cloud(facts, {h: e["services"] for h, e in read.items()}, {"resource_providers": []}, [])
    nova = [f for f in result["findings"] if f["area"] == "nova"]
    assert nova == [], nova  # healthy: nothing to say about its Nova config
    assert result["adopted"]["unexpressed"] == []
    return {"dest": dest, "facts": facts, "config_dir": config_dir, "adopted": result["adopted"]}


def kolla_args(cloud: dict, **extra) -> dict:
    hosts = [{"name": h, "facts": cloud["facts"][h]} for h in sorted(cloud["facts"])]
    args = {"layout": "kolla", "hosts": hosts, "config_dir": cloud["config_dir"], "kolla_control_hosts": ["ctl-a"]}
    return {**args, "kolla_super_conductor": False, **adopted_args(cloud["adopted"]), **extra}


def test_kolla_layout_adoption_changes_nothing(cloud):
    before = checksums(cloud["config_dir"])
    for check in (True, False):
        result = run_module("nova_config", kolla_args(cloud), check=check, diff=True)
        assert result.get("failed") is not True, result.get("msg")
        assert result["changed"] is False, result["diff"]
        assert result["changed_hosts"] == [] and result["kolla_command"] is None
    assert checksums(cloud["config_dir"]) == before


def test_kolla_layout_still_writes_what_nova_would_read_differently(cloud):
    policy = [
        dict(e, traits=["CUSTOM_GOLD"]) if e["mode"] == "passthrough" else e
        for e in cloud["adopted"]["accel_device_policy"]
    ]
    result = run_module("nova_config", kolla_args(cloud, policy=policy), check=True, diff=True)
    assert result["changed"] is True and "t4-a" in result["changed_hosts"]
    # Super conductor running (Kolla's default group): it lacks pci_in_placement today, so that is a change.
    result = run_module("nova_config", kolla_args(cloud, kolla_super_conductor=True), check=True)
    assert result["changed"] is True
    owned = run_module("nova_config", kolla_args(cloud, take_ownership=True), check=True, diff=True)
    assert owned["changed"] is True
    assert any("# accel.openstack owns:" in d["after"] for d in owned["diff"])


def test_nova_conf_d_layout_adoption_changes_nothing(cloud, tmp_path):
    """The same hand-built config as one host's nova.conf (no nova.conf.d file of the collection)."""
    root = tmp_path / "root"
    host = "t4-a"
    merged = read_kolla(HostRoot("/"), cloud["config_dir"], {host: ["compute"]})[host]["services"]["compute"]
    (root / "etc/nova/nova.conf.d").mkdir(parents=True)
    lines = ["[DEFAULT]", "debug = false"]
    for section, keys in merged.items():
        lines.append(f"[{section}]")
        lines += [f"{key}={value}" for key, values in keys.items() for value in values]
    (root / "etc/nova/nova.conf").write_text("\n".join(lines) + "\n")
    (root / "etc/nova/nova.conf.d/10-local.conf").write_text("[DEFAULT]\ncpu_allocation_ratio = 4.0\n")
    read = read_nova_conf_d(HostRoot(str(root)), "/etc/nova/nova.conf", "/etc/nova/nova.conf.d", host, ["compute"])
    facts = {host: cloud["facts"][host]}
    adopted = audit_cloud(facts, {host: read[host]["services"]}, {"resource_providers": []}, [])["adopted"]
    args = {"layout": "nova_conf_d", "root": str(root), "host": host, "services": ["compute"]}
    args.update(hosts=[{"name": host, "facts": facts[host]}], **adopted_args(adopted))
    before = checksums(str(root))
    for check in (True, False):
        result = run_module("nova_config", args, check=check, diff=True)
        assert result.get("failed") is not True, result.get("msg")
        assert result["changed"] is False, result["diff"]
    assert checksums(str(root)) == before
    owned = run_module("nova_config", dict(args, take_ownership=True), check=True)
    assert owned["changed"] is True


def write_nova_conf(root: str, config: dict) -> None:
    """One host's config as nova.conf in an operator's spelling, plus a local nova.conf.d file."""
    os.makedirs(os.path.join(root, "etc/nova/nova.conf.d"))
    lines = ["[DEFAULT]", "debug = false"]
    for section, keys in config.items():
        lines.append(f"[{section}]")
        lines += [f"{key}={value}" for key, values in keys.items() for value in values]
    with open(os.path.join(root, "etc/nova/nova.conf"), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with open(os.path.join(root, "etc/nova/nova.conf.d/10-local.conf"), "w") as handle:
        handle.write("[DEFAULT]\ncpu_allocation_ratio = 4.0\n")


@pytest.fixture(scope="module")
def nova_compute_reported(placement, tmp_path_factory):
    """The real Placement holding what nova-compute reports for the healthy example (the same for both
    layouts: the same hosts and the same nova-compute config)."""
    dest = str(tmp_path_factory.mktemp("reported"))
    facts = audit_example.healthy(dest)
    deployed = read_kolla(HostRoot("/"), os.path.join(dest, "kolla-config"), {h: ["compute"] for h in facts})
    policy = adopt({h: e["services"]["compute"] for h, e in deployed.items()}, facts)["accel_device_policy"]
    fleet = nova_fleet(facts, policy, report_in_placement=True, disk_gb=800)
    for record in fleet["resource_providers"]:
        for key in ("numa_cells", "pci_pools", "disabled"):
            record.pop(key, None)
    load_fleet(placement, fleet)
    return placement


@pytest.mark.placement
@pytest.mark.parametrize("layout", ["kolla", "nova_conf_d"])
def test_audit_then_site_in_check_mode_changes_nothing(nova_compute_reported, tmp_path, layout):
    """audit.yml on the healthy hand-built cloud, then site.yml (every stage) with the adopted file as
    extra vars, in --check --diff against the real Placement (nova-compute owns the providers): no task
    changes anything, the overrides and the roots keep their checksums and Placement its tables."""
    placement = nova_compute_reported
    dest = str(tmp_path / "example")
    facts = audit_example.healthy(dest)
    if layout == "nova_conf_d":  # the same config, as each host's own nova.conf
        deployed = read_kolla(HostRoot("/"), os.path.join(dest, "kolla-config"), {h: ["compute"] for h in facts})
        for host, entry in deployed.items():
            write_nova_conf(os.path.join(dest, "roots", host), entry["services"]["compute"])
    env = {"ACCEL_AUDIT_EXAMPLE_DIR": dest}
    common = {"accel_placement_auth": placement.auth, "accel_audit_flavors": [], "accel_nova_layout": layout}
    audit = run_playbook(
        "playbooks/audit.yml", "inventories/audit-example", dict(common, accel_audit_fail_on="warning"), **env
    )
    assert audit["rc"] == 0, audit["stderr"] + audit["stdout"]
    with open(os.path.join(dest, "accel-adopted-policy.yml")) as handle:
        adopted = yaml.safe_load(handle)
    assert adopted["unexpressed"] == [] and len(adopted["accel_device_policy"]) == 2
    # nova_conf_d: the audit reads the compute hosts only, which do not run the scheduler.
    assert adopted["accel_nova_pci_in_placement"] is (layout == "kolla")
    files, tables = tree_checksum(dest), database_dump(placement.db_path)
    extra = dict(common, accel_placement_wait_retries=1, accel_placement_wait_delay=1)
    extra.update({k: v for k, v in adopted.items() if k != "unexpressed"})
    report = run_playbook("site.yml", "inventories/audit-example", extra, check=True, diff=True, limit="compute", **env)
    assert report["rc"] == 0, report["stderr"] + report["stdout"]
    changed = [
        (task["task"]["name"], host)
        for play in report["plays"]
        for task in play["tasks"]
        for host, result in task["hosts"].items()
        if result.get("changed")
    ]
    assert total_changed(report) == 0 and changed == [], changed
    stage = {
        "kolla": "Write the Kolla-Ansible overrides on the deploy host",
        "nova_conf_d": "Write this host's nova.conf.d file",
    }
    assert task_results(report, stage[layout])  # the stage ran
    assert tree_checksum(dest) == files
    assert database_dump(placement.db_path) == tables
