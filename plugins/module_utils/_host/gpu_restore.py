# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Re-apply at boot what sriov_vfs, nvidia_vgpu and nvidia_mig set, from their state files.

This file has no imports beyond the standard library: the modules import it for the sysfs writes they
share with the boot path, and the ``host_gpu_sharing`` role installs the same file on the host as
``/usr/local/libexec/accel-openstack/gpu-restore`` for ``accel-openstack-gpu-restore.service``.

State files (inside the root):
- ``/etc/accel-openstack/sriov/<pf address>.json``: ``{"address", "numvfs"}``
- ``/etc/accel-openstack/vgpu/<gpu address>.json``: ``{"address", "type_id", "type_name", "vfs": [addresses]}``
- ``/etc/accel-openstack/mig/<gpu address>.json``: ``{"address", "mode", "instances": [{"profile",
  "profile_id", "start"}]}``

Order: VFs first (vGPU types live on VFs), then MIG layouts (a MIG-backed vGPU type is creatable only on
a GPU instance), then vGPU types. Every step waits for its
readiness condition (the PF bound to its driver, the VF links present, the VF's vGPU type list present)
by polling with a deadline; nothing sleeps a fixed time.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import subprocess
import sys
import time

STATE_DIR = "/etc/accel-openstack"
PCI = "/sys/bus/pci/devices"


MAX_ATTR = 65536  # a sysfs attribute is one page; more means the file is not what it should be


class RestoreError(Exception):
    """A restore step failed (the message names the device and the write). This file is also a
    standalone script on the host, so it cannot import the collection's AccelError; the modules turn
    it into one."""


class Sysfs:
    """sysfs under a root (``/`` on a host; a fake tree in tests).

    Modules pass ``resolve`` and ``write_attr`` from their HostRoot, so every path is resolved and
    confined inside the root; the boot unit runs on ``/`` with plain paths.
    """

    def __init__(self, root: str = "/", resolve=None, write_attr=None, read_attr=None):
        self.root = os.path.abspath(root)
        self._resolve = resolve
        self._write_attr = write_attr
        self._read_attr = read_attr

    @classmethod
    def of(cls, host) -> Sysfs:
        """The sysfs of a HostRoot, confined to its root (reads, writes and look-ups alike)."""
        return cls(host.root, resolve=host.path, write_attr=host.write_attr, read_attr=host.read_text)

    def path(self, host_path: str) -> str:
        if self._resolve is not None:
            return self._resolve(host_path)
        return os.path.join(self.root, host_path.lstrip("/"))

    def read(self, host_path: str) -> str | None:
        """A sysfs attribute's text; None when absent, unreadable, refused, or not a regular file."""
        try:
            if self._read_attr is not None:
                value = self._read_attr(host_path)
                return None if value is None else value.strip()
            path = self.path(host_path)
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None  # a FIFO, device or socket is never opened
            with open(path) as handle:
                return handle.read(MAX_ATTR).strip()
        except Exception:  # absent, unreadable, or refused by the root's confinement
            return None

    def write(self, host_path: str, value: str) -> None:
        try:
            if self._write_attr is not None:
                self._write_attr(host_path, value)
                return
            with open(self.path(host_path), "w") as handle:
                handle.write(value)
        except Exception as exc:  # OSError, or the HostRoot's own error for a refused write
            raise RestoreError(
                f"writing {value!r} to {host_path} failed: {getattr(exc, 'strerror', None) or exc}"
            ) from exc

    def exists(self, host_path: str) -> bool:
        try:
            return os.path.lexists(self.path(host_path))
        except Exception:  # refused by the root's confinement
            return False

    def vfs(self, pf: str) -> list[str]:
        """The PF's VF addresses, in virtfn order."""
        try:
            base = self.path(f"{PCI}/{pf}")
            names = [n for n in os.listdir(base) if n.startswith("virtfn") and n[6:].isdigit()]
        except Exception:
            return []
        return [os.path.basename(os.readlink(os.path.join(base, n))) for n in sorted(names, key=lambda n: int(n[6:]))]


def wait_for(condition, timeout: float, what: str, interval: float = 0.05):
    """Poll ``condition`` until it returns a true value or the deadline passes (then RestoreError)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise RestoreError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


def set_numvfs(sysfs: Sysfs, pf: str, numvfs: int, timeout: float) -> bool:
    """Make the PF have ``numvfs`` VFs; wait until their links exist. True when it changed anything."""
    attr = f"{PCI}/{pf}/sriov_numvfs"
    current = int(sysfs.read(attr) or 0)
    if current == numvfs and len(sysfs.vfs(pf)) == numvfs:
        return False
    if current not in (0, numvfs):
        sysfs.write(attr, "0")  # the kernel takes a new count only from zero
        wait_for(lambda: not sysfs.vfs(pf), timeout, f"the VFs of {pf} to go away")
    if numvfs:
        sysfs.write(attr, str(numvfs))
    wait_for(lambda: len(sysfs.vfs(pf)) == numvfs, timeout, f"{numvfs} VFs on {pf} (virtfn links)")
    return True


def creatable_types(sysfs: Sysfs, vf: str) -> dict[int, str] | None:
    """``nvidia/creatable_vgpu_types`` of a VF as {id: name}; None when the file is not there (yet)."""
    text = sysfs.read(f"{PCI}/{vf}/nvidia/creatable_vgpu_types")
    if text is None:
        return None
    out = {}
    for line in text.splitlines():
        ident, sep, name = line.partition(":")
        if sep and ident.strip().isdigit():
            out[int(ident.strip())] = name.strip()
    return out


def current_type(sysfs: Sysfs, vf: str) -> int:
    value = sysfs.read(f"{PCI}/{vf}/nvidia/current_vgpu_type")
    return int(value) if value and value.isdigit() else 0


def set_vgpu_type(sysfs: Sysfs, vf: str, type_id: int, timeout: float) -> bool:
    """Set a VF's vGPU type (0 clears it); the driver answers the write at once. True when it changed."""
    before = current_type(sysfs, vf)
    if before == type_id:
        return False
    wait_for(lambda: creatable_types(sysfs, vf) is not None, timeout, f"nvidia/creatable_vgpu_types on VF {vf}")
    attr = f"{PCI}/{vf}/nvidia/current_vgpu_type"
    if before:
        sysfs.write(attr, "0")
        if current_type(sysfs, vf) != 0:
            raise RestoreError(f"VF {vf} did not clear its vGPU type {before} (in use?)")
    if type_id:
        can = creatable_types(sysfs, vf) or {}
        if type_id not in can:
            raise RestoreError(f"VF {vf} cannot take vGPU type {type_id} now; it can take {sorted(can) or 'nothing'}")
        sysfs.write(attr, str(type_id))
        if current_type(sysfs, vf) != type_id:
            raise RestoreError(f"VF {vf} refused vGPU type {type_id}")
    return True


def _states(sysfs: Sysfs, kind: str) -> list[dict]:
    directory = sysfs.path(f"{STATE_DIR}/{kind}")
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return []
    out = []
    for name in names:
        with open(os.path.join(directory, name)) as handle:
            out.append(json.load(handle))
    return out


def restore_mig(state: dict, run, timeout: float) -> str:
    bus = "0000" + state["address"].upper()

    def listed():
        rc, out, err = run(["nvidia-smi", "mig", "-lgi", "-i", bus])
        if rc == 0:
            return out
        if "No GPU instances found" in out + err:
            return "none"
        return None

    current = wait_for(listed, timeout, f"nvidia-smi to list the GPU instances of {state['address']} (MIG mode on)")
    if current != "none":
        return f"{state['address']}: GPU instances exist, left as they are"
    if not state["instances"]:
        return f"{state['address']}: no instances wanted"
    specs = ",".join(f"{i['profile_id']}:{i['start']}" for i in state["instances"])
    rc, out, err = run(["nvidia-smi", "mig", "-i", bus, "-cgi", specs, "-C"])
    if rc != 0:
        raise RestoreError(f"nvidia-smi mig -i {bus} -cgi {specs} -C failed (rc={rc}): {(err or out).strip()}")
    return f"{state['address']}: created {specs}"


def restore(root: str = "/", run=None, timeout: float = 120.0) -> list[str]:
    """Apply every state file; returns one line per action. Raises RestoreError on the first failure."""
    sysfs = Sysfs(root)
    done = []
    for state in _states(sysfs, "sriov"):
        pf = state["address"]
        wait_for(lambda pf=pf: sysfs.exists(f"{PCI}/{pf}/driver"), timeout, f"PF {pf} to be bound to its driver")
        changed = set_numvfs(sysfs, pf, int(state["numvfs"]), timeout)
        done.append(f"{pf}: {state['numvfs']} VFs" + ("" if changed else " (already)"))
    mig_states = _states(sysfs, "mig")
    if mig_states:
        run = run or _run
        for state in mig_states:
            done.append(restore_mig(state, run, timeout))
    for state in _states(sysfs, "vgpu"):
        for vf in state["vfs"]:
            wait_for(lambda vf=vf: sysfs.exists(f"{PCI}/{vf}"), timeout, f"VF {vf}")
            wanted = int(state["type_id"])
            # the vGPU manager lists a MIG-backed type only once its GPU instance exists: wait for it
            wait_for(
                lambda vf=vf, wanted=wanted: (
                    not wanted or current_type(sysfs, vf) == wanted or wanted in (creatable_types(sysfs, vf) or {})
                ),
                timeout,
                f"vGPU type {wanted} to be creatable on VF {vf}",
            )
            changed = set_vgpu_type(sysfs, vf, int(state["type_id"]), timeout)
            done.append(f"{vf}: vGPU type {state['type_id']}" + ("" if changed else " (already)"))
    return done


def _run(argv: list[str]) -> tuple[int, str, str]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return 127, "", f"{argv[0]}: not found"
    return proc.returncode, proc.stdout, proc.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Re-apply SR-IOV VFs, vGPU types and MIG layouts at boot.")
    parser.add_argument("--root", default="/")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for each readiness step")
    args = parser.parse_args(argv)
    try:
        for line in restore(args.root, timeout=args.timeout):
            print(line)
    except RestoreError as exc:
        print(f"accel-openstack gpu restore: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
