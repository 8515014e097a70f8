"""Day-2 device operations under attack: the hardware record, recorded nvidia-smi profile tables,
mig-parted configs and the Placement snapshots the quarantine and recycling read. Links out of the root,
oversized or malformed text and wrong types give a clear error or are ignored; nothing outside the root is
read or written (the ``outside`` sentinel checks that after every case)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import hardware_record, mig_profiles
from ansible_collections.accel.openstack.plugins.module_utils._host.mig_profiles import MigLayoutError
from ansible_collections.accel.openstack.plugins.module_utils._placement import one_time_use, quarantine
from ansible_collections.accel.openstack.plugins.plugin_utils import mig_parted
from tests.hostile.conftest import assert_secret_absent, no_traceback
from tests.support.ansible_runner import run_module
from tests.support.fake_sysfs import build_root

MIG = "0000:3b:00.0"


@pytest.fixture
def root(tmp_path):
    return build_root("mig-hopper", str(tmp_path / "root"))


def _devices(root: str) -> list[dict]:
    return run_module("pci_facts", {"root": root})["ansible_facts"]["accel_pci_devices"]


def test_a_record_linked_out_of_the_root_is_neither_read_nor_written(root, outside):
    record = os.path.join(root, hardware_record.RECORD.lstrip("/"))
    os.makedirs(os.path.dirname(record), exist_ok=True)
    os.symlink(str(outside / "secret.txt"), record)
    result = run_module("hardware_record", {"root": root, "devices": _devices(root), "save": True})
    assert_secret_absent(result)
    if result.get("failed"):
        no_traceback(result)
    assert os.path.islink(record)


@pytest.mark.parametrize(
    "devices",
    [
        [{"address": "0000:3b:00.0/../../etc", "vendor_id": "10de", "product_id": "2330"}],
        [{"address": MIG, "vendor_id": "10de", "product_id": "2330", "serial": "<script>" * 20}],
        [{"address": MIG, "vendor_id": ["10de"], "product_id": "2330"}],
        [{"address": f"0000:{n // 256:02x}:{n % 32:02x}.{n % 8}"} for n in range(5000)],
    ],
)
def test_hostile_device_lists_are_refused_with_a_message(root, devices):
    result = run_module("hardware_record", {"root": root, "devices": devices, "save": True})
    assert result.get("failed"), result
    no_traceback(result)
    assert not os.path.exists(os.path.join(root, hardware_record.RECORD.lstrip("/")))


GPU_UUID = "GPU-5d1f7c2e-8a3b-4c6d-9e0f-1a2b3c4d5e6f"


@pytest.mark.parametrize(
    ("gpu_uuid", "shown"),
    [
        ("GPU-$(reboot)", '"GPU-$(reboot)"'),
        ("GPU-" + "a" * 5000, "(a text of 5004 characters)"),
        (GPU_UUID + "\n" + GPU_UUID, "(a text of 81 characters)"),
        ({"uuid": GPU_UUID}, "(a dict, not a text)"),
        (GPU_UUID[4:], f'"{GPU_UUID[4:]}"'),  # a UUID without nvidia-smi's GPU- prefix
    ],
)
def test_a_gpu_uuid_that_is_no_gpu_uuid_is_refused_naming_the_device_and_the_value(root, gpu_uuid, shown):
    devices = _devices(root)
    devices[-1] = dict(devices[-1], gpu_uuid=gpu_uuid)
    result = run_module("hardware_record", {"root": root, "devices": devices, "save": True})
    assert result.get("failed"), result
    no_traceback(result)
    assert (
        f"devices[{len(devices) - 1}] ({devices[-1]['address']}): gpu_uuid {shown} is not a GPU UUID" in result["msg"]
    )
    assert len(result["msg"]) < 400, result["msg"]  # a long value is described, never repeated
    assert not os.path.exists(os.path.join(root, hardware_record.RECORD.lstrip("/")))


def test_one_gpu_uuid_at_two_addresses_is_refused_and_a_saved_record_is_kept(root):
    devices = _devices(root)
    saved = run_module("hardware_record", {"root": root, "devices": devices, "save": True})
    assert saved["changed"], saved
    record = os.path.join(root, hardware_record.RECORD.lstrip("/"))
    with open(record) as handle:
        text = handle.read()
    gpus = [i for i, d in enumerate(devices) if d.get("gpu_uuid")]
    assert len(gpus) >= 2
    cloned = [dict(d) for d in devices]
    cloned[gpus[1]]["gpu_uuid"] = cloned[gpus[0]]["gpu_uuid"]
    result = run_module("hardware_record", {"root": root, "devices": cloned, "save": True})
    assert result.get("failed"), result
    pair = ", ".join(sorted([devices[gpus[0]]["address"], devices[gpus[1]]["address"]]))
    assert f"gives the GPU UUID {devices[gpus[0]]['gpu_uuid']} to 2 addresses ({pair})" in result["msg"]
    with open(record) as handle:
        assert handle.read() == text  # bad input changes nothing


@pytest.mark.parametrize(
    ("lgip", "lgipp"),
    [
        (
            "|   0  MIG 1g.5gb   19     7/7   4.75   No   14   0   0   |\n" * 1,
            "GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6,7,8,9}:1",
        ),
        ("".join(f"|   0  MIG 1g.{n}gb   {n}     7/7   4.75   No   14   0   0   |\n" for n in range(100)), ""),
        ("|   0  MIG ../../etc   19     7/7   4.75   No   14   0   0   |", ""),
        ("", "GPU  0 Profile ID 19 Placements: {" + ",".join(["0"] * 10000) + "}:99999999999"),
    ],
)
def test_crafted_profile_tables_are_refused(lgip, lgipp):
    with pytest.raises(MigLayoutError):
        mig_profiles.model_from_gpu(lgip, lgipp, "2330", None)


def test_a_recorded_profile_table_linked_out_of_the_root_is_not_read(root, outside):
    from ansible_collections.accel.openstack.plugins.module_utils._host import nvidia_smi
    from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot

    for kind in ("mig-lgip", "mig-lgipp"):
        path = os.path.join(root, nvidia_smi.RECORDED_DIR.lstrip("/"), kind, f"{MIG}.txt")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(str(outside / "secret.txt"), path)
    texts = nvidia_smi.read_profile_tables(HostRoot(root), MIG, None)
    assert_secret_absent(texts)
    result = run_module("nvidia_mig", {"root": root, "address": MIG, "layout": [{"profile": "3g.40gb", "count": 2}]},
                        check=True)  # fmt: skip
    assert_secret_absent(result)
    assert result.get("profile_table") == "built-in" or result.get("failed"), result


@pytest.mark.parametrize(
    "config",
    [
        "version: v1",
        {"version": "v1", "mig-configs": {"c": [{"devices": list(range(10**6)), "mig-enabled": False}]}},
        {"version": "v1", "mig-configs": {"c": [{"devices": "all", "mig-enabled": True, "mig-devices": "x"}]}},
        {"version": "v1", "mig-configs": {"c": [{"devices": [True], "mig-enabled": False}]}},
        {"version": "v1", "mig-configs": {"c": {"devices": "all"}}},
    ],
)
def test_hostile_mig_parted_configs_are_refused(root, config):
    facts = {"accel_pci_devices": _devices(root)}
    with pytest.raises(mig_parted.MigPartedError):
        mig_parted.policy_from_mig_parted(config, facts, "c")


@pytest.mark.parametrize(
    "fleet",
    [
        {"resource_providers": [{"uuid": "x", "parent_provider_uuid": "x", "traits": ["HW_PCI_ONE_TIME_USE"]}]},
        {
            "resource_providers": [
                {"uuid": "a", "parent_provider_uuid": "b"},
                {"uuid": "b", "parent_provider_uuid": "a"},
            ]
        },
        {"resource_providers": [None, 1, "x", {"uuid": None}]},
        {"resource_providers": [{"uuid": "a", "traits": ["HW_PCI_ONE_TIME_USE"], "inventories": {"X": "y"}}]},
    ],
)
def test_odd_snapshots_give_no_crash_and_no_loop(fleet):
    assert one_time_use.stuck_devices(fleet) == []
    assert quarantine.quarantined_devices(fleet, {}) == []
