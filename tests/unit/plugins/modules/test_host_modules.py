"""The four host modules on the HostModule base, run through their real main(): results, diff, failures."""

import os

from ansible.module_utils import _internal as ansible_internal

from ansible_collections.accel.openstack.plugins.module_utils._host.vfio import MODPROBE_FILE
from tests.support.ansible_runner import run_module
from tests.support.fake_sysfs import build_root


def _grub_root(tmp_path):
    root = tmp_path / "grub"
    (root / "etc/default/grub.d").mkdir(parents=True)
    (root / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX_DEFAULT="quiet"\n')
    (root / "proc").mkdir()
    (root / "proc/cmdline").write_text("ro quiet\n")
    return root


def test_kernel_cmdline_check_mode_diff_and_idempotence(tmp_path):
    root = _grub_root(tmp_path)
    args = {"root": str(root), "present": ["iommu=pt"]}
    checked = run_module("kernel_cmdline", args, check=True)
    assert checked["changed"] and not (root / "etc/default/grub.d/99-accel-openstack.cfg").exists()
    applied = run_module("kernel_cmdline", args)  # the diff comes back whether or not --diff is on
    assert applied["diff"] == checked["diff"]
    assert [d["after_header"] for d in applied["diff"]] == ["/etc/default/grub.d/99-accel-openstack.cfg"]
    assert applied["diff"][0]["after"] == (root / "etc/default/grub.d/99-accel-openstack.cfg").read_text()
    again = run_module("kernel_cmdline", args, diff=True)
    assert not again["changed"] and again["files"] == []
    assert again["diff"] == {"before": "iommu=pt quiet\n", "after": "iommu=pt quiet\n"}


def test_kernel_cmdline_bad_argument_fails_naming_it_and_writes_nothing(tmp_path):
    root = _grub_root(tmp_path)
    result = run_module("kernel_cmdline", {"root": str(root), "present": ["iommu=pt"], "absent": ["iommu=pt"]})
    assert result["failed"] and "iommu=pt" in result["msg"]
    assert os.listdir(root / "etc/default/grub.d") == []


def test_vfio_pci_result_diff_and_warnings(tmp_path):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    args = {"root": root, "devices": ["18:00.0"], "initramfs": False}
    checked = run_module("vfio_pci", args, check=True)
    assert checked["changed"] and not os.path.exists(root + MODPROBE_FILE)
    assert MODPROBE_FILE in [d["after_header"] for d in checked["diff"]]
    applied = run_module("vfio_pci", args)
    assert applied["changed"] and applied["files"] == [d["after_header"] for d in applied["diff"]]
    assert "warnings_list" not in applied
    again = run_module("vfio_pci", args, diff=True)
    assert not again["changed"] and again["diff"] == []


def test_vfio_pci_policy_errors_are_the_result_keys_of_one_failure(tmp_path):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    result = run_module("vfio_pci", {"root": root, "policy": [{"name": "x"}]})
    assert result["failed"] and result["msg"].startswith("policy: ")
    assert result["errors"] and all(e in result["msg"] for e in result["errors"])


def test_vfio_pci_refuses_a_directory_at_its_file_naming_the_path(tmp_path):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    os.makedirs(root + MODPROBE_FILE)
    result = run_module("vfio_pci", {"root": root, "devices": ["18:00.0"], "initramfs": False})
    assert result["failed"] and MODPROBE_FILE in result["msg"] and "move it away" in result["msg"]
    assert os.listdir(root + MODPROBE_FILE) == []


def test_pci_facts_and_nova_config_missing_root_fail_clearly(tmp_path):
    missing = str(tmp_path / "absent")
    facts = run_module("pci_facts", {"root": missing})
    assert facts["failed"] and "does not exist" in facts["msg"]
    nova = run_module("nova_config", {"root": missing, "layout": "kolla", "hosts": [], "policy": []})
    assert nova["failed"] and "does not exist" in nova["msg"]


def test_pci_facts_warns_about_a_fifo_and_returns(tmp_path, monkeypatch):
    # Controller code imported by other tests in this process would send warnings to the display.
    monkeypatch.setattr(ansible_internal, "is_controller", False)
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    device = os.path.realpath(os.path.join(root, "sys/bus/pci/devices/0000:18:00.0"))
    os.unlink(os.path.join(device, "class"))
    os.mkfifo(os.path.join(device, "class"))
    result = run_module("pci_facts", {"root": root, "device_classes": ["all"]})
    assert not result.get("failed") and result["ansible_facts"]["accel_pci_devices"], result
    assert "0000:18:00.0/class: cannot read (it is a FIFO" in repr(result.get("warnings")), result  # 2.19 nests it
