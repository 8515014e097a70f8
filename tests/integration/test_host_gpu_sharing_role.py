"""The host_gpu_sharing role through ansible-playbook on fake roots: check -> apply -> check -> apply,
then the restore unit's command on a fresh copy of the fake sysfs (a simulated reboot)."""

import json
import os
import shutil
import subprocess
import sys

import yaml

from tests.support.ansible_runner import run_playbook, total_changed
from tests.support.fake_kernel import FakeKernel
from tests.support.fake_sysfs import build_root

POLICY = [
    {
        "name": "l40s-12q",
        "vendor_id": "10de",
        "product_id": "26b9",
        "mode": "vgpu",
        "mdev_type": "1160",
        "sriov_numvfs": 6,
        "vfs": 3,
    },
    {
        "name": "a100-mig",
        "vendor_id": "10de",
        "product_id": "20f1",
        "mode": "mig",
        "mig_layout": [{"profile": "3g.20gb", "count": 2}],
    },
]


def _types(root, pf):
    base = os.path.join(root, "sys/bus/pci/devices", pf)
    vfs = sorted((n for n in os.listdir(base) if n.startswith("virtfn")), key=lambda n: int(n[6:]))
    out = []
    for name in vfs:
        with open(os.path.join(base, name, "nvidia/current_vgpu_type")) as handle:
            out.append(int(handle.read().strip()))
    return out


def test_role_converges_is_idempotent_and_survives_a_reboot(tmp_path):
    l40s = build_root("vgpu-l40s", str(tmp_path / "l40s"))
    a100 = build_root("mig-a100", str(tmp_path / "a100"))
    inventory = tmp_path / "hosts.yml"
    common = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "hosts": {"l40s": dict(common, accel_root=l40s), "a100": dict(common, accel_root=a100)},
                    "vars": {"accel_device_policy": POLICY},
                }
            }
        )
    )
    playbook = tmp_path / "play.yml"
    playbook.write_text("- hosts: all\n  gather_facts: false\n  roles:\n    - role: accel.openstack.host_gpu_sharing\n")
    with FakeKernel(l40s, "vgpu-l40s", delay=0.2):
        checked = run_playbook(str(playbook), inventory=str(inventory), check=True)
        assert checked["rc"] == 0, json.dumps(checked["plays"])[-3000:] + checked["stderr"]
        assert _types(l40s, "0000:01:00.0") == [0, 0, 0, 0]
        assert not os.path.exists(os.path.join(l40s, "etc/accel-openstack"))
        first = run_playbook(str(playbook), inventory=str(inventory))
        assert first["rc"] == 0, json.dumps(first["plays"])[-3000:] + first["stderr"]
        assert first["stats"]["l40s"]["changed"] > 0 and first["stats"]["a100"]["changed"] > 0
        again_check = run_playbook(str(playbook), inventory=str(inventory), check=True)
        changed_tasks = [
            (t["task"]["name"], h)
            for p in again_check["plays"]
            for t in p["tasks"]
            for h, r in t["hosts"].items()
            if r.get("changed")
        ]
        assert total_changed(again_check) == 0, changed_tasks
        again = run_playbook(str(playbook), inventory=str(inventory))
        assert again["rc"] == 0 and total_changed(again) == 0
    for pf in ("0000:01:00.0", "0000:81:00.0"):
        assert _types(l40s, pf) == [1160, 1160, 1160, 0, 0, 0]
    unit = (tmp_path / "l40s/etc/systemd/system/accel-openstack-gpu-restore.service").read_text()
    assert "Before=accel-openstack-ready.target" in unit
    assert "After=systemd-modules-load.service nvidia-persistenced.service nvidia-vgpud.service" in unit
    for name in ("accel-openstack-gpu-restore.service", "accel-openstack-ready.target"):
        wants = tmp_path / f"l40s/etc/systemd/system/multi-user.target.wants/{name}"
        assert os.readlink(wants) == f"/etc/systemd/system/{name}"
    for service in ("libvirtd.service", "nova-compute.service", "kolla-nova_compute-container.service"):
        drop_in = (tmp_path / f"l40s/etc/systemd/system/{service}.d/accel-openstack-ready.conf").read_text()
        assert "Requires=accel-openstack-ready.target\nAfter=accel-openstack-ready.target\n" in drop_in
    with open(os.path.join(a100, "etc/accel-openstack/mig/0000:d8:00.0.json")) as handle:
        assert [i["start"] for i in json.load(handle)["instances"]] == [0, 4]

    # the reboot: a fresh fake sysfs (VFs back to the firmware's 4, no vGPU types) with the same /etc
    fresh = build_root("vgpu-l40s", str(tmp_path / "l40s-booted"))
    shutil.copytree(os.path.join(l40s, "etc/accel-openstack"), os.path.join(fresh, "etc/accel-openstack"))
    script = os.path.join(l40s, "usr/local/libexec/accel-openstack/gpu-restore")
    with FakeKernel(fresh, "vgpu-l40s", delay=0.2):
        proc = subprocess.run(
            [sys.executable, script, "--root", fresh, "--timeout", "10"], capture_output=True, text=True, check=False
        )
    assert proc.returncode == 0, proc.stderr
    with open(os.path.join(fresh, "var/lib/accel-openstack/boot-state.json")) as handle:
        assert json.load(handle)["status"] == "ok"
    for pf in ("0000:01:00.0", "0000:81:00.0"):
        assert _types(fresh, pf) == [1160, 1160, 1160, 0, 0, 0]
