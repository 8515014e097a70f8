"""Cyborg device profile validation and the fleet check that catches NoValidHost early."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.device_profiles import (
    fleet_problems,
    validate_profile,
)


def provider(name, inventories, traits, usages=None):
    full = {
        rc: {"total": n, "reserved": 0, "min_unit": 1, "max_unit": n, "step_size": 1, "allocation_ratio": 1.0}
        for rc, n in inventories.items()
    }
    return {"name": name, "uuid": name, "inventories": full, "traits": traits, "usages": usages or {}}


FLEET = {
    "resource_providers": [
        provider("a_gpu", {"PGPU": 1}, ["CUSTOM_NVIDIA_T4"], {"PGPU": 1}),
        provider("b_gpu", {"PGPU": 1}, ["CUSTOM_NVIDIA_A100"]),
        provider("c_fpga", {"FPGA": 2}, ["CUSTOM_FPGA_INTEL"]),
    ]
}


def test_valid_groups_are_normalised_as_cyborg_does():
    groups, errors = validate_profile("t4-1", [{"resources: PGPU ": 1, "trait:CUSTOM_NVIDIA_T4 ": "required"}])
    assert errors == []
    assert groups == [{"resources:PGPU": "1", "trait:CUSTOM_NVIDIA_T4": "required"}]


@pytest.mark.parametrize(
    ("name", "groups", "message"),
    [
        ("has space", [{"resources:PGPU": "1"}], "must match"),
        ("", [{"resources:PGPU": "1"}], "name is empty"),
        ("ok", [], "groups is empty"),
        ("ok", [{"accel:bitstream_id": "x", "foo": "1"}], "must start with resources:, trait: or accel:"),
        ("ok", [{"resources:MEMORY_MB": "1"}], "not one Cyborg accepts"),
        ("ok", [{"trait:COMPUTE_NODE": "required"}], "must be a custom trait"),
        ("ok", [{"trait:CUSTOM_A": "preferred"}], "'required' or 'forbidden'"),
    ],
)
def test_what_cyborg_refuses_is_refused_here(name, groups, message):
    _unused, errors = validate_profile(name, groups)
    assert any(message in e for e in errors), errors


def test_a_trait_under_another_name_is_reported_with_the_name_the_fleet_uses():
    problems = fleet_problems([{"resources:PGPU": "1", "trait:CUSTOM_GPU_T4": "required"}], FLEET)
    assert problems == ["groups[0]: no provider of the fleet has trait CUSTOM_GPU_T4; did you mean CUSTOM_NVIDIA_T4?"]


def test_an_unknown_resource_class_is_reported():
    problems = fleet_problems([{"resources:CUSTOM_FPGA": "1"}], FLEET)
    assert problems and "resource class CUSTOM_FPGA" in problems[0]


def test_a_group_must_fit_on_one_provider_with_free_capacity():
    # the only T4 is in use; the A100 is free but lacks the trait
    problems = fleet_problems([{"resources:PGPU": "1", "trait:CUSTOM_NVIDIA_T4": "required"}], FLEET)
    assert problems and "no single provider has PGPU:1 with CUSTOM_NVIDIA_T4" in problems[0]
    assert fleet_problems([{"resources:PGPU": "1", "trait:CUSTOM_NVIDIA_T4": "forbidden"}], FLEET) == []
    assert fleet_problems([{"resources:FPGA": "2", "trait:CUSTOM_FPGA_INTEL": "required"}], FLEET) == []
    assert fleet_problems([{"resources:FPGA": "3"}], FLEET)
