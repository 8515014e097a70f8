"""Live-migration readiness: each rule planted once, with the exact blocker or per-host reason it gives; the
version minima and the alias and tag decisions checked against Nova 34's own code (the oracle runs in the
nova venv)."""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import migration
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor import parse_aliases
from ansible_collections.accel.openstack.plugins.plugin_utils.migration import migration_targets
from tests.support.ansible_runner import run_expression
from tests.support.migration_fleet import PCI_RC, cloud, place, provider, uid
from tests.support.nova_venv import ask


def _report(inputs: dict, aliases="given") -> dict:
    return migration_targets(
        inputs["fleet"],
        hosts=inputs["hosts"],
        deployed_config=inputs["deployed"],
        servers=inputs["servers"],
        pci_aliases=inputs["pci_aliases"] if aliases == "given" else aliases,
    )


def _one(report: dict, name: str) -> dict:
    return next(i for i in report["instances"] if i["name"] == name)


def _codes(entry: dict) -> list[str]:
    return [b["code"] for b in entry["blockers"]]


def test_a_vgpu_and_a_tagged_pci_instance_move_to_every_other_host_with_room_most_free_ram_first():
    inputs = cloud()
    place(inputs, "vm-gpu", "gpu-01", "vgpu")
    place(inputs, "vm-pci", "gpu-01", "pci")
    place(inputs, "big", "gpu-03", "vgpu", ram=32768)  # gpu-03 has less free RAM than gpu-02
    report = _report(inputs)
    vgpu = _one(report, "vm-gpu")
    assert vgpu["migratable"] is True and vgpu["blockers"] == []
    assert vgpu["targets"] == ["gpu-02", "gpu-03"]
    assert vgpu["why_not"] == {"gpu-01": "the source host"}
    assert vgpu["devices"] == [
        {
            "provider": "gpu-01_pci_0000_84_00_0",
            "provider_uuid": uid("gpu-01/vgpu"),
            "kind": "vgpu",
            "resources": {"VGPU": 1},
            "mdev_type": "nvidia-35",
        }
    ]
    assert vgpu["query"] == (
        "resources=DISK_GB:20,MEMORY_MB:8192,VCPU:4,VGPU:1&root_required=!COMPUTE_STATUS_DISABLED"
    )  # the flavor asks resources:VGPU=1 in its unsuffixed group, and so does the move
    assert _one(report, "vm-pci")["query"].endswith(
        f"resources1={PCI_RC}:1&required1=HW_PCI_LIVE_MIGRATABLE&root_required=!COMPUTE_STATUS_DISABLED"
    )
    assert _one(report, "vm-pci")["targets"] == ["gpu-02", "gpu-03"]


@pytest.mark.parametrize(
    ("fact", "value", "detail"),
    [
        ("accel_libvirt_version", "8.6.0", None),
        ("accel_libvirt_version", "8.5.9", "libvirt 8.5.9 on gpu-01 is older than 8.6.0"),
        ("accel_qemu_version", "8.1.0", None),
        ("accel_qemu_version", "8.0.9 (Debian 1:8.0.9+ds)", "qemu 8.0.9 on gpu-01 is older than 8.1.0"),
        ("accel_kernel_release", "5.18.0-1-amd64", None),
        ("accel_kernel_release", "5.17.15", "kernel 5.17.15 on gpu-01 is older than 5.18.0"),
        (
            "accel_kernel_release",
            None,
            "kernel version of gpu-01 is not known (give accel_kernel_release in its facts or inventory)",
        ),
    ],
)
def test_vgpu_versions_at_the_minimum_pass_and_just_below_block(fact, value, detail):
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "vgpu")
    inputs["hosts"]["gpu-01"][fact] = value
    entry = _one(_report(inputs), "vm")
    assert entry["migratable"] is (detail is None)
    if detail is None:
        assert entry["blockers"] == [] and entry["targets"] == ["gpu-02", "gpu-03"]
    else:
        code = "version_unknown" if value is None else "version_too_old"
        assert [(b["code"], b["detail"]) for b in entry["blockers"]] == [(code, detail)]
        assert entry["targets"] == []


def test_a_target_with_too_old_a_qemu_is_no_target_and_says_why():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "vgpu")
    inputs["hosts"]["gpu-02"]["accel_qemu_version"] = "8.0.0"
    entry = _one(_report(inputs), "vm")
    assert entry["targets"] == ["gpu-03"]
    assert entry["why_not"]["gpu-02"] == "qemu 8.0.0 on gpu-02 is older than 8.1.0"


def test_pci_needs_the_newer_vfio_variant_versions():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "pci")
    inputs["hosts"]["gpu-01"]["accel_libvirt_version"] = "9.10.0"
    inputs["hosts"]["gpu-02"]["accel_qemu_version"] = "8.2.1"
    entry = _one(_report(inputs), "vm")
    assert _codes(entry) == ["version_too_old"]
    assert entry["blockers"][0]["detail"] == "libvirt 9.10.0 on gpu-01 is older than 10.0.0"
    assert entry["why_not"]["gpu-02"] == "qemu 8.2.1 on gpu-02 is older than 8.2.2"


def test_post_copy_permitted_on_the_source_blocks_a_vgpu_but_not_a_pci_device():
    inputs = cloud()
    place(inputs, "vm-gpu", "gpu-01", "vgpu")
    place(inputs, "vm-pci", "gpu-01", "pci")
    inputs["deployed"]["gpu-01"]["compute"]["libvirt"]["live_migration_permit_post_copy"] = ["True"]
    report = _report(inputs)
    assert _codes(_one(report, "vm-gpu")) == ["post_copy_permitted"]
    assert _one(report, "vm-gpu")["blockers"][0]["fix"] == (
        "set [libvirt] live_migration_permit_post_copy = false on gpu-01's nova-compute"
    )
    assert _one(report, "vm-pci")["migratable"] is True


def test_a_pci_device_without_the_live_migratable_tag_cannot_move_and_an_untagged_target_device_is_no_target():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "pci")
    provider(inputs, "gpu-02_0000:41:00.0")["traits"] = ["COMPUTE_MANAGED_PCI_DEVICE"]
    entry = _one(_report(inputs), "vm")
    assert entry["targets"] == ["gpu-03"]
    assert entry["why_not"]["gpu-02"] == f"no provider of {PCI_RC} on a HW_PCI_LIVE_MIGRATABLE device"
    provider(inputs, "gpu-01_0000:41:00.0")["traits"] = ["COMPUTE_MANAGED_PCI_DEVICE"]
    entry = _one(_report(inputs), "vm")
    assert _codes(entry) == ["device_not_live_migratable"]
    assert entry["migratable"] is False and entry["targets"] == []


@pytest.mark.parametrize(("flag", "blocked"), [("true", False), ("yes", False), ("false", True), (None, True)])
def test_the_flavors_alias_must_ask_live_migratable_true(flag, blocked):
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "pci")
    alias = dict(inputs["pci_aliases"][0])
    alias.pop("live_migratable")
    if flag is not None:
        alias["live_migratable"] = flag
    inputs["pci_aliases"] = [alias]
    entry = _one(_report(inputs), "vm")
    assert _codes(entry) == (["alias_not_live_migratable"] if blocked else [])


def test_unknown_aliases_are_said_not_guessed():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "pci")
    entry = _one(_report(inputs, aliases=None), "vm")
    assert _codes(entry) == ["alias_unknown"]


def test_same_mdev_type_with_and_without_free_capacity():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "vgpu")
    # gpu-02 offers another type; gpu-03 the same type, all four units used
    inputs["deployed"]["gpu-02"]["compute"]["devices"]["enabled_mdev_types"] = ["nvidia-36"]
    provider(inputs, "gpu-03_pci_0000_84_00_0")["usages"] = {"VGPU": 4}
    entry = _one(_report(inputs), "vm")
    assert entry["migratable"] is False and entry["targets"] == []
    assert entry["why_not"] == {
        "gpu-01": "the source host",
        "gpu-02": "mdev type nvidia-35 is not in its [devices] enabled_mdev_types",
        "gpu-03": "not enough free VGPU: needs 1, at most 0 free on one provider",
    }
    provider(inputs, "gpu-03_pci_0000_84_00_0")["usages"] = {"VGPU": 3}
    assert _one(_report(inputs), "vm")["targets"] == ["gpu-03"]


def test_a_gpu_of_another_type_on_a_host_that_enables_both_is_no_target():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "vgpu")
    devices = inputs["deployed"]["gpu-02"]["compute"]
    devices["devices"]["enabled_mdev_types"] = ["nvidia-35,nvidia-36"]
    devices["mdev_nvidia-35"] = {"device_addresses": ["0000:85:00.0"]}
    devices["mdev_nvidia-36"] = {"device_addresses": ["0000:84:00.0"]}
    entry = _one(_report(inputs), "vm")
    assert entry["why_not"]["gpu-02"] == "no free unit of mdev type nvidia-35"
    assert entry["targets"] == ["gpu-03"]


def test_a_flavor_trait_on_the_vgpu_provider_is_judged_with_the_vgpu_in_the_unsuffixed_group():
    # trait:CUSTOM_VGPU_HOST=required beside resources:VGPU=1: Nova asks both in its unsuffixed group, where the
    # trait on the vGPU's provider satisfies it; a query with the vGPU in a numbered group would find no host
    inputs = cloud()
    for name in ("gpu-01_pci_0000_84_00_0", "gpu-02_pci_0000_84_00_0", "gpu-03_pci_0000_84_00_0"):
        provider(inputs, name)["traits"] = ["CUSTOM_VGPU_HOST"]
    place(inputs, "vm", "gpu-01", "vgpu")
    inputs["servers"][-1]["flavor"]["extra_specs"]["trait:CUSTOM_VGPU_HOST"] = "required"
    entry = _one(_report(inputs), "vm")
    assert entry["query"] == (
        "resources=DISK_GB:20,MEMORY_MB:8192,VCPU:4,VGPU:1&required=CUSTOM_VGPU_HOST"
        "&root_required=!COMPUTE_STATUS_DISABLED"
    )
    assert entry["targets"] == ["gpu-02", "gpu-03"]
    # a host whose vGPU provider lacks the trait is no target, and says so
    provider(inputs, "gpu-03_pci_0000_84_00_0")["traits"] = []
    entry = _one(_report(inputs), "vm")
    assert entry["targets"] == ["gpu-02"] and "gpu-03" in entry["why_not"]


def test_a_quarantined_or_disabled_target_is_no_target():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "pci")
    # the device of gpu-02 is quarantined: its quarantine consumer holds it (and is no instance)
    device = uid("gpu-02/pci")
    inputs["fleet"]["allocations"][uid("quarantine")] = {
        "allocations": {device: {"resources": {PCI_RC: 1}}},
        "consumer_type": "QUARANTINE",
        "project_id": "accel-openstack-quarantine",
    }
    provider(inputs, "gpu-02_0000:41:00.0")["usages"] = {PCI_RC: 1}
    provider(inputs, "gpu-03")["traits"] = ["COMPUTE_STATUS_DISABLED"]
    report = _report(inputs)
    assert [i["name"] for i in report["instances"]] == ["vm"]
    entry = report["instances"][0]
    assert entry["targets"] == [] and entry["migratable"] is False
    assert entry["why_not"]["gpu-02"] == (
        f"not enough free {PCI_RC} on a HW_PCI_LIVE_MIGRATABLE device: needs 1, at most 0 free on one provider "
        "(1 of its 1 quarantined)"
    )
    assert entry["why_not"]["gpu-03"] == "its compute service is disabled (COMPUTE_STATUS_DISABLED)"


def test_no_other_host_and_the_drain_summary_counts_each_free_device_once():
    inputs = cloud(("gpu-01", "gpu-02"))
    place(inputs, "a", "gpu-01", "pci")
    report = _report(inputs)
    assert report["drain"]["gpu-01"]["summary"] == "draining gpu-01 moves 1 of 1 instances"
    lonely = cloud(("gpu-01",))
    place(lonely, "a", "gpu-01", "vgpu")
    report = _report(lonely)
    assert report["instances"][0]["migratable"] is False
    assert report["drain"]["gpu-01"]["summary"] == (
        "draining gpu-01 moves 0 of 1 instances; 1 cannot move: a (no other host has room: there is no other host)"
    )
    # two PCI instances on gpu-01 and one free tagged device elsewhere (gpu-02's is used): one moves
    inputs = cloud()
    place(inputs, "a", "gpu-01", "vgpu")
    place(inputs, "b", "gpu-01", "pci")
    place(inputs, "c", "gpu-02", "pci")
    inputs["servers"].append({"id": uid("server/d"), "name": "d"})
    extra = cloud(("gpu-01",))
    extra_device = dict(provider(extra, "gpu-01_0000:41:00.0"), uuid=uid("gpu-01/pci2"), name="gpu-01_0000:42:00.0")
    inputs["fleet"]["resource_providers"].append(extra_device)
    inputs["fleet"]["allocations"][uid("server/d")] = {
        "allocations": {
            uid("gpu-01"): {"resources": {"VCPU": 4, "MEMORY_MB": 8192, "DISK_GB": 20}},
            extra_device["uuid"]: {"resources": {PCI_RC: 1}},
        }
    }
    before = copy.deepcopy(inputs)
    report = _report(inputs)
    assert inputs == before  # the inputs are read, never written
    assert _one(report, "b")["targets"] == ["gpu-03"] and _one(report, "d")["targets"] == ["gpu-03"]
    drain = report["drain"]["gpu-01"]
    # a goes first to gpu-03 (more free RAM than gpu-02, which runs c), then b takes gpu-03's free device
    assert drain["moves"] == {"a": "gpu-03", "b": "gpu-03"}
    assert list(drain["cannot_move"]) == ["d"]
    assert drain["summary"].startswith(
        "draining gpu-01 moves 2 of 3 instances; 1 cannot move: d (no other host has room: "
    )
    assert f"gpu-03: not enough free {PCI_RC} on a HW_PCI_LIVE_MIGRATABLE device" in drain["summary"]


def test_a_cyborg_accelerator_cannot_live_migrate():
    inputs = cloud()
    root = uid("gpu-01")
    inputs["fleet"]["resource_providers"].append(
        {
            "uuid": uid("fpga"),
            "name": "gpu-01_fpga_0000_05_00_0",
            "parent_provider_uuid": root,
            "inventories": {"FPGA": {"total": 1, "reserved": 0, "min_unit": 1, "max_unit": 1, "step_size": 1,
                                     "allocation_ratio": 1.0}},
            "usages": {"FPGA": 1},
            "traits": ["CUSTOM_FPGA_INTEL"],
            "aggregates": [],
        }
    )  # fmt: skip
    inputs["fleet"]["allocations"][uid("server/arq")] = {
        "allocations": {root: {"resources": {"VCPU": 2}}, uid("fpga"): {"resources": {"FPGA": 1}}}
    }
    (entry,) = _report(inputs)["instances"]
    assert _codes(entry) == ["accelerator"]
    assert entry["devices"][0]["kind"] == "other"


def test_only_server_consumers_holding_their_compute_node_are_instances():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "pci")
    allocations = inputs["fleet"]["allocations"]
    record = allocations[uid("server/vm")]
    allocations["x; openstack project delete admin"] = record  # no UUID: never reaches a message
    allocations[uid("migration")] = dict(record, consumer_type="MIGRATION")  # a move in progress holds the source
    allocations[uid("leak")] = {"allocations": {uid("gpu-02/vgpu"): {"resources": {"VGPU": 1}}}}  # devices only
    allocations[uid("other-server")] = record  # not among the servers given
    report = _report(inputs)
    assert [i["name"] for i in report["instances"]] == ["vm"]
    inputs["servers"] = []  # servers not known: every UUID consumer holding its compute node counts
    assert sorted(i["uuid"] for i in _report(inputs)["instances"]) == sorted([uid("server/vm"), uid("other-server")])


def test_the_lookup_refuses_bad_input_with_a_message_naming_it(tmp_path):
    done = run_expression(
        tmp_path / "a",
        "{{ query('accel.openstack.migration_targets', fleet=fleet) }}",
        {"fleet": {"resource_providers": []}},
    )
    assert done.returncode != 0
    assert "fleet.allocations must map consumer UUIDs to {allocations: {provider uuid: {resources}}}" in done.stdout
    expression = "{{ query('accel.openstack.migration_targets', fleet=fleet, pci_aliases=['{not json']) }}"
    done = run_expression(tmp_path / "b", expression, {"fleet": {"resource_providers": [], "allocations": {}}})
    assert done.returncode != 0 and "pci_aliases: Nova refuses them" in done.stdout


def test_the_lookup_returns_the_report_as_a_playbook_runs_it(tmp_path):
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "vgpu")
    expression = (
        "{{ query('accel.openstack.migration_targets', fleet=fleet, hosts=hosts, deployed=deployed, servers=servers) "
        "| to_json }}"
    )
    done = run_expression(tmp_path, expression, inputs)
    assert done.returncode == 0, done.stdout + done.stderr
    (report,) = json.loads(json.loads(done.stdout.split("=>", 1)[1])["msg"])
    assert report == json.loads(json.dumps(_report(inputs, aliases=None)))
    assert report["drain"]["gpu-01"]["summary"] == "draining gpu-01 moves 1 of 1 instances"


def test_the_audit_reports_an_instance_that_cannot_move_and_one_with_no_target():
    inputs = cloud(("gpu-01", "gpu-02"))
    place(inputs, "vm-gpu", "gpu-01", "vgpu")
    place(inputs, "vm-pci", "gpu-01", "pci")
    place(inputs, "vm-plain", "gpu-02", "pci")
    inputs["deployed"]["gpu-01"]["compute"]["libvirt"]["live_migration_permit_post_copy"] = ["true"]
    provider(inputs, "gpu-02_0000:41:00.0")["traits"] = ["COMPUTE_MANAGED_PCI_DEVICE"]  # plain passthrough
    for services in inputs["deployed"].values():
        services["compute"]["pci"]["alias"] = ['{"name": "h100", "vendor_id": "10de", "product_id": "2331", '
                                               '"device_type": "type-PF", "live_migratable": "true"}']  # fmt: skip
    found = audit_cloud(inputs["hosts"], inputs["deployed"], inputs["fleet"])["findings"]
    mine = sorted((f["code"], f["severity"], f["host"], f["message"]) for f in found if f["area"] == "migration")
    assert mine == [
        (
            "migration_blocked",
            "info",
            "gpu-02",
            f"instance {uid('server/vm-plain')} on gpu-02 cannot live-migrate: gpu-02_0000:41:00.0 lacks "
            'HW_PCI_LIVE_MIGRATABLE: its [pci] device_spec entry is not tagged live_migratable: "true"',
        ),
        (
            "migration_blocked",
            "warning",
            "gpu-01",
            f"instance {uid('server/vm-gpu')} on gpu-01 cannot live-migrate: [libvirt] "
            "live_migration_permit_post_copy is true on gpu-01; vGPU live migration needs it false",
        ),
        (
            "migration_no_target",
            "info",
            "gpu-01",
            f"instance {uid('server/vm-pci')} on gpu-01 has no other host to live-migrate to now: gpu-02: no "
            f"provider of {PCI_RC} on a HW_PCI_LIVE_MIGRATABLE device",
        ),
    ]
    # a version that is not known is no warning: the audit cannot tell
    inputs["deployed"]["gpu-01"]["compute"]["libvirt"]["live_migration_permit_post_copy"] = ["false"]
    inputs["hosts"]["gpu-01"].pop("accel_libvirt_version")
    found = audit_cloud(inputs["hosts"], inputs["deployed"], inputs["fleet"])["findings"]
    blocked = [
        (f["severity"], f["message"]) for f in found if f["code"] == "migration_blocked" and f["host"] == "gpu-01"
    ]
    assert sorted(blocked) == sorted([
        ("info", f"instance {uid('server/vm-gpu')} on gpu-01 cannot live-migrate: libvirt version of gpu-01 is not "
                 "known (give accel_libvirt_version in its facts or inventory)"),
        ("info", f"instance {uid('server/vm-pci')} on gpu-01 cannot live-migrate: libvirt version of gpu-01 is not "
                 "known (give accel_libvirt_version in its facts or inventory)"),
    ])  # fmt: skip
    inputs["hosts"]["gpu-01"]["accel_libvirt_version"] = "10.0.0"
    inputs["deployed"]["gpu-01"]["compute"]["libvirt"]["live_migration_permit_post_copy"] = ["true"]
    # the live servers, when read, decide which consumers are instances; without allocations the area is silent
    found = audit_cloud(inputs["hosts"], inputs["deployed"], inputs["fleet"], instances=[uid("server/vm-gpu")])
    assert [f["code"] for f in found["findings"] if f["area"] == "migration"] == ["migration_blocked"]
    quiet = dict(inputs["fleet"], allocations={})
    assert not [
        f for f in audit_cloud(inputs["hosts"], inputs["deployed"], quiet)["findings"] if f["area"] == "migration"
    ]


# -- Nova's own code ---------------------------------------------------------------------------------------------
VERSIONS = [
    ((8, 6, 0), (8, 1, 0)),
    ((8, 5, 99), (8, 1, 0)),
    ((8, 6, 0), (8, 0, 99)),
    ((9, 0, 0), (8, 2, 2)),
    ((10, 0, 0), (8, 2, 1)),
    ((10, 0, 0), (8, 2, 2)),
    ((11, 2, 0), (9, 1, 0)),
]
FLAGS = ["true", "True", "yes", "1", "on", "false", "no", "0", None]


def test_version_minima_and_live_migratable_decisions_are_nova_34s():
    aliases = [
        {"name": "a", "vendor_id": "10de", "product_id": "2331", **({} if f is None else {"live_migratable": f})}
        for f in FLAGS
    ]
    theirs = ask(
        "tests/support/nova_migration_oracle.py",
        {"versions": VERSIONS, "aliases": aliases, "tags": [f for f in FLAGS if f is not None]},
        300,
        "Nova's live-migration checks",
    )
    assert theirs["constants"] == {
        "MIN_MDEV_LIVEMIG_LIBVIRT_VERSION": list(migration.MDEV_MIN_LIBVIRT),
        "MIN_MDEV_LIVEMIG_QEMU_VERSION": list(migration.MDEV_MIN_QEMU),
        "MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION": list(migration.PCI_MIN_LIBVIRT),
        "MIN_VFIO_PCI_VARIANT_QEMU_VERSION": list(migration.PCI_MIN_QEMU),
    }
    for (libvirt, qemu), nova in zip(VERSIONS, theirs["versions"], strict=True):
        host = migration._Host("h", {"accel_libvirt_version": libvirt, "accel_qemu_version": qemu,
                                     "accel_kernel_release": "6.1"}, {})  # fmt: skip
        assert {"mdev": not host.too_old("vgpu"), "pci": not host.too_old("pci")} == nova, (libvirt, qemu)
    ours = []
    for alias in aliases:
        parsed, problem = parse_aliases([alias])
        ours.append({"live_migratable": all(s.get("live_migratable") == "true" for s in parsed["a"][1])}
                    if problem is None else {"refused": problem})  # fmt: skip
    assert [o.get("live_migratable") for o in ours] == [n.get("live_migratable") for n in theirs["aliases"]]
    assert [n.get("live_migratable") for n in theirs["aliases"]] == [True] * 5 + [False] * 4
    # nova-compute reports HW_PCI_LIVE_MIGRATABLE exactly for the tags its alias check calls true
    assert theirs["tags"] == [True] * 5 + [False] * 3


@pytest.mark.parametrize(
    ("text", "fact"), [("6.1.0-18-amd64\n", "6.1.0-18-amd64"), ("$(reboot)\n", None), ("", None), (None, None)]
)
def test_the_kernel_release_is_read_from_the_roots_proc_and_left_out_when_it_is_no_release(tmp_path, text, fact):
    from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover

    if text is not None:
        (tmp_path / "proc" / "sys" / "kernel").mkdir(parents=True)
        (tmp_path / "proc" / "sys" / "kernel" / "osrelease").write_text(text)
    facts, _warnings = discover(str(tmp_path))
    assert facts.get("accel_kernel_release") == fact
    assert ("accel_kernel_release" in facts) is (fact is not None)


def test_names_read_from_placement_and_hosts_are_quoted_in_every_text():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "vgpu")
    odd = "gpu-02; reboot"
    provider(inputs, "gpu-02")["name"] = odd
    provider(inputs, "gpu-02_pci_0000_84_00_0")["name"] = f"{odd}_pci_0000_84_00_0"
    inputs["deployed"][odd] = inputs["deployed"].pop("gpu-02")
    inputs["hosts"][odd] = inputs["hosts"].pop("gpu-02")
    inputs["hosts"][odd]["accel_qemu_version"] = "7.2.0"
    inputs["deployed"]["gpu-01"]["compute"]["libvirt"]["live_migration_permit_post_copy"] = ["true"]
    report = _report(inputs)
    entry = _one(report, "vm")
    assert entry["why_not"][odd] == "qemu 7.2.0 on 'gpu-02; reboot' is older than 8.1.0"
    assert "; reboot" not in entry["blockers"][0]["fix"]
    assert migration.shown("nvidia-35") == "nvidia-35" and migration.shown("a b") == "'a b'"


def test_compute_node_names_map_to_inventory_hosts_and_the_flavors_traits_are_asked():
    inputs = cloud()
    place(inputs, "vm", "gpu-01", "vgpu")
    # the compute nodes are called gpu-0N.example.org; the facts and config are by inventory hostname
    names = {}
    for record in inputs["fleet"]["resource_providers"]:
        host = record["name"].split("_")[0]
        record["name"] = record["name"].replace(host, f"{host}.example.org", 1)
        names[host] = f"{host}.example.org"
    inputs["hosts"]["gpu-02"]["accel_libvirt_version"] = "8.0.0"
    server = inputs["servers"][0]
    server["flavor"]["extra_specs"]["trait:CUSTOM_NVLINK"] = "required"
    provider(inputs, "gpu-01.example.org")["traits"].append("CUSTOM_NVLINK")
    provider(inputs, "gpu-03.example.org")["traits"].append("CUSTOM_NVLINK")
    report = migration_targets(
        inputs["fleet"],
        hosts=inputs["hosts"],
        deployed_config=inputs["deployed"],
        hypervisor_hostnames=names,
        servers=inputs["servers"],
        pci_aliases=inputs["pci_aliases"],
    )
    (entry,) = report["instances"]
    assert entry["host"] == "gpu-01" and entry["targets"] == ["gpu-03"]
    assert "required=CUSTOM_NVLINK" in entry["query"]
    assert entry["why_not"]["gpu-02"] == (
        "libvirt 8.0.0 on gpu-02 is older than 8.6.0; lacks the flavor's required traits CUSTOM_NVLINK"
    )
    assert report["drain"]["gpu-01"]["moves"] == {"vm": "gpu-03"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda i: i.update(hosts=["gpu-01"]), "hosts must be a dict keyed by host"),
        (lambda i: i["hosts"].update({"gpu-01": "facts"}), "hosts[gpu-01] must be the host's accel_* facts (a dict)"),
        (lambda i: i.update(deployed={"gpu-01": {"compute": ["x"]}}), "deployed[gpu-01] must be {service: config"),
        (lambda i: i.update(servers="all"), "servers must be a list of servers"),
        (lambda i: i["fleet"].update(allocations={"c": {"allocations": "x"}}), "fleet.allocations must map"),
        (lambda i: i["fleet"].update(allocations={"c": {"allocations": {"p": {"resources": {"VGPU&required=X": 1}}}}}),
         "fleet.allocations[c] on provider p: resources must map resource class names"),
        (lambda i: i["fleet"].update(allocations={"c; x": {"allocations": {"p": {"resources": {"VGPU": "1"}}}}}),
         "fleet.allocations['c; x'] on provider p: resources must map"),
        (lambda i: i["fleet"].update(allocations={str(n): {"allocations": {}} for n in range(20001)}),
         "fleet.allocations holds 20001 consumers; at most 20000"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_with_a_message_that_names_it(change, message):
    inputs = cloud()
    change(inputs)
    with pytest.raises(migration.MigrationInputError) as raised:
        _report(inputs)
    assert raised.value.msg.startswith(message)


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("10.0.0", (10, 0, 0)),
        ("8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)", (8, 2, 2)),
        ("6.1.0-18-amd64", (6, 1, 0)),
        ("9", (9, 0, 0)),
        ([8, 6], (8, 6, 0)),
        ("9999999.0.0", None),
        ("v10", None),
        ("", None),
        (10.0, None),
        ({"major": 10}, None),
    ],
)
def test_versions_are_read_as_numbers_and_anything_else_is_not_known(value, read):
    assert migration.parse_version(value) == read


def test_disk_on_shared_storage_is_asked_in_the_unsuffixed_group_not_taken_for_a_second_host():
    inputs = cloud()
    consumer = place(inputs, "vm", "gpu-01", "vgpu")
    storage = uid("storage")
    inputs["fleet"]["resource_providers"].append(
        {
            "uuid": storage,
            "name": "ceph",
            "parent_provider_uuid": None,
            "inventories": {"DISK_GB": {"total": 10000, "reserved": 0, "min_unit": 1, "max_unit": 10000,
                                        "step_size": 1, "allocation_ratio": 1.0}},
            "usages": {"DISK_GB": 20},
            "traits": ["MISC_SHARES_VIA_AGGREGATE"],
            "aggregates": [uid("agg")],
        }
    )  # fmt: skip
    for name in ("gpu-01", "gpu-02", "gpu-03"):
        provider(inputs, name)["aggregates"] = [uid("agg")]
        provider(inputs, name)["inventories"].pop("DISK_GB")
    allocations = inputs["fleet"]["allocations"][consumer]["allocations"]
    allocations[uid("gpu-01")]["resources"].pop("DISK_GB")
    allocations[storage] = {"resources": {"DISK_GB": 20}}
    provider(inputs, "gpu-01")["usages"].pop("DISK_GB")
    report = _report(inputs)
    (entry,) = report["instances"]
    assert entry["blockers"] == [] and entry["host"] == "gpu-01"
    assert entry["query"].startswith("resources=DISK_GB:20,MEMORY_MB:8192,VCPU:4,VGPU:1&")
    assert entry["targets"] == ["gpu-02", "gpu-03"]
    assert entry["why_not"] == {"gpu-01": "the source host"}  # the storage is no host
