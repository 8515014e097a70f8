# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Commands a host change needs (update-grub, update-initramfs, modprobe, ...), run only where safe.

A command runs on the machine executing the module only when ``root`` is ``/`` *and* that root is the
running system (not a chroot). Commands that only write files of the root (``update-initramfs``,
``dracut``, ``grubby``) also run inside a complete root through ``chroot``. Everything else is
*pending*: it is recorded in ``/var/lib/accel-openstack/pending-commands.json`` inside the root and
reported on every run until it has run, so a failed or skipped command is never forgotten because
the file that asked for it no longer changes.

The record is read for the *keys* of pending commands only. What runs is always the command the
module computed from its own configuration in this run; the ``argv`` stored in the file is a
human-readable copy and is never executed, so editing the file cannot make a module run anything.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._names.text import load_json

PENDING_FILE = "/var/lib/accel-openstack/pending-commands.json"
SEARCH_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")

# How far a command reaches: "root" commands only write files inside the root they run in;
# "machine" commands need the running kernel or the real disks behind the root.
ROOT_SCOPE = "root"
MACHINE_SCOPE = "machine"


@dataclass
class Command:
    argv: list[str]
    scope: str
    purpose: str
    key: str = ""

    def __post_init__(self):
        if not self.key:
            self.key = shlex.join(self.argv)

    @property
    def text(self) -> str:
        return shlex.join(self.argv)


@dataclass
class Outcome:
    command: str
    status: str  # ran | failed | pending | would_run
    purpose: str
    reason: str = ""
    rc: int | None = None
    stdout: str = ""
    stderr: str = ""

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v not in ("", None) or k in ("command", "status")}


@dataclass
class HostCommands:
    """Runs or defers commands for the host under ``host`` (a HostRoot)."""

    host: object
    run_command: object = None  # AnsibleModule.run_command compatible: (argv) -> (rc, out, err)
    check_mode: bool = False
    outcomes: list[Outcome] = field(default_factory=list)

    # -- what kind of root is this ------------------------------------------------------------------
    @property
    def is_running_system(self) -> bool:
        """True only on the live machine: root is '/' and it is PID 1's root (not a chroot)."""
        if not self.host.is_live:
            return False
        try:
            return os.path.samefile("/proc/1/root", "/")
        except OSError:
            return False

    @property
    def is_complete_system(self) -> bool:
        return all(self.find(name) for name in ("sh", "env"))

    def find(self, name: str) -> str | None:
        """The command's path inside the root, or None when the root does not have it."""
        if name.startswith("/"):
            return name if self._is_executable(name) else None
        for directory in SEARCH_PATH:
            if self._is_executable(f"{directory}/{name}"):
                return f"{directory}/{name}"
        return None

    def _is_executable(self, host_path: str) -> bool:
        return self.host.is_executable(host_path)

    # -- pending state --------------------------------------------------------------------------------
    def pending(self) -> list[dict]:
        text = self.host.read_text(PENDING_FILE)
        if not text:
            return []
        try:
            data = load_json(text)
        except ValueError as exc:
            self.host.warn(f"{PENDING_FILE}: not JSON the collection wrote ({exc}); its pending commands are ignored")
            return []
        if not isinstance(data, list):
            self.host.warn(f"{PENDING_FILE}: not a list; its pending commands are ignored")
            return []
        return [d for d in data if isinstance(d, dict) and isinstance(d.get("key"), str) and d["key"]]

    def _save_pending(self, entries: list[dict]) -> bool:
        if self.check_mode:
            return False
        text = json.dumps(entries, indent=2, sort_keys=True) + "\n" if entries else None
        return FileChange.of(self.host, PENDING_FILE, text).apply(self.host)

    # -- running ----------------------------------------------------------------------------------------
    def why_not(self, command: Command) -> str | None:
        """None when the command can run here now, else the reason it cannot."""
        name = command.argv[0]
        if command.scope == MACHINE_SCOPE and not self.is_running_system:
            where = "a chroot" if self.host.is_live else f"the root {self.host.root}"
            return (
                f"{name} acts on the running kernel or the machine's disks, and this is {where}; "
                "run it on the host itself after it boots from this root"
            )
        if not self.host.is_live and not self.is_complete_system:
            return f"the root {self.host.root} is not a complete system (no /bin/sh or /usr/bin/env to chroot into)"
        if not self.find(name):
            return f"{name} is not installed in the root"
        return None

    def request(self, commands: list[Command], changed: bool) -> bool:
        """Record ``commands`` as needed when ``changed``; run every recorded one that can run here.

        Returns True when the recorded state changed (a command ran or was newly recorded). Raises
        CommandFailed when one that could run failed (it stays recorded, so the next run retries it).
        """
        entries = self.pending()
        before = json.dumps(entries, sort_keys=True)
        known = {e.get("key") for e in entries}
        if changed:
            for command in commands:
                if command.key not in known:
                    entries.append(
                        {
                            "argv": command.argv,
                            "scope": command.scope,
                            "purpose": command.purpose,
                            "key": command.key,
                        }
                    )
                    known.add(command.key)
        # What runs is the command computed now for a recorded key; the record's own argv never runs.
        computed = {c.key: c for c in commands}
        remaining = []
        failure = None
        ran_any = False
        for entry in entries:
            command = computed.get(entry.get("key"))
            if command is None:
                remaining.append(entry)
                continue
            entry = {"argv": command.argv, "scope": command.scope, "purpose": command.purpose, "key": command.key}
            reason = self.why_not(command)
            if reason:
                self.outcomes.append(Outcome(command.text, "pending", command.purpose, reason))
                remaining.append(entry)
                continue
            if self.check_mode:
                self.outcomes.append(Outcome(command.text, "would_run", command.purpose))
                remaining.append(entry)
                ran_any = True
                continue
            argv = command.argv if self.host.is_live else ["chroot", self.host.root] + command.argv
            rc, out, err = self.run_command(argv)
            ran_any = True
            outcome = Outcome(
                command.text,
                "ran" if rc == 0 else "failed",
                command.purpose,
                rc=rc,
                stdout=out[-2000:],
                stderr=err[-2000:],
            )
            self.outcomes.append(outcome)
            if rc != 0:
                remaining.append(entry)
                failure = failure or outcome
        recorded_changed = json.dumps(remaining, sort_keys=True) != before
        self._save_pending(remaining)
        if failure is not None:
            raise CommandFailed(failure)
        return ran_any or recorded_changed

    def results(self) -> list[dict]:
        return [o.as_dict() for o in self.outcomes]

    def pending_texts(self) -> list[str]:
        return [o.command for o in self.outcomes if o.status in ("pending", "would_run")]


class CommandFailed(AccelError, RuntimeError):
    """A command the change needs failed; the result says the change is made and lists the command."""

    def __init__(self, outcome: Outcome):
        self.outcome = outcome
        detail = (outcome.stderr or outcome.stdout).strip().splitlines()[-3:]
        super().__init__(
            f"{outcome.command} ({outcome.purpose}) failed with exit code {outcome.rc}: {' | '.join(detail)}; "
            "the change is written and the command stays pending, so fix the cause and run again",
            changed=True,
            commands=[outcome.as_dict()],
        )


def run_once(runner: HostCommands, command: Command) -> bool:
    """Run a command that only matters now (``modprobe vfio-pci``); never recorded as pending.

    Returns True when it ran successfully, False when it cannot run here (reported as pending).
    """
    reason = runner.why_not(command)
    if reason:
        runner.outcomes.append(Outcome(command.text, "pending", command.purpose, reason))
        return False
    if runner.check_mode:
        runner.outcomes.append(Outcome(command.text, "would_run", command.purpose))
        return False
    argv = command.argv if runner.host.is_live else ["chroot", runner.host.root] + command.argv
    rc, out, err = runner.run_command(argv)
    outcome = Outcome(command.text, "ran" if rc == 0 else "failed", command.purpose, rc=rc, stdout=out, stderr=err)
    runner.outcomes.append(outcome)
    if rc != 0:
        raise CommandFailed(outcome)
    return True
