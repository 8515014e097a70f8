"""The demo's iommu-off host through the pipeline: its T4 is not offered anywhere, and the run says why.

site.yml runs on two hosts of the demo inventory, each a fake root built from its hardware profile:
legacy-01 (iommu-off: a Tesla T4 on an Intel host whose IOMMU is off) and net-01 (sriov-nic: a T4 on a
host whose IOMMU is on), against the real Placement. The prepare stage writes the IOMMU kernel arguments
for legacy-01 and lists it among the hosts waiting for a reboot (the demo never reboots); the Nova config
stage then leaves its T4 out of device_spec with a warning naming the host, the device and the fix; the
placement stage registers no provider for it, and the validate stage counts net-01's T4 only.
"""

from __future__ import annotations

import json

import pytest

from tests.support import fake_sysfs
from tests.support.ansible_runner import run_playbook, task_results

pytestmark = pytest.mark.placement

T4_FLAVOR = {"name": "gpu.t4", "vcpus": 4, "ram": 16384, "disk": 40,
             "image_properties": {"hw_machine_type": "q35", "hw_firmware_type": "uefi"},
             "extra_specs": {"pci_passthrough:alias": "t4:1"}}  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory, placement):
    dest = tmp_path_factory.mktemp("iommu-off")
    fake_sysfs.build_inventory_roots(fake_sysfs.DEMO_INVENTORY, str(dest / "roots"))
    extra = {
        "accel_placement_auth": placement.auth,
        "accel_validate_flavors": [T4_FLAVOR],
        "accel_validate_report": str(dest / "validate.json"),
        "accel_validate_html": "",
        "accel_discover_report": False,
    }
    ran = run_playbook("site.yml", "inventories/demo", extra, limit="legacy-01,net-01", ACCEL_DEMO_DIR=str(dest))
    assert ran["rc"] == 0, ran["stderr"][-3000:] + ran["stdout"][-3000:] + json.dumps(ran["stats"])
    return {"ran": ran, "dir": dest, "placement": placement}


def test_the_prepare_stage_sets_the_kernel_arguments_and_lists_the_host_as_waiting(site):
    drop_in = site["dir"] / "roots" / "legacy-01" / "etc" / "default" / "grub.d" / "99-accel-openstack.cfg"
    assert "intel_iommu=on iommu=pt" in drop_in.read_text()
    (listed,) = task_results(site["ran"], "List the hosts that still need a reboot").values()
    assert "need a reboot to use passthrough: legacy-01" in listed["msg"]
    # The commands still to run, per host, as a person reads them (never a Python dict).
    commands = listed["msg"].split("commands still to run on the host first: ", 1)[1]
    assert commands.startswith("legacy-01: ") and "{" not in commands and "[" not in commands, commands
    # net-01 needs no reboot: it is checked with what vfio_pci and kernel_cmdline reported in this run, not
    # by asking them again.
    checked = task_results(site["ran"], "Fail clearly when the kernel did not take the configuration")["net-01"]
    assert not checked.get("failed") and not checked.get("skipped"), checked
    for task in ("Compare the running kernel with the configured arguments", "Read the drivers the devices are on now"):
        assert task_results(site["ran"], task)["net-01"].get("skipped") is True, task


def test_the_nova_config_stage_leaves_the_t4_out_and_says_why(site):
    config = site["dir"] / "kolla-config" / "nova"
    legacy = (config / "legacy-01" / "nova.conf").read_text()
    net = (config / "net-01" / "nova.conf").read_text()
    assert 'device_spec = {"vendor_id": "ffff", "product_id": "ffff"}' in legacy  # the kolla layout's "nothing"
    assert '"product_id": "1eb8"' not in legacy.split("alias")[0]
    assert 'device_spec = {"vendor_id": "10de", "product_id": "1eb8"' in net
    # the alias stays on every service: flavors ask for t4 and net-01 offers one
    assert '"name": "t4"' in (config / "nova-api.conf").read_text()
    (written,) = task_results(site["ran"], "Write the Kolla-Ansible overrides on the deploy host").values()
    (warning,) = [w for w in written["policy_warnings"] if w.startswith("legacy-01:")]
    assert "device policy entry 3 (name: t4) selects 0000:04:00.0 (10de:1eb8)" in warning
    assert "the IOMMU is off on this host, so they are not offered for passthrough" in warning
    assert "enable VT-d in the firmware" in warning and "set intel_iommu=on iommu=pt" in warning
    assert "accel_reboot: allowed" in warning
    assert not any(w.startswith("net-01:") and "IOMMU" in w for w in written["policy_warnings"])


def test_placement_gets_no_provider_for_it(site):
    status, body = site["placement"].request("GET", "/resource_providers")
    assert status == 200, body
    names = sorted(p["name"] for p in body["resource_providers"])
    assert names == ["legacy-01", "net-01", "net-01_0000:3B:00.0", "net-01_0000:B0:00.0"]


def test_the_validate_stage_counts_the_t4_that_can_be_passed_through(site):
    report = json.loads((site["dir"] / "validate.json").read_text())
    (t4,) = report["flavors"]["flavors"]
    assert t4["ok"] and t4["hosts"] == ["net-01"]
    assert t4["max_instances"] == {"legacy-01": 0, "net-01": 1}
