"""The root is a boundary: links, ``..`` and odd file types never take a read, write or delete outside it."""

import os
import threading

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import vfio
from ansible_collections.accel.openstack.plugins.module_utils._host.commands import HostCommands
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot, HostRootError
from ansible_collections.accel.openstack.plugins.module_utils._host.sysfs import read_host
from tests.support.fake_sysfs import build_root

SECRET = "outside-secret-content"
VFIO_PARAMS = {"bind": "boot", "force": False, "allow_drivers": [], "blacklist": [], "initramfs": False}


@pytest.fixture
def outside(tmp_path):
    """A directory beside the root, holding a file the root must never reveal or change."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret").write_text(SECRET + "\n")
    return path


def _snapshot(directory):
    out = {}
    for dirpath, _dirs, names in os.walk(directory):
        for name in names:
            with open(os.path.join(dirpath, name), "rb") as handle:
                out[os.path.relpath(os.path.join(dirpath, name), directory)] = handle.read()
    return out


def _vfio(root, check_mode=False, **params):
    host = HostRoot(root)
    commands = HostCommands(host, lambda argv: (0, "", ""), check_mode)
    return vfio.configure(host, commands, read_host(host), dict(VFIO_PARAMS, **params))


# -- resolution ------------------------------------------------------------------------------------------
def test_absolute_links_are_rerooted_and_dotdot_stops_at_the_root(tmp_path, outside):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/abs").symlink_to(outside / "secret")
    (root / "etc/rel").symlink_to("../../../../../../../../" + str(outside / "secret").lstrip("/"))
    host = HostRoot(str(root))
    assert host.resolve("/etc/abs") == str(outside / "secret")  # the same path, but under the root
    assert host.path("/etc/abs") == str(root) + str(outside / "secret")
    assert host.resolve("/etc/rel") == str(outside / "secret")
    assert host.resolve("/../../..") == "/"
    assert host.path("/../../etc/../../etc") == str(root / "etc")
    for path in ("/etc/abs", "/etc/rel", "/../outside/secret", "/../../" + str(outside / "secret")):
        assert host.read_text(path) is None, path
    assert SECRET not in " ".join(host.warnings)


def test_a_link_loop_is_refused_by_name_where_a_path_must_be_used(tmp_path):
    (tmp_path / "loop").symlink_to("loop")
    host = HostRoot(str(tmp_path))
    with pytest.raises(HostRootError, match="/loop/x: too many levels of symbolic links"):
        host.write_text("/loop/x", "data")
    assert host.read_text("/loop") is None and any("/loop" in w for w in host.warnings)


def test_the_root_itself_may_be_a_link(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real/f").write_text("inside\n")
    (tmp_path / "alias").symlink_to("real")
    host = HostRoot(str(tmp_path / "alias"))
    assert host.read_text("/f") == "inside\n"
    assert host.host_path(host.path("/f")) == "/f"


# -- writes and deletes ----------------------------------------------------------------------------------
def test_vfio_pci_neither_writes_nor_deletes_through_an_absolute_modprobe_d_link(tmp_path, outside):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    modprobe_d = os.path.join(root, "etc/modprobe.d")
    if os.path.isdir(modprobe_d):
        os.rmdir(modprobe_d)
    os.symlink(str(outside), modprobe_d)
    (outside / "accel-openstack-vfio.conf").write_text("operator's file outside the root\n")
    before = _snapshot(outside)
    result = _vfio(root, devices=["18:00.0"])
    assert result["changed"]
    assert _snapshot(outside) == before
    rerooted = os.path.join(root, str(outside).lstrip("/"), "accel-openstack-vfio.conf")
    with open(rerooted) as handle:  # written where the link points, inside the root
        assert handle.read().startswith(vfio.HEADER)
    removed = _vfio(root, devices=[])
    assert removed["changed"] and not os.path.exists(rerooted)
    assert _snapshot(outside) == before


def test_a_directory_at_a_write_target_is_refused_and_nothing_is_written(tmp_path):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    os.makedirs(os.path.join(root, "etc/modprobe.d/accel-openstack-vfio.conf"))
    before = _snapshot(os.path.join(root, "etc"))
    with pytest.raises(HostRootError, match="/etc/modprobe.d/accel-openstack-vfio.conf: .*a directory") as caught:
        _vfio(root, devices=["18:00.0"])
    assert isinstance(caught.value, AccelError) and "move it away" in caught.value.msg
    assert _snapshot(os.path.join(root, "etc")) == before
    host = HostRoot(root)
    with pytest.raises(HostRootError, match="refusing to replace it"):
        host.write_text("/etc/modprobe.d/accel-openstack-vfio.conf", "x\n")
    with pytest.raises(HostRootError, match="refusing to delete it"):
        host.remove("/etc/modprobe.d/accel-openstack-vfio.conf")


def test_remove_deletes_a_link_itself_never_its_target(tmp_path, outside):
    (tmp_path / "root").mkdir()
    (tmp_path / "root/link").symlink_to(outside / "secret")
    host = HostRoot(str(tmp_path / "root"))
    assert host.remove("/link")
    assert not os.path.lexists(tmp_path / "root/link") and (outside / "secret").read_text() == SECRET + "\n"


def test_writes_through_a_dotdot_path_stay_inside(tmp_path):
    (tmp_path / "root").mkdir()
    host = HostRoot(str(tmp_path / "root"))
    host.write_text("/../../escaped.conf", "x\n")
    assert (tmp_path / "root/escaped.conf").read_text() == "x\n" and not (tmp_path / "escaped.conf").exists()


# -- reads -----------------------------------------------------------------------------------------------
def test_mdev_description_linked_outside_the_root_is_not_in_the_facts(tmp_path, outside):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    host = HostRoot(root)
    descriptions = []
    for address in host.listdir("/sys/class/mdev_bus"):
        base = host.resolve(f"/sys/class/mdev_bus/{address}") + "/mdev_supported_types"
        for name in host.listdir(base):
            descriptions.append(host.path(f"{base}/{name}/description"))
    assert descriptions
    for path in descriptions:
        os.unlink(path)
        os.symlink(str(outside / "secret"), path)
    facts, _warnings = discover(root, ["all"])
    assert SECRET not in repr(facts)
    types = [t for d in facts["accel_pci_devices"] for t in d["mdev_types"]]
    assert types and all(t.get("description") is None for t in types)


def test_a_fifo_in_sysfs_is_a_warning_and_discovery_returns(tmp_path):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    device = os.path.realpath(os.path.join(root, "sys/bus/pci/devices/0000:18:00.0"))
    os.unlink(os.path.join(device, "vendor"))
    os.mkfifo(os.path.join(device, "vendor"))
    done = {}
    worker = threading.Thread(target=lambda: done.update(result=discover(root, ["all"])), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "discovery blocked on a FIFO"
    facts, warnings = done["result"]
    assert any(d["address"] == "0000:18:00.0" for d in facts["accel_pci_devices"])
    assert any("0000:18:00.0/vendor: cannot read (it is a FIFO" in w for w in warnings), warnings


def test_reads_are_bounded_and_say_when_they_were_cut(tmp_path):
    (tmp_path / "big").write_text("a" * 5000)
    host = HostRoot(str(tmp_path))
    found = host.read_file("/big", limit=1000)
    assert found.truncated and len(found.data) == 1000
    assert host.read_text("/big", limit=1000) == "a" * 1000
    assert host.warnings == ["/big: longer than 1000 bytes; only the first 1000 were read"]
    assert not host.read_file("/big").truncated


def test_a_fifo_where_a_file_is_edited_is_refused_without_opening_it(tmp_path):
    (tmp_path / "etc/kernel").mkdir(parents=True)
    os.mkfifo(tmp_path / "etc/kernel/cmdline")  # opening it for reading would block
    host = HostRoot(str(tmp_path))
    with pytest.raises(HostRootError, match="/etc/kernel/cmdline: cannot read \\(it is a FIFO"):
        FileChange.of(host, "/etc/kernel/cmdline", "quiet\n")
    with pytest.raises(HostRootError, match="refusing to replace it"):
        host.write_text("/etc/kernel/cmdline", "quiet\n")
    assert host.read_text("/etc/kernel/cmdline") is None and "a FIFO" in host.warnings[0]
