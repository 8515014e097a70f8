"""Day-2 device operations under attack: the hardware record, recorded nvidia-smi profile tables,
mig-parted configs and the Placement snapshots the quarantine and recycling read. Links out of the root,
oversized or malformed text and wrong types give a clear error or are ignored; nothing outside the root is
read or written (the ``outside`` sentinel checks that after every case)."""

from __future__ import annotations

import os
import pathlib
import time

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import hardware_record, health_check, mig_profiles
from ansible_collections.accel.openstack.plugins.module_utils._host.mig_profiles import MigLayoutError
from ansible_collections.accel.openstack.plugins.module_utils._placement import one_time_use, quarantine
from ansible_collections.accel.openstack.plugins.plugin_utils import mig_parted, recycling
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


GOOD_UUID = "4b0e4a6e-9f55-4a0d-8c36-0c3a7c6e2b10"


def _stuck(**changes) -> dict:
    device = {
        "host": "cn1",
        "provider": "cn1_0000:41:00.0",
        "provider_uuid": GOOD_UUID,
        "address": "0000:41:00.0",
        "resource_class": "CUSTOM_PCI_10DE_2331",
        "total": 1,
    }
    return {**device, **changes}


@pytest.mark.parametrize(
    ("device", "addresses", "words"),
    [
        (_stuck(address=None), {}, "its name carries no PCI address"),
        (_stuck(address=""), {}, "its address '' is not a full PCI address"),
        (_stuck(address="0000:41:00.0 --force"), {}, "its address '0000:41:00.0 --force' is not a full PCI address"),
        (_stuck(address=None), {GOOD_UUID: "$(reboot)"}, "recycle_devices_addresses gives it '$(reboot)', which is"),
        (_stuck(address=None), {"cn1_0000:41:00.0": ["0000:41:00.0"]}, "which is not a full PCI address"),
        (_stuck(provider_uuid="../../x"), {}, "has no valid uuid in the snapshot"),
        (_stuck(address=None, provider="cn1\n`id`"), {}, "provider 'cn1 `id`' ("),
    ],
)
def test_a_device_whose_address_cannot_be_resolved_gets_no_command(device, addresses, words):
    (entry,) = recycling.cleaning_commands([device], ["gpu-scrub", "{address}", "{bus_id}"], addresses)
    assert entry["argv"] is None and entry["command"] is None and words in entry["problem"], entry
    assert "stays reserved" in entry["problem"]


def test_substituted_values_are_validated_normalised_and_quoted():
    (entry,) = recycling.cleaning_commands(
        [_stuck(address="0000:3B:00.0")], ["sh", "-c", "scrub --bus {bus_id} --address {address}"]
    )
    assert entry["argv"] == ["sh", "-c", "scrub --bus 00000000:3B:00.0 --address 0000:3b:00.0"]
    assert entry["command"] == "sh -c 'scrub --bus 00000000:3B:00.0 --address 0000:3b:00.0'"
    assert entry["problem"] is None


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("gpu-scrub {address}", "must be the cleaning command as a list of strings"),
        ([], "must be the cleaning command as a list of strings"),
        (["gpu-scrub", 7], "item 2 is not text"),
        (["", "{address}"], "first item (the program) is empty"),
        (["gpu-scrub", "--all"], "names no device: put {address}"),
        (["gpu-scrub", "{address}\x00"], "holds a NUL"),
        (["x"] * 300 + ["{address}"], "has 301 items; at most 256"),
    ],
)
def test_hostile_cleaning_commands_are_refused(command, words):
    with pytest.raises(recycling.RecyclingError) as refused:
        recycling.cleaning_commands([_stuck()], command)
    assert words in str(refused.value)


def test_a_health_command_that_hangs_and_floods_is_killed_bounded_and_masked(tmp_path):
    # It starts a child that would outlive it, prints far more than is kept, names a secret, then hangs.
    pid_file = tmp_path / "child.pid"
    script = 'sleep 600 & echo $! > "$2"; echo "$1" >&2; head -c 3000000 /dev/zero | tr "\\0" x; echo; sleep 600'
    started = time.monotonic()
    outcome = health_check.run(["sh", "-c", script, "sh", "pass-word-0123", str(pid_file)], 1, {"pass-word-0123"})
    assert time.monotonic() - started < 15
    assert outcome.timed_out and outcome.rc is None and not outcome.healthy
    assert len(outcome.stdout) == health_check.TAIL_CHARACTERS and "pass-word-0123" not in str(outcome.result())
    assert outcome.stderr == "********\n" and outcome.command.endswith(f"sh ******** {pid_file}")
    child = int(pid_file.read_text())
    for _attempt in range(50):  # the child it started was killed with it (reaped by whoever adopted it)
        if not _running(child):
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the health command's child {child} still runs")
    message = outcome.explain()
    assert message.startswith("health_command sh -c ") and "was still running after 1 seconds" in message
    assert f"the last {health_check.MESSAGE_TAIL} characters of its stdout: " in message


def _running(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.parametrize(
    ("argv", "timeout", "words"),
    [
        ([], 60, "health_command is empty"),
        (None, 60, "health_command is empty"),
        ([" "], 60, "first item (the program) is empty"),
        (["true", "a\x00b"], 60, "item 2 contains a NUL"),
        (["true"], 0, "health_timeout is 0"),
        (["true"], 99999, "health_timeout is 99999; give the seconds the command may run, 1 to 3600"),
    ],
)
def test_hostile_health_commands_are_refused_before_anything_runs(argv, timeout, words):
    with pytest.raises(health_check.HealthCommandError) as refused:
        health_check.run(argv, timeout)
    assert words in str(refused.value)


def test_a_release_without_a_check_is_refused_before_placement_is_asked():
    unreachable = {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": "admin"}}
    for options, words in [
        ({}, "state=released needs health_command"),
        ({"health_command": []}, "health_command is empty"),
        ({"health_check": False, "health_command": ["true"]}, "health_check is false but health_command is given"),
    ]:
        args = dict(unreachable, host="cn1", address="0000:41:00.0", state="released", **options)
        result = run_module("device_quarantine", args)
        assert result.get("failed") and words in result["msg"], result
        assert not result.get("api_calls"), result  # refused before any request
        no_traceback(result)
