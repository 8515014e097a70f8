"""The modules ``make unit-newest`` runs (tests/unit/conftest.py): those that go through ansible-core's code."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.unit.conftest import HERE, runs_on_every_release


def scoped() -> dict[str, bool]:
    return {str(p.relative_to(HERE)): runs_on_every_release(p) for p in sorted(HERE.rglob("test_*.py"))}


def test_the_modules_that_go_through_ansible_core_run_on_every_release():
    chosen = scoped()
    for name, runs in chosen.items():
        if name.startswith(("plugins/modules/", "plugins/lookup/")) or "/" not in name:
            assert runs, name
    assert chosen["plugins/plugin_utils/test_migration.py"]  # its lookup, through Ansible's loader
    assert chosen["plugins/module_utils/_placement/test_one_time_use.py"]  # its module, on AnsibleModule
    assert not chosen["plugins/plugin_utils/test_flavor_fit_shapes.py"]  # the solver alone
    assert not chosen["plugins/module_utils/test_cpu_set.py"]
    assert 0 < sum(chosen.values()) < len(chosen)


def test_the_scope_leaves_the_others_out_of_collection():
    env = dict(os.environ, ACCEL_UNIT_SCOPE="ansible-core")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", str(HERE)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    wanted = {f"tests/unit/{name}" for name, runs in scoped().items() if runs}
    assert collected == wanted
