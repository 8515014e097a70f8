"""The test suite's store of code compiled from module zips (tests/support/zip_code_cache): a module imported
from a zip runs the same with the store as without it, its code names the zip it came from, and the second
import takes the code from the store."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import zipfile

from tests.support import zip_code_cache

SOURCE = (
    "def where():\n    return where.__code__.co_filename\n\n\nclass Deep:\n    def inner(self):\n        return 6 * 7\n"
)
PROBE = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); import probe; "
    "print(json.dumps([probe.where(), probe.Deep().inner(), probe.Deep.inner.__code__.co_filename]))"
)


def run(tmp_path, name: str, environ: dict) -> list:
    archive = tmp_path / name / "payload.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("probe.py", SOURCE)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(archive)], env=environ, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_the_store_gives_back_the_code_with_this_runs_file_name(tmp_path):
    store = tmp_path / "store"
    environ = dict(os.environ, ACCEL_ZIP_CODE_CACHE=str(store))
    environ.pop("PYTHONPATH", None)
    zip_code_cache.enable(environ)
    assert environ["PYTHONPATH"].split(os.pathsep)[0] == zip_code_cache.HERE
    first = run(tmp_path, "one", environ)
    assert len(os.listdir(store)) == 1  # the probe's compiled code, kept
    second = run(tmp_path, "two", environ)
    plain = run(tmp_path, "three", dict(os.environ, PYTHONPATH=""))
    for answer, name in ((first, "one"), (second, "two"), (plain, "three")):
        path = str(tmp_path / name / "payload.zip" / "probe.py")
        assert answer == [path, 42, path]
    assert len(os.listdir(store)) == 1
    # The second import did take the stored code: a planted entry is what runs.
    (entry,) = store.iterdir()
    entry.write_bytes(marshal.dumps(compile(SOURCE.replace("6 * 7", "6 * 8"), "planted", "exec")))
    assert run(tmp_path, "four", environ)[1] == 48


def test_off_leaves_python_as_it_is(tmp_path):
    environ = {"ACCEL_ZIP_CODE_CACHE": "off", "PYTHONPATH": "/elsewhere"}
    zip_code_cache.enable(environ)
    assert environ == {"PYTHONPATH": "/elsewhere"}
