# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way to read and write a host's files under a filesystem root.

Every module that touches host files takes ``root`` (default ``/``) so the same code configures a live
host, a chroot, a mounted image or a test fixture. Paths given to this class are always absolute paths
*as seen from inside the host* (``/sys/bus/pci/devices``); symlinks are resolved inside the root, never
on the machine running the module.
"""

from __future__ import annotations

import errno
import os
import tempfile


class HostRootError(Exception):
    """The root itself is unusable (missing, not a directory, unreadable)."""


class HostRoot:
    """A host filesystem seen through ``root``, with read helpers that record what they could not read."""

    def __init__(self, root: str = "/"):
        if not root:
            raise HostRootError("root is empty; give the host's filesystem root, '/' for the live host")
        self.root = os.path.abspath(root)
        if not os.path.exists(self.root):
            raise HostRootError(f"root {self.root} does not exist; give the host's filesystem root")
        if not os.path.isdir(self.root):
            raise HostRootError(f"root {self.root} is not a directory")
        if not os.access(self.root, os.R_OK | os.X_OK):
            raise HostRootError(f"root {self.root} is not readable by this user; run with become")
        self.warnings: list[str] = []

    @property
    def is_live(self) -> bool:
        return self.root == "/"

    # -- paths -----------------------------------------------------------------------------------
    def path(self, host_path: str) -> str:
        """The real path on this machine for ``host_path`` (an absolute path inside the host)."""
        rel = host_path.lstrip("/")
        return os.path.join(self.root, rel) if rel else self.root

    def host_path(self, real_path: str) -> str:
        """The inverse of :meth:`path`."""
        rel = os.path.relpath(real_path, self.root)
        return "/" if rel == "." else "/" + rel

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    # -- reads that never raise: they return a default and record a warning naming the path ------
    def exists(self, host_path: str) -> bool:
        return os.path.lexists(self.path(host_path))

    def is_dir(self, host_path: str) -> bool:
        return os.path.isdir(self.path(host_path))

    def listdir(self, host_path: str, missing_ok: bool = True) -> list[str]:
        try:
            return sorted(os.listdir(self.path(host_path)))
        except FileNotFoundError:
            if not missing_ok:
                self.warn(f"{host_path}: missing")
            return []
        except OSError as exc:
            self.warn(f"{host_path}: cannot list ({exc.strerror or exc})")
            return []

    def read_text(self, host_path: str, default: str | None = None, missing_ok: bool = True) -> str | None:
        try:
            with open(self.path(host_path), "rb") as handle:
                data = handle.read(1 << 20)
        except FileNotFoundError:
            if not missing_ok:
                self.warn(f"{host_path}: missing")
            return default
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return default
            self.warn(f"{host_path}: cannot read ({exc.strerror or exc})")
            return default
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self.warn(f"{host_path}: not text")
            return default

    def read_attr(self, host_path: str, missing_ok: bool = True) -> str | None:
        """A sysfs attribute: the first line, stripped; None when absent or unreadable."""
        text = self.read_text(host_path, missing_ok=missing_ok)
        if text is None:
            return None
        return text.strip().splitlines()[0].strip() if text.strip() else ""

    def readlink(self, host_path: str) -> str | None:
        try:
            return os.readlink(self.path(host_path))
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.EINVAL:  # not a link
                return None
            self.warn(f"{host_path}: cannot read link ({exc.strerror or exc})")
            return None

    def resolve(self, host_path: str, max_links: int = 40) -> str:
        """Resolve symlinks component by component inside the root; returns a host path.

        Relative links resolve against their own directory, absolute links against the root, and
        ``..`` never climbs above the root, so a fixture tree cannot point outside itself. Dangling
        links resolve to where they point.
        """
        parts = [p for p in host_path.split("/") if p]
        resolved: list[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == ".":
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = "/" + "/".join(resolved + [part])
            target = self.readlink(candidate)
            if target is None:
                resolved.append(part)
                continue
            hops += 1
            if hops > max_links:
                self.warn(f"{host_path}: too many levels of symbolic links")
                return candidate
            if target.startswith("/"):
                resolved = []
            parts = [p for p in target.split("/") if p] + parts
        return "/" + "/".join(resolved)

    # -- writes: atomic, and only when the content differs -----------------------------------------
    def write_text(self, host_path: str, content: str, mode: int = 0o644) -> bool:
        """Write ``content`` atomically (temp file + rename); returns True when the file changed."""
        real = self.path(host_path)
        try:
            with open(real, encoding="utf-8") as handle:
                if handle.read() == content:
                    return False
        except (FileNotFoundError, UnicodeDecodeError):
            pass
        directory = os.path.dirname(real)
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".accel-", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(content)
            os.chmod(tmp, mode)
            os.replace(tmp, real)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return True

    def remove(self, host_path: str) -> bool:
        try:
            os.unlink(self.path(host_path))
            return True
        except FileNotFoundError:
            return False
