"""What every lookup over a fleet snapshot does around its own answer.

``run(lookup, terms, variables, kwargs, answer)`` reads the options, indexes the ``fleet`` option once,
parses each term as a Placement query and returns ``answer(fleet, request, config)`` for each, in order
(``config``: the ``placement_config`` option, Placement's settings). A
snapshot that is not a valid fleet fails with ``fleet: <why>``; a query Placement would refuse (or any
other refused input) fails with the message Placement would give.
"""

from __future__ import annotations

from collections.abc import Callable

from ansible.errors import AnsibleLookupError

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs
from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, FleetError
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import PlacementConfig


def run(lookup, terms, variables, kwargs, answer: Callable[[Fleet, Request, PlacementConfig], object]) -> list:
    lookup.set_options(var_options=variables, direct=kwargs)
    name = getattr(lookup, "_load_name", "lookup").rsplit(".", 1)[-1]
    try:
        terms = [check(name, f"term {index + 1}", term, "query") for index, term in enumerate(terms)]
        config = PlacementConfig.checked(lookup.get_option("placement_config") or None)
        fleet = Fleet.from_snapshot(inputs.fleet_snapshot(lookup.get_option("fleet")))
    except FleetError as exc:
        raise AnsibleLookupError(f"fleet: {exc}") from None
    except AccelError as exc:
        raise AnsibleLookupError(exc.msg) from None
    try:
        return [answer(fleet, Request.parse(term), config) for term in terms]
    except (AccelError, ValueError) as exc:  # RequestError, TooCombinatorial and any other refused input
        raise AnsibleLookupError(str(exc)) from None
