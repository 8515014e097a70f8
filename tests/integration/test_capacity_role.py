"""The capacity role through ansible-playbook: check mode, apply, check, apply, then the metrics file read back.

The fleet is given (no Placement needed); the metrics land in a temporary textfile-collector directory
and are parsed with prometheus_client's own parser; the HTML page is parsed back too.
"""

from __future__ import annotations

import json
import sys

from prometheus_client.parser import text_string_to_metric_families

from tests.support.ansible_runner import run_playbook, task_results, total_changed
from tests.unit.plugins.plugin_utils.test_capacity_report import Page
from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, FLEET, flavor

WRITE = "Write the metrics for node_exporter's textfile collector (atomically)"


def test_capacity_playbook_writes_metrics_once_with_check_mode_and_diff(tmp_path):
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    extra = {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "accel_capacity_fleet": FLEET,
        "accel_capacity_pci_aliases": ALIASES,
        "accel_capacity_pci_in_placement": True,
        "accel_capacity_failures": 1,
        "accel_capacity_ram_weight_multiplier": -1.0,
        "accel_capacity_demand": [
            {"flavor": flavor("gpu", **{"pci_passthrough:alias": "h100:1"}), "count": 4},
            {"flavor": flavor("small"), "count": 10},
        ],
        "accel_capacity_textfile_dir": str(textfile),
        "accel_capacity_report": str(tmp_path / "capacity.json"),
        "accel_capacity_html": str(tmp_path / "capacity.html"),
    }
    target = textfile / "accel_capacity.prom"

    checked = run_playbook("playbooks/capacity.yml", "localhost,", extra, check=True, diff=True)
    assert checked["rc"] == 0, checked["stderr"] + checked["stdout"]
    result = task_results(checked, WRITE)["localhost"]
    assert result["changed"] is True and "accel_capacity_placed_instances" in json.dumps(result["diff"])
    assert not target.exists()

    applied = run_playbook("playbooks/capacity.yml", "localhost,", extra)
    assert applied["rc"] == 0, applied["stderr"] + applied["stdout"]
    assert task_results(applied, WRITE)["localhost"]["changed"] is True
    text = target.read_text()

    again = run_playbook("playbooks/capacity.yml", "localhost,", extra, check=True, diff=True)
    assert again["rc"] == 0 and task_results(again, WRITE)["localhost"]["changed"] is False
    final = run_playbook("playbooks/capacity.yml", "localhost,", extra)
    assert final["rc"] == 0 and total_changed(final) == 0
    assert target.read_text() == text

    plan = json.loads((tmp_path / "capacity.json").read_text())["plan"]
    # The multiplier given reaches the plan; those left unset keep Nova's defaults.
    assert plan["weighers"]["ram_weight_multiplier"] == -1.0 and plan["weighers"]["cpu_weight_multiplier"] == 1.0
    assert plan["weighers"]["host_subset_size"] == 1 and plan["drawn"] == {"gpu": 0, "small": 0}
    values = {}
    for family in text_string_to_metric_families(text):
        assert family.name.startswith("accel_")
        for sample in family.samples:
            values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    assert values[("accel_capacity_placed_instances", (("flavor", "gpu"),))] == plan["placed"]["gpu"] == 3
    assert values[("accel_capacity_unplaced_instances", (("flavor", "gpu"),))] == 1
    assert values[("accel_flavor_capacity_instances", (("flavor", "gpu"),))] == 3
    assert values[("accel_flavor_placeable", (("flavor", "small"),))] == 1
    assert values[("accel_capacity_headroom_failures", ())] == 1
    page = Page((tmp_path / "capacity.html").read_text())
    assert [row[:3] for row in page.tables["plan"][1:]] == [["gpu", "3", "1"], ["small", "10", "0"]]
    assert [row[0] for row in page.tables["flavors"][1:]] == ["gpu", "small"] and page.rects
    table = task_results(applied, "Report the plan")["localhost"]["msg"]
    assert table[0].startswith("flavor") and any(line.startswith("gpu ") for line in table)


def test_capacity_playbook_loses_an_inventory_group_and_tries_the_worst_case(tmp_path):
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("localhost\n\n[rack_a]\ngpu1\ncpu1\n")
    extra = {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "accel_capacity_fleet": FLEET,
        "accel_capacity_pci_aliases": ALIASES,
        "accel_capacity_pci_in_placement": True,
        "accel_capacity_fail_domain": "rack_a",
        "accel_capacity_worst_case_hosts": 1,
        "accel_capacity_what_if": [{"name": "more-h100", "model": "H100", "count": 1, "mode": "passthrough"}],
        "accel_capacity_html": str(tmp_path / "capacity.html"),
        "accel_capacity_demand": [
            {"flavor": flavor("gpu", **{"pci_passthrough:alias": "h100:1"}), "count": 4},
            {"flavor": flavor("small"), "count": 10},
        ],
        "accel_capacity_textfile_dir": str(tmp_path),
        "accel_capacity_report": str(tmp_path / "capacity.json"),
    }
    done = run_playbook("playbooks/capacity.yml", str(inventory), extra)
    assert done["rc"] == 0, str(done)[-3000:]
    plan = json.loads((tmp_path / "capacity.json").read_text())["plan"]
    # The group's hosts were passed as the hosts to lose (an inventory group is not an aggregate).
    assert plan["failure"]["hosts"] == ["gpu1", "cpu1"] and plan["failure"]["domain"] is None
    assert plan["failure"]["moved"]["gpu"] == plan["hosts"]["gpu1"]["gpu"]
    assert plan["worst_case"]["combinations"] == 4
    table = task_results(done, "Report the plan")["localhost"]["msg"]
    assert any(line.startswith("losing gpu1, cpu1: ") for line in table)
    assert any(line.startswith("worst case of 4 combination(s) of 1 host(s)") for line in table)
    # One more H100 host (8 GPUs) takes the GPU instance the fleet had no room for.
    (option,) = plan["what_if"]
    assert plan["placed"]["gpu"] == 3 and option["placed"]["gpu"] == 4 and option["hosts_added"] == 1
    assert option["added"] == {"gpu": 1, "small": 0} and option["on_new_hosts"]["gpu"] >= 1
    page = Page((tmp_path / "capacity.html").read_text())
    assert page.tables["what_if"][0] == ["flavor", "plan", "more-h100 (1 host(s))"]
