"""The test suite's Nova fork server (tests/support/nova_forks.py): a script run in a forked child answers as
the same script run by a new interpreter (stdout, stderr, exit status), nothing one run changes reaches the
next, a run past its timeout raises as ``subprocess.run`` does and the next run gets a new server."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support import nova_forks

SCRIPT = """
import json, os, sys
import json as _json
state = sys.modules.setdefault("_left_behind", type(sys)("_left_behind"))
seen = getattr(state, "value", None)
state.value = "set by an earlier run"
os.environ["ACCEL_FORKS_PROBE"] = "set"
cases = json.load(sys.stdin)
print("to stderr", file=sys.stderr)
print(_json.dumps({"cases": cases, "seen": seen, "name": __name__, "argv0": os.path.basename(sys.argv[0]),
                   "path0": sys.path[0], "pid": os.getpid()}))
sys.exit(cases[0] if cases and isinstance(cases[0], int) else 0)
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "probe_oracle.py"
    path.write_text(SCRIPT)
    return str(path)


def both(script: str, stdin_text: str, monkeypatch) -> tuple:
    monkeypatch.delenv("ACCEL_NOVA_FORKS", raising=False)
    forked = nova_forks.run(sys.executable, script, stdin_text, 60)
    monkeypatch.setenv("ACCEL_NOVA_FORKS", "off")
    plain = nova_forks.run(sys.executable, script, stdin_text, 60)
    monkeypatch.delenv("ACCEL_NOVA_FORKS")
    return forked, plain


def test_a_forked_run_answers_as_a_new_interpreter_does(script, tmp_path, monkeypatch):
    import json

    forked, plain = both(script, '["a", {"b": 1}]', monkeypatch)
    assert forked.returncode == plain.returncode == 0
    assert forked.stderr == plain.stderr == "to stderr\n"
    ours, theirs = json.loads(forked.stdout), json.loads(plain.stdout)
    assert ours.pop("pid") != theirs.pop("pid")
    assert ours == theirs == {
        "cases": ["a", {"b": 1}], "seen": None, "name": "__main__", "argv0": "probe_oracle.py",
        "path0": str(tmp_path),
    }  # fmt: skip
    assert "ACCEL_FORKS_PROBE" not in os.environ


def test_nothing_one_run_sets_reaches_the_next_and_the_exit_status_comes_back(script, monkeypatch):
    import json

    monkeypatch.delenv("ACCEL_NOVA_FORKS", raising=False)
    first = nova_forks.run(sys.executable, script, "[]", 60)
    second = nova_forks.run(sys.executable, script, "[3]", 60)
    assert json.loads(first.stdout)["seen"] is None and json.loads(second.stdout)["seen"] is None
    assert (first.returncode, second.returncode) == (0, 3)
    server = nova_forks._servers[sys.executable]
    assert json.loads(first.stdout)["pid"] != server.proc.pid  # a child, not the server itself


def test_a_script_that_raises_gives_its_traceback_and_status_1(tmp_path, monkeypatch):
    path = tmp_path / "broken.py"
    path.write_text("import sys\nprint('half', end='')\nraise ValueError('the oracle broke')\n")
    forked, plain = both(str(path), "", monkeypatch)
    assert forked.returncode == plain.returncode == 1
    assert forked.stdout == plain.stdout == "half"
    assert forked.stderr.splitlines()[-1] == plain.stderr.splitlines()[-1] == "ValueError: the oracle broke"


def test_a_run_past_its_timeout_raises_and_the_next_run_gets_a_new_server(script, tmp_path, monkeypatch):
    monkeypatch.delenv("ACCEL_NOVA_FORKS", raising=False)
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(60)\n")
    nova_forks.run(sys.executable, script, "[]", 60)
    old = nova_forks._servers[sys.executable].proc
    with pytest.raises(subprocess.TimeoutExpired):
        nova_forks.run(sys.executable, str(slow), "", 1)
    assert old.poll() is not None and sys.executable not in nova_forks._servers
    assert nova_forks.run(sys.executable, script, "[]", 60).returncode == 0
    assert nova_forks._servers[sys.executable].proc.pid != old.pid
