"""What the GPU-sharing stage leaves on each Debian root, and what four boots under the systemd double did
(reboot.yml): read from inside each root through the chroot."""

import hashlib
import json
import os

import testinfra.utils.ansible_runner

testinfra_hosts = testinfra.utils.ansible_runner.AnsibleRunner(os.environ["MOLECULE_INVENTORY_FILE"]).get_hosts("all")

REPO = os.environ.get("MOLECULE_PROJECT_DIRECTORY", os.path.join(os.path.dirname(__file__), "../../.."))
SYSTEMD = "/etc/systemd/system"
UNIT = "accel-openstack-gpu-restore.service"
TARGET = "accel-openstack-ready.target"
L40S = ("0000:01:00.0", "0000:81:00.0")
A100, A100_VF = "0000:41:00.0", "0000:41:00.4"
INSTANCE_MDEV = "5a1d8d4e-7c2b-4f0e-9f5d-0123456789ab"
SERVICES = {
    "l40s": ("libvirtd.service", "nova-compute.service"),
    "a100": ("kolla-nova_libvirt-container.service", "kolla-nova_compute-container.service"),
}


# One read per root, from inside it (files/collect.py, installed at create): every file, link and command
# output the tests below look at.
COLLECT = "/usr/bin/python3 /usr/local/bin/collect-state"
_SEEN = {}


def _root(host):
    name = host.backend.get_hostname()
    if name not in _SEEN:
        _SEEN[name] = json.loads(host.check_output(COLLECT))
    return _SEEN[name]


def _name(host):
    return host.backend.get_hostname()


def _json(host, path):
    return json.loads(_root(host)["files"][path])


def _boot(host, n):
    """{unit: entry} and the start order of boot ``n``."""
    journal = _json(host, f"/var/log/fake-systemd/boot-{n}.json")["units"]
    return {u["unit"]: u for u in journal}, [u["unit"] for u in journal if u["result"] == "active"]


def _unit_lines(host, path):
    return dict(
        line.split("=", 1) for line in _root(host)["files"][path].splitlines() if "=" in line and line[0] != "#"
    )


def test_the_unit_target_drop_ins_and_links_are_installed(host):
    unit = _unit_lines(host, f"{SYSTEMD}/{UNIT}")
    assert unit["Type"] == "oneshot" and unit["Before"] == TARGET
    assert {"nvidia-vgpud.service", "nvidia-vgpu-mgr.service"} <= set(unit["After"].split())
    assert _unit_lines(host, f"{SYSTEMD}/{TARGET}")["Requires"] == UNIT
    for service in SERVICES["l40s"] + SERVICES["a100"]:
        drop_in = _unit_lines(host, f"{SYSTEMD}/{service}.d/accel-openstack-ready.conf")
        assert drop_in == {"Requires": TARGET, "After": TARGET}
    for name in (UNIT, TARGET):
        assert _root(host)["links"][f"{SYSTEMD}/multi-user.target.wants/{name}"] == f"{SYSTEMD}/{name}"
    with open(os.path.join(REPO, "plugins/module_utils/_host/gpu_restore.py"), "rb") as handle:
        assert _root(host)["sha256"] == hashlib.sha256(handle.read()).hexdigest()
    assert _root(host)["help_rc"] == 0


def test_state_files_say_what_was_applied(host):
    if _name(host) == "l40s":
        for pf in L40S:
            assert _json(host, f"/etc/accel-openstack/sriov/{pf}.json") == {"address": pf, "numvfs": 6}
            vgpu = _json(host, f"/etc/accel-openstack/vgpu/{pf}.json")
            assert vgpu["type_id"] == 1160 and len(vgpu["vfs"]) == 3
    else:
        mig = _json(host, f"/etc/accel-openstack/mig/{A100}.json")
        assert [(i["profile"], i["start"]) for i in mig["instances"]] == [("3g.20gb", 0), ("3g.20gb", 4)]
        assert _json(host, f"/etc/accel-openstack/sriov/{A100}.json")["numvfs"] == 4


def test_boot_2_brought_everything_back_in_order_and_then_started_the_services(host):
    units, order = _boot(host, 2)
    services = SERVICES[_name(host)]
    assert order.index(UNIT) < order.index(TARGET) < order.index(services[0]) < order.index(services[1])
    assert _json(host, "/var/log/fake-systemd/state-after-boot-2.json")["status"] == "ok"
    lines = units[UNIT]["output"].splitlines()
    if _name(host) == "a100":
        assert lines == [
            f"{A100}: MIG mode turned back on (GPU reset)",
            f"{A100}: 4 VFs",
            f"{A100}: created 9:0,9:4",
            f"mdev {INSTANCE_MDEV}: recreated (nvidia-476 on {A100_VF})",
        ]
    else:
        assert [line for line in lines if "VFs" in line] == [f"{L40S[0]}: 6 VFs", f"{L40S[1]}: 6 VFs"]


def test_boot_3_failed_kept_the_services_stopped_and_said_why(host):
    units, order = _boot(host, 3)
    if _name(host) == "l40s":  # no MIG GPU: the GPU reset is never needed
        assert units[TARGET]["result"] == "active"
        return
    assert units[UNIT]["result"] == "failed"
    assert "cannot be reset now" in units[UNIT]["output"] and "reboot the host" in units[UNIT]["output"]
    assert units[TARGET]["result"] == "dependency"
    for service in SERVICES["a100"]:
        assert units[service]["result"] == "dependency" and TARGET in units[service]["reason"]
    state = _json(host, "/var/log/fake-systemd/state-after-boot-3.json")
    assert state["status"] == "failed" and "reboot the host" in state["message"]


def test_the_services_started_only_on_restored_hosts(host):
    started = [json.loads(line) for line in _root(host)["files"]["/var/log/stand-in.jsonl"].splitlines()]
    services = SERVICES[_name(host)]
    boots_ok = 4 if _name(host) == "l40s" else 3  # boot 3 of the A100 kept them stopped
    assert [s["unit"] for s in started] == list(services) * boots_ok
    assert all(s["boot_state"] == "ok" for s in started)
    if _name(host) == "a100":  # when nova-compute started (boots 2 and 4), the instance's mdev was there
        assert [s["mdevs"] for s in started if s["unit"] == services[1]] == [[], [INSTANCE_MDEV], [INSTANCE_MDEV]]


def test_after_boot_4_the_host_is_as_recorded(host):
    assert _json(host, "/var/log/fake-systemd/state-after-boot-4.json")["status"] == "ok"
    files = _root(host)["files"]
    if _name(host) == "l40s":
        for pf in L40S:
            assert files[f"/sys/bus/pci/devices/{pf}/sriov_numvfs"].strip() == "6"
            vfs = [vf for _index, vf in sorted(_root(host)["virtfn"][pf])]
            types = [files[f"/sys/bus/pci/devices/{vf}/nvidia/current_vgpu_type"].strip() for vf in vfs]
            assert types == ["1160", "1160", "1160", "0", "0", "0"]
        return
    assert "<current_mig>Enabled</current_mig>" in _root(host)["smi_q"]
    listed = _root(host)["smi_lgi"]
    assert listed.count("MIG 3g.20gb") == 2 and "0:4" in listed and "4:4" in listed
    assert files[f"/sys/bus/pci/devices/{A100}/sriov_numvfs"].strip() == "4"
    assert os.path.basename(_root(host)["links"][f"/sys/bus/mdev/devices/{INSTANCE_MDEV}/mdev_type"]) == "nvidia-476"
    assert f"/{A100_VF}/{INSTANCE_MDEV}" in _root(host)["mdevs"][INSTANCE_MDEV]
