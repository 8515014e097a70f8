"""UUIDs as Placement accepts them, and the inventory record's fields, defaults and capacity."""

import uuid

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._names.inventory import (
    INVENTORY_DEFAULTS,
    INVENTORY_FIELDS,
    capacity,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like

AGG = "8c0c2b5e-2f0e-4a39-9d5c-6d2b0c3f3b1a"


@pytest.mark.parametrize("value", [AGG, AGG.upper(), AGG.replace("-", ""), "{" + AGG + "}", "urn:uuid:" + AGG])
def test_uuid_forms_placement_accepts(value):
    assert is_uuid_like(value)


@pytest.mark.parametrize("value", ["abc", AGG + "0", AGG[:-1], "", None, uuid.UUID(AGG), AGG + "\n"])
def test_anything_else_is_no_uuid(value):
    assert not is_uuid_like(value)


def test_inventory_defaults_cover_every_field_but_total_and_max_unit():
    assert set(INVENTORY_FIELDS) - set(INVENTORY_DEFAULTS) == {"total", "max_unit"}


def test_capacity_is_total_less_reserved_times_the_ratio_rounded_down():
    assert capacity({"total": 10, "reserved": 2, "allocation_ratio": 1.5}) == 12
    assert capacity({"total": 3, "allocation_ratio": 0.5}) == 1
    assert capacity({"total": 8}) == 8
