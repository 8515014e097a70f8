# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Placement's own settings that decide what it answers, as placement.conf holds them.

``checked(value)`` reads them from a dict with Placement's option names (what the ``placement_config``
options and ``accel_placement_config`` take) and refuses what Placement would not start with;
``ini(settings)`` gives the sections and values placement.conf holds for them. Runs on managed hosts
(Python 3.9) and on the controller.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

# option: (section, default)
OPTIONS = {
    "max_allocation_candidates": ("placement", -1),
    "allocation_candidates_generation_strategy": ("placement", "depth-first"),
    "optimize_for_wide_provider_trees": ("workarounds", False),
}
STRATEGIES = ("depth-first", "breadth-first")
MOST_CANDIDATES = 10**9
# Placement's own advice for wide provider trees (its [workarounds] option help).
RECOMMENDED = {
    "max_allocation_candidates": 1000,
    "allocation_candidates_generation_strategy": "breadth-first",
    "optimize_for_wide_provider_trees": True,
}


class PlacementSettingsError(AccelError, ValueError):
    """A setting Placement would not start with; the message names it and the fix."""


def checked(value, where: str = "placement_config") -> dict:
    """The settings given (only those), each checked; raises PlacementSettingsError."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PlacementSettingsError(
            f"{where} must be a dict of Placement's options ({', '.join(OPTIONS)}), got {type(value).__name__}"
        )
    unknown = sorted(str(k) for k in value if k not in OPTIONS)
    if unknown:
        raise PlacementSettingsError(
            f"{where}: unknown option(s) {', '.join(unknown)}; Placement's options that change its answer are "
            f"{', '.join(OPTIONS)}"
        )
    found = {}
    if "max_allocation_candidates" in value:
        most = value["max_allocation_candidates"]
        if isinstance(most, bool) or not isinstance(most, int) or most < -1 or most > MOST_CANDIDATES:
            raise PlacementSettingsError(
                f"{where}.max_allocation_candidates must be -1 (no bound) or a whole number up to "
                f"{MOST_CANDIDATES}, got {most!r}; Placement's own advice is 1000 or less with "
                "optimize_for_wide_provider_trees"
            )
        found["max_allocation_candidates"] = most
    if "allocation_candidates_generation_strategy" in value:
        strategy = value["allocation_candidates_generation_strategy"]
        if strategy not in STRATEGIES:
            raise PlacementSettingsError(
                f"{where}.allocation_candidates_generation_strategy must be one of {', '.join(STRATEGIES)}, "
                f"got {strategy!r}"
            )
        found["allocation_candidates_generation_strategy"] = strategy
    if "optimize_for_wide_provider_trees" in value:
        optimize = value["optimize_for_wide_provider_trees"]
        if not isinstance(optimize, bool):
            raise PlacementSettingsError(
                f"{where}.optimize_for_wide_provider_trees must be true or false, got {optimize!r}"
            )
        found["optimize_for_wide_provider_trees"] = optimize
    return found


def complete(settings: dict) -> dict:
    """Every option, Placement's default where ``settings`` does not give it."""
    return {name: settings.get(name, default) for name, (_section, default) in OPTIONS.items()}


def ini(settings: dict) -> dict:
    """The placement.conf sections and values for ``settings`` (an INI mapping of lists of strings)."""
    found: dict = {}
    for name, value in settings.items():
        section = OPTIONS[name][0]
        text = str(value).lower() if isinstance(value, bool) else str(value)
        found.setdefault(section, {})[name] = [text]
    return found
