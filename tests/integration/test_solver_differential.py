"""The solver against the real Placement 16.0.0: same fleets, same queries, identical answers.

Each seeded fleet is loaded into a fresh Placement database (providers, inventories, traits,
aggregates, and usages made by real allocations) and many seeded queries are asked of both. Answers
must be equal as multisets of allocation requests and as provider summaries; a 400 must come with the
same message (tests/support/placement_compare.py). ``ACCEL_DIFFERENTIAL_CASES`` sets the number of
queries (default 240; the ``differential-full`` make target asks for 1000).
"""

from __future__ import annotations

import os
import random
from collections import Counter
from urllib.parse import urlencode

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from tests.support.fleet_generator import random_fleet, random_query
from tests.support.placement_compare import compare
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement

CASES = int(os.environ.get("ACCEL_DIFFERENTIAL_CASES", "240"))
QUERIES_PER_FLEET = 40
FLEETS = max(1, -(-CASES // QUERIES_PER_FLEET))


@pytest.mark.parametrize("seed", range(FLEETS))
def test_solver_answers_exactly_as_placement_on_random_fleets(placement_session, seed):
    server = placement_session.reset()
    rng = random.Random(seed)
    snapshot = random_fleet(rng)
    load_fleet(server, snapshot)
    fleet = Fleet.from_snapshot(snapshot)
    count = min(QUERIES_PER_FLEET, CASES - seed * QUERIES_PER_FLEET)
    disagreements = []
    answered = Counter()
    for _case in range(count):
        query = urlencode(random_query(rng, snapshot))
        status, body = server.request("GET", "/allocation_candidates?" + query)
        answered[(status, bool(status == 200 and body["allocation_requests"]))] += 1
        problem = compare(fleet, query, status, body, server)
        if problem:
            disagreements.append(f"{query}\n    {problem}")
    assert not disagreements, f"seed {seed}: {len(disagreements)} of {count} differ:\n" + "\n".join(disagreements)
    assert sum(answered.values()) == count
