"""Which one-time-use devices wait for the operator, from a fleet snapshot."""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.filter.one_time_use import one_time_use_stuck
from ansible_collections.accel.openstack.plugins.module_utils._placement.one_time_use import (
    OneTimeUseError,
    stuck_devices,
)

ROOT = "11111111-1111-4111-8111-111111111111"
OTU = "HW_PCI_ONE_TIME_USE"
RC = "CUSTOM_PCI_10DE_2331"


def _device(uuid: str, address: str, reserved: int, used: int, traits=(OTU,), total: int = 1) -> dict:
    return {
        "uuid": uuid,
        "name": f"cn1_{address.upper()}",
        "parent_provider_uuid": ROOT,
        "inventories": {RC: {"total": total, "reserved": reserved}},
        "usages": {RC: used},
        "traits": list(traits),
    }


FLEET = {
    "resource_providers": [
        {"uuid": ROOT, "name": "cn1", "parent_provider_uuid": None, "inventories": {}, "traits": []},
        _device("22222222-2222-4222-8222-000000000001", "0000:41:00.0", reserved=1, used=0),  # waiting
        _device("22222222-2222-4222-8222-000000000002", "0000:42:00.0", reserved=1, used=1),  # in use
        _device("22222222-2222-4222-8222-000000000003", "0000:43:00.0", reserved=0, used=0),  # in the pool
        _device("22222222-2222-4222-8222-000000000004", "0000:44:00.0", reserved=1, used=0, traits=()),  # operator's
        _device("22222222-2222-4222-8222-000000000005", "0000:45:00.0", reserved=1, used=0, total=2),  # partial
    ]
}


def test_only_unused_one_time_use_devices_reserved_whole_are_listed():
    assert stuck_devices(FLEET) == [
        {
            "host": "cn1",
            "provider": "cn1_0000:41:00.0",
            "provider_uuid": "22222222-2222-4222-8222-000000000001",
            "address": "0000:41:00.0",
            "resource_class": RC,
            "total": 1,
        }
    ]
    assert one_time_use_stuck(FLEET) == stuck_devices(FLEET)


@pytest.mark.parametrize("fleet", [{}, {"resource_providers": "x"}, None])
def test_what_is_not_a_snapshot_is_refused(fleet):
    with pytest.raises(OneTimeUseError):
        stuck_devices(fleet)
