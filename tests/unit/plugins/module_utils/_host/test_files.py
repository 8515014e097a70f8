"""FileChange: one comparison drives changed, the diff and whether the disk is touched."""

import os
import stat

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.files import (
    FileChange,
    apply_all,
    changed_files,
    diffs,
)
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import update_text
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot, HostRootError

OPERATOR = "# operator's file\n[DEFAULT]\ndebug = True\n"
WANTED = {"pci": {"alias": ['{"name": "x"}']}}


@pytest.mark.parametrize(
    "before, after, changed",
    [
        (None, None, False),
        ("", None, False),  # an empty file where the plan wants none is left alone
        ("x\n", None, True),
        (None, "", True),  # an empty file is still a file to create
        (None, "x\n", True),
        ("x\n", "x\n", False),
        ("x\n", "y\n", True),
    ],
)
def test_changed_is_one_comparison(before, after, changed):
    change = FileChange("/etc/f", before, after)
    assert change.changed is changed
    assert bool(diffs([change])) is changed and bool(changed_files([change])) is changed


def test_diff_names_the_path_and_shows_absent_as_empty():
    assert FileChange("/etc/f", None, "new\n").diff() == {
        "before_header": "/etc/f",
        "after_header": "/etc/f",
        "before": "",
        "after": "new\n",
    }


def test_plan_and_apply_an_ini_edit_through_the_host_root(tmp_path):
    host = HostRoot(str(tmp_path))
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "nova.conf").write_text(OPERATOR)
    before = host.read_existing("/etc/nova.conf")
    change = FileChange("/etc/nova.conf", before, update_text(before, WANTED), 0o640)
    assert change.changed and change.diff()["before"] == OPERATOR
    assert (tmp_path / "etc" / "nova.conf").read_text() == OPERATOR  # planning writes nothing
    assert change.apply(host)
    assert stat.S_IMODE(os.stat(tmp_path / "etc" / "nova.conf").st_mode) == 0o640
    again = FileChange.of(host, "/etc/nova.conf", update_text(OPERATOR, WANTED))
    assert not again.changed and not again.apply(host)
    emptied = FileChange.of(host, "/etc/nova.conf", update_text(again.before, {}))
    emptied.apply(host)
    assert (tmp_path / "etc" / "nova.conf").read_text().strip() == OPERATOR.strip()


def test_apply_all_deletes_creates_and_honours_check_mode(tmp_path):
    host = HostRoot(str(tmp_path))
    (tmp_path / "old.conf").write_text("old\n")
    changes = [
        FileChange.of(host, "/old.conf", None),
        FileChange.of(host, "/etc/new.d/new.conf", "new\n"),
        FileChange.of(host, "/absent.conf", None),
    ]
    assert apply_all(host, changes, check_mode=True) == ["/old.conf", "/etc/new.d/new.conf"]
    assert (tmp_path / "old.conf").exists() and not (tmp_path / "etc").exists()
    assert apply_all(host, changes) == ["/old.conf", "/etc/new.d/new.conf"]
    assert not (tmp_path / "old.conf").exists()
    assert (tmp_path / "etc" / "new.d" / "new.conf").read_text() == "new\n"
    assert os.listdir(tmp_path / "etc" / "new.d") == ["new.conf"]  # no temp file left


def test_a_file_that_cannot_be_rewritten_whole_is_refused(tmp_path):
    host = HostRoot(str(tmp_path))
    (tmp_path / "latin1.conf").write_bytes(b"caf\xe9\n")
    with pytest.raises(HostRootError, match="/latin1.conf: not UTF-8"):
        FileChange.of(host, "/latin1.conf", "x\n")
    (tmp_path / "big.conf").write_bytes(b"x" * 100)
    with pytest.raises(HostRootError, match="/big.conf: larger than 10 bytes"):
        host.read_existing("/big.conf", limit=10)
