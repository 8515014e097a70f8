"""Reading the deployed Nova config: Kolla-Ansible's precedence, oslo.config's files, what a spec claims."""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova import deployed
from tests.support.ansible_runner import run_module

SPEC_A = '{"vendor_id": "10de", "product_id": "2330"}'
SPEC_B = '{"vendor_id": "10de", "product_id": "1eb8", "resource_class": "CUSTOM_T4"}'


def write(root, files: dict) -> None:
    for path, text in files.items():
        full = root / path.lstrip("/")
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)


def test_kolla_later_file_replaces_the_list_and_repeats_accumulate(tmp_path):
    write(
        tmp_path,
        {
            "/cfg/global.conf": f"[pci]\ndevice_spec = {SPEC_A}\nalias = x\n",
            "/cfg/nova/nova-compute.conf": f"[pci]\ndevice_spec = {SPEC_B}\ndevice_spec = {SPEC_A}\n",
            "/cfg/nova/h1/nova.conf": "[devices]\nenabled_mdev_types = nvidia-735\n",
            "/cfg/nova/h1/nova-compute.conf": "[pci]\nalias = y\n",
            "/cfg/nova/nova-api.conf": "[pci]\nalias = z\n",
            "/cfg/nova/h1/nova-api.conf": "[pci]\nalias = ignored\n",
        },
    )
    found = deployed.read_kolla(HostRoot(str(tmp_path)), "/cfg", {"h1": ["compute", "api"]})["h1"]
    compute, api = found["services"]["compute"], found["services"]["api"]
    assert compute["pci"] == {"device_spec": [SPEC_B, SPEC_A], "alias": ["y"]}
    assert compute["devices"] == {"enabled_mdev_types": ["nvidia-735"]}
    # nova-api has no per-host per-service file in Kolla's nova role
    assert api["pci"]["alias"] == ["z"]
    assert found["sources"]["api"] == ["/cfg/global.conf", "/cfg/nova/nova-api.conf", "/cfg/nova/h1/nova.conf"]


def test_oslo_files_accumulate_multi_valued_options_and_take_the_last_value_of_others(tmp_path):
    write(
        tmp_path,
        {
            "/etc/nova/nova.conf": f"[pci]\npassthrough_whitelist = {SPEC_A}\nreport_in_placement = false\n",
            "/etc/nova/nova.conf.d/50-a.conf": f"[pci]\ndevice_spec = {SPEC_B}\nreport_in_placement = true\n",
            "/etc/nova/nova.conf.d/10-b.conf": "[pci]\nalias = first\n",
            "/etc/nova/nova.conf.d/README": "[pci]\nalias = not-read\n",
        },
    )
    found = deployed.read_nova_conf_d(
        HostRoot(str(tmp_path)), "/etc/nova/nova.conf", "/etc/nova/nova.conf.d", "h", ["compute", "api"]
    )["h"]
    config = found["services"]["compute"]
    assert config["pci"]["device_spec"] == [SPEC_A, SPEC_B]
    assert config["pci"]["report_in_placement"] == ["true"]
    assert config["pci"]["alias"] == ["first"]
    assert found["services"]["api"] is config


def test_templated_values_are_named():
    config = deployed.parse_ini("[pci]\nalias = {{ my_alias }}\n[devices]\nenabled_mdev_types = a\n")
    assert deployed.templated(config) == ["pci.alias"]


def test_claims_follow_the_first_matching_spec():
    devices = [
        {"address": "0000:41:00.0", "vendor_id": "10de", "product_id": "2330", "physfn": None},
        {"address": "0000:42:00.0", "vendor_id": "10de", "product_id": "2330", "physfn": None},
        {"address": "0000:43:00.0", "vendor_id": "10de", "product_id": "1eb8", "physfn": None},
    ]
    config = {
        "pci": {
            "device_spec": [
                '{"address": "0000:41:00.0", "traits": "gold"}',
                SPEC_A,
                '[{"devname": "eth0"}, {"vendor_id": "10de", "product_id": "1eb8", "address": "*:43:*.*"}]',
            ]
        }
    }
    claims = deployed.claims(config, devices)
    assert claims == {"0000:41:00.0": {"traits": "gold"}, "0000:42:00.0": {}, "0000:43:00.0": {}}


def test_module_reads_in_check_mode_and_names_a_missing_host_list(tmp_path):
    write(tmp_path, {"/etc/kolla/config/nova/h1/nova.conf": "[pci]\nreport_in_placement = true\n"})
    result = run_module("nova_config_info", {"root": str(tmp_path), "compute_hosts": ["h1"]}, check=True)
    assert result["changed"] is False
    assert result["deployed"] == {"h1": {"compute": {"pci": {"report_in_placement": ["true"]}}}}
    failed = run_module("nova_config_info", {"root": str(tmp_path)})
    assert failed["failed"] and "compute_hosts" in failed["msg"]


@pytest.mark.parametrize("hosts", [[{"name": "a"}, {"name": "b"}], []])
def test_nova_conf_d_takes_one_host(tmp_path, hosts):
    result = run_module("nova_config_info", {"root": str(tmp_path), "layout": "nova_conf_d", "hosts": hosts})
    assert result["failed"]


def test_control_hosts_read_the_super_conductor_when_asked(tmp_path):
    write(
        tmp_path, {"/etc/kolla/config/nova/nova-super-conductor.conf": "[filter_scheduler]\npci_in_placement = true\n"}
    )
    args = {"root": str(tmp_path), "control_hosts": ["c1"], "super_conductor": True}
    result = run_module("nova_config_info", args, check=True)
    assert result["deployed"]["c1"]["super-conductor"] == {"filter_scheduler": {"pci_in_placement": ["true"]}}
    assert set(result["deployed"]["c1"]) == {"api", "scheduler", "conductor", "super-conductor"}


def test_module_names_a_kolla_config_dir_it_cannot_read(tmp_path):
    """Every override file is optional: only config_dir_problem tells a missing directory from a cloud
    without overrides."""
    write(tmp_path, {"/etc/kolla/config/nova/h1/nova.conf": "[pci]\nreport_in_placement = true\n"})
    read = run_module("nova_config_info", {"root": str(tmp_path), "compute_hosts": ["h1"]}, check=True)
    assert read["config_dir_problem"] is None
    missing = run_module(
        "nova_config_info", {"root": str(tmp_path), "config_dir": "/srv/kolla", "compute_hosts": ["h1"]}
    )
    assert not missing.get("failed"), missing.get("msg")
    assert missing["config_dir_problem"] == "/srv/kolla does not exist"
    assert missing["deployed"] == {"h1": {"compute": {}}}
    write(tmp_path, {"/srv/file": "not a directory"})
    assert deployed.config_dir_problem(HostRoot(str(tmp_path)), "/srv/file") == "/srv/file is not a directory"
    empty = tmp_path / "srv" / "empty"
    empty.mkdir()
    assert deployed.config_dir_problem(HostRoot(str(tmp_path)), "/srv/empty") is None
    conf_d = run_module("nova_config_info", {"root": str(tmp_path), "layout": "nova_conf_d", "hosts": [{"name": "h1"}]})
    assert "config_dir_problem" not in conf_d
