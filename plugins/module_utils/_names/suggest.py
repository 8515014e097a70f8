# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one "did you mean" for a trait or resource class name that is not known."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ansible_collections.accel.openstack.plugins.module_utils._names.custom import CUSTOM_PREFIX, MAX_NAME_LENGTH


def suggest(name: str, known: Iterable[str], limit: int = 3) -> list[str]:
    """Known names close to ``name``, best first.

    Names ending in the same model token (CUSTOM_GPU_T4 and CUSTOM_NVIDIA_T4) come first, then names
    that are nearly the same string (within 0.1 of the best similarity, at least 0.75). A name longer
    than Placement allows (255 characters) gets no suggestion, and neither does the prefix ``CUSTOM_``
    alone: comparing strings costs their lengths multiplied, and neither can be a misspelling of a name.
    """
    if not isinstance(name, str) or len(name) > MAX_NAME_LENGTH or name in ("", CUSTOM_PREFIX):
        return []
    pool = sorted(
        k for k in set(known) if isinstance(k, str) and len(k) <= MAX_NAME_LENGTH and k not in (name, CUSTOM_PREFIX)
    )
    tail = name.rsplit("_", 1)[-1]
    same_model = [k for k in pool if len(tail) >= 2 and k.rsplit("_", 1)[-1] == tail]
    scored = sorted(((difflib.SequenceMatcher(None, name, k).ratio(), k) for k in pool), reverse=True)
    best = scored[0][0] if scored else 0.0
    similar = [k for score, k in scored if score >= 0.75 and score >= best - 0.1]
    out: list[str] = []
    for candidate in same_model + similar:
        if candidate not in out:
            out.append(candidate)
    return out[:limit]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean A or B?"`` to append to a message, or ``""`` when nothing is close."""
    hints = suggest(name, known)
    return f"; did you mean {' or '.join(hints)}?" if hints else ""
