"""The validate stage walks a device profile flavor's chain against the real Cyborg 17 and the real
Placement 16: Cyborg (device and deployable) -> Placement (an OWNER_CYBORG provider with the class and
traits) -> the profile (it asks exactly those names), and names the link that breaks.

The provider is created in Placement as Cyborg's conductor creates it for the deployable (its rp_uuid,
the deployable's resource class and traits), under a compute node as nova-compute reports it.
"""

from __future__ import annotations

import sys
import uuid

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.chain import chain_findings
from tests.support.ansible_runner import run_module, run_playbook, task_results
from tests.support.placement_loader import load_fleet

pytestmark = [pytest.mark.placement, pytest.mark.xdist_group("cyborg")]

RP = str(uuid.uuid4())
ROOT = str(uuid.uuid4())
TRAIT = "CUSTOM_GPU_A100_CHAIN"


def flavor(name: str, profile: str) -> dict:
    return {"name": name, "vcpus": 2, "ram": 2048, "disk": 10, "extra_specs": {"accel:device_profile": profile}}


GOOD = flavor("a100-good", "chain-good")
TYPO = flavor("a100-typo", "chain-typo")
MISSING = flavor("a100-missing", "chain-missing")


@pytest.fixture(scope="module")
def world(cyborg, placement):
    inventory = {"total": 1, "reserved": 0, "min_unit": 1, "max_unit": 1, "step_size": 1, "allocation_ratio": 1.0}
    load_fleet(placement, {"resource_providers": [
        {"uuid": ROOT, "name": "gpu-c", "parent_provider_uuid": None,
         "inventories": {"VCPU": dict(inventory, total=32, max_unit=32), "MEMORY_MB": dict(inventory, total=65536,
                         max_unit=65536), "DISK_GB": dict(inventory, total=500, max_unit=500)},
         "traits": ["OWNER_NOVA", "COMPUTE_ACCELERATORS"], "aggregates": []},
        # Cyborg's provider for the deployable, before OWNER_CYBORG is on it.
        {"uuid": RP, "name": "gpu-c_0000:81:00.0", "parent_provider_uuid": ROOT,
         "inventories": {"PGPU": inventory}, "traits": [TRAIT], "aggregates": []},
    ]})  # fmt: skip
    cyborg.seed(
        {"hostname": "gpu-c", "vendor": "10de", "model": "A100", "address": "0000:81:00.0", "rp_uuid": RP,
         "name": "gpu-c_0000:81:00.0", "handles": 1, "attributes": {"rc": "PGPU", "trait0": TRAIT}}
    )  # fmt: skip
    for name, trait in (("chain-good", TRAIT), ("chain-typo", "CUSTOM_NVIDIA_A100_CHAIN")):
        status, body = cyborg.request(
            "POST",
            "/v2/device_profiles",
            [{"name": name, "groups": [{"resources:PGPU": "1", f"trait:{trait}": "required"}]}],
        )
        assert status == 201, body
    return cyborg, placement


def validate(world, flavors: list[dict]) -> dict:
    cyborg, placement = world
    extra = {
        # the validate stage runs on the compute group; here the one host of the inventory
        "accel_nova_compute_group": "all",
        "accel_placement_auth": placement.auth,
        "accel_validate_cyborg_auth": {"cloud": cyborg.cloud},
        "accel_validate_flavors": flavors,
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
    }
    report = run_playbook("playbooks/validate.yml", extra_vars=extra)
    (chain,) = task_results(
        report, "Walk Cyborg, Placement and the profile for every flavor with a device profile"
    ).values()
    return report, chain["ansible_facts"]["__accel_validate_chain"]


def walk(world, flavors: list[dict]) -> list[dict]:
    """The chain findings from what the modules read of the real Cyborg and the real Placement."""
    cyborg, placement = world
    snapshot = run_module("placement_info", placement.auth)["fleet"]
    info = run_module("cyborg_arq_info", {"cloud": cyborg.cloud, "with_arqs": False, "with_inventory": True})
    return chain_findings(flavors, info, snapshot)


def test_a_provider_without_owner_cyborg_breaks_the_placement_link(world):
    ((finding),) = walk(world, [GOOD])
    assert (finding["flavor"], finding["broken"]) == ("a100-good", "placement")
    assert "lacks OWNER_CYBORG" in finding["message"] and "gpu-c_0000:81:00.0" in finding["message"]
    assert [link["ok"] for link in finding["links"]] == [True, False]


def own(placement) -> None:
    """OWNER_CYBORG on the deployable's provider, as Cyborg's conductor sets it."""
    status, traits = placement.request("GET", f"/resource_providers/{RP}/traits")
    assert status == 200
    body = {"resource_provider_generation": traits["resource_provider_generation"], "traits": [TRAIT, "OWNER_CYBORG"]}
    assert placement.request("PUT", f"/resource_providers/{RP}/traits", body)[0] == 200


def test_the_validate_stage_names_the_broken_link_and_passes_the_whole_chain(world):
    own(world[1])
    report, chains = validate(world, [GOOD, TYPO, MISSING])
    assert report["rc"] != 0
    found = {f["flavor"]: f for f in chains}
    assert set(found) == {"a100-typo", "a100-missing"}
    assert found["a100-typo"]["broken"] == "profile"
    assert f"asks trait CUSTOM_NVIDIA_A100_CHAIN; did you mean {TRAIT}?" in found["a100-typo"]["message"]
    assert found["a100-missing"]["broken"] == "profile" and "does not exist" in found["a100-missing"]["message"]
    (fit,) = task_results(report, "Check every flavor against the fleet").values()
    flavors = {f["name"]: f for f in fit["ansible_facts"]["__accel_validate_flavor_result"]["flavors"]}
    # The profiles came from Cyborg: the good flavor fits where Cyborg's provider is.
    assert (flavors["a100-good"]["outcome"], flavors["a100-good"]["hosts"]) == ("fits", ["gpu-c"])
    assert flavors["a100-good"]["ok"] and not flavors["a100-typo"]["ok"]
    (failed,) = task_results(report, "Fail when a flavor or request cannot be placed as declared").values()
    assert "a100-typo" in failed["msg"] and "a100-missing" in failed["msg"] and "a100-good" not in failed["msg"]


def test_disabled_devices_break_the_cyborg_link(world):
    cyborg, placement = world
    own(placement)
    _status, devices = cyborg.request("GET", "/v2/devices", microversion="2.3")
    enabled = [d["uuid"] for d in devices["devices"] if d["status"] == "enabled"]
    try:
        for device in enabled:
            # Cyborg saves the status, then reserves the provider's inventory in Placement; the stand-in
            # it talks to does not answer that call, so the API answers 500 after the status is saved.
            assert cyborg.request("POST", f"/v2/devices/{device}/disable", microversion="2.3")[0] in (200, 500)
        _status, devices = cyborg.request("GET", "/v2/devices", microversion="2.3")
        assert {d["status"] for d in devices["devices"]} == {"maintaining"}
        ((finding),) = walk(world, [GOOD])
        assert finding["broken"] == "cyborg" and "no enabled device" in finding["message"]
    finally:
        for device in enabled:
            cyborg.request("POST", f"/v2/devices/{device}/enable", microversion="2.3")
    assert walk(world, [GOOD]) == []
