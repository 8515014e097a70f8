"""The flavor_fit lookup as ansible runs it: one report per flavor; a bad option fails naming it."""

import json

from tests.support.ansible_runner import run_expression
from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, FLEET, KEYS, flavor


def run_lookup(tmp_path, options: str):
    data = {
        "flavors": [flavor("a"), flavor("b", **{"pci_passthrough:alias": "h100:1"})],
        "fleet": FLEET,
        "aliases": ALIASES,
    }
    return run_expression(
        tmp_path, f"{{{{ query('accel.openstack.flavor_fit', *flavors, fleet=fleet, {options}) | to_json }}}}", data
    )


def test_lookup_returns_one_report_per_flavor(tmp_path):
    done = run_lookup(tmp_path, "pci_aliases=aliases, pci_in_placement=true")
    assert done.returncode == 0, done.stdout + done.stderr
    reports = json.loads(json.loads(done.stdout.split("=>", 1)[1])["msg"])
    assert [r["name"] for r in reports] == ["a", "b"]
    assert all(set(r) == KEYS for r in reports)
    assert reports[1]["hosts"] == ["gpu1", "gpu2"]


def test_lookup_bad_option_fails_naming_it(tmp_path):
    done = run_lookup(tmp_path, "count_limit=-1")
    assert done.returncode != 0
    assert "count_limit must be a positive integer" in done.stdout + done.stderr
