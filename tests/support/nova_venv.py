"""Run a script under the nova venv's interpreter with JSON cases on stdin and JSON results on stdout.

The oracles (``nova_oracle.py``, ``nova_flavor_oracle.py``) are such scripts: Nova's own code runs in
``.venv-nova`` (``make nova-venv``), never in the test process; each run is a process forked from one that
has imported Nova already (``nova_forks.py``).
"""

from __future__ import annotations

import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def nova_python() -> str:
    venv = os.environ.get("ACCEL_NOVA_VENV") or os.path.join(REPO, ".venv-nova")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        raise FileNotFoundError(f"{python} is missing; run `make nova-venv` to install nova==34.0.0 there")
    return python


def ask(script: str, cases: list[dict], timeout: int, what: str) -> list[dict]:
    """The script's results for ``cases``, from one process in the nova venv (forked from the process that
    has imported Nova once: tests/support/nova_forks.py)."""
    from tests.support import nova_forks

    proc = nova_forks.run(nova_python(), script, json.dumps(cases), timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def serve(run) -> int:
    """Script side (nova venv): answer the JSON cases on stdin with ``run(cases)`` as JSON on stdout."""
    import sys

    json.dump(run(json.load(sys.stdin)), sys.stdout, default=str)
    return 0


def serve_cases(setup, one) -> int:
    """Script side: ``setup()`` once, then each case answered with ``one(conf, case)``, tagged with its ``id``."""

    def run(cases: list[dict]) -> list[dict]:
        conf = setup()
        results = []
        for case in cases:
            result = one(conf, case)
            result["id"] = case.get("id")
            results.append(result)
        return results

    return serve(run)
