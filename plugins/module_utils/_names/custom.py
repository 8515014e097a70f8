# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Custom trait and resource class names: Placement's rule, its normaliser and its length limit.

A custom name is ``CUSTOM_`` followed by upper-case letters, digits and ``_``, at most 255 characters,
for traits and resource classes alike.
"""

from __future__ import annotations

import re

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

CUSTOM_PREFIX = "CUSTOM_"
MAX_NAME_LENGTH = 255
# The rule as Placement's schema writes it; messages quote it.
CUSTOM_PATTERN = "^CUSTOM_[A-Z0-9_]+$"
_CUSTOM = re.compile(r"CUSTOM_[A-Z0-9_]+")
_NOT_ALPHANUMERIC = re.compile(r"[^0-9A-Za-z]+")
# A standard name (os-traits, os-resource-classes): upper case, digits and _, starting with a letter.
_STANDARD = re.compile(r"[A-Z][A-Z0-9_]*")


class PlacementNameError(AccelError, ValueError):
    """A trait or resource class name Placement would refuse."""


def is_custom(name: object) -> bool:
    """Whether ``name`` is meant as a custom name (starts with ``CUSTOM_``), valid or not."""
    return isinstance(name, str) and name.startswith(CUSTOM_PREFIX)


def is_custom_name(name: object, check_length: bool = True) -> bool:
    """Whether Placement accepts ``name`` as a custom trait or resource class (Nova's extra spec
    validation checks the pattern alone: ``check_length=False``)."""
    if not isinstance(name, str) or (check_length and len(name) > MAX_NAME_LENGTH):
        return False
    return _CUSTOM.fullmatch(name) is not None


def is_standard_form(name: object) -> bool:
    """Whether ``name`` is written as a standard name is (whether Placement knows it is another matter)."""
    return (
        isinstance(name, str)
        and not is_custom(name)
        and len(name) <= MAX_NAME_LENGTH
        and _STANDARD.fullmatch(name) is not None
    )


def normalize(text: str, keep_custom_word: bool = False) -> str:
    """The custom name for ``text`` by os-traits' and os-resource-classes' rule, which Nova applies.

    Each run of characters other than letters and digits becomes one ``_``, the rest is upper-cased and
    ``CUSTOM_`` goes in front. To propose a name, a ``CUSTOM`` word the text already starts with is not
    doubled (``custom-gpu t4`` -> ``CUSTOM_GPU_T4``); Nova doubles it (``keep_custom_word=True``:
    ``CUSTOM_CUSTOM_GPU_T4``).
    """
    body = _NOT_ALPHANUMERIC.sub("_", text).upper()
    if not keep_custom_word and body.startswith(CUSTOM_PREFIX):
        body = body[len(CUSTOM_PREFIX) :]
    return CUSTOM_PREFIX + body


def custom_name_problem(name: object) -> str | None:
    """Why Placement would refuse ``name`` as a custom name, as a phrase to follow it; None when fine."""
    if not isinstance(name, str) or not name:
        return "is empty or not a string; give a name such as CUSTOM_NVIDIA_T4"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long; Placement allows at most {MAX_NAME_LENGTH}"
    if not _CUSTOM.fullmatch(name):
        proposal = normalize(name)
        if proposal in (CUSTOM_PREFIX, name):
            # Nothing but the prefix (or only characters the normaliser drops) is left to propose.
            return f"does not match {CUSTOM_PATTERN}; give at least one of A-Z, 0-9 or _ after {CUSTOM_PREFIX}"
        return f"does not match {CUSTOM_PATTERN}; did you mean {proposal!r}?"
    return None
