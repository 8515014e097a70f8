"""The host stages on managed hosts with Python 3.9 (EL 9) and 3.10 (Ubuntu 22.04), as docs/install.md states.

Each interpreter gets a venv with netaddr only (linked from the test venv, so no download): the modules
travel to it as Ansible sends them (AnsiballZ) and run there, on fake roots built from the hardware
profiles. A missing netaddr is an error where a safety check needs it, never a skipped check.
"""

import os
import subprocess
import sys

import netaddr
import pytest
import yaml

from tests.support.ansible_runner import REPO, run_playbook, task_results
from tests.support.fake_kernel import FakeKernel
from tests.support.fake_sysfs import build_root

MANAGED_HOST_PYTHONS = ("3.9", "3.10")
POLICY = [
    # a regex address mapping: the device_spec path that once used zip(strict=True)
    {"name": "h100", "vendor_id": "10de", "product_id": "2330", "mode": "passthrough",
     "addresses": [{"bus": "(18|2a)", "function": "0"}], "resource_class": "CUSTOM_NVIDIA_H100"},
    {"name": "cx6-vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough", "device_type": "type-VF"},
]  # fmt: skip


def managed_python(version: str, dest: str, with_netaddr: bool) -> str:
    proc = subprocess.run(
        [os.path.join(REPO, "tests", "find_python.sh"), version], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        pytest.skip(proc.stderr.strip())
    subprocess.run([proc.stdout.strip(), "-m", "venv", "--without-pip", dest], check=True)
    if with_netaddr:
        (site,) = [p for p in os.listdir(os.path.join(dest, "lib")) if p.startswith("python")]
        libs = os.path.join(dest, "libs")
        os.makedirs(libs)
        os.symlink(os.path.dirname(netaddr.__file__), os.path.join(libs, "netaddr"))
        with open(os.path.join(dest, "lib", site, "site-packages", "accel-test-libs.pth"), "w") as handle:
            handle.write(libs + "\n")
    return os.path.join(dest, "bin", "python")


def inventory(path, python: str, hosts: dict, **common) -> str:
    data = {
        "all": {
            "children": {"compute": {"hosts": hosts}},
            "vars": {"ansible_connection": "local", "ansible_python_interpreter": python, **common},
        }
    }
    with open(path, "w") as handle:
        yaml.safe_dump(data, handle)
    return str(path)


def test_the_host_stages_run_on_each_supported_managed_host_python(tmp_path):
    """One run, one host per interpreter (each with an H100 host's root), plus a NIC host on the oldest."""
    hosts = {}
    for version in MANAGED_HOST_PYTHONS:
        python = managed_python(version, str(tmp_path / f"venv{version}"), with_netaddr=True)
        tag = version.replace(".", "")
        hosts[f"gpu-py{tag}"] = {
            "accel_root": build_root("hgx-h100", str(tmp_path / f"gpu{tag}")),
            "ansible_python_interpreter": python,
        }
    hosts["net-py39"] = {
        "accel_root": build_root("sriov-nic", str(tmp_path / "net")),
        "ansible_python_interpreter": hosts["gpu-py39"]["ansible_python_interpreter"],
    }
    inv = inventory(
        tmp_path / "hosts.yml",
        sys.executable,
        hosts,
        accel_device_policy=POLICY,
        accel_nova_layout="nova_conf_d",
        accel_nova_report_in_placement=True,
    )
    playbook = tmp_path / "host_stages.yml"
    stages = ("discover", "prepare_hosts", "nova_config")
    playbook.write_text(
        yaml.safe_dump([{"ansible.builtin.import_playbook": f"{REPO}/playbooks/{s}.yml"} for s in stages])
    )
    report = run_playbook(str(playbook), inv)
    assert report["rc"] == 0, report["stderr"][-3000:] + report["stdout"][-3000:]
    assert set(task_results(report, "Discover PCI accelerators, IOMMU groups and NUMA layout")) == set(hosts)
    for name, host in hosts.items():
        assert report["stats"][name]["failures"] == 0
        conf = os.path.join(host["accel_root"], "etc/nova/nova.conf.d/50-accel-openstack.conf")
        with open(conf) as handle:
            text = handle.read()
        assert "report_in_placement = true" in text, text
        if name.startswith("gpu-"):
            assert '"bus": "(18|2a)"' in text, text


def _sriov_play(tmp_path, python: str, root: str):
    inv = inventory(tmp_path / "sriov.yml", python, {"net-01": {"accel_root": root}})
    playbook = tmp_path / "sriov_play.yml"
    playbook.write_text(
        yaml.safe_dump(
            [
                {
                    "name": "Change a VF count",
                    "hosts": "compute",
                    "gather_facts": False,
                    "tasks": [
                        {
                            "name": "Set VFs",
                            "accel.openstack.sriov_vfs": {
                                "root": "{{ accel_root }}",
                                "devices": ["0000:3b:00.0"],
                                "numvfs": 4,
                                "timeout": 20,
                            },
                        }
                    ],
                }
            ]
        )
    )
    return task_results(run_playbook(str(playbook), inv), "Set VFs")["net-01"]


def test_sriov_vfs_refuses_without_netaddr_and_changes_with_it(tmp_path):
    root = build_root("sriov-nic", str(tmp_path / "net-01"))
    numvfs = os.path.join(root, "sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs")
    with open(numvfs) as handle:
        assert handle.read().strip() == "8"
    with FakeKernel(root, "sriov-nic", delay=0.05):
        bare = managed_python("3.9", str(tmp_path / "bare"), with_netaddr=False)
        refused = _sriov_play(tmp_path, bare, root)
        assert refused.get("failed"), refused
        assert "netaddr" in refused["msg"] and "install it" in refused["msg"]
        with open(numvfs) as handle:
            assert handle.read().strip() == "8", "nothing changes when the check cannot run"
        python = managed_python("3.9", str(tmp_path / "venv"), with_netaddr=True)
        changed = _sriov_play(tmp_path, python, root)
        assert changed.get("changed") and not changed.get("failed"), changed
    with open(numvfs) as handle:
        assert handle.read().strip() == "4"
