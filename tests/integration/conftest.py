"""Fixtures that start the real services the integration tests talk to, and the collection as users get it:
the tarball built once per test session, and a venv with ansible-core and requirements.txt only."""

import json
import os
import pathlib
import re

import pytest

from tests.support import installed_collection as user_install
from tests.support.cyborg_server import CyborgServer
from tests.support.ironic_server import IronicServer
from tests.support.nova_api import NovaApiServer
from tests.support.placement_server import PlacementServer
from tests.support.zip_code_cache import enable as keep_compiled_module_code

keep_compiled_module_code()  # the modules of every playbook the tests run compile their sources once

COSTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "module_costs.json")


def unit_of(item) -> str:
    """The unit of work a test belongs to: its ``xdist_group`` (modules that share a service the session
    starts once), else its module."""
    marker = item.get_closest_marker("xdist_group")
    return f"@{marker.args[0]}" if marker else item.path.name


def pytest_collection_modifyitems(items):
    """The costliest units first (seconds each module took in a full run, module_costs.json, summed per
    unit), so that ``make integration`` hands the long units out first and both workers end together.
    Modules the file does not name yet come last; tests keep their order within a unit."""
    with open(COSTS) as handle:
        costs = json.load(handle)
    cost: dict[str, float] = {}
    modules: dict[str, set] = {}
    for item in items:
        modules.setdefault(unit_of(item), set()).add(item.path.name)
    for unit, names in modules.items():
        cost[unit] = sum(costs.get(name, 0) for name in names)
    first = {}
    for position, item in enumerate(items):
        first.setdefault(unit_of(item), position)
    rank = {item: position for position, item in enumerate(items)}
    items.sort(key=lambda item: (-cost[unit_of(item)], first[unit_of(item)], rank[item]))


def module_group(path: str) -> str | None:
    """The ``xdist_group`` a test module names (in its ``pytestmark``; the mark is given to whole modules
    only), read from its source: the xdist controller sees test ids only, and under pytest 9 xdist can no
    longer append the group to them."""
    with open(path, encoding="utf-8") as handle:
        found = re.search(r'pytest\.mark\.xdist_group\("([^"]+)"\)', handle.read())
    return found.group(1) if found else None


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadgroup`` (``make integration``): a module is one unit of work (its module fixtures
    are built once), and the modules of one ``xdist_group`` are one unit together (the service they share
    starts once); units go out in collection order (``--no-loadscope-reorder``)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = str(config.rootpath)
    groups: dict[str, str | None] = {}

    class ModuleOrGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if module not in groups:
                groups[module] = module_group(os.path.join(root, module))
            return f"@{groups[module]}" if groups[module] else module

    return ModuleOrGroupScheduling(config, log)


# What each module took in this run (on the xdist controller, which sees every worker's reports).
TOOK: dict[str, float] = {}


def pytest_runtest_logreport(report):
    name = os.path.basename(report.nodeid.split("::")[0])
    TOOK[name] = TOOK.get(name, 0.0) + report.duration


def pytest_sessionfinish(session):
    """``make integration-costs`` (ACCEL_RECORD_MODULE_COSTS=1) writes this run's costs to module_costs.json."""
    if os.environ.get("ACCEL_RECORD_MODULE_COSTS") == "1" and not hasattr(session.config, "workerinput"):
        ordered = sorted(((name, round(took)) for name, took in TOOK.items()), key=lambda kv: -kv[1])
        with open(COSTS, "w") as handle:
            json.dump(dict(ordered), handle, indent=1)
            handle.write("\n")


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
def nova_api(tmp_path_factory):
    """One real nova-api (Nova 34's compute API, SQLite) for the whole run, no flavor and no server at the
    start; the modules that use it are one xdist_group ("nova_api"), so one worker starts it."""
    with NovaApiServer(str(tmp_path_factory.mktemp("nova-api"))) as server:
        yield server


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
