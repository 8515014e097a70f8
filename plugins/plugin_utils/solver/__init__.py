"""Allocation candidates with Placement 1.39 semantics, computed from a fleet snapshot.

``allocation_candidates(fleet, request)`` returns what ``GET /allocation_candidates`` returns at
microversion 1.39. The steps follow Placement's own:

1. ``root_required`` picks the roots that may anchor a candidate (root providers only).
2. Each group, in request order, yields group candidates: an anchor root, the (provider, class, amount)
   it takes and the providers it maps to. The unsuffixed group may spread its classes over the
   providers of one tree plus sharing providers (``MISC_SHARES_VIA_AGGREGATE``) that share an aggregate
   with that tree; each class comes from one provider. Its ``required`` traits must be found on the
   providers it takes from, together; ``member_of`` matches a provider or its anchor root. A suffixed
   group takes everything from one provider that itself has the traits and aggregates; a sharing
   provider may serve it for any root it shares with. A group with nothing to offer ends the search
   with no candidates, before later groups are looked at (so later unknown names are not reported).
3. Per anchor, one candidate from every group is combined; ``group_policy=isolate`` needs distinct
   providers for the suffixed groups, ``same_subtree`` needs one of the providers of the listed groups
   to be an ancestor of (or the same as) all others, and the summed amounts must fit each provider's
   capacity and max_unit.
4. Provider summaries cover every provider of each tree that gives resources to a candidate.

Candidates come out in a stable order (anchor root as the fleet lists it, then providers); ``limit``
keeps the first ones. Placement's own order is arbitrary.
"""

from __future__ import annotations

import gc

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget, TooCombinatorial
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.checks import NoCandidates
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.fast import answer, claimable
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import PlacementConfig
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import generation as _generation
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.reference import solve

__all__ = ["Budget", "NoCandidates", "PlacementConfig", "TooCombinatorial", "allocation_candidates", "solve"]


def _configured(fleet: Fleet, request: Request, budget, roots_only: bool, config: PlacementConfig) -> dict:
    work = _generation(fleet, request, config)
    quotas = work["per_root"] if work["truncated"] else None
    found = answer(fleet, request, budget, roots_only, quotas, config.optimize_for_wide_provider_trees)
    if not roots_only:
        # Whether this answer is the one Placement gives, or only as many from the same roots could be said.
        found["determined"] = work["roots_determined"] and not work["limited"]
    if config.optimize_for_wide_provider_trees and not roots_only:
        found["unclaimable"] = [
            index for index, candidate in enumerate(found["allocation_requests"]) if not claimable(fleet, candidate)
        ]
    return found


def allocation_candidates(
    fleet: Fleet,
    request: Request,
    budget: Budget | None = None,
    roots_only: bool = False,
    config: PlacementConfig | None = None,
) -> dict:
    """Placement 1.39's answer to ``GET /allocation_candidates`` for this request.

    ``roots_only`` answers ``{"roots": [...], "candidates": N}`` instead: the roots of the providers the
    answer's candidates take from, in the order they first appear, and the number of candidates (both
    within ``limit``), for callers that need no more (``flavor_fit``'s hosts); it builds no candidate.

    Provider summaries are shared with the fleet (built once per snapshot) and equal allocation entries are
    shared between candidates: read the answer, do not modify it in place.

    The answer is thousands of small acyclic dicts at fleet scale; the cyclic garbage collector is paused
    while they are built (it would only rescan the fleet's indexes) and restored afterwards.

    The search spends at most ``budget`` steps (:data:`budget.DEFAULT_STEPS`); a query that needs more
    raises TooCombinatorial (a ValueError naming the numbers) instead of running on.

    ``config``: Placement's settings (``generation.PlacementConfig``). Where max_allocation_candidates cuts
    generation, the answer has the candidates Placement collects: as many, from the same roots, each root's
    first ones in the solver's order. With optimize_for_wide_provider_trees, candidates whose summed amounts
    exceed a provider's free capacity (Placement no longer checks usage there) are returned too, and the
    answer's extra key ``unclaimable`` lists their positions (a claim of them fails). With a bound or the
    workaround, the extra key ``determined`` is false where which roots (or which candidates under
    ``limit``) Placement returns depends on its process rather than on the fleet."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        if config is not None and (config.cut is not None or config.optimize_for_wide_provider_trees):
            return _configured(fleet, request, budget, roots_only, config)
        return answer(fleet, request, budget, roots_only)
    except NoCandidates:
        if roots_only:
            return {"roots": [], "candidates": 0}
        return {"allocation_requests": [], "provider_summaries": {}}
    finally:
        if paused:
            gc.enable()
