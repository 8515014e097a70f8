"""Run the collection's modules and playbooks from pytest.

``run_module()`` runs a module's real ``main()`` in this process (module arguments as Ansible passes
them, including check and diff mode) and returns its result dict: fast enough to run every module
many times per test. ``run_playbook()`` runs ``ansible-playbook`` for real and returns its JSON report.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import subprocess
import sys

from ansible.module_utils.testing import patch_module_args

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
BIN = os.path.dirname(sys.executable)


def run_module(name: str, args: dict, check: bool = False, diff: bool = False) -> dict:
    """Run ``accel.openstack.<name>`` with ``args``; return its result (``failed`` and ``msg`` on failure)."""
    module = importlib.import_module(f"ansible_collections.accel.openstack.plugins.modules.{name}")
    params = dict(args, _ansible_check_mode=check, _ansible_diff=diff)
    out = io.StringIO()
    with patch_module_args(params), contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        module.main()
    text = out.getvalue()
    try:
        return json.loads(text[text.index("{") :])
    except ValueError as exc:
        raise AssertionError(f"module {name} printed no JSON result: {text!r}") from exc


def ansible_env(**extra: str) -> dict:
    env = dict(os.environ)
    env.update(
        ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
        ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
        ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_LOCALHOST_WARNING="false",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
        ANSIBLE_RETRY_FILES_ENABLED="false",
        PATH=BIN + os.pathsep + env.get("PATH", ""),
    )
    env.update(extra)
    return env


def run_expression(tmp_path, expression: str, variables: dict) -> subprocess.CompletedProcess:
    """``ansible localhost -m debug -a msg=<expression>`` with ``variables`` as extra vars, the collection
    found through a link of its own under ``tmp_path`` (the lookup as a playbook runs it)."""
    link = tmp_path / "collections" / "ansible_collections" / "accel" / "openstack"
    link.parent.mkdir(parents=True)
    link.symlink_to(REPO)
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    env = dict(
        os.environ,
        ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections"),
        ANSIBLE_LOCALHOST_WARNING="false",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
        ANSIBLE_NOCOLOR="1",
    )
    return subprocess.run(
        [os.path.join(BIN, "ansible"), "localhost", "-m", "ansible.builtin.debug", "-a", f"msg={expression}",
         "-e", f"@{tmp_path}/vars.json"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip


def run_playbook(
    playbook: str,
    inventory: str = "localhost,",
    extra_vars: dict | None = None,
    check: bool = False,
    diff: bool = False,
    timeout: int = 300,
    limit: str | None = None,
    cwd: str = REPO,
    **env: str,
) -> dict:
    """Run a playbook (a path from ``cwd``, the repository by default, or a playbook's FQCN); return the json
    callback's report plus ``rc`` and ``stderr``.

    ``report["stats"][host]`` holds ``changed``, ``failures``, ``ok`` ... for each host.
    """
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, playbook]
    if extra_vars:
        cmd += ["-e", json.dumps(extra_vars)]
    if check:
        cmd.append("--check")
    if diff:
        cmd.append("--diff")
    if limit:
        cmd += ["--limit", limit]
    proc = subprocess.run(
        cmd, cwd=cwd, env=ansible_env(**env), capture_output=True, text=True, timeout=timeout, check=False
    )
    try:
        report = json.loads(proc.stdout[proc.stdout.index("{") :])
    except ValueError:
        report = {"stats": {}, "plays": []}
    report["rc"] = proc.returncode
    report["stderr"] = proc.stderr
    report["stdout"] = proc.stdout if not report["plays"] else ""
    return report


def task_results(report: dict, task_name: str) -> dict:
    """The per-host results of the task called ``task_name`` (the last one of that name)."""
    found: dict = {}
    for play in report.get("plays", []):
        for task in play.get("tasks", []):
            name = task["task"]["name"]
            if name == task_name or name.endswith(" : " + task_name):
                found = task["hosts"]
    return found


def total_changed(report: dict) -> int:
    return sum(host.get("changed", 0) for host in report.get("stats", {}).values())
