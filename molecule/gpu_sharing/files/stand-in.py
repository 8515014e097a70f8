"""A stand-in for a service the restore must precede (nova-compute, libvirtd, Kolla's container units):
when its unit starts it notes, in /var/log/stand-in.jsonl, its name and what it found on the host: the
mediated devices present and the boot state the restore unit recorded."""

import json
import os
import sys

try:
    with open("/var/lib/accel-openstack/boot-state.json") as handle:
        status = json.load(handle).get("status")
except (OSError, ValueError):
    status = None
try:
    mdevs = sorted(os.listdir("/sys/bus/mdev/devices"))
except OSError:
    mdevs = []
with open("/var/log/stand-in.jsonl", "a") as handle:
    handle.write(json.dumps({"unit": sys.argv[1], "mdevs": mdevs, "boot_state": status}) + "\n")
