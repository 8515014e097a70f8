"""The collection as a user installs it: the tarball built once per test session, installed with ansible-galaxy into a
fresh collections path, run by an ansible-core that has nothing but the collection's requirements.txt beside it.

The venv is kept between runs and checkouts in the venv cache of tests/venv.sh ($ACCEL_VENV_CACHE, else
~/.cache/accel-openstack/venvs), keyed by the interpreter and the pins (installing it costs half a minute);
the collection is built and installed fresh into the given directory every time.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import subprocess
import sys

import yaml

from tests.support.cache import accel_cache

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pin(name: str) -> str:
    with open(os.path.join(REPO, "requirements", "test.txt")) as handle:
        for line in handle:
            if re.match(rf"{re.escape(name)}==", line.strip()):
                return line.strip()
    raise AssertionError(f"{name} is not pinned in requirements/test.txt")


def run(cmd, **kwargs) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False, **kwargs)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def user_venv() -> str:
    """The bin directory of a venv with ansible-core and the collection's requirements.txt only."""
    with open(os.path.join(REPO, "requirements.txt")) as handle:
        wanted = [pin("ansible-core"), handle.read()]
    key = hashlib.sha256("\n".join([sys.version, *wanted]).encode()).hexdigest()[:12]
    cache = os.environ.get("ACCEL_VENV_CACHE") or accel_cache("venvs")
    venv = os.path.join(cache, f"user-venv-{key}")
    os.makedirs(cache, exist_ok=True)
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another checkout's run may be building the same venv
        if not os.path.exists(os.path.join(venv, ".stamp")):
            run([sys.executable, "-m", "venv", "--clear", venv])
            pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            run([*pip, wanted[0], "-r", os.path.join(REPO, "requirements.txt")])
            open(os.path.join(venv, ".stamp"), "w").close()
    return os.path.join(venv, "bin")


def build(out: str) -> str:
    """Build the tarball into ``out`` with the test venv's ansible-galaxy; return its path."""
    run(
        [
            os.path.join(os.path.dirname(sys.executable), "ansible-galaxy"),
            "collection",
            "build",
            "--output-path",
            out,
            REPO,
        ]
    )
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        version = yaml.safe_load(handle)["version"]
    tarball = os.path.join(out, f"accel-openstack-{version}.tar.gz")
    assert os.path.isfile(tarball), os.listdir(out)
    return tarball


def install(bin_dir: str, tarball: str, target: str) -> tuple[str, dict]:
    """Install ``tarball`` into the collections path ``target`` with the user venv's ansible-galaxy; return the
    installed collection's directory and the environment that runs its playbooks (that path only)."""
    env = {
        "PATH": bin_dir + os.pathsep + os.environ["PATH"],
        "HOME": target,
        "ANSIBLE_COLLECTIONS_PATH": target,
        "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCALHOST_WARNING": "false",
    }
    run([os.path.join(bin_dir, "ansible-galaxy"), "collection", "install", "-p", target, tarball], env=env)
    return os.path.join(target, "ansible_collections", "accel", "openstack"), env
