"""The validate stage on a fleet predicted from facts works out of the box: report_in_placement and the
disk come from the other stages' variables, so a PCI flavor with a root disk fits."""

import json
import sys

import yaml

from tests.support.ansible_runner import REPO, run_playbook
from tests.support.fake_sysfs import build_root


def test_a_gpu_flavor_fits_on_the_fleet_predicted_from_facts(tmp_path):
    with open(f"{REPO}/inventories/demo/group_vars/all/device_policy.yml") as handle:
        policy = yaml.safe_load(handle)["accel_device_policy"]
    inventory = tmp_path / "hosts.yml"
    host = {"accel_root": build_root("hgx-h100", str(tmp_path / "hgx-01"))}
    inventory.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "children": {"compute": {"hosts": {"hgx-01": host}}},
                    "vars": {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": sys.executable,
                        "accel_device_policy": policy,
                        "accel_nova_report_in_placement": True,
                        "accel_nova_pci_in_placement": True,
                        "accel_placement_disk_gb": 100,
                    },
                }
            }
        )
    )
    report_path = tmp_path / "report.json"
    flavor = {
        "name": "gpu.h100.1",
        "vcpus": 16,
        "ram": 65536,
        "disk": 20,
        "extra_specs": {"pci_passthrough:alias": "h100:1"},
    }
    report = run_playbook(
        "playbooks/validate.yml",
        str(inventory),
        {
            "accel_validate_fleet_source": "facts",
            "accel_validate_flavors": [flavor],
            "accel_validate_report": str(report_path),
        },
    )
    assert report["rc"] == 0, report["stderr"][-2000:] + report["stdout"][-2000:]
    (result,) = json.loads(report_path.read_text())["flavors"]["flavors"]
    assert result["outcome"] == "fits" and result["ok"], result
    # 100 GB of disk takes five 20 GB roots: the disk, not the 8 GPUs, bounds the host
    assert result["max_instances"] == {"hgx-01": 5}
