"""Stage 5 validation: where each request fits, how many times, and why not."""

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.validation import (
    ValidationInputError,
    validate_requests,
    validation_report,
)


def inv(total, reserved=0, max_unit=None):
    return {
        "total": total,
        "reserved": reserved,
        "min_unit": 1,
        "max_unit": max_unit or total,
        "step_size": 1,
        "allocation_ratio": 1.0,
    }


def host(name, vcpu, gpus, used_gpus=0, trait="CUSTOM_NVIDIA_H100"):
    uuid = f"00000000-0000-0000-0000-{name[-1] * 12}"
    providers = [
        {
            "uuid": uuid,
            "name": name,
            "parent_provider_uuid": None,
            "inventories": {"VCPU": inv(vcpu), "MEMORY_MB": inv(65536)},
            "traits": ["COMPUTE_NODE"],
            "aggregates": [],
        }
    ]
    for index in range(gpus):
        providers.append(
            {
                "uuid": f"{uuid[:-2]}{index:02d}"[:-2] + f"{index + 10:02d}",
                "name": f"{name}_0000:1{index}:00.0",
                "parent_provider_uuid": uuid,
                "inventories": {"CUSTOM_PCI_10DE_2330": inv(1)},
                "usages": {"CUSTOM_PCI_10DE_2330": 1 if index < used_gpus else 0},
                "traits": ["COMPUTE_MANAGED_PCI_DEVICE", trait],
                "aggregates": [],
            }
        )
    return providers


@pytest.fixture
def fleet():
    return {"resource_providers": host("hgx-a", 64, 4) + host("hgx-b", 8, 2, used_gpus=2)}


def test_counts_instances_per_host_and_says_why_not_elsewhere(fleet):
    (result,) = validate_requests(
        fleet, [{"name": "gpu.1", "query": "resources=VCPU:8&resources1=CUSTOM_PCI_10DE_2330:1"}]
    )
    assert result["ok"] is True
    assert result["hosts"] == {"hgx-a": 4}
    assert "CUSTOM_PCI_10DE_2330" in result["reasons"]["hgx-b"]
    assert "0 free" in result["reasons"]["hgx-b"] or "has 0" in result["reasons"]["hgx-b"]


def test_vcpu_limits_the_count(fleet):
    (result,) = validate_requests(fleet, [{"name": "cpu", "query": "resources=VCPU:16"}])
    assert result["hosts"] == {"hgx-a": 4}
    assert "VCPU" in result["reasons"]["hgx-b"]


def test_min_hosts_makes_a_request_fail(fleet):
    (result,) = validate_requests(fleet, [{"name": "ha", "query": "resources=VCPU:2", "min_hosts": 3}])
    assert result["ok"] is False
    assert set(result["hosts"]) == {"hgx-a", "hgx-b"}
    assert validation_report([result])[0].startswith("FAIL ha: fits on 2 host(s)")


def test_misspelled_trait_gets_a_did_you_mean(fleet):
    (result,) = validate_requests(
        fleet, [{"name": "t", "query": "resources1=CUSTOM_PCI_10DE_2330:1&required1=CUSTOM_GPU_H100"}]
    )
    assert result["ok"] is False
    assert result["unknown"][0]["name"] == "CUSTOM_GPU_H100"
    assert "CUSTOM_NVIDIA_H100" in result["unknown"][0]["did_you_mean"]
    assert any("did you mean CUSTOM_NVIDIA_H100" in line for line in validation_report([result]))


def test_a_query_placement_rejects_is_reported_as_a_400(fleet):
    (result,) = validate_requests(fleet, [{"name": "bad", "query": "resources1=VCPU:1&resources2=VCPU:1"}])
    assert result["ok"] is False
    assert "400" in result["error"] and "group_policy" in result["error"]


@pytest.mark.parametrize(
    "requests, message",
    [
        ([{"name": "x"}], "'query' is missing"),
        (["resources=VCPU:1"], "give a dict"),
        ([{"query": "resources=VCPU:1", "min_hosts": -1}], "min_hosts"),
    ],
)
def test_bad_request_entries_say_what_to_give(fleet, requests, message):
    with pytest.raises(ValidationInputError, match=message):
        validate_requests(fleet, requests)


def test_bad_fleet_is_a_clear_error():
    with pytest.raises(ValidationInputError, match="fleet"):
        validate_requests({"providers": []}, [])


def test_a_request_expected_to_be_unplaceable_passes_when_it_is(fleet):
    results = validate_requests(
        fleet,
        [
            {
                "name": "typo",
                "query": "resources1=CUSTOM_PCI_10DE_2330:1&required1=CUSTOM_GPU_H100",
                "expect": "unplaceable",
            },
            {"name": "fits", "query": "resources=VCPU:1", "expect": "unplaceable"},
        ],
    )
    assert [r["ok"] for r in results] == [True, False]
    assert "(expected: unplaceable)" in validation_report(results)[0]
