"""Everything the verify tests read from one root, printed as one JSON document: unit files, drop-ins,
the systemd double's journals, state files, the stand-ins' notes, sysfs values and links, nvidia-smi's
answers. Installed in each root at create as /usr/local/bin/collect-state; run inside the root."""

import contextlib
import glob
import hashlib
import json
import os
import subprocess


def _read(path):
    with open(path) as handle:
        return handle.read()


out = {"files": {}, "links": {}}
paths = glob.glob("/etc/systemd/system/*.service") + glob.glob("/etc/systemd/system/*.target")
paths += glob.glob("/etc/systemd/system/*.d/*.conf") + glob.glob("/var/log/fake-systemd/*.json")
paths += glob.glob("/etc/accel-openstack/*/*.json") + ["/var/log/stand-in.jsonl"]
paths += glob.glob("/sys/bus/pci/devices/*/sriov_numvfs") + glob.glob("/sys/bus/pci/devices/*/nvidia/current_vgpu_type")
for path in paths:
    with contextlib.suppress(OSError):
        out["files"][path] = _read(path)
for path in glob.glob("/etc/systemd/system/multi-user.target.wants/*") + glob.glob("/sys/bus/mdev/devices/*/mdev_type"):
    out["links"][path] = os.readlink(path)
mdev_dir = "/sys/bus/mdev/devices"
names = os.listdir(mdev_dir) if os.path.isdir(mdev_dir) else []
out["mdevs"] = {n: os.path.realpath(mdev_dir + "/" + n) for n in names}
out["virtfn"] = {}
for link in glob.glob("/sys/bus/pci/devices/*/virtfn*"):
    pf = link.split("/")[5]
    out["virtfn"].setdefault(pf, []).append((int(link.rsplit("virtfn", 1)[1]), os.path.basename(os.readlink(link))))
libexec = "/usr/local/libexec/accel-openstack"
out["sha256"] = hashlib.sha256(_read(libexec + "/gpu_restore.py").encode()).hexdigest()
command = ["/usr/bin/python3", libexec + "/gpu-restore", "--help"]
out["help_rc"] = subprocess.run(command, capture_output=True, check=False).returncode


def smi(*args):
    return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, check=False).stdout


out["smi_q"] = smi("-q", "-x") if os.path.exists("/usr/bin/nvidia-smi") else ""
out["smi_lgi"] = smi("mig", "-lgi", "-i", "00000000:41:00.0") if out["smi_q"] else ""
print(json.dumps(out))
