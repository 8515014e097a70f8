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


def test_lookup_takes_novas_multipliers_and_host_subset_size(tmp_path):
    done = run_lookup(
        tmp_path,
        "pci_aliases=aliases, pci_in_placement=true, weigher='pack', ram_weight_multiplier=2, "
        "pci_weight_multiplier=0, host_subset_size=2, seed=7",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (plan,) = json.loads(json.loads(done.stdout.split("=>", 1)[1])["msg"])
    assert plan["weighers"]["ram_weight_multiplier"] == 2.0  # the option wins over the preset
    assert plan["weighers"]["cpu_weight_multiplier"] == -1.0  # the preset's
    assert plan["weighers"]["pci_weight_multiplier"] == 0.0
    assert plan["weighers"]["hypervisor_version_weight_multiplier"] == 1.0  # Nova's default
    assert plan["weighers"]["host_subset_size"] == 2
    assert set(plan["drawn"]) == {"a", "b"}


def test_lookup_refuses_a_multiplier_nova_refuses(tmp_path):
    done = run_lookup(tmp_path, "pci_weight_multiplier=-1")
    assert done.returncode != 0
    assert "pci_weight_multiplier must be at least 0.0" in done.stdout + done.stderr


def test_lookup_loses_named_hosts_and_tries_the_worst_case(tmp_path):
    done = run_lookup(
        tmp_path, "pci_aliases=aliases, pci_in_placement=true, fail_hosts=['gpu1'], worst_case={'hosts': 2}"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (plan,) = json.loads(json.loads(done.stdout.split("=>", 1)[1])["msg"])
    assert plan["failure"]["hosts"] == ["gpu1"]
    assert plan["worst_case"]["combinations"] == 6  # 4 hosts, 2 at once
    # Both GPU hosts lost: no surviving host has the device.
    assert plan["worst_case"]["worst"]["hosts"] == ["gpu1", "gpu2"]
    assert plan["worst_case"]["worst"]["lost"]["b"]["code"] == "no_host_with_device"


def test_lookup_refuses_an_unknown_host_listing_the_fleets(tmp_path):
    done = run_lookup(tmp_path, "fail_hosts=['gpu9']")
    assert done.returncode != 0
    assert "fail_hosts: 'gpu9' is not a host of the fleet; the fleet's hosts are cpu1, cpu2, gpu1, gpu2" in (
        done.stdout + done.stderr
    )
