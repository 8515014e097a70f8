# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel command line arguments: parsing, validation and the present/absent arithmetic.

Pure functions only. An argument is ``key`` or ``key=value``; the kernel treats ``-`` and ``_`` in a
key as the same character (``vfio-pci.ids`` is ``vfio_pci.ids``), so comparisons do too. An argument
that is *present* with a value replaces every other value of its key, so a key never appears twice;
an argument that is *absent* removes its key (any value) or, given with a value, only that value.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.kernel import (
    ARG_KEY_RULE,
    ARG_VALUE_RULE,
    is_arg_key,
    is_arg_value,
)


class KernelArgError(AccelError, ValueError):
    """An argument given by the user cannot be used; the message says why and what to give instead."""


@dataclass(frozen=True)
class KernelArg:
    key: str
    value: str | None = None

    @property
    def norm_key(self) -> str:
        return self.key.replace("-", "_")

    def same_key(self, other: KernelArg) -> bool:
        return self.norm_key == other.norm_key

    def same(self, other: KernelArg) -> bool:
        return self.same_key(other) and self.value == other.value

    def matches(self, pattern: KernelArg) -> bool:
        """True when ``pattern`` (as given to absent) selects this argument."""
        return self.same_key(pattern) and (pattern.value is None or pattern.value == self.value)

    def __str__(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"


def parse_user_arg(text: str, option: str) -> KernelArg:
    """One argument as the user wrote it in ``option``; strict, with an error that names the fix."""
    if not isinstance(text, str):
        raise KernelArgError(f"{option}: a kernel argument is a string, got {type(text).__name__} {text!r}")
    if not text.strip():
        raise KernelArgError(f"{option}: an empty kernel argument was given; remove it from the list")
    if any(char.isspace() or char in "\"'`$\\" for char in text):
        raise KernelArgError(
            f"{option}: kernel argument {text!r} contains whitespace, a quote, '$', '`' or a backslash; "
            "give one argument per list item without quoting, e.g. 'vfio-pci.ids=10de:2330,10de:22a3'"
        )
    key, sep, value = text.partition("=")
    if not is_arg_key(key):
        raise KernelArgError(
            f"{option}: kernel argument {text!r} has the key {key!r}; a key is {ARG_KEY_RULE}, "
            "e.g. 'intel_iommu' or 'vfio-pci.ids'"
        )
    if sep and not is_arg_value(value):
        raise KernelArgError(
            f"{option}: kernel argument {text!r} has a value with characters the kernel does not take from "
            f"this module (whitespace, quotes, control characters or shell syntax such as ; | & < > $); a value "
            f"is {ARG_VALUE_RULE}: give one argument per list item without quoting, "
            "e.g. 'vfio-pci.ids=10de:2330,10de:22a3'"
        )
    if key == "--":
        raise KernelArgError(f"{option}: '--' ends the kernel's arguments; it cannot be managed here")
    return KernelArg(key, value if sep else None)


def parse_user_args(present: list[str] | None, absent: list[str] | None) -> tuple[list[KernelArg], list[KernelArg]]:
    """Validate both lists together: duplicates collapse, contradictions are errors."""
    want = []
    for text in present or []:
        arg = parse_user_arg(text, "present")
        clash = next((a for a in want if a.same_key(arg) and a.value != arg.value), None)
        if clash is not None:
            raise KernelArgError(
                f"present: {clash} and {arg} set the same key twice; the kernel would see one of them "
                "only, so list the key once with the value you want"
            )
        if arg not in want:
            want.append(arg)
    drop = []
    for text in absent or []:
        arg = parse_user_arg(text, "absent")
        for wanted in want:
            if wanted.matches(arg):
                raise KernelArgError(
                    f"{text!r} is in both present and absent; keep it in only one list ({wanted} would be "
                    "added and removed in the same run)"
                )
        if arg not in drop:
            drop.append(arg)
    return want, drop


def split_cmdline(text: str) -> list[str]:
    """Split a command line as the kernel does: whitespace separates, double quotes group."""
    words: list[str] = []
    current: list[str] = []
    in_quotes = False
    started = False
    for char in text or "":
        if char == '"':
            in_quotes = not in_quotes
            current.append(char)
            started = True
        elif char.isspace() and not in_quotes:
            if started:
                words.append("".join(current))
                current, started = [], False
        else:
            current.append(char)
            started = True
    if started:
        words.append("".join(current))
    return words


def parse_cmdline(text: str) -> list[KernelArg]:
    """Arguments of a command line (``/proc/cmdline``, a BLS ``options`` line), quotes kept in values."""
    args = []
    for word in split_cmdline(text):
        key, sep, value = word.partition("=")
        args.append(KernelArg(key.strip('"'), value if sep else None))
    return args


def format_cmdline(args: list[KernelArg]) -> str:
    return " ".join(str(a) for a in args)


def apply(args: list[KernelArg], present: list[KernelArg], absent: list[KernelArg]) -> list[KernelArg]:
    """``args`` with ``absent`` removed and ``present`` ensured once each; other arguments untouched.

    An argument already there with the wanted value keeps its position (so an unchanged line stays
    byte-identical); other values of its key are dropped, so nothing is ever duplicated.
    """
    result = [a for a in args if not any(a.matches(p) for p in absent)]
    for wanted in present:
        kept = False
        filtered = []
        for arg in result:
            if arg.same_key(wanted):
                if arg.value == wanted.value and not kept:
                    filtered.append(arg)
                    kept = True
                continue
            filtered.append(arg)
        if not kept:
            filtered.append(wanted)
        result = filtered
    return result


def missing_from(running: list[KernelArg], present: list[KernelArg], absent: list[KernelArg]) -> list[str]:
    """What differs between the running command line and what is configured; empty when none."""
    reasons = []
    for wanted in present:
        values = [a.value for a in running if a.same_key(wanted)]
        if wanted.value not in values:
            reasons.append(f"{wanted} is configured but the running kernel has not got it")
        elif len(values) > 1:
            reasons.append(f"{wanted.key} appears {len(values)} times on the running kernel's command line")
    for unwanted in absent:
        found = [a for a in running if a.matches(unwanted)]
        if found:
            reasons.append(f"{found[0]} is removed from the configuration but the running kernel still has it")
    return reasons
