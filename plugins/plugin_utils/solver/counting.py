"""Counting one anchor's combinations of groups without listing them.

Placement combines, under one anchor root, one entry of every request group: the product of the groups'
lists (``levels`` here, one list of options per group, in the order the product is walked). With N groups
of one device each over k devices that product has k^N members, and N! of them can share one device set
(``alias:8`` over eight GPUs: 16,777,216 tuples, 40,320 candidates). :class:`Walk` counts them instead:

- Providers that are interchangeable (the same inventories and usage, and in every level offered with the
  same amounts, or not at all) form a class. Swapping two providers of a class maps the product onto
  itself, so how many completions a prefix has depends only on how much each class's members have taken
  so far, as a multiset: that is the state the counts are memoised on. Eight identical GPUs have nine
  states per level (how many are taken), sixteen have seventeen.
- From each state the walk counts, in one pass, what each of Placement's settings needs
  (:class:`Counts`): the prefixes its pruned product looks at (``optimize_for_wide_provider_trees``), the
  complete tuples that pass its prefix check (amounts within capacity and max_unit, usage ignored), those
  that also keep ``group_policy=isolate`` (its candidates with that setting), and those whose amounts also
  fit the free capacity (the valid candidates, the only ones a claim accepts; without the setting,
  Placement's candidates).
- The ``*_within`` walks count the same among the first r tuples of the walk's order (the product's
  order, the order Placement generates a root's candidates in), by descending the one branch that holds
  the r-th tuple and counting the branches before it from the memo.

``same_subtree`` is not counted here (it relates providers, not amounts); a caller with it lists the
candidates instead. The number of memoised states is bounded (``limit``); past it :class:`TooManyStates`
is raised and the caller lists or refuses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

# States memoised for one walk: far more than any symmetric tree needs (sixteen devices: 17 per level),
# small enough that a walk over distinct providers stops in well under a second.
DEFAULT_STATES = 200_000


class TooManyStates(AccelError, ValueError):
    """The providers are too unlike each other for counting by classes; list the candidates instead."""


class Option(NamedTuple):
    """One entry of a level: what it takes (``(key, amount)`` pairs, a key being one provider's class) and
    the provider it maps a suffixed group to (``pick``; None for the unsuffixed group)."""

    takes: tuple[tuple[int, int], ...]
    pick: int | None = None


@dataclass(frozen=True)
class Counts:
    """What a walk (or the part of it below one prefix) holds.

    ``nodes``: prefixes the pruned product checks; ``leaves``: complete tuples within capacity and max_unit
    with usage ignored; ``isolated``: those that also keep isolate (Placement's candidates with the
    workaround); ``valid``: those that also fit the free capacity (claimable candidates)."""

    nodes: int = 0
    leaves: int = 0
    isolated: int = 0
    valid: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.nodes + other.nodes,
            self.leaves + other.leaves,
            self.isolated + other.isolated,
            self.valid + other.valid,
        )


_LEAF_BOTH = Counts(0, 1, 1, 1)
_LEAF_UNCLAIMABLE = Counts(0, 1, 1, 0)
_LEAF_NOT_ISOLATED = Counts(0, 1, 0, 0)
_NOTHING = Counts()
_CHECK = Counts(1, 0, 0, 0)


class Walk:
    """The product of ``levels`` under one anchor, counted over provider classes.

    ``levels``: per group, its options in the order Placement's product walks them. ``keys``: per key,
    ``(provider, capacity, used, max_unit)`` with capacity ``int((total - reserved) * ratio)``.
    ``isolate``: suffixed groups need distinct providers (their options carry ``pick``)."""

    def __init__(
        self,
        levels: Sequence[Sequence[Option]],
        keys: Sequence[tuple[int, int, int, int]],
        isolate: bool,
        limit: int = DEFAULT_STATES,
    ):
        self.levels = [list(level) for level in levels]
        self.keys = list(keys)
        self.isolate = isolate
        self.limit = limit
        self.depth = len(self.levels)
        providers = sorted({provider for provider, *_rest in self.keys})
        self.provider_keys: dict[int, list[int]] = {p: [] for p in providers}
        for k, (provider, *_rest) in enumerate(self.keys):
            self.provider_keys[provider].append(k)
        self.classes = self._classes(providers)
        self._memo: dict[tuple, Counts] = {}

    # -- classes -------------------------------------------------------------------------------
    def _classes(self, providers: list[int]) -> list[list[int]]:
        """Providers grouped by what makes them interchangeable; a provider that some option shares with
        another provider stays alone."""
        offered: dict[int, list] = {p: [None] * self.depth for p in providers}
        alone: set[int] = set()
        for level, options in enumerate(self.levels):
            for option in options:
                owners = {self.keys[k][0] for k, _amount in option.takes}
                if option.pick is not None:
                    owners.add(option.pick)
                if len(owners) != 1:
                    alone.update(owners)
                    continue
                (owner,) = owners
                amounts = tuple(sorted((self.keys[k][1:], amount) for k, amount in option.takes))
                entry = offered[owner][level]
                mark = (amounts, option.pick is not None)
                offered[owner][level] = [mark] if entry is None else entry + [mark]
        by_signature: dict[tuple, list[int]] = {}
        classes = []
        for p in providers:
            if p in alone:
                classes.append([p])
                continue
            inventories = tuple(self.keys[k][1:] for k in self.provider_keys[p])
            signature = (inventories, tuple(None if e is None else tuple(sorted(e)) for e in offered[p]))
            found = by_signature.get(signature)
            if found is None:
                by_signature[signature] = found = []
                classes.append(found)
            found.append(p)
        return classes

    # -- states --------------------------------------------------------------------------------
    def start(self) -> tuple:
        """The state before anything is taken: consumed amounts per key, providers picked, two flags."""
        return (tuple([0] * len(self.keys)), frozenset(), False, False)

    def step(self, state: tuple, option: Option) -> tuple | None:
        """The state after ``option``; None when the pruned product drops the prefix (a sum past a
        provider's capacity or max_unit, usage ignored)."""
        consumed, picked, broken, unclaimable = state
        if option.takes:
            consumed = list(consumed)
            for k, amount in option.takes:
                _provider, capacity, used, max_unit = self.keys[k]
                total = consumed[k] + amount
                if total > capacity or total > max_unit:
                    return None
                if used + total > capacity:
                    unclaimable = True
                consumed[k] = total
            consumed = tuple(consumed)
        if option.pick is not None and self.isolate:
            if option.pick in picked:
                broken = True
            else:
                picked = picked | {option.pick}
        return (consumed, picked, broken, unclaimable)

    def _canonical(self, level: int, state: tuple) -> tuple:
        consumed, picked, broken, unclaimable = state
        keys = self.provider_keys
        return (
            level,
            broken,
            unclaimable,
            tuple(
                tuple(sorted((tuple(consumed[k] for k in keys[p]), p in picked) for p in members))
                for members in self.classes
            ),
        )

    # -- counts --------------------------------------------------------------------------------
    def below(self, level: int, state: tuple) -> Counts:
        """The counts of every completion of a prefix of ``level`` entries that left ``state``."""
        if level == self.depth:
            _consumed, _picked, broken, unclaimable = state
            if broken:
                return _LEAF_NOT_ISOLATED
            return _LEAF_UNCLAIMABLE if unclaimable else _LEAF_BOTH
        key = self._canonical(level, state)
        found = self._memo.get(key)
        if found is not None:
            return found
        if len(self._memo) >= self.limit:
            raise TooManyStates(
                f"counting the combinations needs more than {self.limit:,} states: the providers are too unlike "
                "each other to be counted by classes"
            )
        nodes = leaves = isolated = valid = 0
        for option in self.levels[level]:
            nodes += 1
            after = self.step(state, option)
            if after is None:
                continue
            sub = self.below(level + 1, after)
            nodes += sub.nodes
            leaves += sub.leaves
            isolated += sub.isolated
            valid += sub.valid
        found = self._memo[key] = Counts(nodes, leaves, isolated, valid)
        return found

    def total(self) -> Counts:
        return self.below(0, self.start())

    @property
    def raw(self) -> int:
        """The tuples of the plain product (what Placement walks without the workaround)."""
        return math.prod(len(level) for level in self.levels)

    def raw_within(self, r: int) -> Counts:
        """The counts among the first ``r`` tuples of the plain product (in its order)."""
        found = _NOTHING
        state: tuple | None = self.start()
        radices = [len(level) for level in self.levels]
        for level in range(self.depth):
            if r <= 0 or state is None:
                break
            size = math.prod(radices[level + 1 :])
            digit, r = divmod(r, size)
            options = self.levels[level]
            for option in options[: min(digit, len(options))]:
                after = self.step(state, option)
                if after is not None:
                    found = found + self.below(level + 1, after)
            if digit >= len(options):
                return found
            state = self.step(state, options[digit])
        return found

    def leaves_within(self, r: int) -> Counts:
        """The counts among the first ``r`` complete tuples the pruned product yields, with the prefixes it
        has checked by the time it yields the r-th (``nodes``)."""
        found = _NOTHING
        if r <= 0:
            return found
        state = self.start()
        for level in range(self.depth):
            for option in self.levels[level]:
                found = found + _CHECK
                after = self.step(state, option)
                if after is None:
                    continue
                sub = self.below(level + 1, after)
                if sub.leaves < r:
                    found = found + sub
                    r -= sub.leaves
                    continue
                state = after  # the r-th tuple is below this prefix
                break
            else:
                return found  # fewer than r tuples in all
        return found + self.below(self.depth, state)

    def first(self, valid_only: bool = True) -> list[Option] | None:
        """The first complete tuple (in the walk's order) that is a valid candidate (or, without
        ``valid_only``, that the pruned product yields); None when there is none."""
        state = self.start()
        chosen = []
        for level in range(self.depth):
            for option in self.levels[level]:
                after = self.step(state, option)
                if after is None:
                    continue
                sub = self.below(level + 1, after)
                if (sub.valid if valid_only else sub.leaves) > 0:
                    chosen.append(option)
                    state = after
                    break
            else:
                return None
        return chosen


def smallest_within(total: int, wanted: int, within) -> int:
    """The smallest r in [1, total] with ``within(r) >= wanted`` (``within`` grows with r); ``total`` when none.

    Galloping first (1, 2, 4, ...), then halving: the answer is usually small (a bound of 1,000 candidates
    over many roots is reached in the first rounds) while ``total`` can be astronomic."""
    low, high = 1, 1
    while high < total and within(high) < wanted:
        low, high = high + 1, min(high * 2, total)
    while low < high:
        middle = (low + high) // 2
        if within(middle) >= wanted:
            high = middle
        else:
            low = middle + 1
    return low
