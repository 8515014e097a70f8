# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel names: module names and command line arguments, as the kernel parses them.

A module name is what ``modprobe`` and modprobe.d take: letters, digits, ``_`` and ``-`` (the kernel
treats the two as the same), at most 55 characters (``MODULE_NAME_LEN`` less its terminating NUL). A
driver's name read from a sysfs link becomes a module name in modprobe.d only when it matches this.

A kernel argument is ``key`` or ``key=value``. The key is letters, digits, ``_``, ``-`` and ``.``
(``vfio-pci.ids``). The value is restricted to the characters kernel parameters use
(``console=ttyS0,115200n8``, ``crashkernel=512M-2G:64M``, ``root=UUID=...``, ``acpi_osi=!Linux``):
letters, digits and ``. _ , : = + / @ % ~ ! -``. Nothing a shell gives meaning to (quotes, ``$``,
backquotes, ``\\``, ``;``, ``|``, ``&``, ``<``, ``>``, parentheses, globs, ``#``), no whitespace and no
control character, so the argument is written as it is in GRUB's shell-sourced defaults, BLS entries
and argv alike.
"""

from __future__ import annotations

import re

_MODULE = re.compile(r"[A-Za-z0-9_-]{1,55}")
_ARG_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}")
_ARG_VALUE = re.compile(r"[A-Za-z0-9._,:=+/@%~!-]{0,4096}")
ARG_KEY_RULE = "letters, digits, '_', '-' and '.'"
ARG_VALUE_RULE = "letters, digits and . _ , : = + / @ % ~ ! -"


def is_module_name(name: object) -> bool:
    return isinstance(name, str) and _MODULE.fullmatch(name) is not None


def is_arg_key(key: object) -> bool:
    return isinstance(key, str) and _ARG_KEY.fullmatch(key) is not None


def is_arg_value(value: object) -> bool:
    return isinstance(value, str) and _ARG_VALUE.fullmatch(value) is not None
