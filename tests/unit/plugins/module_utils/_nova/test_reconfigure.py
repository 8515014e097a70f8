"""The hosts waiting for kolla-ansible reconfigure, kept between runs: recorded, kept, cleared, refused."""

import json

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova.reconfigure import (
    PendingFileError,
    plan_pending,
    read_pending,
)

PATH = "/etc/kolla/accel-openstack-reconfigure.json"


def _write(tmp_path, text):
    target = tmp_path / PATH.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def test_a_change_is_recorded_and_stays_until_kolla_deployed_after_it(tmp_path):
    host = HostRoot(str(tmp_path))
    change, pending = plan_pending(host, PATH, ["gpu-01", "ctl-01"], {}, now=100.0)
    assert pending == ["ctl-01", "gpu-01"] and change.changed
    change.apply(host)
    # nothing changed this run, Kolla deployed gpu-01 before the change and ctl-01 after it
    change, pending = plan_pending(host, PATH, [], {"gpu-01": 99.0, "ctl-01": 101.0}, now=200.0)
    assert pending == ["gpu-01"]
    change.apply(host)
    assert json.loads((tmp_path / PATH.lstrip("/")).read_text()) == {"hosts": {"gpu-01": 100.0}}
    # unknown deploy time keeps it; a later deploy clears it and the file goes
    assert plan_pending(host, PATH, [], {"gpu-01": None}, now=300.0)[1] == ["gpu-01"]
    change, pending = plan_pending(host, PATH, [], {"gpu-01": 150.0}, now=300.0)
    assert pending == [] and change.after is None
    change.apply(host)
    assert not (tmp_path / PATH.lstrip("/")).exists()


def test_an_unchanged_pending_list_is_no_change(tmp_path):
    host = HostRoot(str(tmp_path))
    plan_pending(host, PATH, ["gpu-01"], {}, now=100.0)[0].apply(host)
    change, pending = plan_pending(host, PATH, [], {"gpu-01": 50.0}, now=200.0)
    assert pending == ["gpu-01"] and not change.changed


@pytest.mark.parametrize(
    "text, words",
    [
        ("not json", ["not JSON"]),
        ('{"hosts": []}', ['no "hosts" mapping']),
        ('{"hosts": {"gpu 01; rm": 1}}', ["not an inventory host name"]),
        ('{"hosts": {"gpu-01": "soon"}}', ["not seconds since the epoch"]),
        ('{"hosts": {"gpu-01": true}}', ["not seconds since the epoch"]),
        ('{"hosts": {"gpu-01": -1}}', ["not seconds since the epoch"]),
        ('{"hosts": {"gpu-01": 1e999}}', ["not seconds since the epoch"]),
        ("[" * 100 + "]" * 100, ['no "hosts" mapping']),
    ],
)
def test_a_damaged_file_is_refused_naming_it_and_the_fix(tmp_path, text, words):
    _write(tmp_path, text)
    with pytest.raises(PendingFileError) as error:
        read_pending(HostRoot(str(tmp_path)), PATH)
    message = str(error.value)
    assert PATH in message and "kolla-ansible reconfigure" in message
    assert all(word in message for word in words), message


def test_an_oversized_file_is_refused_before_it_is_read_whole(tmp_path):
    _write(tmp_path, " " * (1024 * 1024 + 1))
    with pytest.raises(AccelError, match="larger than"):
        read_pending(HostRoot(str(tmp_path)), PATH)
