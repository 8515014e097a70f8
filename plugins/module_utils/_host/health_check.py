# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run an operator's health command for a device, bounded in time, and say plainly how it ended.

The command is an argument list run without a shell. It runs in a session of its own, its output goes to
temporary files (so a command that prints without end fills no memory) and only the last
``TAIL_CHARACTERS`` of each stream are kept. A command still running after ``timeout`` seconds (nvidia-smi
on a GPU that fell off the bus waits in the kernel) is killed with its whole process group and reported
as failed health. Any secret text the caller names is masked in what is reported.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import tempfile
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

DEFAULT_TIMEOUT = 60
MAX_TIMEOUT = 3600
TAIL_CHARACTERS = 2000
MESSAGE_TAIL = 400  # characters of output quoted in a failure message
MASK = "********"
KILL_WAIT = 5  # seconds to wait for a killed command to be gone


class HealthCommandError(AccelError):
    """The health command is not a command that can be run as given."""


def command_problem(argv: object, timeout: object) -> str | None:
    """Why ``argv`` and ``timeout`` cannot be run as a health command, or None."""
    if not isinstance(argv, list) or not argv:
        return (
            "health_command is empty; give the command that proves the device healthy as a list, e.g. "
            "[nvidia-smi, -q, -i, '00000000:41:00.0'], or set health_check: false to release without a check"
        )
    for index, item in enumerate(argv):
        if not isinstance(item, str):
            return f"health_command item {index + 1} is {type(item).__name__}; give every item as text"
        if "\x00" in item:
            return f"health_command item {index + 1} contains a NUL character; remove it"
    if not argv[0].strip():
        return "health_command's first item (the program) is empty; give the program's name or path"
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= MAX_TIMEOUT:
        return f"health_timeout is {timeout}; give the seconds the command may run, 1 to {MAX_TIMEOUT}"
    return None


def _masked(text: str, secrets: set[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, MASK)
    return text


def _tail(handle, limit: int) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(0, size - limit * 4))
    return handle.read().decode("utf-8", errors="replace")[-limit:]


@dataclass
class HealthResult:
    command: str  # the argument list, shell-quoted (secrets masked)
    rc: int | None  # None when it did not exit by itself (timed out) or could not start
    stdout: str
    stderr: str
    timed_out: bool
    timeout: int
    error: str = ""  # why it could not start

    @property
    def healthy(self) -> bool:
        return self.rc == 0 and not self.timed_out and not self.error

    def result(self) -> dict:
        return {
            "command": self.command,
            "rc": self.rc,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
            "timeout": self.timeout,
        }

    def explain(self) -> str:
        """One sentence: the command, how it ended, and the end of its output."""
        if self.error:
            ended = f"could not start: {self.error}"
        elif self.timed_out:
            ended = f"was still running after {self.timeout} seconds (health_timeout) and was killed"
        else:
            ended = f"exited with status {self.rc}"
        said = []
        for name, text in (("stderr", self.stderr), ("stdout", self.stdout)):
            lines = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
            if lines:
                shown = lines if len(lines) <= MESSAGE_TAIL else lines[-MESSAGE_TAIL:]
                cut = "" if len(lines) <= MESSAGE_TAIL else f"the last {MESSAGE_TAIL} characters of "
                said.append(f"{cut}its {name}: {shown}")
        output = "; ".join(said) or "it printed nothing"
        return f"health_command {self.command} {ended}; {output}"


def run(argv: list[str], timeout: int = DEFAULT_TIMEOUT, secrets: set[str] | None = None) -> HealthResult:
    """Run ``argv`` without a shell for at most ``timeout`` seconds and report how it ended."""
    problem = command_problem(argv, timeout)
    if problem:
        raise HealthCommandError(problem)
    secrets = {s for s in (secrets or set()) if s}
    shown = _masked(shlex.join(argv), secrets)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            # run_command has no timeout: the command runs in its own session, which the timeout kills whole.
            process = subprocess.Popen(  # noqa: S603  # pylint: disable=ansible-bad-function
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
            )
        except OSError as exc:
            return HealthResult(shown, None, "", "", False, timeout, _masked(exc.strerror or str(exc), secrets))
        timed_out = False
        try:
            rc: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # the command and everything it started
            # A command stuck in the kernel (a device that does not answer) is not waited for any longer.
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=KILL_WAIT)
            rc = None
        stdout = _masked(_tail(out, TAIL_CHARACTERS), secrets)
        stderr = _masked(_tail(err, TAIL_CHARACTERS), secrets)
    return HealthResult(shown, rc, stdout, stderr, timed_out, timeout)
