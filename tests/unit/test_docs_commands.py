"""Every shell command in the docs is run by a test, checked by one, or marked as an example for a real cloud.

Each fenced ``sh`` block of docs/*.md and README.md is preceded by a marker comment:

- ``<!-- commands: run by PATH -->``: the test file PATH runs the block's commands as written (it names the doc);
- ``<!-- commands: checked by PATH (...) -->``: PATH checks them against what the tests run (this file, below);
- ``<!-- commands: make targets of the checkout ... -->``: every ``make X`` is a target of the Makefile;
- ``<!-- commands: example for a real cloud -->``: a command for the operator's own cloud or hosts.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
THIS = os.path.relpath(os.path.abspath(__file__), REPO)
DOCS = sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))) + [os.path.join(REPO, "README.md")]
FENCE = re.compile(r"^```(sh|bash|shell|console)\s*$")
MARKER = re.compile(
    r"^<!-- commands: (run by (\S+)|checked by (\S+)|make targets of the checkout|example for a real cloud)\b"
)


def blocks() -> list[tuple[str, int, str | None, str]]:
    """(doc, line, marker or None, the block's text) for every shell block of the docs."""
    found = []
    for path in DOCS:
        with open(path) as handle:
            lines = handle.read().split("\n")
        for number, line in enumerate(lines):
            if not FENCE.match(line):
                continue
            end = next(i for i in range(number + 1, len(lines)) if lines[i].startswith("```"))
            before = next((lines[i] for i in range(number - 1, -1, -1) if lines[i].strip()), "")
            found.append((os.path.relpath(path, REPO), number + 1, before if MARKER.match(before) else None,
                          "\n".join(lines[number + 1 : end])))  # fmt: skip
    return found


BLOCKS = blocks()


def block(doc: str, first: str) -> str:
    (text,) = [text for where, _line, _marker, text in BLOCKS if where == doc and text.startswith(first)]
    return text


def test_the_docs_have_shell_blocks_of_each_kind():
    markers = [MARKER.match(marker).group(1).split(" ")[0] for _doc, _line, marker, _text in BLOCKS if marker]
    assert {"run", "checked", "make", "example"} <= set(markers)


@pytest.mark.parametrize("doc,line,marker,text", BLOCKS, ids=[f"{b[0]}:{b[1]}" for b in BLOCKS])
def test_every_shell_block_says_who_runs_it(doc, line, marker, text):
    assert marker, f"{doc}:{line}: precede the block with <!-- commands: run by PATH | checked by PATH | ... -->"
    match = MARKER.match(marker)
    path = match.group(2) or match.group(3)
    if path and path != THIS:
        assert os.path.isfile(os.path.join(REPO, path)), f"{doc}:{line}: {path} does not exist"
        with open(os.path.join(REPO, path)) as handle:
            assert os.path.basename(doc) in handle.read(), f"{doc}:{line}: {path} never names {doc}"
    if match.group(1).startswith("make targets"):
        with open(os.path.join(REPO, "Makefile")) as handle:
            targets = set(re.findall(r"^([a-z][a-z0-9-]*):", handle.read(), re.M))
        named = re.findall(r"^make ([a-z][a-z0-9-]*)", text, re.M)
        assert named and set(named) <= targets, (named, sorted(targets))


def test_the_profile_builder_commands_of_discovery_md_run(tmp_path):
    text = block("docs/discovery.md", ".venv/bin/python -m tests.support.fake_sysfs")
    python = os.path.join(REPO, ".venv", "bin", "python")
    for line in text.splitlines():
        command = line.split("   #")[0].strip().replace("/tmp/roots", str(tmp_path / "roots"))
        if not os.path.exists(python):
            command = command.replace(".venv/bin/python", sys.executable, 1)
        done = subprocess.run(
            ["bash", "-c", command], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "roots" / "mig-a100" / "sys" / "bus" / "pci" / "devices").is_dir()
    assert len(list((tmp_path / "roots").iterdir())) > 5


def test_the_placement_venv_of_install_md_is_the_placement_the_tests_run():
    text = block("docs/install.md", "python3 -m venv $HOME/placement-venv")
    (documented,) = re.findall(r"openstack-placement==([0-9.]+)", text)
    with open(os.path.join(REPO, "requirements", "placement.txt")) as handle:
        (pinned,) = re.findall(r"^openstack-placement==([0-9.]+)", handle.read(), re.M)
    assert documented == pinned


def test_the_readme_try_it_lines_are_install_md_s():
    readme = block("README.md", "python3 -m venv $HOME/placement-venv").splitlines()
    install = block("docs/install.md", "python3 -m venv $HOME/placement-venv").splitlines()
    install += block("docs/install.md", "ansible-playbook accel.openstack.try_it").splitlines()
    assert readme[0].split(" && ") == install[:2]
    assert readme[1] == install[2]
