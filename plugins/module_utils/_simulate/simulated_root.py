# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A simulated host root in a directory: what it should hold for a profile, what it holds, and the change.

:func:`plan` compares the root :func:`host_root.plan_root` gives for a hardware profile with what ``dest``
holds now (files, links and directories, read without following a link); the same comparison gives
``changed``, the diff and the result. :func:`apply` writes nothing unless the plan changes something,
and then empties ``dest`` and writes the whole root into it. ``dest`` must be absent, an empty directory
or a directory this code wrote before (it holds :data:`MARKER`): anything else is refused before a byte is
written, so a typo in ``dest`` can never empty a directory that holds other things.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._simulate import host_root

MARKER = "/.accel-simulated-host.json"
WRITER = "accel.openstack.simulated_host"


class SimulatedRootError(AccelError):
    """A dest or profile the module refuses; nothing was written."""


def _marker_of(dest: str) -> dict | None:
    """The marker's content when ``dest`` holds one as a regular file, else None."""
    path = os.path.join(dest, MARKER.lstrip("/"))
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("written_by") == WRITER else None


def check_dest(dest: str) -> bool:
    """Refuse a dest the module must not write; returns whether it exists already."""
    if not os.path.isabs(dest):
        raise SimulatedRootError(f"dest {dest} is not an absolute path; give the directory as an absolute path")
    if os.path.islink(dest):
        raise SimulatedRootError(
            f"dest {dest} is a symbolic link; give the directory itself (the module never writes through a link)"
        )
    if not os.path.lexists(dest):
        parent = os.path.dirname(dest.rstrip("/")) or "/"
        if not os.path.isdir(parent):
            raise SimulatedRootError(
                f"the parent directory of dest {dest} does not exist; create {parent} first "
                "(ansible.builtin.file with state: directory)"
            )
        return False
    if not os.path.isdir(dest):
        raise SimulatedRootError(f"dest {dest} exists and is not a directory; give an empty or new directory")
    if os.listdir(dest) and _marker_of(dest) is None:
        raise SimulatedRootError(
            f"dest {dest} is a directory that holds other files and was not written by {WRITER} "
            f"(no {MARKER.lstrip('/')} in it); give an empty or new directory, or one this module built before"
        )
    return True


def read_tree(dest: str) -> dict[str, tuple]:
    """What ``dest`` holds, as :class:`host_root.RootTree` entries; links are read, never followed."""
    entries: dict[str, tuple] = {"/": ("dir",)}
    for directory, dirs, files in os.walk(dest):
        relative = os.path.relpath(directory, dest).replace(os.sep, "/")
        base = "" if relative == "." else "/" + relative
        for name in sorted(dirs + files):
            real = os.path.join(directory, name)
            host_path = base + "/" + name
            if os.path.islink(real):
                entries[host_path] = ("link", os.readlink(real))
            elif os.path.isdir(real):
                entries[host_path] = ("dir",)
            elif os.path.isfile(real):
                with open(real, "rb") as handle:
                    entries[host_path] = ("file", handle.read().decode("utf-8", "replace"))
            else:
                entries[host_path] = ("other",)
    return entries


def _describe(entry: tuple | None) -> str:
    if entry is None:
        return "absent"
    if entry[0] == "file":
        data = entry[1].encode("utf-8")
        return f"file, {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:12]}"
    if entry[0] == "link":
        return f"link to {entry[1]}"
    if entry[0] == "dir":
        return "directory"
    return "neither a file, a link nor a directory"


class Plan:
    """``dest`` now (``current``) and as the profile builds it (``desired``)."""

    def __init__(self, dest: str, name: str, current: dict[str, tuple], desired: dict[str, tuple]) -> None:
        self.dest = dest
        self.name = name
        self.current = current
        self.desired = desired
        self.differing = sorted(p for p in set(current) | set(desired) if current.get(p) != desired.get(p))

    @property
    def changed(self) -> bool:
        return bool(self.differing)

    def diff(self) -> dict:
        before = [f"{p}: {_describe(self.current.get(p))}" for p in self.differing]
        after = [f"{p}: {_describe(self.desired.get(p))}" for p in self.differing]
        return {
            "before_header": self.dest,
            "after_header": f"{self.dest} (profile {self.name})",
            "before": "".join(line + "\n" for line in before),
            "after": "".join(line + "\n" for line in after),
        }

    def result(self) -> dict:
        return {
            "dest": self.dest,
            "profile": self.name,
            "changed_paths": len(self.differing),
            "files": sum(1 for e in self.desired.values() if e[0] == "file"),
            "links": sum(1 for e in self.desired.values() if e[0] == "link"),
        }


def plan(dest: str, name: str, profile: object, pci_ids: str | None = None) -> Plan:
    """The plan for ``dest`` to hold the root of ``profile`` (named ``name``); raises SimulatedRootError."""
    exists = check_dest(dest)
    if not isinstance(profile, dict):
        raise SimulatedRootError(
            f"profile {name} is a {type(profile).__name__}, not a mapping; give the content of a hardware "
            "profile (roles/simulated_fleet/files/hardware/<name>.yml read with from_yaml)"
        )
    try:
        tree = host_root.plan_root(profile, pci_ids)
    except (KeyError, ValueError, TypeError, AttributeError, IndexError) as exc:
        what = f"{exc.args[0]} is missing" if isinstance(exc, KeyError) and exc.args else str(exc)
        raise SimulatedRootError(
            f"profile {name} is not a hardware profile the simulation can build ({what}); compare it with "
            "the profiles in roles/simulated_fleet/files/hardware"
        ) from None
    tree.write(MARKER, json.dumps({"written_by": WRITER, "profile": name}, indent=2, sort_keys=True) + "\n")
    current = read_tree(dest) if exists else {}
    return Plan(dest, name, current, tree.entries)


def apply(p: Plan) -> None:
    """Make ``dest`` hold the planned root: emptied, then written whole (nothing when unchanged)."""
    if not p.changed:
        return
    if not os.path.lexists(p.dest):
        os.mkdir(p.dest)
    for name in os.listdir(p.dest):
        real = os.path.join(p.dest, name)
        if os.path.isdir(real) and not os.path.islink(real):
            shutil.rmtree(real)
        else:
            os.unlink(real)
    tree = host_root.RootTree()
    tree.entries = p.desired
    tree.write_to(p.dest)
