"""The reconfigure pending file is host input: a link out of the root or a non-file is refused, not followed."""

import contextlib
import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova.reconfigure import plan_pending

PATH = "/etc/kolla/accel-openstack-reconfigure.json"


def test_a_link_out_of_the_root_is_neither_read_nor_written(tmp_path):
    """Links resolve inside the root, as in a chroot: the file outside is never read nor written."""
    root = tmp_path / "root"
    (root / "etc/kolla").mkdir(parents=True)
    outside = tmp_path / "outside.json"
    outside.write_text('{"hosts": {"victim": 1}}')
    os.symlink(str(outside), str(root / PATH.lstrip("/")))
    change, pending = plan_pending(HostRoot(str(root)), PATH, ["gpu-01"], {}, now=1.0)
    assert pending == ["gpu-01"]
    with contextlib.suppress(AccelError):  # the write may be refused; it never lands outside
        change.apply(HostRoot(str(root)))
    assert outside.read_text() == '{"hosts": {"victim": 1}}'


def test_a_directory_where_the_file_goes_is_refused(tmp_path):
    (tmp_path / PATH.lstrip("/")).mkdir(parents=True)
    with pytest.raises(AccelError):
        plan_pending(HostRoot(str(tmp_path)), PATH, ["gpu-01"], {}, now=1.0)
