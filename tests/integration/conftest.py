"""Fixtures that start the real services the integration tests talk to, and the collection as users get it:
the tarball built once per test session, and a venv with ansible-core and requirements.txt only."""

import pathlib

import pytest

from tests.support import installed_collection as user_install
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


@pytest.fixture(scope="session")
def collection_tarball(tmp_path_factory):
    """The collection tarball as ``ansible-galaxy collection build`` makes it, built once per session."""
    return pathlib.Path(user_install.build(str(tmp_path_factory.mktemp("tarball"))))


@pytest.fixture(scope="session")
def user_venv():
    """The bin directory of a venv with ansible-core and the collection's requirements.txt only (no
    ``ansible`` package, so no openstack.cloud); kept under .build/ between runs, keyed by those pins."""
    return user_install.user_venv()


@pytest.fixture(scope="session")
def installed_collection(user_venv, collection_tarball, tmp_path_factory):
    """The session's tarball installed into a fresh collections path, once for the run: (the installed
    collection's directory as a Path, the environment that runs its playbooks)."""
    root, env = user_install.install(user_venv, str(collection_tarball), str(tmp_path_factory.mktemp("collections")))
    return pathlib.Path(root), env
