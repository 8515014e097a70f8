"""The built tarball, installed with ansible-core only, runs ``ansible-playbook accel.openstack.site``.

A clean venv gets ansible-core (pinned as in requirements/test.txt) and the collection's own
requirements.txt, nothing else: no ``ansible`` package, so no openstack.cloud. The venv is kept under
.build/ between runs, keyed by those pins, since installing it costs half a minute; the collection is
installed fresh from the tarball every time, into its own collections path. The demo inventory of the
installed copy then runs the whole pipeline against a real Placement.
"""

import json
import os
import re
import subprocess

import pytest

from tests.integration.conftest import pinned
from tests.support.fake_sysfs import main as build_roots

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False, **kwargs)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def installed(user_venv, collection_tarball, tmp_path_factory):
    target = tmp_path_factory.mktemp("collections")
    env = {
        "PATH": user_venv + os.pathsep + os.environ["PATH"],
        "HOME": str(target),
        "ANSIBLE_COLLECTIONS_PATH": str(target),
        "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCALHOST_WARNING": "false",
    }
    galaxy = os.path.join(user_venv, "ansible-galaxy")
    run([galaxy, "collection", "install", "-p", str(target), str(collection_tarball)], env=env)
    return target / "ansible_collections" / "accel" / "openstack", env


def test_the_venv_holds_ansible_core_and_the_requirements_only(user_venv):
    frozen = run([os.path.join(user_venv, "python"), "-m", "pip", "freeze"]).lower()
    assert pinned("ansible-core").lower() in frozen
    assert not re.search(r"^ansible==", frozen, re.MULTILINE), "the full ansible package would bring openstack.cloud"
    assert "openstacksdk==" in frozen


def test_the_installed_collection_runs_the_demo_by_fqcn(installed, placement, tmp_path):
    root, env = installed
    assert not (root / "tests").exists() and not (root / "benchmarks").exists()
    build_roots(["--all", "--dest", str(tmp_path / "roots"), "--inventory", str(root / "inventories/demo/hosts.yml")])
    env = dict(env, ACCEL_DEMO_DIR=str(tmp_path))
    extra = json.dumps({"accel_placement_auth": placement.auth})
    cmd = ["ansible-playbook", "accel.openstack.site", "-i", str(root / "inventories" / "demo"), "-e", extra]
    out = run(cmd, cwd=str(tmp_path), env=env)
    recap = out[out.index("PLAY RECAP") :]
    assert "failed=0" in recap and not re.search(r"failed=[1-9]|unreachable=[1-9]", recap), recap
    assert "accel.openstack.validate : Report where each flavor fits" in out
    status, providers = placement.request("GET", "/resource_providers")
    assert status == 200
    names = {p["name"] for p in providers["resource_providers"]}
    assert {"hgx-01", "mig-01", "net-01"} <= names
    assert (tmp_path / "kolla-config" / "nova" / "hgx-01" / "nova.conf").is_file()
