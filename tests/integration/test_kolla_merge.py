"""Kolla-Ansible's merge order applied to what the kolla layout writes: the final device_spec and
alias lists are exactly what the operator meant, and Nova accepts the merged files."""

import json
import os

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.files import apply_all
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import MATCH_NOTHING, plan
from tests.support import kolla_merge, nova_oracle
from tests.support.fake_sysfs import build_root

pytestmark = pytest.mark.nova

with open("inventories/demo/group_vars/all/device_policy.yml") as handle:
    POLICY = yaml.safe_load(handle)["accel_device_policy"]
HOSTS = ("hgx-h100", "sriov-nic", "vgpu-a16")
# What Kolla's nova.conf template may carry: a devname entry (breaks report_in_placement) and no alias.
TEMPLATE = """[DEFAULT]
debug = False
[pci]
device_spec = {"devname": "ens1f0", "physical_network": "physnet1"}
[filter_scheduler]
enabled_filters = ComputeFilter
"""
# What an operator had before: a hand-written whitelist and alias in global files.
OPERATOR = {
    "global.conf": '[DEFAULT]\ndebug = True\n[pci]\nalias = {"name": "old", "vendor_id": "10de", '
    '"product_id": "1db4", "device_type": "type-PCI"}\n',
    "nova.conf": '[pci]\ndevice_spec = {"vendor_id": "10de", "product_id": "1db4"}\n'
    "[libvirt]\ncpu_mode = host-passthrough\n",
}


@pytest.fixture(scope="module")
def kolla_dir(tmp_path_factory):
    config_dir = tmp_path_factory.mktemp("kolla-config")
    hosts = []
    for profile in HOSTS:
        facts, _unused = discover(build_root(profile, str(tmp_path_factory.mktemp(profile))))
        hosts.append({"name": profile, "facts": facts})
    for name, text in OPERATOR.items():
        (config_dir / name).write_text(text)
    params = {
        "layout": "kolla",
        "config_dir": str(config_dir),
        "hosts": hosts,
        "policy": POLICY,
        "report_in_placement": True,
        "pci_in_placement": True,
    }
    root = HostRoot("/")
    rendering, plans = plan(root, params)
    apply_all(root, plans)
    files = {}
    for dirpath, _unused, names in os.walk(config_dir):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path) as handle:
                files[os.path.relpath(path, config_dir)] = handle.read()
    return rendering, hosts, files, params


def test_final_lists_are_what_the_policy_says(kolla_dir):
    rendering, hosts, files, _unused = kolla_dir
    for host in HOSTS:
        merged = kolla_merge.parse(kolla_merge.merge_for_service(TEMPLATE, files, "nova-compute", host))
        ours = rendering.compute[host]["pci"]
        # A host without passthrough devices gets a device_spec that matches nothing, not the stale one.
        assert merged["pci"]["device_spec"] == ours.get("device_spec", [MATCH_NOTHING])
        assert merged["pci"]["alias"] == ours["alias"]
        assert "devname" not in json.dumps(merged["pci"].get("device_spec", []))
        # Keys we do not own survive the merge untouched.
        assert merged["DEFAULT"]["debug"] == ["True"] and merged["libvirt"]["cpu_mode"] == ["host-passthrough"]
    for service in ("nova-api", "nova-scheduler"):
        merged = kolla_merge.parse(kolla_merge.merge_for_service(TEMPLATE, files, service, "controller-1"))
        assert merged["pci"]["alias"] == rendering.api["pci"]["alias"]
        assert "old" not in "".join(merged["pci"]["alias"])
    scheduler = kolla_merge.parse(kolla_merge.merge_for_service(TEMPLATE, files, "nova-scheduler", "c1"))
    assert scheduler["filter_scheduler"]["enabled_filters"][0].endswith("PciPassthroughFilter")


def test_a_list_split_over_two_files_loses_the_first_part():
    """Why every file that sets device_spec or alias must be complete: the later file replaces the list."""
    files = {
        "nova.conf": '[pci]\ndevice_spec = {"vendor_id": "10de", "product_id": "2330"}\n',
        "nova/gpu-01/nova.conf": '[pci]\ndevice_spec = {"vendor_id": "10de", "product_id": "1eb8"}\n',
    }
    merged = kolla_merge.parse(kolla_merge.merge_for_service("", files, "nova-compute", "gpu-01"))
    assert merged["pci"]["device_spec"] == ['{"vendor_id": "10de", "product_id": "1eb8"}']


def test_nova_accepts_the_merged_files(kolla_dir):
    rendering, hosts, files, _unused = kolla_dir
    cases = []
    for host in hosts:
        name = host["name"]
        cases.append(
            {
                "id": name,
                "hostname": name,
                "compute": kolla_merge.merge_for_service(TEMPLATE, files, "nova-compute", name),
                "scheduler": kolla_merge.merge_for_service(TEMPLATE, files, "nova-scheduler", name),
                "api": kolla_merge.merge_for_service(TEMPLATE, files, "nova-api", name),
                "devices": host["facts"]["accel_pci_devices"],
            }
        )
    for answer in nova_oracle.ask(cases):
        for service in ("compute", "scheduler", "api"):
            assert answer[service]["ok"], f"{answer['id']} {service}: {answer[service].get('error')}"
        assert answer["scheduler"]["pci_in_placement"] is True
        assert "old" not in answer["api"]["aliases"]
        meant = {d["address"] for item in rendering.selections[answer["id"]].passthrough for d in item.devices}
        assert set(answer["compute"]["matched"]) == meant


def test_second_run_changes_nothing(kolla_dir):
    _unused, _unused, files, params = kolla_dir
    _unused, plans = plan(HostRoot("/"), params)
    assert plans and not [p.path for p in plans if p.changed]
    assert len([p for p in plans if p.after]) == len(files) - len(OPERATOR)
