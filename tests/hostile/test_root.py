"""The root is a boundary: links out of it, ``..``, FIFOs, directories at targets, hostile sysfs names."""

from __future__ import annotations

import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from tests.hostile.conftest import SECRET, assert_secret_absent, no_traceback, nova_conf_d_args, warnings_of
from tests.support.ansible_runner import run_module
from tests.support.fake_sysfs import build_root


def _find(root: str, name: str, under: str = "/sys/devices", parent: str | None = None) -> list[str]:
    """Regular files called ``name`` under ``root + under`` (links not followed: sysfs trees loop)."""
    found = []
    for directory, _dirs, files in os.walk(root + under):
        if name in files and (parent is None or os.path.basename(os.path.dirname(directory)) == parent):
            path = os.path.join(directory, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found.append(path)
    return sorted(found)


def _link(link: str, target: str) -> None:
    if os.path.isdir(link) and not os.path.islink(link):
        os.rename(link, link + ".moved")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(target, link)


def _escape(kind: str, outside, link: str) -> str:
    """A link target that leaves the root: absolute, or relative with more ``..`` than the root is deep."""
    if kind == "absolute":
        return str(outside)
    depth = link.count("/") + 10
    return "../" * depth + str(outside).lstrip("/")


LINK_KINDS = ["absolute", "relative"]


@pytest.mark.parametrize("kind", LINK_KINDS)
@pytest.mark.parametrize("devices", [["18:00.0"], []], ids=["write", "delete"])
def test_vfio_pci_modprobe_d_linked_out_of_the_root(tmp_path, outside, kind, devices):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    link = root + "/etc/modprobe.d"
    _link(link, _escape(kind, outside, "/etc/modprobe.d"))
    result = run_module("vfio_pci", {"root": root, "devices": devices, "initramfs": False})
    if result.get("failed"):
        no_traceback(result)
    # The link is followed as if the root were /: what was written landed under the root's copy of
    # the link's target, never in ``outside`` (the fixture checks that).
    if devices and not result.get("failed"):
        assert os.path.isfile(root + str(outside) + "/accel-openstack-vfio.conf"), result


@pytest.mark.parametrize("kind", LINK_KINDS)
def test_kernel_cmdline_grub_d_linked_out_of_the_root(tmp_path, outside, kind):
    root = tmp_path / "root"
    (root / "etc/default").mkdir(parents=True)
    (root / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX=""\n')
    (root / "proc").mkdir()
    (root / "proc/cmdline").write_text("ro\n")
    _link(str(root / "etc/default/grub.d"), _escape(kind, outside, "/etc/default/grub.d"))
    result = run_module("kernel_cmdline", {"root": str(root), "present": ["iommu=pt"]})
    if result.get("failed"):
        no_traceback(result)


@pytest.mark.parametrize("kind", LINK_KINDS)
def test_nova_config_dir_linked_out_of_the_root(tmp_path, outside, kind):
    root = tmp_path / "root"
    (root / "etc/nova").mkdir(parents=True)
    _link(str(root / "etc/nova/nova.conf.d"), _escape(kind, outside, "/etc/nova/nova.conf.d"))
    args = nova_conf_d_args(root, services=["api"])
    result = run_module("nova_config", args)
    if result.get("failed"):
        no_traceback(result)


@pytest.mark.parametrize("kind", LINK_KINDS)
def test_pci_facts_does_not_read_through_a_link_out_of_the_root(tmp_path, outside, kind):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    descriptions = _find(root, "description", parent="mdev_supported_types")
    assert descriptions
    for path in descriptions[:3]:
        os.unlink(path)
        host_path = "/" + os.path.relpath(path, root)
        os.symlink(_escape(kind, outside / "secret.txt", host_path), path)
    result = run_module("pci_facts", {"root": root})
    assert not result.get("failed"), result
    assert_secret_absent(result)


def test_host_root_refuses_what_leaves_it(tmp_path, outside):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    os.symlink(str(outside / "secret.txt"), root / "etc/abs")
    os.symlink("../../../../../../../../../../" + str(outside / "secret.txt").lstrip("/"), root / "etc/rel")
    host = HostRoot(str(root))
    for path in ("/etc/abs", "/etc/rel", "/../../" + str(outside / "secret.txt"), "/etc/../../secret.txt"):
        text = host.read_text(path)
        assert text is None or SECRET not in text
        assert host.path(path).startswith(str(root))
    assert host.remove("/etc/abs")  # the link itself goes, never its target
    assert not os.path.lexists(root / "etc/abs")


@pytest.mark.parametrize("attribute", ["vendor", "class", "numa_node", "sriov_totalvfs"])
def test_a_fifo_in_sysfs_is_never_opened(tmp_path, attribute):
    root = build_root("sriov-nic", str(tmp_path / "root"))
    devices = _find(root, attribute, "/sys/devices")
    assert devices, attribute
    os.unlink(devices[0])
    os.mkfifo(devices[0])
    result = run_module("pci_facts", {"root": root})
    assert not result.get("failed"), result
    assert f"{attribute}: cannot read (it is a FIFO" in warnings_of(result), warnings_of(result)


def test_a_directory_at_a_written_path_is_refused(tmp_path):
    root = tmp_path / "root"
    (root / "etc/nova/nova.conf.d/50-accel-openstack.conf").mkdir(parents=True)
    args = nova_conf_d_args(root, services=["api"])
    result = run_module("nova_config", args)
    assert result["failed"]
    no_traceback(result)
    assert "50-accel-openstack.conf" in result["msg"]


@pytest.mark.parametrize("name", ["²", "٣", "1\n", "-1", "0x1"])
def test_non_ascii_and_odd_numbers_in_sysfs_names(tmp_path, name):
    root = build_root("sriov-nic", str(tmp_path / "root"))
    os.makedirs(f"{root}/sys/kernel/iommu_groups/{name}/devices", exist_ok=True)
    os.makedirs(f"{root}/sys/devices/system/node/node{name}", exist_ok=True)
    pf = _find(root, "sriov_totalvfs")[0].rsplit("/", 1)[0]
    os.symlink("../0000:00:00.0", f"{pf}/virtfn{name}")
    result = run_module("pci_facts", {"root": root})
    assert not result.get("failed"), result


def test_a_huge_cpu_list_is_refused_not_expanded(tmp_path):
    root = build_root("sriov-nic", str(tmp_path / "root"))
    cpulists = _find(root, "cpulist", "/sys/devices/system/node")
    assert cpulists
    with open(cpulists[0], "w") as handle:
        handle.write("0-4294967295\n")
    result = run_module("pci_facts", {"root": root})
    assert not result.get("failed"), result
    assert "cpulist: cannot parse '0-4294967295'" in warnings_of(result), warnings_of(result)


def test_a_directory_with_too_many_entries_is_cut_with_a_warning(tmp_path):
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    for index in range(50):
        (root / "d" / f"e{index}").write_text("")
    host = HostRoot(str(root))
    assert len(host.listdir("/d", limit=20)) == 20
    assert any("more than 20 entries" in w for w in host.warnings)
