"""Replaced, moved, added and removed devices, told from pci_facts and the host's record."""

from __future__ import annotations

import json

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import hardware_record
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.hardware_record import HardwareRecordError
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from tests.support.ansible_runner import run_module
from tests.support.fake_nvidia_smi import STATE, render_recorded
from tests.support.fake_sysfs import build_root


def _dev(address: str, serial: str | None, product: str = "2330", gpu: int | None = None) -> dict:
    gpu_uuid = None if gpu is None else f"GPU-0a16b0a2-0000-4000-8000-{gpu:012d}"
    return {"address": address, "vendor_id": "10de", "product_id": product, "serial": serial, "gpu_uuid": gpu_uuid}


def _changes(before, after) -> list[tuple]:
    out = hardware_record.compare(
        hardware_record.normalise(before, "before"), hardware_record.normalise(after, "after")
    )
    return [(c["change"], c["address"], c.get("from_address")) for c in out]


A, B, C = "0000:18:00.0", "0000:2a:00.0", "0000:3b:00.0"
D = "0000:4c:00.0"
BOARD = [(A, 1), (B, 2), (C, 3), (D, 4)]  # one A16 board: four GPUs, one board serial, four GPU UUIDs


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ([_dev(A, "S1"), _dev(B, "S2")], [_dev(A, "S1"), _dev(B, "S2")], []),
        ([_dev(A, "S1")], [_dev(A, "S9")], [("replaced", A, None)]),
        ([_dev(A, None)], [_dev(A, None, product="2331")], [("replaced", A, None)]),
        ([_dev(A, "S1"), _dev(B, "S2")], [_dev(C, "S1"), _dev(B, "S2")], [("moved", C, A)]),
        ([_dev(A, "S1"), _dev(B, "S2")], [_dev(A, "S2"), _dev(B, "S1")], [("moved", A, B), ("moved", B, A)]),
        ([_dev(A, "S1")], [_dev(A, "S1"), _dev(B, "S2")], [("added", B, None)]),
        ([_dev(A, "S1"), _dev(B, "S2")], [_dev(A, "S1")], [("removed", B, None)]),
        ([_dev(A, None)], [_dev(A, "S1")], []),  # a serial seen for the first time is no replacement
        # GPUs that share a board serial are told apart by their GPU UUIDs
        (
            [_dev(a, "B1", gpu=g) for a, g in BOARD],
            [_dev(a, "B1", gpu=g) for a, g in BOARD[:3]],
            [("removed", D, None)],
        ),
        ([_dev(a, "B1", gpu=g) for a, g in BOARD], [_dev(a, "B1", gpu=g) for a, g in BOARD], []),
        ([_dev(A, "B1", gpu=1), _dev(B, "B1", gpu=2)], [_dev(C, "B1", gpu=1), _dev(B, "B1", gpu=2)], [("moved", C, A)]),
        (
            [_dev(A, "B1", gpu=1), _dev(B, "B1", gpu=2)],
            [_dev(A, "B1", gpu=9), _dev(B, "B1", gpu=2)],
            [("replaced", A, None)],
        ),
        # without UUIDs (a record from before they were kept) a shared serial moves nothing
        ([_dev(a, "B1") for a, _g in BOARD], [_dev(a, "B1", gpu=g) for a, g in BOARD[:3]], [("removed", D, None)]),
        ([_dev(A, "B1"), _dev(B, "B1")], [_dev(C, "B1"), _dev(B, "B1")], [("removed", A, None), ("added", C, None)]),
        # a record without UUIDs still tells a move by a serial that names one GPU
        ([_dev(A, "S1"), _dev(B, "S2")], [_dev(C, "S1", gpu=1), _dev(B, "S2", gpu=2)], [("moved", C, A)]),
    ],
)
def test_compare_tells_each_kind_of_change(before, after, expected):
    assert _changes(before, after) == expected


@pytest.mark.parametrize(
    ("devices", "words"),
    [
        ("x", "must be a list"),
        ([{"address": "18:00.0", "vendor_id": "10de", "product_id": "2330"}], "not a full PCI address"),
        ([{"address": A, "vendor_id": "10de", "product_id": "zz"}], "not 4 hex digits"),
        ([_dev(A, "S1"), _dev(A, "S2")], "twice"),
        ([_dev(A, "x" * 100)], "not a board serial"),
        ([_dev(A, "a\nb")], "not a board serial"),
        ([dict(_dev(A, "S1"), gpu_uuid="GPU-1; rm -rf /")], 'gpu_uuid "GPU-1; rm -rf /" is not a GPU UUID'),
        ([dict(_dev(A, "S1"), gpu_uuid=["GPU-x"])], r"gpu_uuid \(a list, not a text\) is not a GPU UUID"),
        (
            [_dev(A, "B1", gpu=1), _dev(B, "B1", gpu=1)],
            f"GPU UUID GPU-0a16b0a2-0000-4000-8000-000000000001 to 2 addresses \\({A}, {B}\\)",
        ),
    ],
)
def test_bad_facts_are_refused(devices, words):
    with pytest.raises(HardwareRecordError, match=words):
        hardware_record.normalise(devices, "devices")


def test_a_replaced_gpu_is_recognised_from_the_facts_of_a_host(tmp_path):
    root = build_root("mig-hopper", str(tmp_path / "root"))
    facts, _warnings = discover(root)
    gpus = [d for d in facts["accel_pci_devices"] if d["vendor_id"] == "10de"]
    assert all(d["serial"] and d["gpu_uuid"].startswith("GPU-") for d in gpus)
    args = {"root": root, "devices": facts["accel_pci_devices"], "save": True}
    first = run_module("hardware_record", args)
    assert first["changed"] and first["first_run"] and first["changes"] == []
    assert run_module("hardware_record", args)["changed"] is False

    # The board at 0000:3b:00.0 is swapped: nvidia-smi reports another serial at the same address.
    with open(f"{root}{STATE}") as handle:
        state = json.load(handle)
    swapped = next(g for g in state["gpus"] if g["address"] == C)
    swapped["serial"] = "1654321098765"
    render_recorded(root, state)
    facts, _warnings = discover(root)
    args["devices"] = facts["accel_pci_devices"]
    checked = run_module("hardware_record", dict(args, save=False), check=True, diff=True)
    assert [(c["change"], c["address"]) for c in checked["changes"]] == [("replaced", C)]
    assert checked["changes"][0]["device"]["serial"] == "1654321098765" and checked["changed"] is False
    saved = run_module("hardware_record", args, diff=True)
    assert saved["changed"] and saved["changes"][0]["change"] == "replaced"
    assert run_module("hardware_record", args)["changes"] == []
    assert HostRoot(root).read_text(hardware_record.RECORD).count("1654321098765") == 1


def test_a_record_that_is_not_ours_is_refused_and_left_alone(tmp_path):
    root = build_root("mig-hopper", str(tmp_path / "root"))
    HostRoot(root).write_text(hardware_record.RECORD, "[1, 2]")
    facts, _warnings = discover(root)
    failed = run_module("hardware_record", {"root": root, "devices": facts["accel_pci_devices"], "save": True})
    assert failed.get("failed") and "remove it" in failed["msg"]
    assert HostRoot(root).read_text(hardware_record.RECORD) == "[1, 2]"
