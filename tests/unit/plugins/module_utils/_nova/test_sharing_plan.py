"""The plan from a device policy for one host's shared GPUs: which module calls, and whether the host
needs the boot unit."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError
from ansible_collections.accel.openstack.plugins.module_utils._nova.sharing_plan import host_plan

DEVICES = [
    {"address": "0000:41:00.0", "vendor_id": "10de", "product_id": "20b0", "physfn": None},
    {"address": "0000:41:00.4", "vendor_id": "10de", "product_id": "20b0", "physfn": "0000:41:00.0"},
    {"address": "0000:84:00.0", "vendor_id": "10de", "product_id": "25b6", "physfn": None},
]


def test_a_mig_backed_vgpu_entry_plans_vfs_and_a_layout_by_address_and_the_boot_unit():
    plan = host_plan(
        DEVICES,
        [
            {
                "name": "a100",
                "vendor_id": "10de",
                "product_id": "20b0",
                "mode": "mig",
                "mig_layout": [{"profile": "3g.20gb", "count": 2}],
                "mdev_type": "nvidia-476",
                "sriov_numvfs": 4,
            }
        ],
    )
    assert plan["sriov"] == [{"devices": ["0000:41:00.0"], "numvfs": 4, "entry": "a100"}]  # never the VF
    assert [m["address"] for m in plan["mig"]] == ["0000:41:00.0"]
    assert plan["vgpu"] == [] and plan["boot_unit"] is True


@pytest.mark.parametrize(
    ("entry", "boot_unit"),
    [
        ({"name": "a16", "vendor_id": "10de", "product_id": "25b6", "mode": "vgpu", "mdev_type": "nvidia-735"}, True),
        ({"name": "a16", "vendor_id": "10de", "product_id": "25b6", "mode": "passthrough"}, False),
        ({"name": "other", "vendor_id": "10de", "product_id": "2330", "mode": "vgpu", "mdev_type": "nvidia-1"}, False),
    ],
)
def test_the_boot_unit_only_where_an_entry_shares_a_device_of_the_host(entry, boot_unit):
    assert host_plan(DEVICES, [entry])["boot_unit"] is boot_unit


def test_a_bad_policy_is_the_policys_error():
    with pytest.raises(PolicyError):
        host_plan(DEVICES, [{"name": "x", "mode": "mig"}])
