# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Re-apply at boot what sriov_vfs, nvidia_vgpu and nvidia_mig set, from their state files.

This file has no imports beyond the standard library: the modules import it for the sysfs writes they
share with the boot path, and the ``host_gpu_sharing`` role installs the same file on the host as
``/usr/local/libexec/accel-openstack/gpu_restore.py``, beside the command-line entry point
``gpu-restore`` (the role's ``files/gpu_restore_cli.py``) that ``accel-openstack-gpu-restore.service``
runs. The host needs nothing of the collection.

Everything read from a state file is checked before anything is written: the file is a regular file
inside the root, of bounded size, valid JSON of the expected shape; every PCI address in it is a full
address in the normal form (the grammar of ``_names/pci.py``, repeated here because this file stands
alone; a unit test holds the two to the same answers), so no ``..``, ``/`` or control character can
reach a sysfs path; counts and IDs are whole numbers within their hardware bounds.

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

import json
import os
import re
import stat
import time

STATE_DIR = "/etc/accel-openstack"
PCI = "/sys/bus/pci/devices"


MAX_ATTR = 65536  # a sysfs attribute is one page; more means the file is not what it should be
MAX_STATE = 4 << 20  # a state file is a few hundred bytes; 65535 VF addresses would take about 1 MiB
MAX_NUMVFS = 0xFFFF  # TotalVFs is a 16-bit field of the SR-IOV capability
MAX_TYPE_ID = 0x7FFFFFFF  # current_vgpu_type takes a positive int
MAX_MIG_SLICES = 8  # a MIG GPU has at most 8 slices: instance starts 0..7, at most 8 instances
MAX_MIG_PROFILE_ID = 0xFF

# The PCI address grammar of _names/pci.py (domain required here: state files and sysfs use the full form).
_ADDRESS = re.compile(
    r"(?P<domain>[0-9a-f]{4,8}):(?P<bus>[0-9a-f]{2}):(?P<device>[0-9a-f]{2})\.(?P<function>[0-7])",
    re.IGNORECASE,
)


def is_normal_address(text: object) -> bool:
    """Whether ``text`` is a full PCI address in the normal form sysfs names devices by (``0000:41:00.0``)."""
    match = _ADDRESS.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return False
    normal = f"{int(match['domain'], 16):04x}:{match['bus'].lower()}:{match['device'].lower()}.{match['function']}"
    return normal == text


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
        """The real path of ``host_path``; RestoreError when it would leave the root.

        Without a HostRoot (the boot unit), a path with ``..`` or a NUL is refused, and so is one whose
        links lead out of the root (on ``/`` nothing can).
        """
        if self._resolve is not None:
            return self._resolve(host_path)
        if "\x00" in host_path or ".." in host_path.split("/"):
            raise RestoreError(f"{host_path!r} is not a plain path inside the root")
        path = os.path.join(self.root, host_path.lstrip("/"))
        real, real_root = os.path.realpath(path), os.path.realpath(self.root)
        if real != real_root and not real.startswith(real_root.rstrip("/") + "/"):
            raise RestoreError(f"{host_path} leads out of the root {self.root} (to {real}); refused")
        return path

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
            names = [n for n in os.listdir(base) if n.startswith("virtfn") and _digits(n[6:])]
        except Exception:
            return []
        out = []
        for name in sorted(names, key=lambda n: int(n[6:])):
            try:
                vf = os.path.basename(os.readlink(os.path.join(base, name)))
            except OSError:  # the VF went away since the listing (VFs being removed)
                continue
            if is_normal_address(vf):  # a link named otherwise is no VF sysfs made
                out.append(vf)
        return out


def _digits(text: str | None) -> bool:
    """Whether ``text`` is a decimal number in ASCII digits (``str.isdigit`` also takes ``²`` and ``٣``)."""
    return bool(text) and text.isascii() and text.isdigit()


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
    text = sysfs.read(attr)
    current = int(text) if _digits(text) else 0
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
        if sep and _digits(ident.strip()):
            out[int(ident.strip())] = name.strip()
    return out


def current_type(sysfs: Sysfs, vf: str) -> int:
    value = sysfs.read(f"{PCI}/{vf}/nvidia/current_vgpu_type")
    return int(value) if _digits(value) else 0


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


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _check_state(kind: str, name: str, state: object) -> list[str]:
    """What is wrong with one state file's content (empty when nothing)."""
    if not isinstance(state, dict):
        return [f"holds {type(state).__name__}, expected an object"]
    problems = []
    address = state.get("address")
    if not is_normal_address(address):
        problems.append(f"address {address!r} is not a full PCI address such as '0000:41:00.0'")
    elif name != f"{address}.json":
        problems.append(f"address {address!r} does not match the file name")
    if kind == "sriov" and not _whole(state.get("numvfs"), 0, MAX_NUMVFS):
        problems.append(f"numvfs {state.get('numvfs')!r} is not a whole number from 0 to {MAX_NUMVFS}")
    if kind == "vgpu":
        if not _whole(state.get("type_id"), 0, MAX_TYPE_ID):
            problems.append(f"type_id {state.get('type_id')!r} is not a whole number from 0 to {MAX_TYPE_ID}")
        vfs = state.get("vfs")
        if not isinstance(vfs, list) or len(vfs) > MAX_NUMVFS:
            problems.append(f"vfs is not a list of at most {MAX_NUMVFS} VF addresses")
        else:
            problems.extend(f"VF address {vf!r} is not a full PCI address" for vf in vfs if not is_normal_address(vf))
    if kind == "mig":
        instances = state.get("instances")
        if not isinstance(instances, list) or len(instances) > MAX_MIG_SLICES:
            problems.append(f"instances is not a list of at most {MAX_MIG_SLICES} GPU instances")
        else:
            for i, instance in enumerate(instances):
                if not (
                    isinstance(instance, dict)
                    and _whole(instance.get("profile_id"), 0, MAX_MIG_PROFILE_ID)
                    and _whole(instance.get("start"), 0, MAX_MIG_SLICES - 1)
                ):
                    problems.append(
                        f"instance {i} needs a profile_id from 0 to {MAX_MIG_PROFILE_ID} and a start from 0 to "
                        f"{MAX_MIG_SLICES - 1}"
                    )
    return problems


def _states(sysfs: Sysfs, kind: str) -> list[dict]:
    """The checked state files of one kind; RestoreError naming the file and the fault for the first bad one."""
    where = f"{STATE_DIR}/{kind}"
    directory = sysfs.path(where)
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return []
    out = []
    for name in names:
        path = sysfs.path(f"{where}/{name}")
        fix = "run the module that wrote it again, or remove the file"
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                raise RestoreError(f"state file {where}/{name} is not a regular file; remove it")
            if info.st_size > MAX_STATE:
                raise RestoreError(f"state file {where}/{name} has {info.st_size} bytes, more than any state file")
            with open(path, "rb") as handle:
                state = json.loads(handle.read(MAX_STATE).decode("utf-8"))
        except (OSError, ValueError) as exc:  # unreadable, not UTF-8, not JSON
            raise RestoreError(f"state file {where}/{name} cannot be read as JSON ({exc}); {fix}") from exc
        problems = _check_state(kind, name, state)
        if problems:
            raise RestoreError(f"state file {where}/{name}: {'; '.join(problems)}; {fix}")
        out.append(state)
    return out


def restore_mig(state: dict, run, timeout: float) -> str:
    domain, rest = state["address"].upper().split(":", 1)
    bus = f"{domain.zfill(8)}:{rest}"  # nvidia-smi's form: an eight-digit domain

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
    states = {kind: _states(sysfs, kind) for kind in ("sriov", "vgpu", "mig")}  # all checked before any write
    for state in states["sriov"]:
        pf = state["address"]
        wait_for(lambda pf=pf: sysfs.exists(f"{PCI}/{pf}/driver"), timeout, f"PF {pf} to be bound to its driver")
        total = sysfs.read(f"{PCI}/{pf}/sriov_totalvfs")
        if _digits(total) and state["numvfs"] > int(total):
            raise RestoreError(f"PF {pf} has at most {total} VFs; its state file asks for {state['numvfs']}")
        changed = set_numvfs(sysfs, pf, state["numvfs"], timeout)
        done.append(f"{pf}: {state['numvfs']} VFs" + ("" if changed else " (already)"))
    if states["mig"]:
        if run is None:
            raise RestoreError("MIG state files need a command runner for nvidia-smi; none was given")
        for state in states["mig"]:
            done.append(restore_mig(state, run, timeout))
    for state in states["vgpu"]:
        for vf in state["vfs"]:
            wait_for(lambda vf=vf: sysfs.exists(f"{PCI}/{vf}"), timeout, f"VF {vf}")
            wanted = state["type_id"]
            # the vGPU manager lists a MIG-backed type only once its GPU instance exists: wait for it
            wait_for(
                lambda vf=vf, wanted=wanted: (
                    not wanted or current_type(sysfs, vf) == wanted or wanted in (creatable_types(sysfs, vf) or {})
                ),
                timeout,
                f"vGPU type {wanted} to be creatable on VF {vf}",
            )
            changed = set_vgpu_type(sysfs, vf, wanted, timeout)
            done.append(f"{vf}: vGPU type {state['type_id']}" + ("" if changed else " (already)"))
    return done
