"""The validate stage from discovery facts, out of the box: the demo catalog fits without extra options.

The facts-based fleet takes report_in_placement from the Nova config stage's switch (the demo's flavors
ask their GPUs through Placement) and predicts DISK_GB without inventing a limit: an 8-GPU host takes
8 single-GPU instances, not the 5 a made-up 100 GB instance store would allow for 20 GB disks.
"""

from __future__ import annotations

import json

from tests.support import fake_sysfs
from tests.support.ansible_runner import run_playbook


def test_validate_from_facts_fits_the_demo_catalog_with_no_fleet_options(tmp_path):
    fake_sysfs.build_inventory_roots(fake_sysfs.DEMO_INVENTORY, str(tmp_path / "roots"))
    report_path = tmp_path / "report.json"
    extra = {"accel_validate_fleet_source": "facts", "accel_validate_report": str(report_path)}
    ran = run_playbook("playbooks/validate.yml", "inventories/demo", extra, ACCEL_DEMO_DIR=str(tmp_path))
    assert ran["rc"] == 0, ran["stderr"] + ran["stdout"] + json.dumps(ran["stats"])
    flavors = {f["name"]: f for f in json.loads(report_path.read_text())["flavors"]["flavors"]}
    assert flavors["gpu.h100.1"]["max_instances"]["hgx-01"] == 8, flavors["gpu.h100.1"]
    assert flavors["gpu.h100.4"]["max_instances"]["hgx-01"] == 2
    assert flavors["gpu.t4"]["ok"] and flavors["vgpu.a16-4q"]["ok"]
