"""What the GPU-sharing stage leaves on each Debian root, read from inside it through the chroot, after a
simulated reboot (fresh fake sysfs and GPU state) and the restore unit's own command."""

import json
import os

import testinfra.utils.ansible_runner

testinfra_hosts = testinfra.utils.ansible_runner.AnsibleRunner(os.environ["MOLECULE_INVENTORY_FILE"]).get_hosts("all")

UNIT = "/etc/systemd/system/accel-openstack-gpu-restore.service"
L40S = ("0000:01:00.0", "0000:81:00.0")


def _name(host):
    return host.backend.get_hostname()


def _unit_lines(host):
    return dict(
        line.split("=", 1) for line in host.file(UNIT).content_string.splitlines() if "=" in line and line[0] != "#"
    )


def test_the_restore_unit_is_installed_enabled_and_ordered(host):
    unit = _unit_lines(host)
    assert unit["Type"] == "oneshot" and unit["WantedBy"] == "multi-user.target"
    after, before = unit["After"].split(), unit["Before"].split()
    assert {"nvidia-vgpud.service", "nvidia-vgpu-mgr.service", "nvidia-persistenced.service"} <= set(after)
    assert {"libvirtd.service", "nova-compute.service", "kolla-nova_libvirt-container.service"} <= set(before)
    assert not set(after) & set(before)
    link = host.file("/etc/systemd/system/multi-user.target.wants/accel-openstack-gpu-restore.service")
    assert link.is_symlink and link.linked_to == UNIT
    script = unit["ExecStart"].split()[1]
    assert host.file(script).mode == 0o644  # run by the unit's interpreter, not executed directly
    assert host.file(os.path.join(os.path.dirname(script), "gpu_restore.py")).mode == 0o644
    assert host.run(f"/usr/bin/python3 {script} --help").rc == 0


def test_state_files_say_what_was_applied(host):
    if _name(host) == "l40s":
        for pf in L40S:
            sriov = json.loads(host.file(f"/etc/accel-openstack/sriov/{pf}.json").content_string)
            assert sriov == {"address": pf, "numvfs": 6}
            vgpu = json.loads(host.file(f"/etc/accel-openstack/vgpu/{pf}.json").content_string)
            assert vgpu["type_id"] == 1160 and vgpu["type_name"] == "NVIDIA L40S-12Q" and len(vgpu["vfs"]) == 3
    else:
        mig = json.loads(host.file("/etc/accel-openstack/mig/0000:19:00.0.json").content_string)
        assert [(i["profile"], i["start"]) for i in mig["instances"]] == [
            ("2g.35gb", 0),
            ("2g.35gb", 2),
            ("3g.71gb", 4),
        ]
        assert not host.file("/etc/accel-openstack/mig/0000:3b:00.0.json").exists  # the busy H100 is not in the policy


def test_the_reboot_reset_the_gpus_and_the_unit_brought_them_back(host):
    before = host.file("/root/before-restore.txt").content_string
    output = host.file("/root/restore-output.txt").content_string
    if _name(host) == "l40s":
        assert before.split()[:2] == ["4", "4"]  # the firmware's VF count, as after a real boot
        for pf in L40S:
            assert host.file(f"/sys/bus/pci/devices/{pf}/sriov_numvfs").content_string.strip() == "6"
            links = host.check_output(f"ls /sys/bus/pci/devices/{pf}").split()
            assert len([n for n in links if n.startswith("virtfn")]) == 6
            types = [
                host.file(f"/sys/bus/pci/devices/{pf}/virtfn{i}/nvidia/current_vgpu_type").content_string.strip()
                for i in range(6)
            ]
            assert types == ["1160", "1160", "1160", "0", "0", "0"]
            assert f"{pf}: 6 VFs" in output
    else:
        assert "No GPU instances found" in before
        listed = host.check_output("nvidia-smi mig -lgi -i 00000000:19:00.0")
        assert listed.count("MIG 2g.35gb") == 2 and listed.count("MIG 3g.71gb") == 1
        assert "4:4" in listed and "0:2" in listed and "2:2" in listed
        assert "0000:19:00.0: created" in output


def test_the_gpu_in_use_was_left_alone(host):
    if _name(host) != "hopper":
        return
    assert "Disabled" in host.check_output("nvidia-smi -q -x")
