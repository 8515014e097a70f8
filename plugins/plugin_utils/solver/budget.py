"""A bound on the search: a count of steps, past which the answer is refused rather than computed.

Placement's query language can ask for a search that grows exponentially (twelve isolated groups over
eleven devices have 11^12 combinations to rule out). Every loop of the searches that can grow that way
spends from one :class:`Budget`; when it runs out the lookup fails with :class:`TooCombinatorial`, which
says how large the search was and where it stopped, instead of running for hours.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

# About a second of the searches' inner loops on one core; no real flavor comes near it.
DEFAULT_STEPS = 1_000_000


class TooCombinatorial(AccelError, ValueError):
    """The query needs more steps than the budget allows; the message carries the numbers."""


class Budget:
    """``steps`` to spend in one answer; ``spend`` raises TooCombinatorial once they are used up."""

    __slots__ = ("steps", "used")

    def __init__(self, steps: int = DEFAULT_STEPS):
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
            raise ValueError(f"the search budget must be a positive whole number of steps, got {steps!r}")
        self.steps = steps
        self.used = 0

    def spend(self, count: int, describe: Callable[[], tuple[str, int]]) -> None:
        """Spend ``count`` steps; ``describe`` gives (what the search combines, its size) for the refusal."""
        self.used += count
        if self.used > self.steps:
            what, size = describe()
            raise TooCombinatorial(
                f"the query is too combinatorial for an exact answer: {what} make {size:,} combinations to "
                f"try, more than the {self.steps:,} steps this lookup spends on one answer (it stopped after "
                f"{self.used:,}); ask for fewer groups, drop group_policy=isolate, narrow the groups with "
                "traits, member_of or in_tree, or ask a real Placement",
                steps=self.steps,
                used=self.used,
                combinations=size,
            )


def product_size(lengths) -> int:
    """The number of combinations of one item from each list of these lengths."""
    return math.prod(lengths)
