"""No command from data, and no search without end."""

from __future__ import annotations

import json
import time

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.commands import (
    PENDING_FILE,
    ROOT_SCOPE,
    Command,
    HostCommands,
)
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import (
    Budget,
    TooCombinatorial,
    allocation_candidates,
    solve,
)


def _runner(tmp_path, recorded: list, record_text: str) -> HostCommands:
    root = tmp_path / "root"
    (root / PENDING_FILE.lstrip("/")).parent.mkdir(parents=True)
    (root / PENDING_FILE.lstrip("/")).write_text(record_text)
    runner = HostCommands(HostRoot(str(root)), lambda argv: recorded.append(argv) or (0, "", ""), False)
    runner.why_not = lambda command: None  # as on a host where the command can run now
    return runner


HOSTILE_RECORDS = [
    [{"argv": ["sh", "-c", "touch /tmp/owned"], "key": "initramfs", "scope": "root", "purpose": "x"}],
    [{"argv": ["rm", "-rf", "/"], "key": "update-initramfs -u -k all", "scope": "machine"}],
    [{"argv": "sh -c id", "key": "initramfs"}],
    [{"argv": ["id"], "key": ["initramfs"]}],
    {"argv": ["id"], "key": "initramfs"},
]


@pytest.mark.parametrize("record", HOSTILE_RECORDS)
def test_the_pending_record_is_never_replayed_as_argv(tmp_path, record):
    recorded: list = []
    runner = _runner(tmp_path, recorded, json.dumps(record))
    computed = Command(["update-initramfs", "-u", "-k", "all"], ROOT_SCOPE, "rebuild", key="initramfs")
    runner.request([computed], changed=False)
    for argv in recorded:
        assert argv[-4:] == ["update-initramfs", "-u", "-k", "all"], argv
    assert not any("sh" in argv or "rm" in argv or "id" in argv for argv in recorded)


def test_a_record_of_another_command_is_kept_but_never_run(tmp_path):
    recorded: list = []
    record = [{"argv": ["sh", "-c", "id"], "key": "grub", "scope": "root"}]
    runner = _runner(tmp_path, recorded, json.dumps(record))
    runner.request([Command(["update-initramfs", "-u"], ROOT_SCOPE, "rebuild", key="initramfs")], changed=True)
    assert recorded == [["chroot", runner.host.root, "update-initramfs", "-u"]]


def _gpus(count: int) -> Fleet:
    root = "00000000-0000-0000-0000-000000000001"
    providers = [{"uuid": root, "name": "host", "inventories": {"VCPU": {"total": 8}}}]
    for index in range(count):
        providers.append(
            {
                "uuid": f"00000000-0000-0000-0000-{index + 100:012d}",
                "name": f"gpu{index}",
                "parent_provider_uuid": root,
                "inventories": {"VGPU": {"total": 1}},
            }
        )
    return Fleet.from_snapshot({"resource_providers": providers})


def _isolated(groups: int) -> Request:
    query = {f"resources{index}": "VGPU:1" for index in range(groups)}
    query["group_policy"] = "isolate"
    return Request.parse(query)


@pytest.mark.parametrize("search", [allocation_candidates, solve], ids=["fast", "reference"])
def test_twelve_isolated_groups_over_twelve_devices_end_with_the_numbers(search):
    # 12! candidates to list, with no limit: refused with the numbers rather than listed for minutes.
    started = time.monotonic()
    with pytest.raises(TooCombinatorial) as caught:
        search(_gpus(12), _isolated(12), Budget(200_000))
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert "too combinatorial for an exact answer" in message
    assert "12 " in message and "12 providers" in message and "200,000 steps" in message


def test_the_default_budget_ends_the_same_search_in_seconds():
    started = time.monotonic()
    with pytest.raises(TooCombinatorial):
        allocation_candidates(_gpus(12), _isolated(12))
    assert time.monotonic() - started < 20


def test_more_isolated_groups_than_devices_is_answered_empty_without_a_search():
    # Placement's own pre-check: the tree has 11 units of the class that 12 groups ask one each of.
    started = time.monotonic()
    assert allocation_candidates(_gpus(11), _isolated(12), Budget(1_000))["allocation_requests"] == []
    assert time.monotonic() - started < 10


def test_a_small_search_is_answered_exactly_within_the_budget():
    answer = allocation_candidates(_gpus(4), _isolated(3), Budget(1_000))
    assert len(answer["allocation_requests"]) == 4 * 3 * 2
