# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One file change: what a host module wants a file to hold, and the one comparison that decides it.

Every host module plans its edits as :class:`FileChange` values: ``before`` is the file's text now
(``None`` when the file is absent), ``after`` the text it should hold (``None`` to delete it). The same
``changed`` drives the module's ``changed``, what check mode reports, the ``diff`` and whether
:meth:`FileChange.apply` touches the disk, so the three can never disagree.

Absent and empty are the same state when the wish is "no file": an empty file where the plan deletes
is left alone. Writes go through :meth:`HostRoot.write_text` (temp file + rename inside the root).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot


@dataclass(frozen=True)
class FileChange:
    """``path`` (a host path) going from ``before`` to ``after``; ``None`` means no file."""

    path: str
    before: str | None
    after: str | None
    mode: int = 0o644

    @classmethod
    def of(cls, host: HostRoot, path: str, after: str | None, mode: int = 0o644) -> FileChange:
        """The change that makes ``path`` hold ``after``, with ``before`` read from the host."""
        return cls(path, host.read_existing(path), after, mode)

    @property
    def changed(self) -> bool:
        if self.after is None:
            return bool(self.before)
        return self.before != self.after

    def diff(self) -> dict:
        """Ansible's diff for this file (``before_header``/``after_header`` name the path)."""
        return {
            "before_header": self.path,
            "after_header": self.path,
            "before": self.before or "",
            "after": self.after or "",
        }

    def apply(self, host: HostRoot) -> bool:
        """Make the file hold ``after`` (delete it for ``None``); nothing happens when unchanged."""
        if not self.changed:
            return False
        if self.after is None:
            host.remove(self.path)
        else:
            host.write_text(self.path, self.after, mode=self.mode)
        return True


def changed_files(changes: Iterable[FileChange]) -> list[FileChange]:
    return [c for c in changes if c.changed]


def diffs(changes: Iterable[FileChange]) -> list[dict]:
    """The diff list of the changed files, in plan order."""
    return [c.diff() for c in changes if c.changed]


def apply_all(host: HostRoot, changes: Iterable[FileChange], check_mode: bool = False) -> list[str]:
    """Apply every change (none in check mode); returns the paths that change, in plan order."""
    paths = []
    for change in changes:
        if change.changed:
            if not check_mode:
                change.apply(host)
            paths.append(change.path)
    return paths
