"""The collection builds into a tarball that installs, and ansible-doc renders every plugin from it."""

import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.xdist_group("tarball")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
PLUGIN_TYPES = {"modules": "module", "lookup": "lookup", "filter": "filter", "inventory": "inventory"}


def run(cmd, env=None, cwd=REPO):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def installed(collection_tarball, tmp_path_factory):
    tarball = collection_tarball
    target = tmp_path_factory.mktemp("collections")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(target), ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false")
    install = [os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--force", "-p", str(target)]
    run([*install, str(tarball)], env=env)
    return target, env


def plugin_names():
    names = []
    for directory, kind in PLUGIN_TYPES.items():
        path = os.path.join(REPO, "plugins", directory)
        for entry in sorted(os.listdir(path)):
            if entry.endswith(".py") and not entry.startswith("_"):
                if kind == "filter":
                    continue  # filters are listed by ansible-doc --list below
                names.append((kind, entry[:-3]))
    return names


def test_the_tarball_installs_without_tests_or_venvs(installed):
    target, _unused = installed
    root = target / "ansible_collections" / "accel" / "openstack"
    assert (root / "plugins" / "modules" / "pci_facts.py").is_file()
    assert not (root / ".venv").exists()
    assert not (root / ".build").exists()


def test_the_tarball_ships_the_simulation_the_capture_script_and_the_local_placement(installed):
    target, _unused = installed
    role = target / "ansible_collections" / "accel" / "openstack" / "roles" / "simulated_fleet" / "files"
    shipped = sorted(p.name for p in (role / "hardware").iterdir())
    assert shipped == sorted(os.listdir(os.path.join(REPO, "roles", "simulated_fleet", "files", "hardware")))
    assert "hgx-h100.yml" in shipped and "pci.ids" in shipped
    assert (role / "capture_host.py").is_file() and (role / "local_placement.py").is_file()
    playbooks = target / "ansible_collections" / "accel" / "openstack" / "playbooks"
    assert (playbooks / "try_it.yml").is_file()
    assert not os.path.exists(os.path.join(REPO, "tests", "fixtures", "hardware")), "one copy of the profiles"


@pytest.fixture(scope="module")
def rendered(installed):
    """Per plugin kind, ansible-doc's JSON and its text for every plugin of the kind: two runs per kind,
    each naming all the plugins (one run per plugin costs a second each)."""
    _unused, env = installed
    found = {}
    for kind in sorted({kind for kind, _name in plugin_names()}):
        names = [f"accel.openstack.{name}" for k, name in plugin_names() if k == kind]
        data = json.loads(run([os.path.join(BIN, "ansible-doc"), "-t", kind, "--json", *names], env=env))
        text = run([os.path.join(BIN, "ansible-doc"), "-t", kind, *names], env={**env, "ANSIBLE_NOCOLOR": "1"})
        sections = {}
        for section in re.split(r"^> ", text, flags=re.MULTILINE)[1:]:
            # "> MODULE accel.openstack.name (path)" opens each plugin's text
            sections[section.split()[1]] = section
        found[kind] = (data, sections)
    return found


@pytest.mark.parametrize("kind, name", plugin_names())
def test_ansible_doc_renders_every_module_lookup_and_inventory(rendered, kind, name):
    data, sections = rendered[kind]
    doc = data[f"accel.openstack.{name}"]["doc"]
    assert doc["short_description"]
    assert doc.get("options") or kind == "module"
    assert "EXAMPLES" in sections[f"accel.openstack.{name}"]


def test_ansible_doc_renders_every_filter(installed):
    _unused, env = installed
    listed = json.loads(
        run([os.path.join(BIN, "ansible-doc"), "-t", "filter", "--list", "--json", "accel.openstack"], env=env)
    )
    assert "accel.openstack.discovery_report" in listed
    assert "accel.openstack.validate_requests" in listed
    docs = json.loads(run([os.path.join(BIN, "ansible-doc"), "-t", "filter", "--json", *listed], env=env))
    for name in listed:
        doc = docs[name]["doc"]
        assert doc["short_description"], name
        assert doc["name"] == name.split(".")[-1], f"{name} shows the documentation of {doc['name']}"
