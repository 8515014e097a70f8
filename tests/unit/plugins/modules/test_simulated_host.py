"""accel.openstack.simulated_host through its real main(): check mode, diff, idempotence, refusals."""

import os
import shutil

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._simulate.simulated_root import MARKER, read_tree
from tests.support.ansible_runner import run_module
from tests.support.fake_sysfs import PCI_IDS, PROFILE_DIR, build_root


def _profile(name):
    with open(os.path.join(PROFILE_DIR, name + ".yml")) as handle:
        return yaml.safe_load(handle)


def _args(dest, name="mig-a100", profile=None):
    with open(PCI_IDS) as handle:
        pci_ids = handle.read()
    return {"dest": str(dest), "name": name, "profile": profile or _profile(name), "pci_ids": pci_ids}


@pytest.mark.parametrize("name", ["mig-a100", "vgpu-a16", "sriov-nic"])
def test_check_mode_then_apply_then_nothing_to_do_and_the_root_is_the_builders(tmp_path, name):
    dest = tmp_path / "root"
    checked = run_module("simulated_host", _args(dest, name), check=True)
    assert checked["changed"] and checked["changed_paths"] > 100 and not dest.exists()
    applied = run_module("simulated_host", _args(dest, name))
    assert applied["changed"] and applied["changed_paths"] == checked["changed_paths"]
    assert applied["diff"] == checked["diff"]
    assert applied["diff"]["before"].splitlines()[0].endswith(": absent")
    # The same files, links and directories as the builder the tests use, plus the module's marker.
    written = read_tree(str(dest))
    assert written.pop(MARKER)[0] == "file"
    assert written == read_tree(build_root(name, str(tmp_path / "built")))
    assert applied["files"] == sum(1 for e in written.values() if e[0] == "file") + 1
    again = run_module("simulated_host", _args(dest, name), diff=True)
    assert not again["changed"] and again["changed_paths"] == 0 and "diff" not in again
    assert not run_module("simulated_host", _args(dest, name), check=True)["changed"]


def test_a_root_the_pipeline_changed_is_rebuilt_as_the_profile_says(tmp_path):
    dest = tmp_path / "root"
    run_module("simulated_host", _args(dest))
    (dest / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX_DEFAULT="intel_iommu=on"\n')
    (dest / "etc/modprobe.d").mkdir()
    (dest / "etc/modprobe.d/vfio.conf").write_text("options vfio-pci ids=10de:20b5\n")
    checked = run_module("simulated_host", _args(dest), check=True)
    assert checked["changed"] and checked["changed_paths"] == 3  # grub changed, a directory and a file added
    before = checked["diff"]["before"].splitlines()
    assert before[0].startswith("/etc/default/grub: file, 44 bytes, sha256 ")
    assert before[1:] == [
        "/etc/modprobe.d: directory",
        "/etc/modprobe.d/vfio.conf: file, 31 bytes, sha256 " + before[2][-12:],
    ]
    assert checked["diff"]["after"].splitlines()[1:] == ["/etc/modprobe.d: absent", "/etc/modprobe.d/vfio.conf: absent"]
    assert (dest / "etc/modprobe.d/vfio.conf").exists()  # check mode wrote nothing
    assert run_module("simulated_host", _args(dest))["changed"]
    assert not (dest / "etc/modprobe.d").exists()
    run_module("simulated_host", _args(tmp_path / "fresh"))
    assert read_tree(str(dest)) == read_tree(str(tmp_path / "fresh"))
    assert not run_module("simulated_host", _args(dest))["changed"]


def test_a_profile_change_is_one_diff_line_per_path(tmp_path):
    dest = tmp_path / "root"
    run_module("simulated_host", _args(dest))
    profile = _profile("mig-a100")
    profile["kernel_cmdline"] = profile["kernel_cmdline"] + " iommu=pt"
    result = run_module("simulated_host", _args(dest, profile=profile))
    changed = [line.split(":")[0] for line in result["diff"]["after"].splitlines()]
    assert changed == ["/etc/default/grub", "/proc/cmdline"]
    assert (dest / "proc/cmdline").read_text().rstrip().endswith("iommu=pt")


@pytest.mark.parametrize(
    "setup, expected",
    [
        (lambda d: (d.mkdir(), (d / "notes.txt").write_text("mine\n")), "holds other files and was not written by"),
        (lambda d: d.write_text("a file\n"), "exists and is not a directory"),
        (lambda d: (d.parent / "elsewhere").mkdir() or d.symlink_to(d.parent / "elsewhere"), "is a symbolic link"),
        (lambda d: (d.mkdir(), (d / MARKER.lstrip("/")).write_text("not json")), "holds other files"),
    ],
)
def test_a_dest_that_is_not_new_empty_or_simulated_is_refused_and_left_alone(tmp_path, setup, expected):
    dest = tmp_path / "dest"
    setup(dest)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    result = run_module("simulated_host", _args(dest))
    assert result["failed"] and expected in result["msg"] and str(dest) in result["msg"]
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_a_missing_parent_or_a_relative_dest_is_refused(tmp_path):
    result = run_module("simulated_host", _args(tmp_path / "absent" / "root"))
    assert result["failed"] and f"create {tmp_path / 'absent'} first" in result["msg"]
    assert not (tmp_path / "absent").exists()
    result = run_module("simulated_host", _args("roots/host"))
    assert result["failed"] and "dest roots/host is not an absolute path" in result["msg"]


def test_profile_paths_stay_inside_dest(tmp_path):
    dest = tmp_path / "outer" / "root"
    dest.parent.mkdir()
    profile = dict(_profile("amd-epyc"), files={"/../../escaped.txt": "x\n", "etc/../../../../also.txt": "y\n"})
    result = run_module("simulated_host", _args(dest, "amd-epyc", profile))
    assert result["changed"]
    assert (dest / "escaped.txt").read_text() == "x\n" and (dest / "also.txt").read_text() == "y\n"
    assert sorted(p.name for p in tmp_path.rglob("*.txt")) == ["also.txt", "escaped.txt"]
    assert all(str(p).startswith(str(dest)) for p in tmp_path.rglob("*.txt"))


def test_a_profile_path_through_a_link_of_the_root_is_refused(tmp_path):
    dest = tmp_path / "root"
    profile = _profile("amd-epyc")
    address = profile["devices"][0]["address"].lower()
    profile["files"] = {f"/sys/bus/pci/devices/{address}/evil": "x\n"}
    result = run_module("simulated_host", _args(dest, "amd-epyc", profile))
    assert result["failed"] and not dest.exists()
    assert f"/sys/bus/pci/devices/{address}/evil: its parent /sys/bus/pci/devices/{address} is a link" in result["msg"]


def test_a_profile_that_is_not_a_hardware_profile_names_what_is_missing(tmp_path):
    dest = tmp_path / "root"
    profile = _profile("amd-epyc")
    del profile["devices"][0]["vendor_id"]
    result = run_module("simulated_host", _args(dest, "amd-epyc", profile))
    assert result["failed"] and not dest.exists()
    assert result["msg"].startswith(
        "profile amd-epyc is not a hardware profile the simulation can build (vendor_id is missing)"
    )


def test_a_link_planted_in_a_simulated_root_is_replaced_never_followed(tmp_path):
    dest = tmp_path / "root"
    run_module("simulated_host", _args(dest, "amd-epyc"))
    outside = tmp_path / "outside"
    (outside / "class").mkdir(parents=True)
    (outside / "class" / "keep.txt").write_text("not the module's\n")
    shutil.rmtree(dest / "sys")
    (dest / "sys").symlink_to(outside)
    checked = run_module("simulated_host", _args(dest, "amd-epyc"), check=True)
    assert checked["changed"] and "/sys: link to " + str(outside) in checked["diff"]["before"]
    assert run_module("simulated_host", _args(dest, "amd-epyc"))["changed"]
    assert (outside / "class" / "keep.txt").read_text() == "not the module's\n"
    assert sorted(p.name for p in outside.rglob("*")) == ["class", "keep.txt"]
    assert (dest / "sys").is_dir() and not (dest / "sys").is_symlink()
    assert (dest / "sys" / "bus" / "pci" / "devices").is_dir()
