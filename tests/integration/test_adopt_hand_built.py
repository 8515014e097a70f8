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

from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova.deployed import read_kolla, read_nova_conf_d
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud
from tests.support import audit_example
from tests.support.ansible_runner import run_module


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
