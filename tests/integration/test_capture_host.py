"""The capture script the collection ships (roles/simulated_fleet/files/capture_host.py) turns a host into a
hardware profile that rebuilds it: run on a simulated root, the profile it writes rebuilds a root whose
discovery facts (every PCI device, pci_facts' whole answer) equal the original's, and it writes nothing
under the root it reads."""

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._simulate.simulated_root import read_tree
from tests.support.fake_sysfs import PROFILE_DIR, build_root, profile_names

SCRIPT = os.path.join(os.path.dirname(PROFILE_DIR), "capture_host.py")


def capture(root, out, name="captured", python=sys.executable):
    argv = [python, SCRIPT, "--root", str(root), "--out", str(out), "--name", name]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)


def facts(root):
    found, warnings = discover(str(root), ["all"])
    return found, warnings


@pytest.mark.parametrize("name", profile_names())
def test_a_captured_profile_rebuilds_a_root_with_the_same_discovery_facts(tmp_path, name):
    original = build_root(name, str(tmp_path / "original"))
    before = read_tree(original)
    done = capture(original, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {tmp_path / 'out' / 'captured.yml'}: ")
    assert read_tree(original) == before  # read-only: the captured root is exactly as it was
    with open(tmp_path / "out" / "captured.yml") as handle:
        profile = yaml.safe_load(handle)
    assert profile["name"] == "captured"
    rebuilt = build_root(profile, str(tmp_path / "rebuilt"))
    assert facts(rebuilt) == facts(original)


def test_the_recorded_nvidia_smi_output_is_written_beside_the_profile_and_carried_in_it(tmp_path):
    original = build_root("mig-a100", str(tmp_path / "original"))
    assert capture(original, tmp_path / "out").returncode == 0
    recorded = tmp_path / "out" / "captured-nvidia-smi"
    assert sorted(str(p.relative_to(recorded)) for p in recorded.rglob("*.txt")) == ["mig-lgi/0000:3b:00.0.txt"]
    qx = (recorded / "q-x.xml").read_text()
    assert qx == (tmp_path / "original/var/lib/accel-openstack/nvidia-smi/q-x.xml").read_text()
    with open(tmp_path / "out" / "captured.yml") as handle:
        profile = yaml.safe_load(handle)
    assert profile["files"]["/var/lib/accel-openstack/nvidia-smi/q-x.xml"] == qx
    gpu = next(d for d in profile["devices"] if d["address"] == "0000:3b:00.0")
    assert gpu["mig"]["mode"] == {"current": "Enabled", "pending": "Enabled"}
    assert [(i["profile"], i["placement"]) for i in gpu["mig"]["instances"]] == [
        ("3g.20gb", "4:4"),
        ("2g.10gb", "0:2"),
        ("1g.5gb", "2:1"),
        ("1g.5gb", "3:1"),
    ]
    pending = next(d for d in profile["devices"] if d["address"] == "0000:d8:00.0")
    assert pending["mig"] == {"mode": {"current": "Disabled", "pending": "Enabled"}}


def test_without_pyyaml_the_profile_is_written_in_its_json_form(tmp_path):
    original = build_root("sriov-nic", str(tmp_path / "original"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "noyaml"))
    (tmp_path / "noyaml").mkdir()
    (tmp_path / "noyaml" / "yaml.py").write_text("raise ImportError('no PyYAML on this host')\n")
    argv = [sys.executable, SCRIPT, "--root", original, "--out", str(tmp_path / "out"), "--name", "nic"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out" / "nic.yml").read_text()
    assert json.loads(text) == yaml.safe_load(text)
    rebuilt = build_root(yaml.safe_load(text), str(tmp_path / "rebuilt"))
    assert facts(rebuilt) == facts(original)


@pytest.mark.parametrize(
    "out, expected",
    [("inside", "is inside the captured root"), (None, "")],
)
def test_an_output_inside_the_root_or_a_bad_name_is_refused_and_nothing_is_written(tmp_path, out, expected):
    original = build_root("amd-epyc", str(tmp_path / "original"))
    before = read_tree(original)
    if out == "inside":
        done = capture(original, os.path.join(original, "tmp", "out"))
    else:
        done = capture(original, tmp_path / "out", name="../evil")
        expected = "--name '../evil': use letters, digits, dot, dash and underscore"
        assert not (tmp_path / "out").exists()
    assert done.returncode == 2 and expected in done.stderr
    assert read_tree(original) == before
