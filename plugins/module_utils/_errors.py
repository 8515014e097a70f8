# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one error base: every error the collection raises on purpose derives from ``AccelError``.

An ``AccelError`` carries what a module returns when it fails: ``msg`` (a sentence that names the bad
input and the fix) and any extra result keys (``errors``, ``commands``, ``changed``, ...). A module ends
with one ``except AccelError as exc: module.fail_json(**exc.result())``.
"""

from __future__ import annotations

from typing import Any


class AccelError(Exception):
    """An expected failure: a message naming the input and the fix, plus the keys a module returns."""

    def __init__(self, msg: str, **result: Any) -> None:
        super().__init__(msg)
        self.msg = msg
        self.extra: dict[str, Any] = dict(result)

    def __str__(self) -> str:
        return self.msg

    def result(self) -> dict[str, Any]:
        """The keyword arguments for ``fail_json``: ``msg`` and the extra result keys."""
        out = dict(self.extra)
        out["msg"] = self.msg
        return out
