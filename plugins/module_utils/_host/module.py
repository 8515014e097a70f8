# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side of every module that reads or changes a host's files: ``HostModule``.

Subclasses declare ``argument_spec`` (their own options; ``root`` is added here) and ``module_kwargs``
and implement ``run()``, which returns the result dict. The base owns the AnsibleModule, the host root,
the command runner, the warnings, check mode and the diff list, and turns every :class:`AccelError`
into ``fail_json(**exc.result())``: a module has no ``except`` of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.commands import HostCommands
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of
from ansible_collections.accel.openstack.plugins.module_utils._module import CollectionModule

ROOT_OPTION = {"root": {"type": "path", "default": "/"}}


def _given_root() -> Any:
    """``root`` as the task gave it, before Ansible's path conversion (which turns any value into text)."""
    try:
        from ansible.module_utils import basic

        return basic._load_params().get("root")
    except Exception:  # pragma: no cover - the module's own parameters are always readable here
        return None


def _given_params() -> dict:
    """The options as the task gave them, before Ansible's conversions."""
    try:
        from ansible.module_utils import basic

        return basic._load_params()
    except Exception:  # pragma: no cover - the module's own parameters are always readable here
        return {}


def whole_number_problem(argument_spec: dict, given: dict) -> str | None:
    """Why an option of type int was given a boolean or a number with a fraction part; None when none was.

    Ansible's int conversion takes ``true`` as 1 and ``2.0`` as 2: a count (``vfs: true``) would be acted on."""
    for name, spec in argument_spec.items():
        if spec.get("type") != "int":
            continue
        for key in [name] + list(spec.get("aliases") or []):
            value = given.get(key)
            if isinstance(value, (bool, float)):
                shown_value = json.dumps(value)
                return f"{key} is {kind_of(value)} ({shown_value}); give a whole number such as 2"
    return None


class HostModule(CollectionModule):
    """Base for the collection's host modules (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__({**ROOT_OPTION, **self.argument_spec})
        self.warnings: list[str] = []
        self.diff: list[dict] = []
        self._host: HostRoot | None = None
        self._commands: HostCommands | None = None

    @property
    def host(self) -> HostRoot:
        """The host under ``root``; raises HostRootError (an AccelError) for an unusable root."""
        if self._host is None:
            given = _given_root()
            if given is not None and not isinstance(given, str):
                # Ansible's path type would have made the list's text a relative path under the cwd.
                raise AccelError(
                    f"root is {kind_of(given)}, not a path; give one filesystem root such as "
                    "/ or /mnt/image (run the task once per root to configure several)"
                )
            self._host = HostRoot(self.params["root"])
        return self._host

    @property
    def commands(self) -> HostCommands:
        """Runs or defers the commands a change needs, for the same root and check mode."""
        if self._commands is None:
            self._commands = HostCommands(self.host, self.ansible.run_command, self.check_mode)
        return self._commands

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def run_tool(self, argv: list[str]) -> tuple[int, str, str]:
        """Run a tool of the machine running the module (rc 127 when it is not installed)."""
        binary = self.ansible.get_bin_path(argv[0])
        if binary is None:
            return 127, "", f"{argv[0]} not found"
        return self.ansible.run_command([binary] + list(argv[1:]))

    def apply_files(self, changes: Iterable[FileChange]) -> list[str]:
        """Apply the changed files (nothing in check mode), add their diffs; returns their paths."""
        paths = []
        for change in changes:
            if not change.changed:
                continue
            if not self.check_mode:
                change.apply(self.host)
            self.diff.append(change.diff())
            paths.append(change.path)
        return paths

    def _emit_warnings(self) -> None:
        seen = list(self.warnings)
        if self._host is not None:
            seen += [w for w in self._host.warnings if w not in seen]
        for message in seen:
            self.ansible.warn(message)

    def __call__(self) -> None:
        problem = whole_number_problem(self.argument_spec, _given_params())
        if problem:
            self.ansible.fail_json(msg=problem)
        try:
            result: dict[str, Any] = self.run()
        except AccelError as exc:
            self._emit_warnings()
            self.ansible.fail_json(**exc.result())
        self._emit_warnings()
        if self.diff:
            result.setdefault("diff", self.diff)
        self.ansible.exit_json(**result)
