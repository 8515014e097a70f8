"""forensics: reading one request's Nova 34 lines (Kolla files, journald), the bounds, the replay and its agreement.

The lines are Nova 34's messages (nova/scheduler/manager.py, nova/filters.py, nova/scheduler/utils.py,
nova/exception.py) in oslo.log's default context format, as tests/support/nova_scheduler_log_oracle.py
has Nova itself write them; the integration test tests/integration/test_novalidhost_forensics.py reads
the real ones.
"""

import json

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import forensics
from ansible_collections.accel.openstack.plugins.plugin_utils.forensics import ForensicsError
from tests.unit.plugins.plugin_utils.test_flavor_fit import FLEET, cpu_host, flavor

REQ = "req-11111111-2222-4333-8444-555555555555"
OTHER = "req-99999999-2222-4333-8444-555555555555"
INSTANCE = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
SUFFIX = " get_filtered_objects /usr/lib/python3/site-packages/nova/filters.py:102"


def line(level, logger, message, request=REQ, debug_suffix=True, when="2026-12-02 08:00:00.123"):
    text = f"{when} 7 {level} {logger} [None {request} admin admin - - default default] {message}"
    return text + (SUFFIX if level == "DEBUG" and debug_suffix else "")


NO_CANDIDATES = (
    "Got no allocation candidates from the Placement API. This could be due to insufficient resources or a "
    "temporary occurrence as compute nodes start up."
)
CONDUCTOR_NVH = line(
    "WARNING",
    "nova.scheduler.utils",
    f"[instance: {INSTANCE}] Failed to compute_task_build_instances: No valid host was found. "
    ": nova.exception_Remote.NoValidHost_Remote: No valid host was found. ",
)
FILTERED_INFO = [
    line("INFO", "nova.filters", "Filter AggregateInstanceExtraSpecsFilter returned 0 hosts"),
    line(
        "INFO",
        "nova.filters",
        f"Filtering removed all hosts for the request with instance ID '{INSTANCE}'. Filter results: "
        "['ComputeFilter: (start: 2, end: 2)', 'AggregateInstanceExtraSpecsFilter: (start: 2, end: 0)']",
    ),
]
FILTERED_DEBUG = [
    line("DEBUG", "nova.scheduler.manager", f"Starting to schedule for instances: ['{INSTANCE}']"),
    line("DEBUG", "nova.filters", "Starting with 2 host(s)"),
    line("DEBUG", "nova.filters", "Filter ComputeFilter returned 2 host(s)"),
    line(
        "DEBUG",
        "nova.scheduler.filters.aggregate_instance_extra_specs",
        "(cpu1, cpu1) ram: 0MB disk: 0MB io_ops: 0 instances: 0, allocation_candidates: 1 fails flavor extra_specs "
        "requirements. '{'a100'}' do not match 'h100'",
    ),
    FILTERED_INFO[0],
    line(
        "DEBUG",
        "nova.filters",
        f"Filtering removed all hosts for the request with instance ID '{INSTANCE}'. Filter results: "
        "[('ComputeFilter', [('cpu1', 'cpu1'), ('cpu2', 'cpu2')]), ('AggregateInstanceExtraSpecsFilter', None)]",
    ),
    FILTERED_INFO[1],
]


def test_kolla_lines_of_one_request_only():
    text = "\n".join(
        [
            line("INFO", "nova.scheduler.manager", NO_CANDIDATES, request=OTHER),
            *FILTERED_INFO,
            CONDUCTOR_NVH,
        ]
    )
    evidence = forensics.read_request(text, REQ)
    assert evidence["placement"] == "candidates" and evidence["hosts_from_placement"] == 2
    assert evidence["zeroed_by"] == "AggregateInstanceExtraSpecsFilter"
    assert evidence["filters"] == [
        {"name": "ComputeFilter", "start": 2, "end": 2},
        {"name": "AggregateInstanceExtraSpecsFilter", "start": 2, "end": 0},
    ]
    assert evidence["failure"] == "NoValidHost" and evidence["failure_message"] == "No valid host was found."
    assert evidence["instances"] == [INSTANCE] and evidence["lines"] == 3 and evidence["debug"] is False


def test_debug_lines_give_the_hosts_and_what_the_filter_said_about_each():
    evidence = forensics.read_request("\n".join(FILTERED_DEBUG), INSTANCE)
    assert evidence["requests"] == [REQ] and evidence["debug"] is True
    assert evidence["removed_last"] == ["cpu1", "cpu2"]
    assert evidence["host_reasons"] == {
        "cpu1": [
            "aggregate_instance_extra_specs: fails flavor extra_specs requirements. '{'a100'}' do not match 'h100'"
        ]
    }
    assert [(f["name"], f["start"], f["end"]) for f in evidence["filters"]] == [
        ("ComputeFilter", 2, 2),
        ("AggregateInstanceExtraSpecsFilter", 2, 0),
    ]


@pytest.mark.parametrize(
    "prefix",
    ["Dec 02 08:00:00 ctl1 nova-scheduler[4242]: ", "2026-12-02T08:00:00+0000 ctl1 nova-scheduler[4242]: "],
    ids=["short", "short-iso"],
)
def test_journald_prefix_is_dropped(prefix):
    text = prefix + line("INFO", "nova.scheduler.manager", NO_CANDIDATES)
    evidence = forensics.read_request([text], REQ)
    assert evidence["placement"] == "no_candidates" and evidence["failure"] == "NoValidHost"
    assert "conductor's line is not in the logs given" in evidence["failure_message"]


def test_max_retries_exceeded_wins_over_no_valid_host_found_by_instance():
    other = "req-33333333-2222-4333-8444-555555555555"
    text = "\n".join(
        [
            CONDUCTOR_NVH.replace(REQ, other).replace("No valid host was found. ", "No valid host was found. x"),
            line(
                "WARNING",
                "nova.scheduler.utils",
                f"[instance: {INSTANCE}] Failed to compute_task_build_instances: Exceeded maximum number of retries. "
                f"Exhausted all hosts available for retrying build failures for instance {INSTANCE}.",
            ),
        ]
    )
    evidence = forensics.read_request(text, INSTANCE)
    assert evidence["requests"] == [other, REQ]
    assert evidence["failure"] == "MaxRetriesExceeded"
    assert evidence["failure_message"].startswith("Exceeded maximum number of retries. Exhausted all hosts")


@pytest.mark.parametrize("bad", ["req-123", "; rm -rf /", "x" * 500, 42, None])
def test_bad_request_is_refused_naming_the_forms(bad):
    with pytest.raises(ForensicsError) as caught:
        forensics.read_request("", bad)
    assert "request id" in str(caught.value) and "instance UUID" in str(caught.value)
    assert "..." not in str(caught.value)


def test_request_absent_says_what_was_read():
    with pytest.raises(ForensicsError, match=r"no line of the request req-1111.* \(1 line\(s\) read, 1 over"):
        forensics.read_request(
            [line("INFO", "nova.x", "hello", request=OTHER), "y" * (forensics.MAX_LINE + 1)],
            REQ,
        )


def test_bounds_on_size_and_lines(monkeypatch):
    monkeypatch.setattr(forensics, "MAX_BYTES", 100)
    with pytest.raises(ForensicsError, match=r"log 2 has 101 characters, more than the 100 read"):
        forensics.read_request(["", "x" * 101], REQ)
    monkeypatch.setattr(forensics, "MAX_BYTES", 10**6)
    monkeypatch.setattr(forensics, "MAX_LINES", 3)
    with pytest.raises(ForensicsError, match=r"log 1 has 4 lines, more than the 3 read"):
        forensics.read_request("a\nb\nc\nd", REQ)


def test_hostile_filter_results_do_not_break_the_reader():
    deep = "[" * 30000 + "]" * 30000
    hostile = line(
        "DEBUG",
        "nova.filters",
        f"Filtering removed all hosts for the request with instance ID '{INSTANCE}'. Filter results: {deep}",
    )
    call = line(
        "DEBUG",
        "nova.filters",
        f"Filtering removed all hosts for the request with instance ID '{INSTANCE}'. Filter results: "
        "[__import__('os').system('false')]",
    )
    evidence = forensics.read_request("\n".join([hostile, call, *FILTERED_INFO]), REQ)
    assert evidence["removed_last"] == [] and evidence["zeroed_by"] == "AggregateInstanceExtraSpecsFilter"


def test_replay_names_each_host_and_agrees_with_a_no_candidates_log():
    evidence = forensics.read_request(line("INFO", "nova.scheduler.manager", NO_CANDIDATES), REQ)
    answer = forensics.explain(evidence, flavor("big", ram=10**6), FLEET)
    assert answer["agrees"] is True and answer["replay"]["reason"]["code"] == "too_big"
    assert {c["host"] for c in answer["constraints"]} == {"gpu1", "gpu2", "cpu1", "cpu2"}
    assert all(c["kind"] == "resource" and "MEMORY_MB" in c["detail"] for c in answer["constraints"])
    assert answer["summary"].startswith("NoValidHost: Placement returned no allocation candidates; today 4 host(s)")


def test_replay_disagrees_when_capacity_was_freed_or_consumed_since():
    freed = forensics.explain(
        forensics.read_request(line("INFO", "nova.scheduler.manager", NO_CANDIDATES), REQ), flavor("small"), FLEET
    )
    assert freed["agrees"] is False
    assert "today it returns 4 host(s) and 4 pass the filters: capacity was freed" in freed["disagreement"]
    assert "; today it fits on cpu1, cpu2, gpu1, gpu2. The log and the replay disagree" in freed["summary"]
    full = {"resource_providers": cpu_host(1, usages={"VCPU": 64})}
    consumed = forensics.explain(forensics.read_request("\n".join(FILTERED_INFO), REQ), flavor("small"), full)
    assert consumed["agrees"] is False and "today Placement returns none" in consumed["disagreement"]
    assert "The log and the replay disagree" in consumed["summary"]


def test_replay_disagrees_when_another_filter_removes_the_hosts():
    disabled = {"resource_providers": cpu_host(1, disabled=True) + cpu_host(2, disabled=True)}
    answer = forensics.explain(forensics.read_request("\n".join(FILTERED_INFO), REQ), flavor("small"), disabled)
    assert {c["host"]: c["kind"] for c in answer["constraints"]} == {"cpu1": "ComputeFilter", "cpu2": "ComputeFilter"}
    assert answer["agrees"] is False
    assert answer["disagreement"] == (
        "the log says AggregateInstanceExtraSpecsFilter removed the last host(s); "
        "the replay removes them with ComputeFilter"
    )


def test_without_flavor_the_answer_is_the_log_alone():
    answer = forensics.novalidhost(REQ, ["\n".join(FILTERED_INFO)], flavor=None, fleet=FLEET)
    assert answer["replay"] is None and answer["agrees"] is None and answer["constraints"] == []
    assert answer["summary"].endswith("no replay (give flavor: Nova's log does not carry the flavor)")


def test_flavor_must_be_a_dict():
    with pytest.raises(ForensicsError, match=r"flavor must be a dict .* got a string"):
        forensics.explain(forensics.read_request("\n".join(FILTERED_INFO), REQ), "gpu.h100", FLEET)


def test_log_and_fleet_files_are_checked(tmp_path, monkeypatch):
    with pytest.raises(ForensicsError, match=r"cannot be read \(No such file or directory\)"):
        forensics.read_logs([str(tmp_path / "absent.log")])
    with pytest.raises(ForensicsError, match=r"is not a regular file"):
        forensics.read_logs([str(tmp_path)])
    with pytest.raises(ForensicsError, match=r"logs must be a list of log file paths"):
        forensics.read_logs([])
    big = tmp_path / "big.log"
    big.write_text("x" * 50)
    monkeypatch.setattr(forensics, "MAX_BYTES", 10)
    with pytest.raises(ForensicsError, match=r"has 50 bytes, more than the 10 read"):
        forensics.read_logs([str(big)])
    monkeypatch.setattr(forensics, "MAX_BYTES", 10**6)
    assert forensics.read_logs(str(big)) == ["x" * 50]
    bad = tmp_path / "fleet.json"
    bad.write_text("{not json")
    with pytest.raises(ForensicsError, match=r"fleet_file .*fleet.json is not JSON"):
        forensics.read_fleet_file(str(bad))
    bad.write_text(json.dumps({"providers": []}))
    with pytest.raises(ForensicsError, match=r"is not a fleet snapshot \(a dict with resource_providers\)"):
        forensics.read_fleet_file(str(bad))
    bad.write_text(json.dumps(FLEET))
    assert forensics.read_fleet_file(str(bad)) == FLEET


def test_global_request_id_first_in_the_context_is_not_taken_for_the_request():
    glob = "req-77777777-2222-4333-8444-555555555555"
    text = "\n".join(row.replace("[None ", f"[{glob} ") for row in FILTERED_INFO)
    evidence = forensics.read_request(text, INSTANCE)
    assert evidence["requests"] == [REQ] and evidence["zeroed_by"] == "AggregateInstanceExtraSpecsFilter"
    assert forensics.read_request(text, glob)["lines"] == 2


def test_the_query_nova_sent_is_read_from_keystoneauth_and_checked_against_the_flavor():
    url = "http://placement:8780/allocation_candidates?limit=1000&resources=DISK_GB%3A20%2CMEMORY_MB%3A8192%2CVCPU%3A4"
    rows = [
        line(
            "DEBUG",
            "keystoneauth.session",
            f'REQ: curl -g -i -X GET "{url}" -H "OpenStack-API-Version: placement 1.36"',
        ),
        line("DEBUG", "keystoneauth.session", f'REQ: curl -g -i -X GET {url} -H "accept: application/json"'),
        line("INFO", "nova.scheduler.manager", NO_CANDIDATES),
    ]
    evidence = forensics.read_request("\n".join(rows), REQ)
    assert evidence["queries"] == ["limit=1000&resources=DISK_GB:20,MEMORY_MB:8192,VCPU:4"]
    answer = forensics.explain(evidence, flavor("small", ram=8192, disk=20), {"resource_providers": []})
    assert answer["disagreement"] == (
        "the flavor given is not the one this request asked for: Nova asked Placement "
        "limit=1000&resources=DISK_GB:20,MEMORY_MB:8192,VCPU:4; the flavor translates to "
        "limit=1000&resources=DISK_GB:20,MEMORY_MB:8192,VCPU:4&root_required=OWNER_NOVA,!COMPUTE_STATUS_DISABLED"
    )


def test_pci_groups_named_after_nova_s_request_uuid_agree_with_the_replay_s_names():
    """Nova 34 suffixes a PCI alias's groups with the PCI request's UUID; the replay with the alias's position."""
    nova = (
        "group_policy=none&limit=1000&required883df92d-6a70-4e00-b79b-2cf4497d4c3b-0=CUSTOM_GPU_NVLINK,OWNER_NOVA"
        "&required883df92d-6a70-4e00-b79b-2cf4497d4c3b-1=CUSTOM_GPU_NVLINK,OWNER_NOVA"
        "&resources=DISK_GB:20,MEMORY_MB:8192,VCPU:4&resources883df92d-6a70-4e00-b79b-2cf4497d4c3b-0=CUSTOM_NVIDIA_H100:1"
        "&resources883df92d-6a70-4e00-b79b-2cf4497d4c3b-1=CUSTOM_NVIDIA_H100:1&root_required=OWNER_NOVA"
    )
    replay = (
        "group_policy=none&limit=1000&required_pci0-0=CUSTOM_GPU_NVLINK,OWNER_NOVA&required_pci0-1=CUSTOM_GPU_NVLINK,"
        "OWNER_NOVA&resources=DISK_GB:20,MEMORY_MB:8192,VCPU:4&resources_pci0-0=CUSTOM_NVIDIA_H100:1"
        "&resources_pci0-1=CUSTOM_NVIDIA_H100:1&root_required=OWNER_NOVA"
    )
    shape = forensics.query_shape
    assert shape(nova) == shape(replay)
    # one group asking another trait, another amount, or a group fewer: a different query
    assert shape(nova) != shape(replay.replace("_pci0-1=CUSTOM_GPU_NVLINK,", "_pci0-1="))
    assert shape(nova) != shape(replay.replace("H100:1&root", "H100:2&root"))
    assert shape(nova) != shape(replay.replace("&resources_pci0-1=CUSTOM_NVIDIA_H100:1", ""))
    # same_subtree names the groups it joins by what they ask
    joined = "resources1=VGPU:1&required2=CUSTOM_X&same_subtree=1,2"
    assert shape(joined) == shape("resources_a=VGPU:1&required_b=CUSTOM_X&same_subtree=_a,_b")
    assert shape(joined) != shape(joined.replace("same_subtree=1,2", "same_subtree=1"))
