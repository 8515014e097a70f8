# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way to read and write a host's files under a filesystem root, confined to that root.

Every module that touches host files takes ``root`` (default ``/``) so the same code configures a live
host, a chroot, a mounted image or a test fixture. Paths given to this class are absolute paths *as seen
from inside the host* (``/sys/bus/pci/devices``). Every path is resolved inside the root before it is
used, for reads, writes and deletes alike:

- symbolic links are followed as if ``root`` were ``/``: an absolute link target starts again at the
  root, a relative one at the link's directory, and ``..`` stops at the root as it stops at ``/``;
- the resolved path is checked once more against the real root, so a path that still leaves it (a link
  swapped while we resolve) is refused with a :class:`HostRootError` naming the path;
- reads open only regular files (a FIFO, device or socket is reported, never opened) and read at most
  a bounded number of bytes, saying when they were cut;
- writes are atomic (temp file + rename in the same directory) and replace only regular files; a
  directory, FIFO, device or socket at the target is refused. Deletes unlink only regular files and
  links (the entry itself, as ``rm`` does), never a directory.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

MAX_READ = 1 << 20  # bytes read from one file unless the caller asks for more
MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup
# Entries listed from one directory: far above any real sysfs (a host with 64 PFs of 256 VFs lists
# 16k devices), low enough that a hostile tree cannot make discovery walk without end.
MAX_ENTRIES = 32768


def _is_utf8(name: str) -> bool:
    """Whether a name read from the file system is valid UTF-8 (Python decodes other bytes as surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(name: str) -> str:
    """A name as printable ASCII, its undecodable bytes as ``\\xNN``."""
    return ascii(os.fsencode(name))[1:]


class HostRootError(AccelError):
    """The root is unusable, or a path under it cannot be used safely; the message names the path."""


@dataclass(frozen=True)
class FileRead:
    """The bytes read from one regular file; ``truncated`` when the file held more than the limit."""

    data: bytes
    truncated: bool


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


class HostRoot:
    """A host filesystem seen through ``root``, with read helpers that record what they could not read."""

    def __init__(self, root: str = "/"):
        if not root:
            raise HostRootError("root is empty; give the host's filesystem root, '/' for the live host")
        given = os.path.abspath(root)
        if not os.path.exists(given):
            raise HostRootError(f"root {given} does not exist; give the host's filesystem root")
        if not os.path.isdir(given):
            raise HostRootError(f"root {given} is not a directory")
        if not os.access(given, os.R_OK | os.X_OK):
            raise HostRootError(f"root {given} is not readable by this user; run with become")
        self.root = os.path.realpath(given)
        self.warnings: list[str] = []

    @property
    def is_live(self) -> bool:
        return self.root == "/"

    def warn(self, message: str) -> None:
        # A name read from the host that is not UTF-8 (decoded with surrogate escapes) is shown escaped:
        # a result holding it would be refused by Ansible as an invalid UTF-8 string.
        message = message.encode("utf-8", "backslashreplace").decode("utf-8")
        if message not in self.warnings:
            self.warnings.append(message)

    # -- paths -----------------------------------------------------------------------------------
    def _join(self, host_path: str) -> str:
        rel = "/".join(p for p in host_path.split("/") if p)
        return os.path.join(self.root, rel) if rel else self.root

    def _inside(self, real: str) -> bool:
        return real == self.root or self.is_live or real.startswith(self.root + os.sep)

    def _checked(self, host_path: str, resolved: str) -> str:
        """The real path of an already resolved host path, refused when it would leave the root."""
        real = self._join(resolved)
        if not self._inside(os.path.realpath(real)):
            raise HostRootError(
                f"{host_path}: resolves outside the root {self.root} (a link changed while it was read); "
                "refusing to use it; check the links on that path"
            )
        return real

    def path(self, host_path: str) -> str:
        """The real path on this machine for ``host_path``, every link on it resolved inside the root."""
        return self._checked(host_path, self.resolve(host_path, strict=True))

    def parent_path(self, host_path: str) -> tuple[str, str]:
        """(real path of the resolved parent directory, final name): the final link is not followed."""
        parts = [p for p in host_path.split("/") if p and p != "."]
        if not parts or parts[-1] == "..":
            raise HostRootError(f"{host_path}: names no file under the root; give a file's path")
        parent = "/" + "/".join(parts[:-1])
        return self._checked(host_path, self.resolve(parent, strict=True)), parts[-1]

    def host_path(self, real_path: str) -> str:
        """The inverse of :meth:`path`."""
        rel = os.path.relpath(real_path, self.root)
        return "/" if rel == "." else "/" + rel

    def resolve(self, host_path: str, max_links: int = MAX_LINKS, strict: bool = False) -> str:
        """Resolve symlinks component by component inside the root; returns a host path.

        Relative links resolve against their own directory, absolute links against the root, and
        ``..`` never climbs above the root, so nothing under the root can point outside it. Dangling
        links resolve to where they point. A loop (more than ``max_links`` links) is a warning that
        returns the path reached, or a :class:`HostRootError` when ``strict``.
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
            target = self.readlink(candidate, _resolved_parent=True)
            if target is None:
                resolved.append(part)
                continue
            hops += 1
            if hops > max_links:
                message = f"{host_path}: too many levels of symbolic links"
                if strict:
                    raise HostRootError(message + "; fix the link loop under the root")
                self.warn(message)
                return candidate
            if target.startswith("/"):
                resolved = []
            parts = [p for p in target.split("/") if p] + parts
        return "/" + "/".join(resolved)

    # -- reads that never raise: they return a default and record a warning naming the path ------
    def _stat(self, host_path: str) -> os.stat_result | None:
        try:
            return os.stat(self.path(host_path))
        except (OSError, HostRootError):
            return None

    def exists(self, host_path: str) -> bool:
        try:
            return os.path.lexists(self.path(host_path))
        except HostRootError:
            return False

    def is_dir(self, host_path: str) -> bool:
        info = self._stat(host_path)
        return info is not None and stat.S_ISDIR(info.st_mode)

    def is_file(self, host_path: str) -> bool:
        info = self._stat(host_path)
        return info is not None and stat.S_ISREG(info.st_mode)

    def is_executable(self, host_path: str) -> bool:
        try:
            real = self.path(host_path)
        except HostRootError:
            return False
        return os.path.isfile(real) and os.access(real, os.X_OK)

    def listdir(self, host_path: str, missing_ok: bool = True, limit: int = MAX_ENTRIES) -> list[str]:
        """The sorted names in a directory, at most ``limit`` of them (a warning says when it was cut)."""
        try:
            names = []
            with os.scandir(self.path(host_path)) as entries:
                for entry in entries:
                    if len(names) >= limit:
                        self.warn(f"{host_path}: more than {limit} entries; only the first {limit} are read")
                        break
                    if not _is_utf8(entry.name):
                        self.warn(f"{host_path}: entry {_escaped(entry.name)} is not a UTF-8 name; skipped")
                        continue
                    names.append(entry.name)
            return sorted(names)
        except FileNotFoundError:
            if not missing_ok:
                self.warn(f"{host_path}: missing")
            return []
        except HostRootError as exc:
            self.warn(str(exc))
            return []
        except OSError as exc:
            self.warn(f"{host_path}: cannot list ({exc.strerror or exc})")
            return []

    def read_file(self, host_path: str, limit: int = MAX_READ) -> FileRead | None:
        """At most ``limit`` bytes of a regular file; None when it is absent.

        Raises :class:`HostRootError` for what cannot be read safely (not a regular file, a link
        loop, a path that leaves the root) and OSError for other read failures.
        """
        real = self.path(host_path)
        try:
            info = os.stat(real)
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(info.st_mode):
            raise HostRootError(f"{host_path}: cannot read (it is {_kind(info.st_mode)}, not a regular file)")
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped between stat and open
                raise HostRootError(f"{host_path}: cannot read (it is not a regular file)")
            chunks: list[bytes] = []
            size = 0
            while size <= limit:
                chunk = os.read(fd, min(1 << 16, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        return FileRead(data[:limit], len(data) > limit)

    def read_text(
        self, host_path: str, default: str | None = None, missing_ok: bool = True, limit: int = MAX_READ
    ) -> str | None:
        """A file's UTF-8 text; ``default`` with a warning naming the path when it cannot be read.

        A file longer than ``limit`` bytes yields its first ``limit`` bytes and a warning saying so.
        """
        try:
            found = self.read_file(host_path, limit)
        except HostRootError as exc:
            self.warn(str(exc))
            return default
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return default
            self.warn(f"{host_path}: cannot read ({exc.strerror or exc})")
            return default
        if found is None:
            if not missing_ok:
                self.warn(f"{host_path}: missing")
            return default
        if found.truncated:
            self.warn(f"{host_path}: longer than {limit} bytes; only the first {limit} were read")
        try:
            return found.data.decode("utf-8")
        except UnicodeDecodeError:
            if found.truncated:  # cut inside a character
                return found.data.decode("utf-8", errors="ignore")
            self.warn(f"{host_path}: not text")
            return default

    def read_existing(self, host_path: str, limit: int = MAX_READ) -> str | None:
        """The whole text of a file about to be rewritten; None when absent.

        Anything that would make a rewrite lose the operator's bytes is refused with a
        :class:`HostRootError`: a file that is not regular, too large to read whole, or not UTF-8.
        """
        try:
            found = self.read_file(host_path, limit)
        except HostRootError as exc:
            raise HostRootError(f"{exc}; a file the collection edits is expected there, move it away") from exc
        except OSError as exc:
            raise HostRootError(f"{host_path}: cannot read ({exc.strerror or exc}); fix its permissions") from exc
        if found is None:
            return None
        if found.truncated:
            raise HostRootError(f"{host_path}: larger than {limit} bytes; it is not ours to rewrite, move it away")
        try:
            return found.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HostRootError(f"{host_path}: not UTF-8 text; refusing to rewrite it, fix or move it away") from exc

    def read_attr(self, host_path: str, missing_ok: bool = True) -> str | None:
        """A sysfs attribute: the first line, stripped; None when absent or unreadable."""
        text = self.read_text(host_path, missing_ok=missing_ok)
        if text is None:
            return None
        return text.strip().splitlines()[0].strip() if text.strip() else ""

    def readlink(self, host_path: str, _resolved_parent: bool = False) -> str | None:
        """The target of the link ``host_path`` (its directory resolved inside the root); None if no link."""
        try:
            if _resolved_parent:
                real = self._join(host_path)
            else:
                directory, name = self.parent_path(host_path)
                real = os.path.join(directory, name)
            target = os.readlink(real)
            if not _is_utf8(target):
                self.warn(f"{host_path}: link target {_escaped(target)} is not a UTF-8 name; ignored")
                return None
            return target
        except HostRootError as exc:
            self.warn(str(exc))
            return None
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOTDIR):  # not a link / a component is not a directory
                return None
            self.warn(f"{host_path}: cannot read link ({exc.strerror or exc})")
            return None

    # -- writes: atomic, inside the root, only over regular files ---------------------------------
    def write_text(self, host_path: str, content: str, mode: int = 0o644) -> bool:
        """Write ``content`` atomically (temp file + rename); returns True.

        A link at ``host_path`` is followed inside the root and its target written. Raises
        :class:`HostRootError` when the target is not a regular file or its directory cannot be made.
        """
        real = self.path(host_path)
        try:
            info = os.lstat(real)
        except FileNotFoundError:
            info = None
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise HostRootError(
                f"{host_path}: is {_kind(info.st_mode)}; refusing to replace it with a file, move it away"
            )
        directory = os.path.dirname(real)
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise HostRootError(
                f"{self.host_path(directory)}: cannot create the directory ({exc.strerror or exc}); "
                "a file in the way must be moved"
            ) from exc
        if not self._inside(os.path.realpath(directory)):  # a link swapped in while the directory was made
            raise HostRootError(f"{host_path}: its directory resolves outside the root {self.root}; not written")
        try:
            fd, tmp = tempfile.mkstemp(prefix=".accel-", dir=directory)
        except OSError as exc:
            raise HostRootError(f"{host_path}: cannot write ({exc.strerror or exc}); run with become") from exc
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(content)
            os.chmod(tmp, mode)
            os.replace(tmp, real)
        except BaseException as exc:
            if os.path.lexists(tmp):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise HostRootError(f"{host_path}: cannot write ({exc.strerror or exc})") from exc
            raise
        return True

    def write_attr(self, host_path: str, value: str) -> None:
        """One plain write(2) to an existing sysfs attribute (a rename would not reach the kernel)."""
        real = self.path(host_path)
        try:
            info = os.stat(real)
            if not stat.S_ISREG(info.st_mode):
                raise HostRootError(f"{host_path}: is {_kind(info.st_mode)}, not a sysfs attribute; not written")
            # O_TRUNC as a shell's "echo N > attr": sysfs ignores it; a plain file (a fake tree) then holds the value
            fd = os.open(real, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
            try:
                os.write(fd, value.encode("ascii"))
            finally:
                os.close(fd)
        except OSError as exc:
            raise HostRootError(f"{host_path}: writing {value!r} failed ({exc.strerror or exc})") from exc

    def make_dirs(self, host_path: str) -> str:
        """Make the directory ``host_path`` (and its parents) inside the root; returns its real path.

        Every existing link on the path is followed inside the root, so the directories are made where
        the host itself would make them, never outside the root.
        """
        real = self.path(host_path)
        try:
            os.makedirs(real, mode=0o755, exist_ok=True)
        except OSError as exc:
            raise HostRootError(
                f"{host_path}: cannot create the directory ({exc.strerror or exc}); a file in the way must be moved"
            ) from exc
        if not self._inside(os.path.realpath(real)):  # a link swapped in while it was made
            raise HostRootError(f"{host_path}: resolves outside the root {self.root}; not made")
        if not os.path.isdir(real):
            raise HostRootError(f"{host_path}: is not a directory; move it away")
        return real

    def symlink(self, host_path: str, target: str) -> bool:
        """Make ``host_path`` a symbolic link to ``target`` (as ``ln -sfn`` would, atomically); True when changed.

        The link's directory is resolved inside the root (made when missing); an existing link there is
        replaced, a file or directory is refused. ``target`` is written as given: the host resolves it.
        """
        parts = [p for p in host_path.split("/") if p and p != "."]
        if not parts or parts[-1] == "..":
            raise HostRootError(f"{host_path}: names no link under the root; give a link's path")
        directory = self.make_dirs("/" + "/".join(parts[:-1]))
        real = os.path.join(directory, parts[-1])
        try:
            info = os.lstat(real)
        except FileNotFoundError:
            info = None
        if info is not None:
            if not stat.S_ISLNK(info.st_mode):
                raise HostRootError(f"{host_path}: is {_kind(info.st_mode)}; refusing to replace it with a link")
            if os.readlink(real) == target:
                return False
        temp = os.path.join(directory, f".accel-link-{os.getpid()}-{parts[-1]}"[:255])
        try:
            if os.path.lexists(temp):
                os.unlink(temp)
            os.symlink(target, temp)
            os.replace(temp, real)
        except OSError as exc:
            if os.path.lexists(temp):
                os.unlink(temp)
            raise HostRootError(f"{host_path}: cannot make the link ({exc.strerror or exc})") from exc
        return True

    def remove(self, host_path: str) -> bool:
        """Delete the entry ``host_path`` (a link itself, not its target); True when it was there."""
        directory, name = self.parent_path(host_path)
        real = os.path.join(directory, name)
        try:
            info = os.lstat(real)
        except FileNotFoundError:
            return False
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            raise HostRootError(f"{host_path}: is {_kind(info.st_mode)}; refusing to delete it, move it away")
        try:
            os.unlink(real)
        except OSError as exc:
            raise HostRootError(f"{host_path}: cannot delete ({exc.strerror or exc})") from exc
        return True
