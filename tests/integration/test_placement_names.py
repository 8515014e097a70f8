"""Custom names that exist in Placement with no provider using them, against the real Placement 16.0.0.

``placement_info`` lists them in the snapshot (``resource_classes``, ``traits``); the solver and
``flavor_fit`` then answer a query for such a name as Placement does: an empty 200 (``no_inventory`` /
``missing_trait``), while a name that does not exist at all stays Placement's 400.
"""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import flavor as nova_flavor
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates
from tests.support.ansible_runner import run_module
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement

ROOT = "5f0c0000-0000-4000-8000-000000000001"
GPU = "5f0c0000-0000-4000-8000-000000000002"
FLEET = {
    "resource_providers": [
        {
            "uuid": ROOT,
            "name": "names-node",
            "parent_provider_uuid": None,
            "inventories": {"VCPU": {"total": 32}, "MEMORY_MB": {"total": 65536}},
            "traits": ["COMPUTE_NODE", "CUSTOM_GPU_HOST", "OWNER_NOVA"],
        },
        {
            "uuid": GPU,
            "name": "names-node_0000:41:00.0",
            "parent_provider_uuid": ROOT,
            "inventories": {"CUSTOM_NVIDIA_T4": {"total": 1, "max_unit": 1}},
            "traits": ["CUSTOM_T4"],
        },
    ],
    # Created in Placement, used by no provider: a retired GPU model and an unused marker trait.
    "resource_classes": ["CUSTOM_NVIDIA_K80"],
    "traits": ["CUSTOM_RETIRED"],
}
QUERIES = [
    "resources=CUSTOM_NVIDIA_K80:1",
    "resources=VCPU:1&required=CUSTOM_RETIRED",
    "resources=CUSTOM_NVIDIA_T4:1&required=CUSTOM_T4",
    "resources=CUSTOM_NEVER_CREATED:1",
    "resources=VCPU:1&required=CUSTOM_NEVER_CREATED",
]


@pytest.fixture(scope="module")
def loaded(placement):
    load_fleet(placement, FLEET)
    return run_module("placement_info", dict(placement.auth))["fleet"]


def test_placement_info_lists_custom_names_used_or_not(loaded, placement):
    assert set(loaded["resource_classes"]) == {"CUSTOM_NVIDIA_K80", "CUSTOM_NVIDIA_T4"}
    assert set(loaded["traits"]) == {"CUSTOM_GPU_HOST", "CUSTOM_RETIRED", "CUSTOM_T4"}
    # the same lists as Placement gives them, standard names left out
    classes = {rc["name"] for rc in placement.request("GET", "/resource_classes")[1]["resource_classes"]}
    assert set(loaded["resource_classes"]) == {rc for rc in classes if rc.startswith("CUSTOM_")}


@pytest.mark.parametrize("query", QUERIES)
def test_solver_answers_unused_names_as_placement_does(loaded, placement, query):
    status, body = placement.request("GET", "/allocation_candidates?" + query)
    fleet = Fleet.from_snapshot(loaded)
    if status == 400:
        with pytest.raises(RequestError):
            allocation_candidates(fleet, Request.parse(query))
        return
    ours = allocation_candidates(fleet, Request.parse(query))
    assert len(ours["allocation_requests"]) == len(body["allocation_requests"]), query
    providers_only = {"resource_providers": loaded["resource_providers"]}
    if not body["allocation_requests"] and ("K80" in query or "RETIRED" in query):
        # the providers alone do not know the name: that snapshot would say 400 where Placement says 200
        with pytest.raises(RequestError):
            allocation_candidates(Fleet.from_snapshot(providers_only), Request.parse(query))


def test_flavor_fit_says_no_inventory_not_unknown_name(loaded, placement):
    flavors = [
        {"name": "k80", "vcpus": 1, "ram": 512, "disk": 0, "extra_specs": {"resources:CUSTOM_NVIDIA_K80": "1"}},
        {"name": "retired", "vcpus": 1, "ram": 512, "disk": 0, "extra_specs": {"trait:CUSTOM_RETIRED": "required"}},
        {"name": "typo", "vcpus": 1, "ram": 512, "disk": 0, "extra_specs": {"resources:CUSTOM_NVIDIA_K08": "1"}},
    ]
    reports = {r["name"]: r for r in flavor_fit(flavors, loaded)}
    for flavor in flavors:
        req = nova_flavor.translate(flavor)
        answers = []
        for query in req.queries:
            status, body = placement.request("GET", "/allocation_candidates?" + query)
            answers.append((status, body if status == 200 else body["errors"][0]["detail"]))
        merged = nova_flavor.merge_answers(req, answers)
        report = reports[flavor["name"]]
        assert (report["outcome"], report["status"]) == (merged["outcome"], merged["status"]), flavor
    assert reports["k80"]["reason"]["code"] == "no_inventory"
    assert reports["retired"]["reason"]["code"] == "missing_trait"
    assert reports["typo"]["outcome"] == "rejected_by_placement"
    assert reports["typo"]["reason"]["code"] == "unknown_resource_class"
