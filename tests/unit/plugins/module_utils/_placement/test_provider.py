"""The pure half of provider convergence: declarations, merged targets, refusals."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._placement.names import PlacementNameError
from ansible_collections.accel.openstack.plugins.module_utils._placement.provider import (
    ProviderSpec,
    full_inventory,
    inventories_differ,
    target_inventories,
    target_set,
    usage_refusals,
)

NOVA_VCPU = {"total": 32, "reserved": 2, "min_unit": 1, "max_unit": 16, "step_size": 1, "allocation_ratio": 4.0}


def record(total, **fields):
    base = {"total": total, "reserved": 0, "min_unit": 1, "max_unit": total, "step_size": 1, "allocation_ratio": 1.0}
    return dict(base, **fields)


def test_a_bare_number_is_a_total_and_fields_are_typed():
    spec = ProviderSpec.from_dict({"name": "n", "inventories": {"VCPU": 8, "MEMORY_MB": {"total": "1024"}}})
    assert spec.inventories == {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 1024}}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({}, "give a name or a uuid"),
        ({"uuid": "nope"}, "is not a UUID"),
        ({"name": "n", "inventories": {"VCPU": {"reserved": 1}}}, "needs at least total"),
        ({"name": "n", "inventories": {"VCPU": {"total": 4, "size": 1}}}, "unknown fields ['size']"),
        ({"name": "n", "inventories": {"VCPU": {"total": "four"}}}, "is not a number"),
        ({"name": "n", "inventories": {"VCPU": {"total": 4, "step_size": 0}}}, "must be at least 1"),
        ({"name": "n", "aggregates": ["x"]}, "must be UUIDs"),
        ({"name": "n", "traits_mode": "union"}, "merge or replace"),
        ({"name": "n", "colour": "red"}, "unknown keys ['colour']"),
    ],
)
def test_bad_declarations_name_the_entry_and_the_fix(entry, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ProviderSpec.from_dict(entry, "providers[3]")


def test_invalid_custom_names_in_a_declaration_are_refused():
    with pytest.raises(PlacementNameError, match="CUSTOM_GPU_T4"):
        ProviderSpec.from_dict({"name": "n", "traits": ["CUSTOM_gpu_t4"]})
    with pytest.raises(PlacementNameError, match="CUSTOM_PCI_X"):
        ProviderSpec.from_dict({"name": "n", "inventories": {"CUSTOM_pci_x": 1}})


def test_the_predicted_shape_is_accepted_as_it_is():
    spec = ProviderSpec.from_dict({"name": "h_0000:41:00.0", "parent_name": "h", "inventories": {}, "traits": []})
    assert spec.parent == "h"
    root = ProviderSpec.from_dict({"name": "h", "parent_name": None, "aggregates": []})
    assert root.parent is None and root.aggregates == []


def test_merge_keeps_fields_nova_set_that_the_declaration_leaves_out():
    assert full_inventory({"total": 32}, NOVA_VCPU, "merge") == NOVA_VCPU
    assert full_inventory({"total": 48}, NOVA_VCPU, "merge")["max_unit"] == 16


def test_merge_tracks_max_unit_when_it_followed_the_total():
    assert full_inventory({"total": 8}, record(4), "merge") == record(8)


def test_replace_and_new_classes_take_placements_defaults():
    assert full_inventory({"total": 32}, NOVA_VCPU, "replace") == record(32)
    assert full_inventory({"total": 2, "reserved": 1}, None, "merge") == record(2, reserved=1)


def test_merge_keeps_classes_replace_drops_them():
    current = {"VCPU": NOVA_VCPU, "MEMORY_MB": record(1024)}
    merged = target_inventories(current, {"DISK_GB": {"total": 100}}, "merge")
    assert set(merged) == {"VCPU", "MEMORY_MB", "DISK_GB"} and merged["VCPU"] == NOVA_VCPU
    replaced = target_inventories(current, {"DISK_GB": {"total": 100}}, "replace")
    assert replaced == {"DISK_GB": record(100)}
    assert not inventories_differ(current, target_inventories(current, {"VCPU": {"total": 32}}, "merge"))
    assert inventories_differ(current, merged)


def test_ratio_comparison_tolerates_float_noise():
    assert not inventories_differ(
        {"VCPU": record(4, allocation_ratio=1.5)}, {"VCPU": record(4, allocation_ratio=1.5000000001)}
    )


def test_sets_merge_or_replace():
    assert target_set(["COMPUTE_NODE", "OWNER_NOVA"], ["CUSTOM_X"], "merge") == [
        "COMPUTE_NODE",
        "CUSTOM_X",
        "OWNER_NOVA",
    ]
    assert target_set(["COMPUTE_NODE", "OWNER_NOVA"], ["CUSTOM_X"], "replace") == ["CUSTOM_X"]


def test_usage_refusals_give_the_numbers_and_the_smallest_total_that_works():
    messages = usage_refusals("node", {"VCPU": record(8, reserved=2, allocation_ratio=2.0)}, {"VCPU": 14, "GONE": 1})
    assert len(messages) == 2
    assert "VCPU capacity would be 12" in messages[1] and "14 is in use" in messages[1]
    assert "keep total at least 9" in messages[1]  # (9 - 2) x 2.0 = 14
    assert "removing GONE refused, 1 in use" in messages[0]
    assert usage_refusals("node", {"VCPU": record(8)}, {"VCPU": 8, "X": 0}) == []
