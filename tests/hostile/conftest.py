"""The hostile-input suite: every case bounded in time, and a sentinel directory outside the root.

``outside`` is a directory next to the root holding files an attacker would like read, changed or
deleted (including files named as the collection's own). After each case the directory must hold the
same names with the same bytes: nothing was read into a result, written or deleted there. Each case
runs under an alarm, so a hang fails the case instead of the suite.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.support.zip_code_cache import enable as keep_compiled_module_code

keep_compiled_module_code()  # the modules of the playbooks the cases run compile their sources once

CASE_SECONDS = 30
SECRET = "TOPSECRET-OUTSIDE-THE-ROOT"
OUTSIDE_FILES = {
    "secret.txt": SECRET + "\n",
    "accel-openstack-vfio.conf": "# the operator's own file outside the root\n",
    "50-accel-openstack.conf": "[DEFAULT]\n# outside\n",
    "99-accel-openstack.cfg": "# outside\n",
    "modules": "# outside\n",
}


def _snapshot(path: str) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for directory, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(directory, name)
            rel = os.path.relpath(full, path)
            if os.path.islink(full) or os.path.isdir(full):
                found[rel] = None
            else:
                with open(full, "rb") as handle:
                    found[rel] = handle.read()
    return found


@pytest.fixture(autouse=True)
def outside(tmp_path):
    """A directory outside the root; the case fails if anything in it changed."""
    path = tmp_path / "outside"
    path.mkdir()
    for name, text in OUTSIDE_FILES.items():
        (path / name).write_text(text)
    before = _snapshot(str(path))
    yield path
    assert _snapshot(str(path)) == before, "something outside the root was written or deleted"


@pytest.fixture(autouse=True)
def module_warnings_in_results(monkeypatch):
    """Modules run in this process return their warnings in the result, not on a controller display."""
    from ansible.module_utils import _internal as ansible_internal

    monkeypatch.setattr(ansible_internal, "is_controller", False)


def warnings_of(result: dict) -> str:
    """The warnings of a result as one text (2.19 nests each in an event)."""
    return repr(result.get("warnings", []))


@pytest.fixture(autouse=True)
def bounded(request):
    """Fail a case that runs longer than its bound (a hang), instead of blocking the suite; a test module
    may set its own ``CASE_SECONDS`` (playbook runs start a Python interpreter per task)."""
    seconds = getattr(request.module, "CASE_SECONDS", CASE_SECONDS)

    def expired(_signum, _frame):
        raise TimeoutError(f"the case ran for more than {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def nova_conf_d_args(root, **extra) -> dict:
    """nova_config options for one compute host in the nova.conf.d layout under ``root``; ``extra`` wins."""
    args = {
        "root": str(root),
        "layout": "nova_conf_d",
        "host": "c1",
        "hosts": [{"name": "c1", "facts": {}}],
        "policy": [],
        "services": ["scheduler"],
        "enabled_filters": ["PciPassthroughFilter"],
    }
    args.update(extra)
    return args


def regular_files(root: str) -> dict[str, bytes]:
    """Every regular file under ``root`` with its bytes (links not followed): what a case may not change."""
    out = {}
    for base, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(base, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    out[os.path.relpath(path, root)] = handle.read()
    return out


def no_traceback(result: dict) -> None:
    """A failure must be a message, never a Python exception text."""
    text = str(result.get("msg", "")) + str(result.get("exception", ""))
    assert result.get("msg") and "Traceback" not in text, result
    assert "module_stderr" not in result, result


def assert_secret_absent(result) -> None:
    assert SECRET not in str(result), "content from outside the root came back in the result"


def run_play(tmp_path, tasks: list, play_vars: dict | None = None, verbosity: int = 0) -> tuple[int, str]:
    """Run ``tasks`` on localhost with ansible-playbook itself; (exit code, stdout and stderr)."""
    import yaml

    play = [{"hosts": "localhost", "gather_facts": False, "vars": play_vars or {}, "tasks": tasks}]
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(play))
    env = dict(
        os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false"
    )
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(playbook)]
    if verbosity:
        argv.append("-" + "v" * verbosity)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=CASE_SECONDS * 4, check=False)
    return done.returncode, done.stdout + done.stderr
