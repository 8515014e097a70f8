"""The quarantine's pure parts: consumer identity, what it can hold, and the audit's listing."""

from __future__ import annotations

import uuid

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine

ROOT = "11111111-1111-4111-8111-111111111111"
GPU = "22222222-2222-4222-8222-222222222222"
VGPU = "33333333-3333-4333-8333-333333333333"


def test_the_consumers_are_stable_per_device_and_piece():
    assert quarantine.consumer_uuid(GPU) == quarantine.consumer_uuid(GPU.upper())
    assert quarantine.consumer_uuid(GPU) != quarantine.consumer_uuid(VGPU)
    assert uuid.UUID(quarantine.consumer_uuid(GPU)).version == 5
    # Consumer 0 keeps the uuid every earlier quarantine used: uuid5 of the provider's uuid alone.
    assert quarantine.consumer_uuid(GPU, 0) == str(uuid.uuid5(quarantine.NAMESPACE, GPU))
    pieces = [quarantine.consumer_uuid(GPU, n) for n in range(4)]
    assert len(set(pieces)) == 4 and pieces[1] == str(uuid.uuid5(quarantine.NAMESPACE, f"{GPU}/1"))
    assert list(quarantine.consumer_uuids(GPU))[:4] == pieces
    assert len(quarantine.consumer_uuids(GPU)) == quarantine.MAX_CONSUMERS


@pytest.mark.parametrize(
    ("inventory", "others", "expected"),
    [
        ({"total": 1}, 0, [1]),
        ({"total": 1}, 1, []),
        ({"total": 4, "reserved": 1}, 1, [2]),
        ({"total": 4, "max_unit": 1}, 0, [1, 1, 1, 1]),
        ({"total": 16, "max_unit": 4}, 0, [4, 4, 4, 4]),
        ({"total": 8, "step_size": 3}, 0, [6]),
        ({"total": 8, "min_unit": 4}, 5, []),
        ({"total": 10, "max_unit": 4, "step_size": 2, "min_unit": 2}, 0, [4, 4, 2]),
        ({"total": 5, "max_unit": 4, "step_size": 2, "min_unit": 4}, 0, [4]),
        ({"total": 2, "allocation_ratio": 2.0, "max_unit": 4}, 1, [3]),
    ],
)
def test_the_free_units_are_cut_into_pieces_placement_accepts(inventory, others, expected):
    free = quarantine.capacity(inventory) - others
    cut = quarantine.pieces(inventory, free)
    assert cut == expected
    # Whatever is left over is smaller than the smallest amount a request may ask: nothing schedulable remains.
    assert free - sum(cut) < quarantine.smallest_request(inventory) or free - sum(cut) <= 0


@pytest.mark.parametrize(
    ("name", "address"),
    [
        ("cn1_0000:41:00.0", "0000:41:00.0"),
        ("cn1_0000:AF:00.1", "0000:af:00.1"),
        ("cn1_pci_0000_84_00_0", "0000:84:00.0"),
        ("cn2_0000:41:00.0", None),
        ("cn1_pci_0000_84_00", None),
        ("cn1_GPU", None),
    ],
)
def test_address_of_reads_nova_s_provider_names(name, address):
    assert quarantine.address_of(name, "cn1") == address


@pytest.mark.parametrize(
    ("reason", "words"),
    [("", "is empty"), ("   ", "is empty"), (None, "is empty"), ("x" * 256, "at most 255"), ("a\rb", "control")],
)
def test_reason_problems(reason, words):
    assert words in quarantine.reason_problem(reason)


def _fleet(gpu_usage: int, vgpu_usage: int) -> dict:
    return {
        "resource_providers": [
            {"uuid": ROOT, "name": "cn1", "parent_provider_uuid": None, "inventories": {}, "usages": {}},
            {
                "uuid": GPU,
                "name": "cn1_0000:41:00.0",
                "parent_provider_uuid": ROOT,
                "inventories": {"CUSTOM_PCI_10DE_2331": {"total": 1, "reserved": 0}},
                "usages": {"CUSTOM_PCI_10DE_2331": gpu_usage},
            },
            {
                "uuid": VGPU,
                "name": "cn1_pci_0000_84_00_0",
                "parent_provider_uuid": ROOT,
                "inventories": {"VGPU": {"total": 4, "reserved": 0}},
                "usages": {"VGPU": vgpu_usage},
            },
        ]
    }


def _held(provider: str, resources: dict, reason: str) -> dict:
    return {
        "allocations": {provider: {"resources": resources}},
        "project_id": quarantine.QUARANTINE_PROJECT,
        "user_id": reason,
    }


def test_quarantined_devices_lists_each_with_reason_and_leaks():
    held = {
        quarantine.consumer_uuid(GPU): _held(GPU, {"CUSTOM_PCI_10DE_2331": 1}, "Xid 79"),
        quarantine.consumer_uuid(VGPU): _held(VGPU, {"VGPU": 2}, "ECC"),
    }
    listed = quarantine.quarantined_devices(_fleet(1, 3), held)
    assert [(d["host"], d["address"], d["reason"], d["held"], d["schedulable"]) for d in listed] == [
        ("cn1", "0000:41:00.0", "Xid 79", {"CUSTOM_PCI_10DE_2331": 1}, {}),
        ("cn1", "0000:84:00.0", "ECC", {"VGPU": 2}, {"VGPU": 1}),  # an instance left one unit
    ]


def test_quarantined_devices_ignores_other_consumers_and_reads_the_snapshot_key():
    fleet = _fleet(1, 0)
    assert quarantine.quarantined_devices(fleet) == []
    fleet["quarantines"] = {"not-a-quarantine": _held(GPU, {"CUSTOM_PCI_10DE_2331": 1}, "x")}
    assert quarantine.quarantined_devices(fleet) == []
    fleet["quarantines"] = {quarantine.consumer_uuid(GPU): _held(GPU, {"CUSTOM_PCI_10DE_2331": 1}, "x")}
    assert [d["provider"] for d in quarantine.quarantined_devices(fleet)] == ["cn1_0000:41:00.0"]


@pytest.mark.parametrize("fleet", [None, [], "x"])
def test_quarantined_devices_refuses_what_is_not_a_snapshot(fleet):
    with pytest.raises(quarantine.QuarantineError):
        quarantine.quarantined_devices(fleet)
