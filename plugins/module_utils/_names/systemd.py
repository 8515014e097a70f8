# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""systemd unit names and the paths a unit file runs, as the collection writes them into unit files.

A unit name is what systemd accepts (``systemd.unit(5)``): at most 255 characters of ASCII letters,
digits, ``:``, ``-``, ``_``, ``.``, ``\\`` and ``@``, ending in a unit type's suffix; the collection also
requires it to start with a letter, digit or ``_`` so that no name reads as an option. An executable path
is absolute, made of plain path components (no ``..``, no space, no control character), because it is
written unquoted into ``ExecStart=``.
"""

from __future__ import annotations

import re

UNIT_SUFFIXES = (
    "service",
    "socket",
    "target",
    "device",
    "mount",
    "automount",
    "swap",
    "path",
    "timer",
    "slice",
    "scope",
)
_UNIT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9:_.\\@-]{0,254}")
_EXEC_PATH = re.compile(r"(/[A-Za-z0-9_][A-Za-z0-9_.+-]{0,254}){1,32}")
UNIT_RULE = (
    "ASCII letters, digits, ':', '-', '_', '.', '\\\\' and '@', starting with a letter, digit or '_', "
    f"ending in .service, .target or another unit type ({', '.join(UNIT_SUFFIXES)})"
)


def is_unit_name(text: object) -> bool:
    """Whether ``text`` is a unit name systemd accepts (``nova-compute.service``)."""
    if not isinstance(text, str) or len(text) > 255 or not _UNIT.fullmatch(text):
        return False
    stem, _dot, suffix = text.rpartition(".")
    return bool(stem) and suffix in UNIT_SUFFIXES


def is_exec_path(text: object) -> bool:
    """Whether ``text`` is an absolute path that can be written unquoted after ``ExecStart=``."""
    return isinstance(text, str) and len(text) <= 4096 and _EXEC_PATH.fullmatch(text) is not None
