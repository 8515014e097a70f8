"""What the test servers share: one real service process, stopped gently, and its work directory."""

from __future__ import annotations

import shutil
import subprocess


class ServiceProcess:
    """Owns ``proc`` (the service's process) and ``workdir``; subclasses implement ``start()``.

    ``stop()`` terminates the process, killing it after ``stop_timeout`` seconds; ``close()`` also removes
    the work directory when the server made it (``_own_workdir``)."""

    stop_timeout = 15
    proc: subprocess.Popen | None = None
    workdir: str
    _own_workdir = False

    def start(self):
        raise NotImplementedError

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def close(self) -> None:
        self.stop()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
