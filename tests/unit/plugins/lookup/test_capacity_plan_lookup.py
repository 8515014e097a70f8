"""The capacity_plan lookup as ansible runs it: one plan for the demand; a bad option fails naming it."""

import json

from tests.support.ansible_runner import run_expression
from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, FLEET, flavor


def run_lookup(tmp_path, options: str):
    data = {
        "demand": [
            {"flavor": flavor("a"), "count": 3},
            {"flavor": flavor("b", **{"pci_passthrough:alias": "h100:1"}), "count": 5},
        ],
        "fleet": FLEET,
        "aliases": ALIASES,
    }
    return run_expression(
        tmp_path, f"{{{{ query('accel.openstack.capacity_plan', demand, fleet=fleet, {options}) | to_json }}}}", data
    )


def test_lookup_returns_one_plan_for_the_demand(tmp_path):
    done = run_lookup(tmp_path, "pci_aliases=aliases, pci_in_placement=true, weigher='pack', failures=1")
    assert done.returncode == 0, done.stdout + done.stderr
    (plan,) = json.loads(json.loads(done.stdout.split("=>", 1)[1])["msg"])
    assert plan["placed"] == {"a": 3, "b": 3}
    assert plan["unplaced"] == {"a": 0, "b": 2}
    assert plan["weigher"] == "pack"
    assert plan["headroom"]["failures"] == 1


def test_lookup_bad_option_fails_naming_it(tmp_path):
    done = run_lookup(tmp_path, "weigher='random'")
    assert done.returncode != 0
    assert "weigher" in done.stdout + done.stderr
