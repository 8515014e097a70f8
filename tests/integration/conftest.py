"""Fixtures that start the real services the integration tests talk to, and the collection as users get it:
the tarball built once per test session, and a venv with ansible-core and requirements.txt only."""

import hashlib
import os
import re
import subprocess
import sys

import pytest
import yaml

from tests.support.cyborg_server import CyborgServer
from tests.support.ironic_server import IronicServer
from tests.support.placement_server import PlacementServer


@pytest.fixture(scope="session")
def placement_session(tmp_path_factory):
    """One real Placement process for the whole run; use ``placement`` for a fresh database."""
    server = PlacementServer(str(tmp_path_factory.mktemp("placement")))
    server.start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def placement(placement_session):
    """The real Placement with an empty database for this test module."""
    return placement_session.reset()


@pytest.fixture(scope="session")
def ironic(tmp_path_factory):
    """One real Ironic (API + conductor, fake hardware, noauth) for the whole run; tests clean up after
    themselves (their nodes and rules)."""
    server = IronicServer(str(tmp_path_factory.mktemp("ironic")))
    server.start()
    yield server
    server.close()


@pytest.fixture(scope="session")
def cyborg(tmp_path_factory):
    """One real Cyborg (API + conductor in one process, SQLite, identity from headers) for the whole run."""
    server = CyborgServer(str(tmp_path_factory.mktemp("cyborg")))
    server.start()
    yield server
    server.close()


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False, **kwargs)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def pinned(name: str) -> str:
    """The pin of ``name`` in requirements/test.txt (e.g. ``ansible-core==2.19.3``)."""
    with open(os.path.join(REPO, "requirements", "test.txt")) as handle:
        for line in handle:
            if re.match(rf"{re.escape(name)}==", line.strip()):
                return line.strip()
    raise AssertionError(f"{name} is not pinned in requirements/test.txt")


@pytest.fixture(scope="session")
def collection_tarball(tmp_path_factory):
    """The collection tarball as ``ansible-galaxy collection build`` makes it, built once per session."""
    out = tmp_path_factory.mktemp("tarball")
    galaxy = os.path.join(os.path.dirname(sys.executable), "ansible-galaxy")
    _run([galaxy, "collection", "build", "--output-path", str(out), REPO])
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        version = yaml.safe_load(handle)["version"]
    (tarball,) = [p for p in out.iterdir() if p.name.endswith(".tar.gz")]
    assert tarball.name == f"accel-openstack-{version}.tar.gz"
    return tarball


@pytest.fixture(scope="session")
def user_venv():
    """A venv with ansible-core and the collection's requirements.txt only (no ``ansible`` package, so no
    openstack.cloud); kept under .build/ between runs, keyed by those pins, since it costs half a minute."""
    with open(os.path.join(REPO, "requirements.txt")) as handle:
        wanted = [pinned("ansible-core"), handle.read()]
    key = hashlib.sha256("\n".join([sys.version, *wanted]).encode()).hexdigest()[:12]
    venv = os.path.join(REPO, ".build", f"user-venv-{key}")
    if not os.path.exists(os.path.join(venv, ".stamp")):
        _run([sys.executable, "-m", "venv", "--clear", venv])
        pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        _run([*pip, wanted[0], "-r", os.path.join(REPO, "requirements.txt")])
        open(os.path.join(venv, ".stamp"), "w").close()
    return os.path.join(venv, "bin")
