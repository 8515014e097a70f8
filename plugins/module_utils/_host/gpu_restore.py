# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Re-apply at boot what sriov_vfs, nvidia_vgpu and nvidia_mig set, from their state files, and bring
back the mediated devices that instances hold.

This file has no imports beyond the standard library: the modules import it for the sysfs writes and
the state-file rules they share with the boot path, and the ``host_gpu_sharing`` role installs the same
file on the host as ``/usr/local/libexec/accel-openstack/gpu_restore.py``, beside the command-line entry
point ``gpu-restore`` (the role's ``files/gpu_restore_cli.py``) that ``accel-openstack-gpu-restore.service``
runs. The host needs nothing of the collection.

Everything read from a state file is checked before anything is written (:func:`state_problems`, the
same rules the modules apply before they store a file): the file is a regular file inside the root, of
bounded size, valid JSON of the expected shape; every PCI address in it is a full address in the normal
form (the grammar of ``_names/pci.py``, repeated here because this file stands alone; a unit test holds
the two to the same answers), so no ``..``, ``/`` or control character can reach a sysfs path; counts
and IDs are whole numbers within their hardware bounds. Each item is then checked against the host it
is restored on: the PF exists and can hold the count, a recorded VF is a VF of the recorded GPU, a MIG
GPU is on this host.

State files (inside the root):
- ``/etc/accel-openstack/sriov/<pf address>.json``: ``{"address", "numvfs"}``
- ``/etc/accel-openstack/vgpu/<gpu address>.json``: ``{"address", "type_id", "type_name", "vfs": [addresses]}``
- ``/etc/accel-openstack/mig/<gpu address>.json``: ``{"address", "mode", "instances": [{"profile",
  "profile_id", "start"}]}``

Order: MIG mode (set and, where the GPU allows it, a GPU reset; else the reboot it needs is reported),
VFs, GPU instances (a MIG-backed vGPU type is creatable only on a GPU instance), vGPU types, then the
mediated devices that instances hold (their UUIDs from the libvirt domain XML, their parent and type from
the record this file keeps at every boot and shutdown, or from mdevctl's definitions). Every step waits
for its readiness condition by polling with a deadline; nothing sleeps a fixed time, and the whole run
has a deadline too. Then the host is compared with the record, and the result (``ok``, or what is
missing) is written to ``/var/lib/accel-openstack/boot-state.json``, which ``pci_facts`` reports.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
import tempfile
import time
import xml.etree.ElementTree as ET

STATE_DIR = "/etc/accel-openstack"
PCI = "/sys/bus/pci/devices"
MDEV_BUS = "/sys/class/mdev_bus"
MDEV_DEVICES = "/sys/bus/mdev/devices"
BOOT_STATE = "/var/lib/accel-openstack/boot-state.json"
MDEV_RECORD = "/var/lib/accel-openstack/mdevs.json"
MDEVCTL_DIR = "/etc/mdevctl.d"
# Where libvirt keeps the persistent domain XML: the host's libvirt, and Kolla-Ansible's nova_libvirt
# volume (nova_libvirt_qemu:/etc/libvirt/qemu) under Docker's and Podman's volume directories.
DOMAIN_DIRS = (
    "/etc/libvirt/qemu",
    "/var/lib/docker/volumes/nova_libvirt_qemu/_data",
    "/var/lib/containers/storage/volumes/nova_libvirt_qemu/_data",
)

MAX_ATTR = 65536  # a sysfs attribute is one page; more means the file is not what it should be
MAX_STATE = 4 << 20  # a state file is a few hundred bytes; 65535 VF addresses would take about 1 MiB
MAX_STATE_FILES = 1024  # state files of one kind: one per PF or GPU
MAX_XML = 4 << 20  # a domain XML or nvidia-smi's -q -x of a large host
MAX_DOMAINS = 4096  # domain XML files read per directory
MAX_MDEVS = 4096  # mediated devices recorded or recreated
MAX_NUMVFS = 0xFFFF  # TotalVFs is a 16-bit field of the SR-IOV capability
MAX_TYPE_ID = 0x7FFFFFFF  # current_vgpu_type takes a positive int
MAX_MIG_SLICES = 8  # a MIG GPU has at most 8 slices: instance starts 0..7, at most 8 instances
MAX_MIG_PROFILE_ID = 0xFF
MAX_TIMEOUT = 3600.0  # one readiness wait
MAX_DEADLINE = 86400.0  # the whole run
SMI_INTERVAL = 0.5  # seconds between two nvidia-smi calls while waiting (each call starts the tool)
MAX_DIGITS = 12  # a number in sysfs or nvidia-smi's output longer than this is not one the hardware gives
STATE_KINDS = ("sriov", "vgpu", "mig")

# The PCI address grammar of _names/pci.py (domain required here: state files and sysfs use the full form).
_ADDRESS = re.compile(
    r"(?P<domain>[0-9a-f]{4,8}):(?P<bus>[0-9a-f]{2}):(?P<device>[0-9a-f]{2})\.(?P<function>[0-7])",
    re.IGNORECASE,
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MDEV_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
_LGI_ROW = re.compile(r"^\|\s*\d{1,3}\s+MIG\s+\S{1,32}\s+(\d{1,3})\s+\d{1,3}\s+(\d{1,2}):\d{1,2}\s*\|")
_NONBLOCK = os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def is_normal_address(text: object) -> bool:
    """Whether ``text`` is a full PCI address in the normal form sysfs names devices by (``0000:41:00.0``)."""
    match = _ADDRESS.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return False
    normal = f"{int(match['domain'], 16):04x}:{match['bus'].lower()}:{match['device'].lower()}.{match['function']}"
    return normal == text


def smi_bus_id(address: str) -> str:
    """nvidia-smi's form of a normal address: an eight-digit upper-case domain (``00000000:3B:00.0``)."""
    domain, rest = address.split(":", 1)
    return f"{int(domain, 16):08X}:{rest.upper()}"


def _address_of_bus_id(text: str) -> str | None:
    match = _ADDRESS.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        return None
    return f"{int(match['domain'], 16):04x}:{match['bus'].lower()}:{match['device'].lower()}.{match['function']}"


class RestoreError(Exception):
    """A restore step failed (the message names the device and the write). This file is also a
    standalone script on the host, so it cannot import the collection's AccelError; the modules turn
    it into one."""


def check_seconds(value: object, what: str = "timeout", high: float = MAX_TIMEOUT) -> float:
    """A number of seconds above 0 and at most ``high``; RestoreError for NaN, infinities, text, bools and
    anything out of range, so no wait can last without end."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RestoreError(f"{what} {value!r} is not a number of seconds; give one above 0, at most {high:g}")
    if not math.isfinite(value) or not 0 < value <= high:
        raise RestoreError(f"{what} {value!r} is out of range; give a number of seconds above 0, at most {high:g}")
    return float(value)


def _open_regular(path: str, flags: int) -> int:
    """An open descriptor of a regular file; a FIFO, device or socket is never waited on (O_NONBLOCK)
    and refused, and a link as the last component is not followed."""
    fd = os.open(path, flags | _NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RestoreError(f"{path} is not a regular file")
    return fd


def _read_bytes(path: str, limit: int) -> bytes:
    fd = _open_regular(path, os.O_RDONLY)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise RestoreError(f"{path} holds more than {limit} bytes")
    return data


class Sysfs:
    """sysfs under a root (``/`` on a host; a fake tree in tests).

    Modules pass ``resolve`` and ``write_attr`` from their HostRoot, so every path is resolved and
    confined inside the root; the boot unit uses plain paths, refused when they would leave the root.
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

    @property
    def is_live(self) -> bool:
        return os.path.realpath(self.root) == "/"

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
            return _read_bytes(self.path(host_path), MAX_ATTR).decode("utf-8").strip()
        except Exception:  # absent, unreadable, not text, or refused by the root's confinement
            return None

    def write(self, host_path: str, value: str) -> None:
        """One write(2) to an existing attribute, never waiting on a FIFO or following a final link."""
        try:
            if self._write_attr is not None:
                self._write_attr(host_path, value)
                return
            # O_TRUNC as a shell's "echo N > attr": sysfs ignores it; a plain file then holds the value
            fd = _open_regular(self.path(host_path), os.O_WRONLY | os.O_TRUNC)
            try:
                os.write(fd, value.encode("ascii"))
            finally:
                os.close(fd)
        except Exception as exc:  # OSError, or the HostRoot's own error for a refused write
            raise RestoreError(
                f"writing {value!r} to {host_path} failed: {getattr(exc, 'strerror', None) or exc}"
            ) from exc

    def exists(self, host_path: str) -> bool:
        try:
            return os.path.lexists(self.path(host_path))
        except Exception:  # refused by the root's confinement
            return False

    def listdir(self, host_path: str, limit: int = 65536) -> list[str]:
        """Sorted names in a directory (at most ``limit``); empty when absent, refused or not a directory."""
        try:
            names = []
            with os.scandir(self.path(host_path)) as entries:
                for entry in entries:
                    if len(names) >= limit:
                        break
                    names.append(entry.name)
            return sorted(names)
        except Exception:
            return []

    def link_name(self, host_path: str) -> str | None:
        """The last component of a link's target (``driver``, ``physfn``, ``mdev_type``); None if no link."""
        try:
            return os.path.basename(os.readlink(self.path(host_path)))
        except Exception:
            return None

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

    def write_file(self, host_path: str, text: str) -> None:
        """Replace a small file of our own inside the root atomically (temp file + rename)."""
        directory = os.path.dirname(host_path)
        try:
            real_dir = self.path(directory)
            os.makedirs(real_dir, mode=0o755, exist_ok=True)
            real_dir = self.path(directory)  # checked again once it exists
            fd, temp = tempfile.mkstemp(prefix=".accel-", dir=real_dir)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.chmod(temp, 0o644)
                os.replace(temp, os.path.join(real_dir, os.path.basename(host_path)))
            except BaseException:
                if os.path.lexists(temp):
                    os.unlink(temp)
                raise
        except RestoreError:
            raise
        except Exception as exc:
            raise RestoreError(f"writing {host_path} failed: {getattr(exc, 'strerror', None) or exc}") from exc

    def read_document(self, host_path: str, limit: int) -> bytes | None:
        """A regular file's bytes (at most ``limit``); None when absent; RestoreError when unsafe or too big."""
        try:
            path = self.path(host_path)
        except Exception as exc:
            raise RestoreError(str(exc)) from exc
        try:
            return _read_bytes(path, limit)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise RestoreError(f"{host_path} cannot be read ({exc.strerror or exc})") from exc
        except RestoreError as exc:
            raise RestoreError(str(exc).replace(path, host_path, 1)) from exc


def _digits(text: str | None) -> bool:
    """Whether ``text`` is a decimal number in ASCII digits (``str.isdigit`` also takes ``²`` and ``٣``)."""
    return bool(text) and text.isascii() and text.isdigit()


def whole_number(text: str | None, high: int) -> int | None:
    """``text`` as a whole number from 0 to ``high``; None when it is not one (5,000 digits included)."""
    if not _digits(text) or len(text) > MAX_DIGITS:
        return None
    value = int(text)
    return value if value <= high else None


class Deadline:
    """The whole run's deadline: every wait ends at its own timeout or at this, whichever comes first."""

    def __init__(self, seconds: float | None = None):
        self.end = None if seconds is None else time.monotonic() + seconds

    def left(self, timeout: float) -> float:
        if self.end is None:
            return timeout
        return max(0.0, min(timeout, self.end - time.monotonic()))


def wait_for(condition, timeout: float, what: str, interval: float = 0.05, deadline: Deadline | None = None):
    """Poll ``condition`` until it returns a true value or the deadline passes (then RestoreError)."""
    timeout = check_seconds(timeout)
    limit = deadline.left(timeout) if deadline else timeout
    end = time.monotonic() + limit
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= end:
            raise RestoreError(f"timed out after {limit:g}s waiting for {what}")
        time.sleep(interval)


def set_numvfs(sysfs: Sysfs, pf: str, numvfs: int, timeout: float, deadline: Deadline | None = None) -> bool:
    """Make the PF have ``numvfs`` VFs; wait until their links exist. True when it changed anything."""
    if isinstance(numvfs, bool) or not isinstance(numvfs, int) or not 0 <= numvfs <= MAX_NUMVFS:
        raise RestoreError(f"numvfs {numvfs!r} for {pf} is not a whole number from 0 to {MAX_NUMVFS}")
    attr = f"{PCI}/{pf}/sriov_numvfs"
    current = whole_number(sysfs.read(attr), MAX_NUMVFS) or 0
    if current == numvfs and len(sysfs.vfs(pf)) == numvfs:
        return False
    if current not in (0, numvfs):
        sysfs.write(attr, "0")  # the kernel takes a new count only from zero
        wait_for(lambda: not sysfs.vfs(pf), timeout, f"the VFs of {pf} to go away", deadline=deadline)
    if numvfs:
        sysfs.write(attr, str(numvfs))
    wait_for(lambda: len(sysfs.vfs(pf)) == numvfs, timeout, f"{numvfs} VFs on {pf} (virtfn links)", deadline=deadline)
    return True


def creatable_types(sysfs: Sysfs, vf: str) -> dict[int, str] | None:
    """``nvidia/creatable_vgpu_types`` of a VF as {id: name}; None when the file is not there (yet).

    IDs are read as the driver lists them (bounded in length); whether one may be stored or set is
    :func:`state_problems`' and :func:`set_vgpu_type`'s question.
    """
    text = sysfs.read(f"{PCI}/{vf}/nvidia/creatable_vgpu_types")
    if text is None:
        return None
    out = {}
    for line in text.splitlines():
        ident, sep, name = line.partition(":")
        value = whole_number(ident.strip(), 10**MAX_DIGITS)
        if sep and value is not None:
            out[value] = name.strip()
    return out


def current_type(sysfs: Sysfs, vf: str) -> int:
    return whole_number(sysfs.read(f"{PCI}/{vf}/nvidia/current_vgpu_type"), MAX_TYPE_ID) or 0


def set_vgpu_type(sysfs: Sysfs, vf: str, type_id: int, timeout: float, deadline: Deadline | None = None) -> bool:
    """Set a VF's vGPU type (0 clears it); the driver answers the write at once. True when it changed."""
    if isinstance(type_id, bool) or not isinstance(type_id, int) or not 0 <= type_id <= MAX_TYPE_ID:
        raise RestoreError(f"vGPU type {type_id!r} for VF {vf} is not a whole number from 0 to {MAX_TYPE_ID}")
    before = current_type(sysfs, vf)
    if before == type_id:
        return False
    wait_for(
        lambda: creatable_types(sysfs, vf) is not None,
        timeout,
        f"nvidia/creatable_vgpu_types on VF {vf}",
        deadline=deadline,
    )
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


# -- the state files: one set of rules for the modules (before they store) and the boot (before it acts) --
def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def state_dir_problem(host, state_dir: str) -> str | None:
    """Why the state files cannot be written under ``state_dir`` (a host path): one of its directories
    exists as something else (``/etc/accel-openstack`` a regular file); None when they can. Checked
    before any device is changed, so a run that could not keep its state changes nothing."""
    parts = state_dir.strip("/").split("/")
    for depth in range(1, len(parts) + 1):
        path = "/" + "/".join(parts[:depth])
        if host.exists(path) and not host.is_dir(path):
            return (
                f"{path} exists and is not a directory; the collection keeps its boot state under {state_dir}: "
                f"move {path} away (or make it a directory), then run again"
            )
    return None


def state_problems(kind: str, name: str, state: object) -> list[str]:
    """What is wrong with one state file's content (empty when nothing). ``name`` is the file's name."""
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
            if len(set(map(str, vfs))) != len(vfs):
                problems.append("vfs names a VF more than once")
            if address in vfs:
                problems.append(f"vfs names the GPU {address} itself")
    if kind == "mig":
        if state.get("mode") != "enabled":
            problems.append(f"mode {state.get('mode')!r} is not 'enabled'")
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
        with os.scandir(directory) as entries:
            names = []
            for entry in entries:
                if entry.name.endswith(".json"):
                    names.append(entry.name)
                    if len(names) > MAX_STATE_FILES:
                        raise RestoreError(
                            f"{where} holds more than {MAX_STATE_FILES} state files, more than any host has PFs or "
                            "GPUs; remove the ones that are not the modules'"
                        )
    except OSError:
        return []
    out = []
    fix = "run the module that wrote it again, or remove the file"
    for name in sorted(names):
        try:
            data = sysfs.read_document(f"{where}/{name}", MAX_STATE)
            state = json.loads((data or b"").decode("utf-8"))
        except RestoreError as exc:
            raise RestoreError(f"state file {where}/{name}: {exc}; remove it") from exc
        except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested without end
            detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
            raise RestoreError(f"state file {where}/{name} cannot be read as JSON ({detail}); {fix}") from exc
        problems = state_problems(kind, name, state)
        if problems:
            raise RestoreError(f"state file {where}/{name}: {'; '.join(problems)}; {fix}")
        out.append(state)
    return out


def _check_against_host(sysfs: Sysfs, states: dict[str, list[dict]]) -> None:
    """Each recorded item belongs to this host: the devices exist, counts fit, VFs are the GPU's own."""
    numvfs = {s["address"]: s["numvfs"] for s in states["sriov"]}
    for state in states["sriov"]:
        pf = state["address"]
        total = whole_number(sysfs.read(f"{PCI}/{pf}/sriov_totalvfs"), MAX_NUMVFS)
        if not sysfs.exists(f"{PCI}/{pf}"):
            raise RestoreError(f"PF {pf} of the SR-IOV state file is not on this host; remove the file or fix the host")
        if total is None:
            raise RestoreError(f"PF {pf} has no SR-IOV capability (no sriov_totalvfs); its state file does not fit")
        if state["numvfs"] > total:
            raise RestoreError(f"PF {pf} has at most {total} VFs; its state file asks for {state['numvfs']}")
    for state in states["vgpu"]:
        gpu = state["address"]
        if not sysfs.exists(f"{PCI}/{gpu}"):
            raise RestoreError(f"GPU {gpu} of the vGPU state file is not on this host")
        limit = numvfs.get(gpu, whole_number(sysfs.read(f"{PCI}/{gpu}/sriov_totalvfs"), MAX_NUMVFS) or 0)
        if len(state["vfs"]) > limit:
            raise RestoreError(f"the vGPU state file of {gpu} names {len(state['vfs'])} VFs; the GPU has {limit}")
        for vf in state["vfs"]:
            if sysfs.exists(f"{PCI}/{vf}"):
                parent = sysfs.link_name(f"{PCI}/{vf}/physfn")
                if parent != gpu:
                    raise RestoreError(
                        f"the vGPU state file of {gpu} names {vf}, which is not a VF of that GPU "
                        f"(its PF is {parent or 'none'}); refusing to set it; run nvidia_vgpu again"
                    )
    for state in states["mig"]:
        gpu = state["address"]
        if sysfs.read(f"{PCI}/{gpu}/vendor") != "0x10de":
            raise RestoreError(f"GPU {gpu} of the MIG state file is not an NVIDIA device on this host")


# -- nvidia-smi --------------------------------------------------------------------------------------------
def _safe_xml(text: str, what: str) -> ET.Element:
    """Parse XML that must not declare entities (none of libvirt's or nvidia-smi's does): no expansion."""
    if len(text) > MAX_XML:
        raise RestoreError(f"{what} is larger than {MAX_XML} bytes")
    if "<!ENTITY" in text or re.search(r"<!DOCTYPE[^>]*\[", text):
        raise RestoreError(f"{what} declares entities or an internal DTD; refused")
    try:
        return ET.fromstring(text)
    except (ET.ParseError, ValueError, RecursionError) as exc:
        raise RestoreError(f"{what} is not well-formed XML ({str(exc)[:120]})") from exc


def mig_mode(run, address: str) -> tuple[str, str] | None:
    """(current, pending) MIG mode of a GPU from ``nvidia-smi -q -x``; None when it does not list the GPU."""
    rc, out, _err = run(["nvidia-smi", "-q", "-x"])
    if rc != 0:
        return None
    try:
        tree = _safe_xml(out, "nvidia-smi -q -x")
    except RestoreError:
        return None
    for gpu in tree.findall("gpu"):
        if _address_of_bus_id(gpu.get("id") or gpu.findtext("pci/pci_bus_id") or "") == address:
            return (
                (gpu.findtext("mig_mode/current_mig") or "").strip()[:32],
                (gpu.findtext("mig_mode/pending_mig") or "").strip()[:32],
            )
    return None


def gpu_instances(run, address: str) -> list[tuple[int, int]] | None:
    """[(profile id, start)] of a GPU's instances; [] when it has none; None when nvidia-smi cannot say."""
    rc, out, err = run(["nvidia-smi", "mig", "-lgi", "-i", smi_bus_id(address)])
    if rc != 0:
        return [] if "No GPU instances found" in out + err else None
    found = []
    for line in out.splitlines()[: 4 * MAX_MIG_SLICES + 16]:
        match = _LGI_ROW.match(line)
        if match:
            found.append((int(match[1]), int(match[2])))
    return found


def enable_mig_mode(state: dict, run, timeout: float, deadline: Deadline | None = None) -> str:
    """MIG mode on for a GPU whose record needs it: set it, and reset the GPU where it allows one."""
    address, bus = state["address"], smi_bus_id(state["address"])
    mode = wait_for(
        lambda: mig_mode(run, address),
        timeout,
        f"nvidia-smi to list GPU {address} (driver loaded)",
        interval=SMI_INTERVAL,
        deadline=deadline,
    )
    if mode[0] == "Enabled":
        return f"{address}: MIG mode on"
    if mode[1] != "Enabled":
        rc, out, err = run(["nvidia-smi", "-i", bus, "-mig", "1"])
        if rc != 0:
            raise RestoreError(
                f"GPU {address}: MIG mode is off and its recorded layout needs it; nvidia-smi -i {bus} -mig 1 failed "
                f"(rc={rc}): {(err or out).strip()[:300]}"
            )
        if (mig_mode(run, address) or ("", ""))[0] == "Enabled":
            return f"{address}: MIG mode turned back on"
    rc, out, err = run(["nvidia-smi", "-r", "-i", bus])
    if rc != 0:
        raise RestoreError(
            f"GPU {address}: MIG mode was off at boot and is now set to come on at the next GPU reset, but this GPU "
            f"cannot be reset now (nvidia-smi -r -i {bus}, rc={rc}: {(err or out).strip()[:300]}); reboot the "
            "host to finish: libvirt and nova-compute stay stopped until then"
        )
    wait_for(
        lambda: (mig_mode(run, address) or ("", ""))[0] == "Enabled",
        timeout,
        f"MIG mode on GPU {address} after its reset",
        interval=SMI_INTERVAL,
        deadline=deadline,
    )
    return f"{address}: MIG mode turned back on (GPU reset)"


def restore_mig(state: dict, run, timeout: float, deadline: Deadline | None = None) -> str:
    """Create the recorded GPU instances when the GPU has none; leave existing instances alone."""
    bus = smi_bus_id(state["address"])
    current = wait_for(
        lambda: (gpu_instances(run, state["address"]),),  # a one-item tuple: [] (no instances) is an answer
        timeout,
        f"nvidia-smi to list the GPU instances of {state['address']} (MIG mode on)",
        interval=SMI_INTERVAL,
        deadline=deadline,
    )[0]
    if current is None:
        raise RestoreError(f"nvidia-smi cannot list the GPU instances of {state['address']}")
    if current:
        return f"{state['address']}: GPU instances exist, left as they are"
    if not state["instances"]:
        return f"{state['address']}: no instances wanted"
    specs = ",".join(f"{i['profile_id']}:{i['start']}" for i in state["instances"])
    rc, out, err = run(["nvidia-smi", "mig", "-i", bus, "-cgi", specs, "-C"])
    if rc != 0:
        raise RestoreError(f"nvidia-smi mig -i {bus} -cgi {specs} -C failed (rc={rc}): {(err or out).strip()[:300]}")
    return f"{state['address']}: created {specs}"


# -- mediated devices held by instances ------------------------------------------------------------------
def held_mdevs(sysfs: Sysfs) -> tuple[dict[str, str], list[str]]:
    """({mdev UUID: domain file} of every mdev a persistent libvirt domain holds, [warnings])."""
    held: dict[str, str] = {}
    warnings: list[str] = []
    for directory in DOMAIN_DIRS:
        names = [n for n in sysfs.listdir(directory, limit=MAX_DOMAINS + 1) if n.endswith(".xml")]
        if len(names) > MAX_DOMAINS:
            warnings.append(f"{directory}: more than {MAX_DOMAINS} domain files; only the first are read")
        for name in names[:MAX_DOMAINS]:
            where = f"{directory}/{name}"
            try:
                data = sysfs.read_document(where, MAX_XML)
                tree = _safe_xml((data or b"").decode("utf-8", errors="replace"), where)
            except RestoreError as exc:
                warnings.append(f"domain {where} not read: {exc}")
                continue
            for hostdev in tree.iter("hostdev"):
                if hostdev.get("type") != "mdev":
                    continue
                address = hostdev.find("source/address")
                value = (address.get("uuid") or "").lower() if address is not None else ""
                if _UUID.fullmatch(value) and len(held) < MAX_MDEVS:
                    held.setdefault(value, where)
                elif value:
                    warnings.append(f"domain {where}: mdev UUID {value[:40]!r} is not a UUID; ignored")
    return held, warnings


def present_mdevs(sysfs: Sysfs) -> dict[str, dict]:
    """{UUID: {parent, type}} of the mediated devices that exist now."""
    out = {}
    for uuid in sysfs.listdir(MDEV_DEVICES, limit=MAX_MDEVS):
        if not _UUID.fullmatch(uuid):
            continue
        try:
            device = os.path.realpath(sysfs.path(f"{MDEV_DEVICES}/{uuid}"))
        except Exception:
            continue
        parent = os.path.basename(os.path.dirname(device))
        mdev_type = sysfs.link_name(f"{MDEV_DEVICES}/{uuid}/mdev_type")
        if is_normal_address(parent) and mdev_type and _MDEV_TYPE.fullmatch(mdev_type):
            out[uuid] = {"parent": parent, "type": mdev_type}
    return out


def _record(sysfs: Sysfs) -> dict[str, dict]:
    """The mdev record kept by this file (``{UUID: {parent, type}}``); entries of the wrong shape dropped."""
    try:
        data = json.loads((sysfs.read_document(MDEV_RECORD, MAX_STATE) or b"{}").decode("utf-8"))
    except (RestoreError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    out = {}
    for uuid, entry in list(data.items())[:MAX_MDEVS]:
        if (
            _UUID.fullmatch(str(uuid))
            and isinstance(entry, dict)
            and is_normal_address(entry.get("parent"))
            and isinstance(entry.get("type"), str)
            and _MDEV_TYPE.fullmatch(entry["type"])
        ):
            out[uuid] = {"parent": entry["parent"], "type": entry["type"]}
    return out


def _mdevctl_definition(sysfs: Sysfs, uuid: str) -> dict | None:
    """Parent and type of a UUID mdevctl (and libvirt's nodedev-define through it) keeps persistently."""
    for parent in sysfs.listdir(MDEVCTL_DIR, limit=MAX_MDEVS):
        if not is_normal_address(parent) or uuid not in sysfs.listdir(f"{MDEVCTL_DIR}/{parent}", limit=MAX_MDEVS):
            continue
        try:
            data = json.loads((sysfs.read_document(f"{MDEVCTL_DIR}/{parent}/{uuid}", 65536) or b"").decode("utf-8"))
        except (RestoreError, ValueError, RecursionError):
            continue
        mdev_type = data.get("mdev_type") if isinstance(data, dict) else None
        if isinstance(mdev_type, str) and _MDEV_TYPE.fullmatch(mdev_type):
            return {"parent": parent, "type": mdev_type}
    return None


def record_mdevs(sysfs: Sysfs) -> int:
    """Remember parent and type of every present mdev (kept: entries still held by a domain). Returns count."""
    held, _warnings = held_mdevs(sysfs)
    record = {u: e for u, e in _record(sysfs).items() if u in held}
    record.update(present_mdevs(sysfs))
    record = dict(sorted(record.items())[:MAX_MDEVS])
    sysfs.write_file(MDEV_RECORD, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return len(record)


def restore_mdevs(sysfs: Sysfs, timeout: float, deadline: Deadline | None = None) -> tuple[list[str], dict]:
    """Recreate, with their UUIDs, the mdevs domains hold that are missing. (lines, {UUID: problem})."""
    held, lines = held_mdevs(sysfs)
    problems = {}
    present = present_mdevs(sysfs)
    record = _record(sysfs)
    for uuid, domain in sorted(held.items()):
        if uuid in present:
            lines.append(f"mdev {uuid}: present")
            continue
        where = record.get(uuid) or _mdevctl_definition(sysfs, uuid)
        if where is None:
            problems[uuid] = (
                f"mdev {uuid} held by {domain}: its parent GPU and type are not recorded (no record from an earlier "
                "boot or shutdown, no mdevctl definition); create it by hand, or stop that instance"
            )
            continue
        parent, mdev_type = where["parent"], where["type"]
        base = f"{MDEV_BUS}/{parent}/mdev_supported_types/{mdev_type}"
        try:
            wait_for(
                lambda base=base: (whole_number(sysfs.read(f"{base}/available_instances"), 1 << 20) or 0) > 0,
                timeout,
                f"{parent} to offer mdev type {mdev_type} (available_instances)",
                deadline=deadline,
            )
            sysfs.write(f"{base}/create", uuid)
            wait_for(
                lambda uuid=uuid: sysfs.exists(f"{MDEV_DEVICES}/{uuid}"), timeout, f"mdev {uuid}", deadline=deadline
            )
        except RestoreError as exc:
            problems[uuid] = f"mdev {uuid} held by {domain} ({mdev_type} on {parent}): {exc}"
            continue
        lines.append(f"mdev {uuid}: recreated ({mdev_type} on {parent})")
    return lines, problems


# -- comparing the host with the record ------------------------------------------------------------------
def compare(sysfs: Sysfs, states: dict[str, list[dict]], run=None, said: dict | None = None) -> list[str]:
    """What the host lacks of its record: one sentence per item (empty when it matches). ``said``: the
    mdevs already reported, with their reason, as {UUID: sentence}."""
    missing = []
    for state in states["sriov"]:
        have = len(sysfs.vfs(state["address"]))
        if have != state["numvfs"]:
            missing.append(f"{state['address']}: {have} VFs, recorded {state['numvfs']}")
    for state in states["mig"]:
        if run is None:
            missing.append(f"{state['address']}: MIG state not checked (nvidia-smi runs only on the live host)")
            continue
        mode = mig_mode(run, state["address"])
        if mode is None or mode[0] != "Enabled":
            missing.append(f"{state['address']}: MIG mode is {mode[0] if mode else 'unknown'}, recorded enabled")
            continue
        have = sorted(gpu_instances(run, state["address"]) or [])
        want = sorted((i["profile_id"], i["start"]) for i in state["instances"])
        if have != want:
            missing.append(f"{state['address']}: GPU instances (profile id, start) {have}, recorded {want}")
    for state in states["vgpu"]:
        vfs = set(sysfs.vfs(state["address"]))
        for vf in state["vfs"]:
            if vf not in vfs:
                missing.append(f"{vf}: not a VF of {state['address']}")
            elif current_type(sysfs, vf) != state["type_id"]:
                missing.append(f"{vf}: vGPU type {current_type(sysfs, vf)}, recorded {state['type_id']}")
    held, _warnings = held_mdevs(sysfs)
    present = present_mdevs(sysfs)
    for uuid, domain in sorted(held.items()):
        if uuid not in present:
            missing.append((said or {}).get(uuid) or f"mdev {uuid} held by {domain}: missing")
    return missing


def write_boot_state(sysfs: Sysfs, status: str, missing: list[str], message: str | None, actions: list[str]) -> None:
    document = {
        "status": status,
        "missing": missing[:256],
        "message": message,
        "actions": actions[:1024],
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    sysfs.write_file(BOOT_STATE, json.dumps(document, indent=2, sort_keys=True) + "\n")


# -- the whole boot --------------------------------------------------------------------------------------
def restore(root: str = "/", run=None, timeout: float = 120.0, deadline: float | None = None) -> list[str]:
    """Apply every state file and bring back the mdevs instances hold; compare the host with the record;
    write the boot state. Returns one line per action. Raises RestoreError on the first failure (the boot
    state then says why), or when the host still lacks something of its record.

    ``run`` runs nvidia-smi for *this* root (the command line gives one only for ``/``).
    """
    timeout = check_seconds(timeout)
    clock = Deadline(None if deadline is None else check_seconds(deadline, "deadline", MAX_DEADLINE))
    sysfs = Sysfs(root)
    done: list[str] = []
    try:
        states = {kind: _states(sysfs, kind) for kind in STATE_KINDS}  # all checked before any write
        _check_against_host(sysfs, states)
        if states["mig"] and run is None:
            raise RestoreError(
                f"MIG state files under {STATE_DIR}/mig need nvidia-smi, which runs only for the live host (root /); "
                f"not run for the root {root}"
            )
        for state in states["mig"]:
            done.append(enable_mig_mode(state, run, timeout, clock))
        for state in states["sriov"]:
            pf = state["address"]
            wait_for(
                lambda pf=pf: sysfs.exists(f"{PCI}/{pf}/driver"),
                timeout,
                f"PF {pf} to be bound to its driver",
                deadline=clock,
            )
            changed = set_numvfs(sysfs, pf, state["numvfs"], timeout, clock)
            done.append(f"{pf}: {state['numvfs']} VFs" + ("" if changed else " (already)"))
        for state in states["mig"]:
            done.append(restore_mig(state, run, timeout, clock))
        for state in states["vgpu"]:
            gpu = state["address"]
            for vf in state["vfs"]:
                wait_for(lambda vf=vf: sysfs.exists(f"{PCI}/{vf}"), timeout, f"VF {vf} of {gpu}", deadline=clock)
                if vf not in sysfs.vfs(gpu):
                    raise RestoreError(
                        f"the vGPU state file of {gpu} names {vf}, which is not a VF of that GPU; refusing to set it"
                    )
                wanted = state["type_id"]
                # the vGPU manager lists a MIG-backed type only once its GPU instance exists: wait for it
                wait_for(
                    lambda vf=vf, wanted=wanted: (
                        not wanted or current_type(sysfs, vf) == wanted or wanted in (creatable_types(sysfs, vf) or {})
                    ),
                    timeout,
                    f"vGPU type {wanted} to be creatable on VF {vf}",
                    deadline=clock,
                )
                changed = set_vgpu_type(sysfs, vf, wanted, timeout, clock)
                done.append(f"{vf}: vGPU type {wanted}" + ("" if changed else " (already)"))
        lines, problems = restore_mdevs(sysfs, timeout, clock)
        done.extend(lines)
        missing = compare(sysfs, states, run, problems)
    except RestoreError as exc:
        _try_write_state(sysfs, "failed", [], str(exc), done)
        raise
    if missing:
        message = "the host lacks part of its recorded state: " + "; ".join(missing)
        _try_write_state(sysfs, "failed", missing, message, done)
        raise RestoreError(message)
    _try_write_state(sysfs, "ok", [], None, done)
    try:
        record_mdevs(sysfs)
    except RestoreError as exc:
        done.append(f"the mdev record was not written: {exc}")
    return done


def _try_write_state(sysfs: Sysfs, status: str, missing: list[str], message: str | None, done: list[str]) -> None:
    with contextlib.suppress(RestoreError):  # the unit's own status and journal still say why
        write_boot_state(sysfs, status, missing, message, done)
