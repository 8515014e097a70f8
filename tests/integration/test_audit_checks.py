"""The audit's checks of lost host state, scheduler filters, gone compute nodes, leaked allocations and sold-out
flavors, on a healthy cloud read from the real Placement.

The cloud is tests/support/audit_cloud.py's with ``sriov=True``: fake roots from hardware profiles (a T4 host,
an A16 vGPU host, a MIG host, a ConnectX-6 host with 8 VFs handed out, an L40S host with vGPU 17 type 1155 on
four VFs of each GPU), the Nova config its policy renders, and the providers nova-compute reports loaded into
the real Placement. Each test plants one defect (in a root, a deployed config, Placement itself or the
flavor catalog), reads Placement with the real ``placement_info`` module (``allocations: true``) and asserts
exactly what the audit reports; what it plants in Placement it removes again.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import uuid

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.nova_checks import (
    NOVA_DEFAULT_FILTERS,
    needed_filters,
)
from tests.support import audit_cloud as world
from tests.support.ansible_runner import run_module
from tests.support.nova_venv import nova_python
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement

PROJECT = "2f6b1c7e-0000-4000-8000-0000000000aa"
USER = "2f6b1c7e-0000-4000-8000-0000000000bb"


@pytest.fixture(scope="module")
def cloud(tmp_path_factory, placement):
    healthy = world.healthy(str(tmp_path_factory.mktemp("audit-checks")), sriov=True)
    load_fleet(placement, healthy["fleet"])
    return healthy


@pytest.fixture
def planted(placement):
    """Consumers and providers a test writes into Placement, removed after it (consumers first)."""
    made = {"consumers": [], "providers": []}
    yield made
    for consumer in made["consumers"]:
        placement.request("DELETE", f"/allocations/{consumer}")
    for provider in reversed(made["providers"]):
        placement.request("DELETE", f"/resource_providers/{provider}")


def provider(cloud, name: str) -> dict:
    return next(p for p in cloud["fleet"]["resource_providers"] if p["name"] == name)


def allocate(placement, planted, allocations: dict, consumer: str | None = None) -> str:
    consumer = consumer or str(uuid.uuid4())
    body = {
        "allocations": {rp: {"resources": resources} for rp, resources in allocations.items()},
        "project_id": PROJECT,
        "user_id": USER,
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    status, answer = placement.request("PUT", f"/allocations/{consumer}", body)
    assert status == 204, answer
    planted["consumers"].append(consumer)
    return consumer


def instance(placement, planted, cloud, host: str, device: str | None = None, rc: str | None = None) -> str:
    """An instance as Nova allocates it: VCPU and memory on the compute node, the device on its provider."""
    allocations = {provider(cloud, host)["uuid"]: {"VCPU": 4, "MEMORY_MB": 8192}}
    if device:
        allocations[provider(cloud, device)["uuid"]] = {rc: 1}
    return allocate(placement, planted, allocations)


def create_provider(placement, planted, name: str, parent: str | None = None, inventories: dict | None = None) -> str:
    made = str(uuid.uuid4())
    status, answer = placement.request(
        "POST", "/resource_providers", {"uuid": made, "name": name, "parent_provider_uuid": parent}
    )
    assert status == 200, answer
    planted["providers"].append(made)
    if inventories:
        status, answer = placement.request(
            "PUT",
            f"/resource_providers/{made}/inventories",
            {"resource_provider_generation": 0, "inventories": inventories},
        )
        assert status == 200, answer
    return made


def audit(placement, cloud, use_policy: bool = True, **options) -> dict:
    read = run_module("placement_info", dict(placement.auth, quarantines=True, allocations=True))
    assert not read.get("failed"), read.get("msg")
    return audit_cloud(
        cloud["hosts"],
        cloud["deployed"],
        read["fleet"],
        cloud["flavors"],
        cloud["policy"] if use_policy else None,
        inventory_hosts=[*cloud["hosts"], world.CONTROL],
        **options,
    )


def serious(result: dict) -> list[dict]:
    return [f for f in result["findings"] if f["severity"] != "info"]


def codes(result: dict) -> list[str]:
    return sorted(f["code"] for f in serious(result))


def test_the_healthy_cloud_with_an_instance_on_each_device_kind_reports_nothing_at_warning_or_above(
    placement, cloud, planted
):
    t4 = instance(placement, planted, cloud, "t4-01", "t4-01_0000:B0:00.0", "CUSTOM_NVIDIA_T4")
    vf = instance(placement, planted, cloud, "nic-01", "nic-01_0000:3B:00.0", "CUSTOM_PCI_15B3_101E")
    vgpu = instance(placement, planted, cloud, "l40s-01", "l40s-01_0000:01:00.0", "VGPU")
    for use_policy in (True, False):
        result = audit(placement, cloud, use_policy, instances=[t4, vf, vgpu])
        assert serious(result) == [], [(f["code"], f["message"]) for f in serious(result)]
        assert [f for f in result["findings"] if f["code"] == "flavor_sold_out"] == []  # nic-01's T4 is free


# -- 1. VFs lost ------------------------------------------------------------------------------------------
def test_vfs_lost_at_a_reboot_are_restored_not_restarted_away(placement, cloud, tmp_path):
    """The ConnectX-6 came back with 0 VFs; Placement still holds its 8-VF inventory."""
    lost = copy.deepcopy(cloud)
    profile = world.profile("sriov-nic")
    pf = next(d for d in profile["devices"] if d["address"] == "0000:3b:00.0")
    pf["sriov"]["numvfs"], pf["_vfs"] = 0, []
    profile["devices"] = [d for d in profile["devices"] if d.get("physfn") != "0000:3b:00.0"]
    facts, _roots = world.build_facts(str(tmp_path), {"nic-01": profile})
    lost["hosts"]["nic-01"] = facts["nic-01"]
    for use_policy in (True, False):
        result = audit(placement, lost, use_policy)
        # the VF flavor has no host today, which is true; nothing says to restart nova-compute or to re-render
        assert codes(result) == ["flavor_unplaceable", "vfs_missing"], [f["message"] for f in serious(result)]
        (item,) = [f for f in result["findings"] if f["code"] == "vfs_missing"]
        assert item["host"] == "nic-01" and item["severity"] == "error"
        assert (
            "0000:3b:00.0 has 0 VF(s), yet Placement's nic-01_0000:3B:00.0 still holds 8 CUSTOM_PCI_15B3_101E"
            in (item["message"])
        )
        assert "before nova-compute restarts" in item["fix"]
        assert "accel.openstack.sriov_vfs with devices: [0000:3b:00.0] and numvfs: 8" in item["fix"]
        assert "echo 8 > /sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs" in item["fix"]
        assert "playbooks/prepare_hosts.yml" in item["fix"]
    # the host with its VFs back: nothing left
    assert serious(audit(placement, cloud)) == []


# -- 2. vGPU type lost ------------------------------------------------------------------------------------
def test_a_vgpu_type_reset_on_a_vf_is_restored_not_rendered_away(placement, cloud, tmp_path):
    lost = copy.deepcopy(cloud)
    facts, roots = world.build_facts(str(tmp_path), world.SRIOV_PROFILES)
    world.set_vgpu_type(roots["l40s-01"], "0", ["0000:01:00.5"])
    lost["hosts"]["l40s-01"] = discover(roots["l40s-01"])[0]
    assert next(d for d in lost["hosts"]["l40s-01"]["accel_pci_devices"] if d["address"] == "0000:01:00.5")[
        "current_vgpu_type"
    ] in ("0", 0)
    for use_policy in (True, False):
        result = audit(placement, lost, use_policy)
        assert codes(result) == ["vgpu_type_missing"], [f["message"] for f in serious(result)]
        (item,) = serious(result)
        assert item["host"] == "l40s-01"
        assert item["message"].startswith("1 VF(s) of 0000:01:00.0 (0000:01:00.5) have no vGPU type")
        assert "its other 3 VF(s) hold type 1155" in item["message"]
        assert "accel.openstack.nvidia_vgpu with devices: [0000:01:00.0], type: 1155 and vfs: 4" in item["fix"]
        assert "host_gpu_sharing" in item["fix"] and "do not render the Nova config again" in item["fix"]
        assert "nova_config.yml" not in item["fix"]


def test_every_vf_reset_takes_the_type_from_the_policy_and_without_it_names_none(placement, cloud, tmp_path):
    lost = copy.deepcopy(cloud)
    facts, roots = world.build_facts(str(tmp_path), world.SRIOV_PROFILES)
    world.set_vgpu_type(roots["l40s-01"], "0")
    lost["hosts"]["l40s-01"] = discover(roots["l40s-01"])[0]
    with_policy = [f for f in serious(audit(placement, lost)) if f["code"] == "vgpu_type_missing"]
    assert len(with_policy) == 2  # one per GPU
    assert all("type: 1155 and vfs: 4" in f["fix"] for f in with_policy)
    without = [f for f in serious(audit(placement, lost, use_policy=False)) if f["code"] == "vgpu_type_missing"]
    assert len(without) == 2 and all("the type the GPU had" in f["fix"] for f in without)


# -- 3. scheduler filters ---------------------------------------------------------------------------------
def test_nova_default_filters_are_novas_own():
    script = (
        "import json; from nova.conf import scheduler; "
        "print(json.dumps(next(o.default for o in scheduler.filter_scheduler_opts if o.name == 'enabled_filters')))"
    )
    done = subprocess.run([nova_python(), "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert tuple(json.loads(done.stdout)) == NOVA_DEFAULT_FILTERS


NUMA_ORACLE = """
import json, sys
from nova import objects
from nova.virt import hardware
objects.register_all()
out = []
for specs in json.load(sys.stdin):
    flavor = objects.Flavor(vcpus=4, memory_mb=8192, extra_specs=specs)
    image = objects.ImageMeta.from_dict({"properties": {}})
    out.append(hardware.numa_get_constraints(flavor, image) is not None)
print(json.dumps(out))
"""
NUMA_SPECS = [
    {},
    {"hw:numa_nodes": "1"},
    {"hw:numa_nodes": "2"},
    {"hw:cpu_policy": "dedicated"},
    {"hw:cpu_policy": "shared"},
    {"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "^0"},
    {"hw:mem_page_size": "large"},
    {"resources:PCPU": "4"},
    {"hw:pci_numa_affinity_policy": "required"},
    {"pci_passthrough:alias": "t4:1"},
    {"aggregate_instance_extra_specs:gpu": "true"},
]


def test_the_flavors_that_need_numa_topology_filter_are_those_nova_gives_a_numa_topology():
    done = subprocess.run(
        [nova_python(), "-c", NUMA_ORACLE],
        input=json.dumps(NUMA_SPECS),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    nova_says = json.loads(done.stdout)

    class Catalog:
        aliases: list = []
        flavors = [{"name": f"f{i}", "extra_specs": specs} for i, specs in enumerate(NUMA_SPECS)]

    ours = needed_filters(Catalog())
    numa = {why.split()[1] for why in ours.get("NUMATopologyFilter", [])}
    assert [f"f{i}" in numa for i in range(len(NUMA_SPECS))] == nova_says
    assert any(nova_says) and not all(nova_says)


def test_missing_scheduler_filters_are_named_with_the_flavors_that_need_them(placement, cloud):
    planted = copy.deepcopy(cloud)
    scheduler = planted["deployed"][world.CONTROL]["scheduler"]["filter_scheduler"]
    del scheduler["enabled_filters"]  # Nova's default: no PciPassthroughFilter
    planted["flavors"].append(
        {"name": "gpu.t4.numa", "vcpus": 4, "ram": 8192, "disk": 20, "image_properties": world.GPU_IMAGE,
         "extra_specs": {"pci_passthrough:alias": "t4:1", "hw:numa_nodes": "1",
                         "aggregate_instance_extra_specs:gpu": "t4"}}
    )  # fmt: skip
    result = audit(placement, planted)
    (item,) = [f for f in result["findings"] if f["code"] == "scheduler_filter_missing"]
    assert codes(result) == ["scheduler_filter_missing"]
    assert (item["host"], item["severity"], item["area"]) == (world.CONTROL, "error", "nova")
    assert "Nova's 5 default filters" in item["message"]
    for name in ("AggregateInstanceExtraSpecsFilter", "NUMATopologyFilter", "PciPassthroughFilter"):
        assert name in item["message"] and name in item["fix"]
    assert "flavor gpu.t4.numa has a NUMA topology" in item["message"]
    assert ("enabled_filters = " + ",".join(NOVA_DEFAULT_FILTERS)) in item["fix"]
    # a deployed list that has them all is fine; one that lacks only the PCI filter names only that one
    scheduler["enabled_filters"] = [
        ",".join([*NOVA_DEFAULT_FILTERS, "NUMATopologyFilter", "AggregateInstanceExtraSpecsFilter"])
    ]
    (item,) = serious(audit(placement, planted))
    assert re.search(r"lists 7 filter\(s\), without PciPassthroughFilter, which", item["message"])
    assert "keeping the filters listed now" in item["fix"]
    scheduler["enabled_filters"][0] += ", PciPassthroughFilter"
    assert serious(audit(placement, planted)) == []


# -- 4. compute nodes of hosts that are gone --------------------------------------------------------------
GENERAL = {
    "VCPU": {"total": 64, "max_unit": 64},
    "MEMORY_MB": {"total": 262144, "max_unit": 262144},
}


def test_a_compute_node_tree_of_a_gone_host_is_stale_until_an_instance_holds_it(placement, cloud, planted):
    root = create_provider(placement, planted, "t4-02", inventories=GENERAL)
    child = create_provider(
        placement, planted, "t4-02_0000:B0:00.0", root, {"CUSTOM_NVIDIA_T4": {"total": 1, "max_unit": 1}}
    )
    result = audit(placement, cloud)
    assert codes(result) == ["compute_node_gone"]
    (stale,) = serious(result)
    assert (stale["host"], stale["severity"], stale["area"]) == (None, "warning", "placement")
    assert "compute node t4-02 is in Placement with 2 provider(s) and nothing allocated" in stale["message"]
    assert f"openstack resource provider delete {child} then {root}" in stale["fix"]
    assert "openstack compute service delete" in stale["fix"]

    consumer = allocate(placement, planted, {root: {"VCPU": 4, "MEMORY_MB": 8192}, child: {"CUSTOM_NVIDIA_T4": 1}})
    result = audit(placement, cloud, instances=[consumer])
    assert codes(result) == ["compute_node_gone"]
    (held,) = serious(result)
    assert held["severity"] == "error"
    assert f"1 consumer(s) still hold CUSTOM_NVIDIA_T4 1, MEMORY_MB 8192, VCPU 4 there: {consumer}" in held["message"]
    assert f"openstack server show {consumer}" in held["fix"] and "evacuate" in held["fix"]
    # a host of the inventory whose play did not run (--limit) is not gone
    fleet = run_module("placement_info", dict(placement.auth, allocations=True))["fleet"]
    limited = audit_cloud(
        cloud["hosts"], cloud["deployed"], fleet, cloud["flavors"], cloud["policy"],
        inventory_hosts=[*cloud["hosts"], "t4-02"], instances=[consumer],
    )  # fmt: skip
    assert serious(limited) == []


def test_a_gone_compute_node_with_an_odd_name_is_quoted_and_never_put_in_a_command(placement, cloud, planted):
    root = create_provider(placement, planted, "old host; rm -rf /", inventories=GENERAL)
    (item,) = serious(audit(placement, cloud))
    assert 'compute node "old host; rm -rf /" is in Placement' in item["message"]
    assert "rm -rf" not in item["fix"] and root in item["fix"]


# -- 5. leaked allocations --------------------------------------------------------------------------------
def test_a_device_held_without_the_instance_resources_is_a_leaked_allocation(placement, cloud, planted):
    t4 = provider(cloud, "t4-01_0000:B0:00.0")
    leaked = allocate(placement, planted, {t4["uuid"]: {"CUSTOM_NVIDIA_T4": 1}})
    result = audit(placement, cloud)
    assert codes(result) == ["allocation_leaked"]
    (item,) = serious(result)
    assert (item["host"], item["severity"]) == ("t4-01", "warning")
    assert (
        f"consumer {leaked} holds devices (t4-01_0000:B0:00.0: CUSTOM_NVIDIA_T4 1) but no VCPU or MEMORY_MB"
        in (item["message"])
    )
    assert item["fix"].endswith(f"openstack resource provider allocation delete {leaked}")
    assert f"openstack server show {leaked}" in item["fix"]


def test_a_quarantine_is_no_leak(placement, cloud, planted):
    held = run_module("device_quarantine", dict(placement.auth, host="a16-01", address="0000:84:00.4", reason="Xid 79"))
    assert held["changed"] is True, held.get("msg")
    planted["consumers"].append(held["consumer"])
    result = audit(placement, cloud, instances=[])
    assert serious(result) == []
    assert [f["code"] for f in result["findings"] if f["code"] == "device_quarantined"] == ["device_quarantined"]


def test_a_consumer_that_is_no_server_is_a_leaked_allocation_when_the_servers_are_known(placement, cloud, planted):
    gone = instance(placement, planted, cloud, "mig-01")
    assert serious(audit(placement, cloud)) == []  # the servers unknown: an instance-shaped consumer is trusted
    result = audit(placement, cloud, instances=[str(uuid.uuid4())])
    (item,) = serious(result)
    assert item["code"] == "allocation_leaked" and item["host"] == "mig-01"
    assert f"consumer {gone} holds mig-01: MEMORY_MB 8192, VCPU 4 but is not in the server list" in item["message"]
    assert item["fix"].endswith(f"allocation delete {gone}")
    assert serious(audit(placement, cloud, instances=[gone.upper()])) == []


# -- 6. sold out today vs never ---------------------------------------------------------------------------
def test_a_flavor_sold_out_today_is_capacity_and_one_that_never_fits_an_error(placement, cloud, planted):
    planted_cloud = copy.deepcopy(cloud)
    planted_cloud["flavors"].append(
        {"name": "gpu.t4x2", "vcpus": 4, "ram": 4096, "disk": 10, "extra_specs": {"pci_passthrough:alias": "t4:2"},
         "image_properties": world.GPU_IMAGE}
    )  # fmt: skip
    taken = [
        instance(placement, planted, cloud, host, f"{host}_0000:B0:00.0", "CUSTOM_NVIDIA_T4")
        for host in ("t4-01", "nic-01")
    ]
    result = audit(placement, planted_cloud, instances=taken)
    (never,) = serious(result)
    assert (never["code"], never["severity"]) == ("flavor_unplaceable", "error")
    assert "flavor gpu.t4x2" in never["message"]
    (today,) = [f for f in result["findings"] if f["code"] == "flavor_sold_out"]
    assert today["severity"] == "info" and "flavor gpu.t4 " in today["message"]
    assert "flavor gpu.t4 is sold out today: it fits an empty host, but not the usage" in today["message"]
    for host in ("nic-01", "t4-01"):
        assert f"{host} uses CUSTOM_NVIDIA_T4 1, MEMORY_MB 8192, VCPU 4" in today["message"]
