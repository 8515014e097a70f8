# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The boot side of shared GPUs as files under a root: the restore unit, the ready target, the drop-ins
that make libvirt, nova-compute and Kolla's container units wait for it, the restore code and its command,
and the ``multi-user.target.wants`` links ``systemctl enable`` would make.

Every file and link is planned as a change (before -> after) and written through :class:`HostRoot`, so
a link at ``<root>/etc/systemd/system``, ``/usr/local`` or ``multi-user.target.wants`` is followed as
the host itself would follow it, inside the root, and nothing is ever written outside it. Unit files are
rendered here from checked values only (unit names, an executable path, whole numbers of seconds): no
value can carry a newline into a unit file and add a line to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._names import systemd

SYSTEMD_DIR = "/etc/systemd/system"
LIBEXEC = "/usr/local/libexec/accel-openstack"
UNIT = "accel-openstack-gpu-restore.service"
TARGET = "accel-openstack-ready.target"
DROP_IN = "accel-openstack-ready.conf"
WANTS = f"{SYSTEMD_DIR}/multi-user.target.wants"
MAX_UNITS = 64
DEFAULT_REQUIRED_BY = (
    "libvirtd.service",
    "virtqemud.service",
    "nova-compute.service",
    "kolla-nova_libvirt-container.service",
    "kolla-nova_compute-container.service",
)
DEFAULT_AFTER = (
    "systemd-modules-load.service",
    "nvidia-persistenced.service",
    "nvidia-vgpud.service",
    "nvidia-vgpu-mgr.service",
)
HEADER = "# Managed by accel.openstack (module gpu_boot_unit); changes are overwritten.\n"


class BootUnitError(AccelError):
    """Bad input for the boot unit; nothing was written."""


@dataclass(frozen=True)
class LinkChange:
    """A symbolic link ``path`` going from target ``before`` to ``after`` (``None``: no link)."""

    path: str
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> dict:
        return {
            "before_header": self.path,
            "after_header": self.path,
            "before": f"-> {self.before}\n" if self.before else "",
            "after": f"-> {self.after}\n" if self.after else "",
        }

    def apply(self, host: HostRoot) -> None:
        if not self.changed:
            return
        if self.after is None:
            host.remove(self.path)
        else:
            host.symlink(self.path, self.after)


def _units(label: str, value: object) -> list[str]:
    if not isinstance(value, list):
        raise BootUnitError(f"{label} must be a list of systemd unit names, e.g. ['nova-compute.service']")
    if len(value) > MAX_UNITS:
        raise BootUnitError(f"{label} lists {len(value)} units; at most {MAX_UNITS}")
    out = []
    for index, name in enumerate(value):
        if not systemd.is_unit_name(name):
            raise BootUnitError(f"{label}[{index}] {str(name)[:80]!r} is not a systemd unit name: {systemd.UNIT_RULE}")
        if name in (UNIT, TARGET):
            raise BootUnitError(f"{label}[{index}] {name}: the collection's own unit cannot be listed here")
        if name not in out:
            out.append(name)
    return out


def _seconds(label: str, value: object, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise BootUnitError(f"{label} {value!r} is not a whole number of seconds from 1 to {high}")
    return value


def check(params: dict) -> dict:
    """The options, checked: every value that reaches a unit file is a unit name, a path or a number."""
    required_by = _units("required_by", params.get("required_by"))
    after = _units("after", params.get("after"))
    both = sorted(set(required_by) & set(after))
    if both:
        raise BootUnitError(
            f"{', '.join(both)} in both required_by and after: a unit cannot start both before and after the "
            "restore; drop it from one list"
        )
    python = params.get("python")
    if not systemd.is_exec_path(python):
        raise BootUnitError(
            f"python {str(python)[:80]!r} is not an absolute path of plain components (no space, '..' or "
            "control character); give the host's Python 3, e.g. /usr/bin/python3"
        )
    timeout = _seconds("timeout", params.get("timeout"), int(gpu_restore.MAX_TIMEOUT))
    deadline = _seconds("deadline", params.get("deadline"), int(gpu_restore.MAX_DEADLINE))
    if deadline < timeout:
        raise BootUnitError(f"deadline {deadline} is shorter than one wait (timeout {timeout}); raise it")
    command = params.get("command")
    if params.get("state", "present") == "present" and (not isinstance(command, str) or not command.strip()):
        raise BootUnitError(
            "command is empty; give the text of the gpu-restore command (the role's gpu_restore_cli.py)"
        )
    return {
        "required_by": required_by,
        "after": after,
        "python": python,
        "timeout": timeout,
        "deadline": deadline,
        "command": command,
    }


def render_service(options: dict) -> str:
    run = f"{options['python']} {LIBEXEC}/gpu-restore"
    return (
        HEADER
        + "# Restores MIG mode, SR-IOV VFs, GPU instances, vGPU types and the mdevs instances hold, from\n"
        + "# /etc/accel-openstack/, then records the result in /var/lib/accel-openstack/boot-state.json.\n"
        + "[Unit]\n"
        + "Description=accel.openstack: restore shared GPUs and the mediated devices instances hold\n"
        + (f"After={' '.join(options['after'])}\n" if options["after"] else "")
        + f"Before={TARGET}\n"
        + "\n[Service]\n"
        + "Type=oneshot\n"
        + "RemainAfterExit=yes\n"
        + f"ExecStart={run} --timeout {options['timeout']} --deadline {options['deadline']}\n"
        + f"ExecStop={run} --record-mdevs\n"
        + f"TimeoutStartSec={options['deadline'] + 30}\n"
        + "TimeoutStopSec=60\n"
        + "\n[Install]\n"
        + "WantedBy=multi-user.target\n"
    )


def render_target() -> str:
    return (
        HEADER
        + "[Unit]\n"
        + "Description=accel.openstack: shared GPUs restored; libvirt and nova-compute may start\n"
        + f"Requires={UNIT}\n"
        + f"After={UNIT}\n"
        + "\n[Install]\n"
        + "WantedBy=multi-user.target\n"
    )


def render_drop_in() -> str:
    return (
        HEADER
        + "# Start only once the host's shared GPUs are restored; stay stopped when the restore fails.\n"
        + "[Unit]\n"
        + f"Requires={TARGET}\n"
        + f"After={TARGET}\n"
    )


def drop_in_path(unit: str) -> str:
    return f"{SYSTEMD_DIR}/{unit}.d/{DROP_IN}"


def plan(host: HostRoot, params: dict, restore_source: str) -> tuple[list[FileChange], list[LinkChange], dict]:
    """The file and link changes that make the root hold the boot unit (or none of it, for ``absent``)."""
    options = check(params)
    present = params.get("state", "present") == "present"
    wanted = {
        f"{LIBEXEC}/gpu_restore.py": restore_source,
        f"{LIBEXEC}/gpu-restore": options["command"],
        f"{SYSTEMD_DIR}/{UNIT}": render_service(options),
        f"{SYSTEMD_DIR}/{TARGET}": render_target(),
    }
    wanted.update({drop_in_path(unit): render_drop_in() for unit in options["required_by"]})
    files = [FileChange.of(host, path, text if present else None) for path, text in wanted.items()]
    links = []
    for name in (UNIT, TARGET):
        path = f"{WANTS}/{name}"
        links.append(LinkChange(path, host.readlink(path), f"{SYSTEMD_DIR}/{name}" if present else None))
    return files, links, options


def apply(host: HostRoot, files: list[FileChange], links: list[LinkChange]) -> list[str]:
    """Write the changed files, then the links; returns the paths that changed."""
    changed = []
    for change in files:
        if change.apply(host):
            changed.append(change.path)
    for link in links:
        if link.changed:
            link.apply(host)
            changed.append(link.path)
    return changed
