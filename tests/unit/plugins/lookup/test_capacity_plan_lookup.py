"""The capacity_plan lookup as ansible runs it: one plan for the demand; a bad option fails naming it."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, FLEET, flavor

REPO = Path(__file__).resolve().parents[4]


def run_lookup(tmp_path, options: str):
    link = tmp_path / "collections" / "ansible_collections" / "accel" / "openstack"
    link.parent.mkdir(parents=True)
    link.symlink_to(REPO)
    data = {
        "demand": [
            {"flavor": flavor("a"), "count": 3},
            {"flavor": flavor("b", **{"pci_passthrough:alias": "h100:1"}), "count": 5},
        ],
        "fleet": FLEET,
        "aliases": ALIASES,
    }
    (tmp_path / "vars.json").write_text(json.dumps(data))
    expr = f"{{{{ query('accel.openstack.capacity_plan', demand, fleet=fleet, {options}) | to_json }}}}"
    env = dict(
        os.environ,
        ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections"),
        ANSIBLE_LOCALHOST_WARNING="false",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
        ANSIBLE_NOCOLOR="1",
    )
    ansible = Path(sys.executable).parent / "ansible"
    return subprocess.run(
        [str(ansible), "localhost", "-m", "ansible.builtin.debug", "-a", f"msg={expr}", "-e", f"@{tmp_path}/vars.json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
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
