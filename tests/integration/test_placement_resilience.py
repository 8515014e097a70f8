"""Concurrent writers, generation conflicts and an outage, against the real Placement service."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._placement.client import (
    PlacementClient,
    PlacementError,
    PlacementUnreachable,
)
from ansible_collections.accel.openstack.plugins.module_utils._placement.module import placement_client
from ansible_collections.accel.openstack.plugins.module_utils._placement.provider import ProviderSpec, converge
from tests.support.ansible_runner import REPO, run_module

pytestmark = pytest.mark.placement

WORKER = """
import json, sys, time
sys.path.insert(0, {repo!r})
import conftest  # noqa: F401  (makes ansible_collections importable)
from tests.support.ansible_runner import run_module
args, start = json.loads(sys.argv[1]), float(sys.argv[2])
time.sleep(max(0.0, start - time.time()))
print(json.dumps(run_module("placement_provider", args)))
"""


def declaration(placement, side: str, round_: int) -> dict:
    return dict(
        placement.auth,
        name="shared-node",
        inventories={f"CUSTOM_SIDE_{side}_{round_}": {"total": 2}},
        traits=[f"CUSTOM_SIDE_{side}_{round_}", f"CUSTOM_SIDE_{side}"],
        aggregates=[f"00000000-0000-4000-8000-00000000{ord(side):02x}{round_:02d}"],
        max_retries=10,
    )


def test_two_processes_converging_one_provider_end_with_the_union(placement):
    expected_traits, expected_classes, expected_aggregates = set(), set(), set()
    for round_ in range(3):
        start = time.time() + 1.5
        procs = []
        for side in "AB":
            args = declaration(placement, side, round_)
            expected_traits |= set(args["traits"])
            expected_classes |= set(args["inventories"])
            expected_aggregates |= set(args["aggregates"])
            code = WORKER.format(repo=REPO)
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", code, json.dumps(args), str(start)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            result = json.loads(out)
            assert not result.get("failed"), (result, err)
            assert result["changed"] is True
    _unused, found = placement.request("GET", "/resource_providers?name=shared-node")
    assert len(found["resource_providers"]) == 1
    node = found["resource_providers"][0]["uuid"]
    _unused, traits = placement.request("GET", f"/resource_providers/{node}/traits")
    _unused, inventories = placement.request("GET", f"/resource_providers/{node}/inventories")
    _unused, aggregates = placement.request("GET", f"/resource_providers/{node}/aggregates")
    assert set(traits["traits"]) == expected_traits
    assert set(inventories["inventories"]) == expected_classes
    assert set(aggregates["aggregates"]) == expected_aggregates


class MeddlingClient(PlacementClient):
    """A real client; before its first trait write another writer changes the same provider."""

    def __init__(self, adapter, server):
        super().__init__(adapter)
        self.server = server
        self.meddled = False

    @staticmethod
    def next(body: dict) -> list[str]:
        """What the other writer sets: OWNER_NOVA, toggling COMPUTE_NODE so every write is a real change."""
        keep = {t for t in body["traits"] if t != "COMPUTE_NODE"} | {"OWNER_NOVA"}
        return sorted(keep if "COMPUTE_NODE" in body["traits"] else keep | {"COMPUTE_NODE"})

    def put_provider_traits(self, uuid, generation, traits):
        if not self.meddled:
            self.meddled = True
            _unused, body = self.server.request("GET", f"/resource_providers/{uuid}/traits")
            status, _unused = self.server.request(
                "PUT",
                f"/resource_providers/{uuid}/traits",
                {"resource_provider_generation": body["resource_provider_generation"], "traits": self.next(body)},
            )
            assert status == 200
        return super().put_provider_traits(uuid, generation, traits)


def test_generation_conflict_is_retried_with_a_fresh_read(placement):
    # the compute node is simulated; the traits below are added as on a real cloud (custom, on a root)
    run_module(
        "placement_provider", dict(placement.auth, name="contended", inventories={"VCPU": 4}, simulate_compute=True)
    )
    client = MeddlingClient(placement_client(placement.auth).adapter, placement)
    result = converge(client, [ProviderSpec.from_dict({"name": "contended", "traits": ["CUSTOM_MINE"]})])
    assert result["changed"] and client.meddled
    assert client.calls["PUT"] >= 3  # the refused write, creating CUSTOM_MINE or not, and the retried write
    node = result["providers"][0]["uuid"]
    _unused, traits = placement.request("GET", f"/resource_providers/{node}/traits")
    assert sorted(traits["traits"]) == ["COMPUTE_NODE", "CUSTOM_MINE", "OWNER_NOVA"]

    never = AlwaysLosing(placement_client(placement.auth).adapter, placement)
    with pytest.raises(PlacementError, match="still conflicting after 2 fresh reads"):
        converge(never, [ProviderSpec.from_dict({"name": "contended", "traits": ["CUSTOM_OTHER"]})], max_retries=2)


class AlwaysLosing(MeddlingClient):
    """Another writer changes the provider before every trait write."""

    def put_provider_traits(self, uuid, generation, traits):
        self.meddled = False
        return super().put_provider_traits(uuid, generation, traits)


class FailingAfter(PlacementClient):
    """A real client whose Placement is stopped after ``limit`` requests."""

    def __init__(self, adapter, server, limit):
        super().__init__(adapter)
        self.server, self.limit = server, limit

    def request(self, method, path, body=None, ok=(200,)):
        if self.call_count == self.limit:
            self.server.stop()
        return super().request(method, path, body, ok)


def fleet(hosts: int) -> list[dict]:
    out = []
    for n in range(hosts):
        out.append({"name": f"outage-{n}", "inventories": {"VCPU": 8, "MEMORY_MB": 16384}, "traits": ["CUSTOM_O"]})
        out.append(
            {"name": f"outage-{n}_0000:41:00.0", "parent": f"outage-{n}", "traits": ["CUSTOM_NVIDIA_T4"],
             "inventories": {"CUSTOM_PCI_10DE_1EB8": {"total": 1, "max_unit": 1}}}
        )  # fmt: skip
    return out


def test_placement_down_mid_run_gives_a_clear_error_and_a_rerun_repairs(placement):
    declared = fleet(6)
    client = FailingAfter(placement_client(placement.auth).adapter, placement, limit=15)
    client.endpoint_hint = placement.url
    with pytest.raises(PlacementUnreachable) as caught:
        converge(client, [ProviderSpec.from_dict(d) for d in declared], simulate_compute=True)
    message = str(caught.value)
    assert placement.url in message and "did not answer" in message and "run again" in message

    placement.start()  # the same database, a new port
    result = run_module("placement_provider", dict(placement.auth, providers=declared, simulate_compute=True))
    assert result["changed"] is True and not result.get("failed"), result
    again = run_module("placement_provider", dict(placement.auth, providers=declared, simulate_compute=True))
    assert again["changed"] is False
    snapshot = run_module("placement_info", dict(placement.auth, name=["outage-*"]))
    names = {p["name"]: p for p in snapshot["fleet"]["resource_providers"]}
    assert set(names) == {d["name"] for d in declared}
    for decl in declared:
        provider = names[decl["name"]]
        assert set(provider["inventories"]) == set(decl["inventories"])
        assert provider["traits"] == decl["traits"]
