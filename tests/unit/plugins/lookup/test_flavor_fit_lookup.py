"""The flavor_fit lookup as ansible runs it: one report per flavor; a bad option fails naming it."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, FLEET, KEYS, flavor

REPO = Path(__file__).resolve().parents[4]


def run_lookup(tmp_path, options: str):
    link = tmp_path / "collections" / "ansible_collections" / "accel" / "openstack"
    link.parent.mkdir(parents=True)
    link.symlink_to(REPO)
    data = {
        "flavors": [flavor("a"), flavor("b", **{"pci_passthrough:alias": "h100:1"})],
        "fleet": FLEET,
        "aliases": ALIASES,
    }
    (tmp_path / "vars.json").write_text(json.dumps(data))
    expr = f"{{{{ query('accel.openstack.flavor_fit', *flavors, fleet=fleet, {options}) | to_json }}}}"
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
