"""The audit's inputs as an attacker shapes them: config files that lead out of the root, host names that
become paths, directories full of files, unreadable JSON, findings of the wrong shape, huge snapshots."""

from __future__ import annotations

import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import AdoptError, adopt
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import AuditInputError, audit_cloud
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import FindingError, checked
from tests.hostile.conftest import SECRET, assert_secret_absent, no_traceback
from tests.support.ansible_runner import run_module


def _kolla(root, files: dict) -> None:
    for path, text in files.items():
        full = os.path.join(root, "etc/kolla/config", path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as handle:
            handle.write(text)


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_override_file_linked_out_of_the_root_is_not_read(tmp_path, outside, kind):
    root = tmp_path / "root"
    _kolla(root, {"nova.conf": "[pci]\nalias = {}\n"})
    link = root / "etc/kolla/config/nova/gpu-1/nova.conf"
    link.parent.mkdir(parents=True)
    target = outside / "secret.txt"
    link.symlink_to(target if kind == "absolute" else os.path.relpath("/", link.parent) + "/../" * 8 + str(target))
    result = run_module("nova_config_info", {"root": str(root), "compute_hosts": ["gpu-1"]}, check=True)
    assert_secret_absent(result)
    assert not result.get("failed"), result
    assert result["deployed"]["gpu-1"]["compute"] == {"pci": {"alias": ["{}"]}}


@pytest.mark.parametrize("name", ["../../etc", "gpu/1", "", "gpu\n1", ".."])
def test_host_names_that_become_paths_are_refused(tmp_path, name):
    root = tmp_path / "root"
    _kolla(root, {"nova.conf": "[pci]\n"})
    result = run_module("nova_config_info", {"root": str(root), "compute_hosts": [name]}, check=True)
    assert result.get("failed"), result
    no_traceback(result)


def test_a_directory_full_of_conf_files_is_refused(tmp_path):
    conf_d = tmp_path / "root/etc/nova/nova.conf.d"
    conf_d.mkdir(parents=True)
    for index in range(300):
        (conf_d / f"{index:03d}.conf").write_text("[pci]\n")
    result = run_module(
        "nova_config_info", {"root": str(tmp_path / "root"), "layout": "nova_conf_d", "compute_hosts": ["h"]}
    )
    assert result.get("failed") and "256" in result["msg"], result
    no_traceback(result)


def test_a_fifo_as_config_file_does_not_hang(tmp_path):
    root = tmp_path / "root"
    _kolla(root, {"nova.conf": "[pci]\n"})
    fifo = root / "etc/kolla/config/global.conf"
    os.mkfifo(fifo)
    result = run_module("nova_config_info", {"root": str(root), "compute_hosts": ["gpu-1"]}, check=True)
    assert not result.get("failed"), result
    assert "global.conf" in str(result.get("warnings"))


@pytest.mark.parametrize(
    "value",
    ['{"vendor_id": "10de", "product_id": "2330"', "[1, 2]", '"text"', "{" * 5000, '{"address": {"domain": ".*"}}'],
)
def test_unreadable_device_spec_is_listed_not_fatal(value):
    adopted = adopt({"h": {"pci": {"device_spec": [value]}}}, {"h": {}})
    assert adopted["unexpressed"], adopted
    assert adopted["accel_device_policy"] == []


def test_too_many_values_are_refused():
    with pytest.raises(AdoptError, match="4096"):
        adopt({"h": {"pci": {"device_spec": ["{}"] * 5000}}}, {"h": {}})


@pytest.mark.parametrize(
    "item",
    [
        "not a finding",
        {"host": 1, "area": "host", "code": "x", "severity": "error", "message": "m", "fix": "f"},
        {"host": None, "area": "host", "code": "", "severity": "error", "message": "m", "fix": "f"},
        {"host": None, "area": "host", "code": "x", "severity": "fatal", "message": "m", "fix": "f"},
    ],
)
def test_findings_of_the_wrong_shape_are_refused(item):
    with pytest.raises(FindingError):
        checked([item])


def test_long_finding_texts_are_cut():
    item = {"host": None, "area": "cyborg", "code": "x", "severity": "info", "message": "m" * 10**6, "fix": "f"}
    assert len(checked([item])[0]["message"]) == 4000


@pytest.mark.parametrize(
    "fleet",
    [
        {"resource_providers": [{"uuid": "u", "name": "n", "parent_provider_uuid": "u"}]},
        {"resource_providers": [{"uuid": "u", "inventories": {"VCPU": {"total": True}}}]},
        {"resource_providers": [{"uuid": "u", "traits": "COMPUTE_NODE"}]},
    ],
)
def test_a_bad_snapshot_is_refused_with_its_reason(fleet):
    with pytest.raises(ValueError) as raised:
        audit_cloud({}, {}, fleet)
    assert SECRET not in str(raised.value)


def test_deployed_services_of_the_wrong_type_are_refused():
    with pytest.raises(AuditInputError, match="deployed"):
        audit_cloud({}, {"h": {"compute": "[pci]"}}, {"resource_providers": []})
