"""pci_facts through ansible itself, on fixture roots: facts, check mode, warnings, bad input."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.support.fake_sysfs import build_root

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)


def run_module(args: str, *extra: str) -> dict:
    """Run accel.openstack.pci_facts on localhost with the json callback; return the task result."""
    env = dict(os.environ)
    env.update(
        ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build", "collections"),
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json",
        ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
        ANSIBLE_LOCALHOST_WARNING="false",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
    )
    cmd = [
        os.path.join(BIN, "ansible"),
        "localhost",
        "-i",
        "localhost,",
        "-c",
        "local",
        "-e",
        f"ansible_python_interpreter={sys.executable}",
        "-m",
        "accel.openstack.pci_facts",
        "-a",
        args,
        *extra,
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    out = json.loads(proc.stdout)
    return out["plays"][0]["tasks"][0]["hosts"]["localhost"]


@pytest.fixture(scope="module")
def mig_root(tmp_path_factory):
    return build_root("mig-a100", str(tmp_path_factory.mktemp("mig") / "root"))


def test_facts_are_set_and_nothing_changes(mig_root):
    result = run_module(json.dumps({"root": mig_root}))
    assert result["changed"] is False
    facts = result["ansible_facts"]
    assert [d["address"] for d in facts["accel_pci_devices"]] == ["0000:3b:00.0", "0000:d8:00.0"]
    assert facts["accel_iommu_groups"] == {"31": ["0000:3b:00.0"], "91": ["0000:d8:00.0"]}
    assert facts["accel_cpu_vendor"] == "intel"
    assert facts["accel_iommu_enabled"] is True
    assert "intel_iommu=on" in facts["accel_kernel_cmdline"]
    gpu = facts["accel_pci_devices"][0]
    assert gpu["mig"]["mode_current"] == "enabled"
    assert len(gpu["mig"]["gpu_instances"]) == 4


def test_check_mode_returns_the_same_facts(mig_root):
    normal = run_module(json.dumps({"root": mig_root}))
    checked = run_module(json.dumps({"root": mig_root}), "--check")
    assert checked["changed"] is False
    assert checked["ansible_facts"] == normal["ansible_facts"]


def test_all_classes_report_bridges_too(mig_root):
    facts = run_module(json.dumps({"root": mig_root, "device_classes": ["all"]}))["ansible_facts"]
    assert "0000:3a:00.0" in {d["address"] for d in facts["accel_pci_devices"]}


def test_unreadable_parts_become_warnings_not_tracebacks(tmp_path):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    gpu = os.path.realpath(os.path.join(root, "sys/bus/pci/devices/0000:18:00.0"))
    shutil.rmtree(gpu)
    result = run_module(json.dumps({"root": root}))
    assert result.get("failed") is not True
    assert any("0000:18:00.0" in w for w in result["warnings"])
    assert "0000:03:00.0" in {d["address"] for d in result["ansible_facts"]["accel_pci_devices"]}


def test_missing_root_fails_clearly(tmp_path):
    result = run_module(json.dumps({"root": str(tmp_path / "absent")}))
    assert result["failed"] is True
    assert "does not exist" in result["msg"]
    assert "Traceback" not in json.dumps(result)


def test_bad_device_class_fails_naming_the_value(mig_root):
    result = run_module(json.dumps({"root": mig_root, "device_classes": ["zz"]}))
    assert result["failed"] is True
    assert "'zz'" in result["msg"] and "device_classes" in result["msg"]
