"""Values of the wrong type from host files and task options, unbounded waits and sizes, output its
consumers reject: each refused at the boundary where it enters, with a message naming the file or option,
and nothing changed."""

from __future__ import annotations

import json
import os
import socket
import time

import pytest

from tests.hostile.conftest import no_traceback, regular_files
from tests.support.ansible_runner import run_module
from tests.support.fake_sysfs import build_root

L40S = "0000:81:00.0"
A16_VF = "0000:84:00.4"
MIG = "0000:3b:00.0"
DAMAGED = ["abc", "9" * 5000]


def _attr(root: str, address: str, name: str) -> str:
    """The real file of a device attribute (its /sys/bus/pci/devices link resolved inside the root)."""
    path = os.path.join(os.path.realpath(os.path.join(root, "sys/bus/pci/devices", address)), name)
    assert path.startswith(os.path.realpath(root)) and os.path.isfile(path), path
    return path


# -- 1. sysfs counts the kernel never writes: refused by file name, nothing written ------------------------
@pytest.mark.parametrize("value", DAMAGED, ids=["letters", "5000-digits"])
@pytest.mark.parametrize("attr", ["sriov_totalvfs", "sriov_numvfs"])
def test_a_damaged_sriov_count_is_refused_by_its_file(tmp_path, attr, value):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    path = _attr(root, L40S, attr)
    with open(path, "w") as handle:
        handle.write(value + "\n")
    before = regular_files(root)
    result = run_module("sriov_vfs", {"root": root, "devices": [L40S], "numvfs": 2, "timeout": 2})
    assert result.get("failed"), result
    no_traceback(result)
    assert f"{attr} holds" in result["msg"] and "not a count" in result["msg"], result["msg"]
    assert "Exceeds the limit" not in result["msg"] and "9" * 100 not in result["msg"]
    assert regular_files(root) == before


@pytest.mark.parametrize("value", DAMAGED, ids=["letters", "5000-digits"])
def test_a_damaged_mdev_available_instances_is_refused_by_its_file(tmp_path, value):
    root = build_root("vgpu-a16", str(tmp_path / "root"))
    path = _attr(root, A16_VF, "mdev_supported_types/nvidia-735/available_instances")
    with open(path, "w") as handle:
        handle.write(value + "\n")
    before = regular_files(root)
    result = run_module("mdev", {"root": root, "parent": A16_VF, "type": "nvidia-735", "count": 1})
    assert result.get("failed"), result
    no_traceback(result)
    assert "available_instances holds" in result["msg"], result["msg"]
    assert regular_files(root) == before


@pytest.mark.parametrize("profile_id", ["abc", "9" * 5000], ids=["letters", "5000-digits"])
def test_a_damaged_mig_lgi_row_is_refused_by_its_file(tmp_path, profile_id):
    from ansible_collections.accel.openstack.plugins.module_utils._host import mig, nvidia_smi
    from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot

    text = (
        "+----------------------------------------------------+\n"
        "| GPU instances:                                     |\n"
        "| GPU   Name             Profile  Instance   Placement  |\n"
        "|                          ID       ID       Start:Size |\n"
        "|====================================================|\n"
        f"|   0  MIG 3g.40gb         {profile_id}        1          4:4     |\n"
        "+----------------------------------------------------+\n"
    )
    with pytest.raises(ValueError, match="line 6 is a GPU instance row"):
        nvidia_smi.parse_lgi(text)
    with pytest.raises(mig.MigError, match="mig-lgi/0000:3b:00.0.txt: line 6"):
        mig._lgi(text, f"{nvidia_smi.RECORDED_DIR}/mig-lgi/{MIG}.txt")
    host = HostRoot(str(tmp_path))
    assert nvidia_smi._lgi_or_warn(host, text, "recorded") == []
    assert any("line 6 is a GPU instance row" in w for w in host.warnings)


# -- 2. booleans and floats where counts belong -----------------------------------------------------------
@pytest.mark.parametrize(
    ("module", "profile", "args", "option"),
    [
        ("sriov_vfs", "vgpu-l40s", {"devices": [L40S], "numvfs": True, "timeout": 2}, "numvfs"),
        ("sriov_vfs", "vgpu-l40s", {"devices": [L40S], "numvfs": 2.0, "timeout": 2}, "numvfs"),
        ("mdev", "vgpu-a16", {"parent": A16_VF, "type": "nvidia-735", "count": True}, "count"),
        ("mdev", "vgpu-a16", {"parent": A16_VF, "type": "nvidia-735", "count": 1.0}, "count"),
        ("nvidia_vgpu", "vgpu-l40s", {"devices": [L40S], "type": "NVIDIA L40S-4Q", "vfs": True}, "vfs"),
    ],
    ids=["numvfs-true", "numvfs-2.0", "count-true", "count-1.0", "vfs-true"],
)
def test_a_boolean_or_float_count_option_is_refused_before_anything(tmp_path, module, profile, args, option):
    root = build_root(profile, str(tmp_path / "root"))
    before = regular_files(root)
    result = run_module(module, dict(args, root=root))
    assert result.get("failed"), result
    no_traceback(result)
    assert result["msg"].startswith(f"{option} is a "), result["msg"]
    assert "give a whole number" in result["msg"]
    assert regular_files(root) == before


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"profile": "3g.40gb", "count": True}, "count True (a boolean) is not"),
        ({"profile": "3g.40gb", "count": 2.0}, "count 2.0 (a number) is not"),
        ({"profile": "3g.40gb", "count": 2.5}, "count 2.5 (a number) is not"),
        ({"profile": "3g.40gb", "count": 1, "placement": True}, "placement True is a boolean"),
        ({"profile": "3g.40gb", "count": 1, "placement": float("inf")}, "placement inf is a number"),
        ({"profile": "3g.40gb", "count": 1, "placement": [{"start": 4.0}]}, "placement 4.0 is a number"),
    ],
    ids=["count-true", "count-2.0", "count-2.5", "placement-true", "placement-inf", "placement-4.0"],
)
def test_a_mig_layout_count_or_placement_of_another_type_is_refused(tmp_path, entry, words):
    root = build_root("mig-hopper", str(tmp_path / "root"))
    before = regular_files(root)
    result = run_module("nvidia_mig", {"root": root, "address": MIG, "layout": [entry]})
    assert result.get("failed"), result
    no_traceback(result)
    assert words in result["msg"], result["msg"]
    assert regular_files(root) == before


# -- 4. capacity metrics node_exporter accepts: unique series, escaped labels, whole numbers --------------
def _fit(name: str, hosts: dict) -> dict:
    return {"name": name, "outcome": "fits", "max_instances": hosts, "after_filters": {"hosts": sorted(hosts)}}


def _series(text: str) -> list[tuple]:
    from prometheus_client.parser import text_string_to_metric_families

    return [(s.name, tuple(sorted(s.labels.items()))) for f in text_string_to_metric_families(text) for s in f.samples]


def test_one_flavor_in_two_demand_entries_gives_each_series_once():
    from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_metrics import capacity_metrics

    hostile = 'gpu\\\\"1\nx'
    reports = [_fit("gpu.a100", {"c1": 2, "c2": 1}), _fit("gpu.a100", {"c1": 2, "c2": 1}), _fit(hostile, {"c1": 1})]
    text = capacity_metrics(reports)
    series = _series(text)
    assert len(series) == len(set(series)), text
    assert ("accel_flavor_capacity_instances", (("flavor", "gpu.a100"),)) in series
    assert ("accel_flavor_capacity_instances", (("flavor", hostile),)) in series  # escaped and read back whole
    assert text.count('accel_flavor_capacity_instances{flavor="gpu.a100"} 3') == 1


@pytest.mark.parametrize(
    ("report", "words"),
    [
        (
            [_fit("f", {"c1": 2}), _fit("f", {"c1": 3})],
            'accel_flavor_capacity_instances{flavor="f"} has two values (2 and 3)',
        ),
        ([_fit("f", {"c1": float("nan")})], "max_instances of host 'c1' is a number (nan)"),
        (
            {"placed": {"f": float("nan")}, "unplaced": {}, "hosts": {}, "left": {}, "stranded": {}, "headroom": {}},
            'accel_capacity_placed_instances{flavor="f"} is a number (nan)',
        ),
    ],
    ids=["two-values", "nan-capacity", "nan-placed"],
)
def test_a_report_metrics_cannot_state_is_refused_by_series(report, words):
    from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_metrics import (
        MetricsInputError,
        capacity_metrics,
    )

    with pytest.raises(MetricsInputError) as raised:
        capacity_metrics(report)
    assert words in str(raised.value)


@pytest.mark.parametrize("name", ["accel.prom\n", "../accel.prom", "a\x01.prom"], ids=["newline", "path", "control"])
def test_a_textfile_name_node_exporter_never_reads_is_refused_before_anything(tmp_path, name):
    from tests.hostile.conftest import run_play

    task = {
        "ansible.builtin.include_role": {"name": "accel.openstack.capacity"},
        "vars": {"accel_capacity_textfile_name": name, "accel_capacity_textfile_dir": str(tmp_path / "textfile")},
    }
    rc, out = run_play(tmp_path, [task])
    assert rc != 0, out
    assert "accel_capacity_textfile_name must be a plain file name ending in .prom" in out, out
    assert not (tmp_path / "textfile").exists()


# -- service data into commands: a flavor name or extra spec from Nova is quoted in every fix -----------------
def test_a_hostile_flavor_name_and_extra_spec_are_quoted_in_the_fix_commands():
    import shlex

    from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_validation import baremetal_findings

    name = "bm; rm -rf / #"
    flavor = {"vcpus": 4, "ram": 1024, "disk": 10, "extra_specs": {"resources:CUSTOM_BM_GPU;id": "2"}}
    found = baremetal_findings(name, flavor, {"CUSTOM_BM_GPU;ID"})
    flavor = {"vcpus": 4, "ram": 1024, "disk": 10, "extra_specs": {"resources:CUSTOM_BM_GPU": "2"}}
    found += baremetal_findings(name, flavor, {"CUSTOM_BM_GPU"})
    assert {f["kind"] for f in found} >= {"baremetal_units", "baremetal_not_zeroed"}, found
    for finding in found:
        lexer = shlex.shlex(finding["fix"], posix=True, punctuation_chars=";")
        lexer.whitespace_split = True
        tokens, commands = list(lexer), [[]]
        for token in tokens:
            if token == ";":
                commands.append([])
            else:
                commands[-1].append(token)
        for words in commands:
            command = " ".join(words)
            assert words[:3] in (["openstack", "flavor", "set"], ["openstack", "flavor", "unset"]), command
            assert words[-1] == name, command  # one argument, never a second command


# -- Kolla's globals of another shape ---------------------------------------------------------------------
@pytest.mark.parametrize("mappings", ["physnet1:ens785f0", ["physnet1", "ens785f0"], {"physnet1": 7}])
def test_kolla_sriov_physnet_mappings_of_another_shape_are_refused_by_name(tmp_path, mappings):
    from tests.hostile.conftest import nova_conf_d_args

    root = tmp_path / "root"
    root.mkdir()
    args = nova_conf_d_args(root, layout="kolla", host=None, config_dir="/k")
    args["kolla_globals"] = {"enable_neutron_sriov": True, "neutron_sriov_physnet_mappings": mappings}
    result = run_module("nova_config", args)
    assert result.get("failed"), result
    no_traceback(result)
    assert "neutron_sriov_physnet_mappings (globals.yml) is a" in result["msg"], result["msg"]
    assert "correct it in globals.yml" in result["msg"]
    assert regular_files(str(root)) == {}


# -- filters given data of another shape: a message naming the filter and the field ------------------------
@pytest.mark.parametrize(
    ("filter_name", "value", "words"),
    [
        ("flavor_table", 1, "flavor_table: result is an integer"),
        ("flavor_table", {"flavors": 1}, "flavors is an integer"),
        ("flavor_table", {"flavors": [1]}, "flavors[0] is not a flavor report"),
        ("flavor_table", {"flavors": [], "findings": [{"kind": 1}]}, "findings[0] is not a finding"),
        ("compute_flavor_keys", {"name": "f", "extra_specs": 1}, "flavor 'f': extra_specs is an integer"),
        ("validation_report", [1], "validation_report: results[0] is an integer"),
        ("validation_report", [{"name": "f", "hosts": 1}], "results[0] (f): hosts is an integer"),
        ("validation_report", [{"name": "f", "hosts": {"c1": float("nan")}}], "hosts['c1'] is a number (nan)"),
    ],
)
def test_a_filter_given_another_shape_names_the_field(filter_name, value, words):
    from ansible.errors import AnsibleFilterError

    from ansible_collections.accel.openstack.plugins.filter import flavor_validation, validate

    filters = {**flavor_validation.FilterModule().filters(), **validate.FilterModule().filters()}
    with pytest.raises(AnsibleFilterError) as raised:
        filters[filter_name](value)
    assert words in str(raised.value), str(raised.value)


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000 + "]" * 100_000, '{"devices": NaN}', '{"devices": ' + "9" * 5000 + "}"],
    ids=["deep", "nan", "digits"],
)
def test_a_hardware_record_json_cannot_hold_is_refused_by_name(tmp_path, text):
    from ansible_collections.accel.openstack.plugins.module_utils._host import hardware_record

    root = build_root("mig-hopper", str(tmp_path / "root"))
    devices = run_module("pci_facts", {"root": root})["ansible_facts"]["accel_pci_devices"]
    record = os.path.join(root, hardware_record.RECORD.lstrip("/"))
    os.makedirs(os.path.dirname(record), exist_ok=True)
    with open(record, "w") as handle:
        handle.write(text)
    result = run_module("hardware_record", {"root": root, "devices": devices, "save": True})
    assert result.get("failed"), result
    no_traceback(result)
    assert f"{hardware_record.RECORD} is not the collection's JSON" in result["msg"], result["msg"]
    with open(record) as handle:
        assert handle.read() == text


# -- the state directory being something else -------------------------------------------------------------
@pytest.mark.parametrize(
    ("module", "profile", "args"),
    [
        ("sriov_vfs", "vgpu-l40s", {"devices": [L40S], "numvfs": 2, "timeout": 1}),
        ("nvidia_vgpu", "vgpu-l40s", {"devices": [L40S], "type": "NVIDIA L40S-4Q"}),
        ("nvidia_mig", "mig-hopper", {"address": MIG, "layout": [{"profile": "3g.40gb", "count": 2}]}),
    ],
)
@pytest.mark.parametrize("blocker", ["/etc/accel-openstack", "/etc/accel-openstack/KIND"])
def test_a_state_directory_that_is_a_regular_file_stops_the_run_before_any_change(
    tmp_path, module, profile, args, blocker
):
    root = build_root(profile, str(tmp_path / "root"))
    kind = {"sriov_vfs": "sriov", "nvidia_vgpu": "vgpu", "nvidia_mig": "mig"}[module]
    blocker = blocker.replace("KIND", kind)
    os.makedirs(os.path.dirname(root + blocker), exist_ok=True)
    with open(root + blocker, "w") as handle:
        handle.write("the operator's file\n")
    before = regular_files(root)
    result = run_module(module, dict(args, root=root))
    assert result.get("failed"), result
    no_traceback(result)
    assert f"{blocker} exists and is not a directory" in result["msg"], result["msg"]
    assert regular_files(root) == before


# -- a Cyborg answer of another shape ---------------------------------------------------------------------
class _Answering:
    """A Cyborg whose stored profile is ``answer``; records every change asked of it."""

    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def find(self, name):
        return self.answer

    def delete(self, uuid):
        self.calls.append(("delete", uuid))

    def create(self, name, groups, description):
        self.calls.append(("create", name))


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ({"uuid": "5b1f9bd4-3bf4-4f6e-9a57-2b0d1d7f6c1e", "name": "gpu"}, "with no groups"),
        ({"uuid": "5b1f9bd4-3bf4-4f6e-9a57-2b0d1d7f6c1e", "groups": "x"}, "groups that are not a list"),
        ({"uuid": "../../x; rm", "groups": []}, "without a UUID"),
    ],
    ids=["no-groups", "groups-text", "uuid"],
)
def test_a_cyborg_profile_answer_of_another_shape_changes_nothing(answer, words):
    from ansible_collections.accel.openstack.plugins.module_utils._cyborg import device_profiles
    from ansible_collections.accel.openstack.plugins.module_utils._cyborg.client import CyborgError

    client = _Answering(answer)
    groups = [{"resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL_PAC_ARRIA10": "required"}]
    with pytest.raises(CyborgError) as raised:
        device_profiles.converge_profile(client, "gpu", groups, None, "present", False, None)
    assert words in str(raised.value) and "device profile gpu" in str(raised.value)
    assert client.calls == []


# -- the fleet inventory's fact cache entry of the wrong shape ------------------------------------------------
@pytest.mark.parametrize(
    ("entry", "named"),
    [
        ([1, 2], "the fact cache entry of gpu2 is a list"),
        ({"accel_pci_devices": "0000:3b:00.0"}, "the fact cache entry of gpu2: accel_pci_devices is a string"),
    ],
    ids=["list", "devices-text"],
)
def test_a_fact_cache_entry_of_the_wrong_shape_is_named_not_skipped(tmp_path, entry, named):
    from tests.hostile.test_ansible_inputs import GOOD, _inventory

    proc, _dir = _inventory(tmp_path, {"gpu1": GOOD, "gpu2": entry})
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert named in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("profiles", "words"),
    [
        ({"p": [5]}, "device_profiles 'p' is a list holding an integer"),
        ({"p": 5}, "device_profiles 'p' is an integer"),
        ({"p": ["x", {}]}, "device_profiles 'p' is a list holding a string"),
    ],
)
def test_a_device_profile_of_another_shape_is_named_by_nova_request(profiles, words):
    from ansible.errors import AnsibleFilterError

    from ansible_collections.accel.openstack.plugins.filter import flavors

    flavor = {"name": "f", "vcpus": 2, "ram": 1024, "disk": 10, "extra_specs": {"accel:device_profile": "p"}}
    with pytest.raises(AnsibleFilterError) as raised:
        flavors.FilterModule().filters()["nova_request"](flavor, device_profiles=profiles)
    assert words in str(raised.value) and "give the profile's groups" in str(raised.value), str(raised.value)


# -- the OpenStack connection: unparsable clouds.yaml, a service that never answers, what was being read ----
def test_a_clouds_yaml_openstacksdk_skips_is_named_with_its_line_never_its_text(tmp_path, monkeypatch):
    for name in [name for name in os.environ if name.startswith("OS_")]:
        monkeypatch.delenv(name)
    config = tmp_path / "clouds.yaml"
    config.write_text(
        "clouds:\n  prod:\n    auth:\n      auth_url: http://127.0.0.1:9/v3\n\tpassword: s3cret-tab-line\n"
    )
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(config))
    result = run_module("placement_info", {"cloud": "prod"})
    assert result.get("failed"), result
    assert f"cloud 'prod' was not found because {config} could not be read as YAML" in result["msg"], result["msg"]
    assert "line 5, column 1" in result["msg"] and "never tabs" in result["msg"]
    assert "s3cret-tab-line" not in json.dumps(result)


def _silent_server():
    """A server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    return server


def test_a_service_that_never_answers_ends_at_the_clouds_yaml_timeout_and_60_s_by_default(tmp_path, monkeypatch):
    from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import DEFAULT_API_TIMEOUT, connect

    for name in [name for name in os.environ if name.startswith("OS_")]:
        monkeypatch.delenv(name)
    server = _silent_server()
    try:
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        auth = {"auth_type": "admin_token", "auth": {"endpoint": url, "token": "a-long-admin-token"}}
        assert DEFAULT_API_TIMEOUT == 60 and connect(auth).config.config["api_timeout"] == 60
        config = tmp_path / "clouds.yaml"
        config.write_text(json.dumps({"clouds": {"slow": dict(auth, api_timeout=2)}}))
        monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(config))
        assert connect({"cloud": "slow"}).config.config["api_timeout"] == 2
        assert connect({"cloud": "slow", "api_timeout": 3}).config.config["api_timeout"] == 3
        started = time.monotonic()
        result = run_module("placement_info", {"cloud": "slow"})
        assert result.get("failed") and time.monotonic() - started < 30, result
    finally:
        server.close()


def test_a_flavor_read_that_cannot_reach_nova_names_the_flavors(monkeypatch):
    for name in [name for name in os.environ if name.startswith("OS_")]:
        monkeypatch.delenv(name)
    cloud = {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": "a-long-admin-token"},
             "compute_endpoint_override": "http://127.0.0.1:9/v2.1"}  # fmt: skip
    result = run_module("nova_flavor_info", {"cloud": cloud, "names": ["gpu.h100", "t4.small"]})
    assert result.get("failed"), result
    assert "while reading the flavors 'gpu.h100', 't4.small'" in result["msg"], result["msg"]


# -- a YAML document whose aliases expand without bound ----------------------------------------------------
def _alias_bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\nnode_custom_config: /k\nenable_neutron_sriov: *a" + str(levels - 1) + "\n"


@pytest.mark.parametrize("where", ["globals.yml", "globals.d/50-extra.yml", "group_vars/all/nova.yml"])
def test_kolla_variables_with_an_alias_bomb_are_refused_before_ansible_loads_them(tmp_path, where):
    """Under a kilobyte of nested aliases would be expanded by include_vars to 387 million values (a load
    that does not end); each file kolla_globals loads is counted first, on its node graph, and refused."""
    from tests.support.ansible_runner import run_playbook

    kolla = tmp_path / "kolla"
    (kolla / "group_vars" / "all").mkdir(parents=True)
    (kolla / "globals.d").mkdir()
    (kolla / "globals.yml").write_text("node_custom_config: /k\n")
    (kolla / where).write_text(_alias_bomb())
    assert len((kolla / where).read_text()) < 1024
    playbook = tmp_path / "read.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role: {name: accel.openstack.kolla_globals, public: true}\n"
    )
    extra = {
        "accel_kolla_globals_file": str(kolla / "globals.yml"),
        "accel_kolla_group_vars": str(kolla / "group_vars/all"),
    }
    started = time.monotonic()
    report = run_playbook(str(playbook), extra_vars=extra, timeout=120)
    assert time.monotonic() - started < 60
    assert report["rc"] != 0
    text = json.dumps(report)
    assert f"{kolla / where}: its aliases expand to more than 2,000,000 values" in text, text[-3000:]
    assert "Traceback" not in text


# -- the Kolla overrides the Nova config stage reads back, read as oslo.config reads them ------------------
def test_the_scheduler_filters_of_a_kolla_override_are_read_as_oslo_config_reads_them(tmp_path):
    """A continuation line and an upper-case group name: oslo.config (and so nova-scheduler) reads both
    filters under [filter_scheduler]; a file oslo.config refuses is refused by name, never half read."""
    from ansible_collections.accel.openstack.plugins.module_utils._host.oslo_ini import OsloIniError
    from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
    from ansible_collections.accel.openstack.plugins.module_utils._nova.files import current_filters

    scheduler = tmp_path / "k" / "nova" / "nova-scheduler.conf"
    scheduler.parent.mkdir(parents=True)
    scheduler.write_text("[FILTER_SCHEDULER]\nenabled_filters = ComputeFilter,\n    PciPassthroughFilter\n")
    filters = current_filters(HostRoot(str(tmp_path)), "/k", {})
    assert {"ComputeFilter", "PciPassthroughFilter"} <= set(filters)
    scheduler.write_text("  [filter_scheduler]\nenabled_filters = ComputeFilter\n")
    with pytest.raises(OsloIniError) as refused:
        current_filters(HostRoot(str(tmp_path)), "/k", {})
    assert "/k/nova/nova-scheduler.conf" in str(refused.value) and "line 1" in str(refused.value)
