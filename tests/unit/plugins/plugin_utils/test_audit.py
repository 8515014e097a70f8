"""The audit's findings: a healthy cloud gives nothing at warning or above; each planted defect gives its code.

The cloud is tests/support/audit_cloud.py's: fake roots from hardware profiles, the Nova config its
policy renders, the providers nova-compute reports. Each case plants one defect (in a hardware profile,
a deployed config file's sections, Placement's snapshot or the flavor catalog) and names every code the
audit must report for it: the planted one, and where a defect has a second true symptom, that one too.
"""

from __future__ import annotations

import copy

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.audit import findings as findings_mod
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import AuditInputError, audit_cloud
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import CODES, FindingError
from tests.support import audit_cloud as world

REQUIRED = {
    "iommu_off", "group_not_viable", "not_bound_vfio", "vfs_missing", "vgpu_type_missing", "mig_layout_drift",
    "nova_config_drift", "alias_missing_on_service", "alias_conflict", "mdev_class_ignored",
    "pci_in_placement_partial", "inventory_mismatch", "provider_orphaned", "one_time_use_stuck", "flavor_invalid",
    "flavor_unplaceable", "gpu_host_unreserved",
}  # fmt: skip


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    return world.healthy(str(tmp_path_factory.mktemp("cloud")))


def run(cloud: dict, use_policy: bool = True, **extra) -> dict:
    return audit_cloud(
        cloud["hosts"],
        cloud["deployed"],
        cloud["fleet"],
        cloud["flavors"],
        cloud["policy"] if use_policy else None,
        **extra,
    )


def serious(result: dict) -> list[dict]:
    return [f for f in result["findings"] if f["severity"] != "info"]


def test_healthy_cloud_reports_nothing_at_warning_or_above(healthy):
    assert serious(run(healthy)) == []
    assert serious(run(healthy, use_policy=False)) == []


# -- plants --------------------------------------------------------------------------------------
def _host(cloud, tmp_path, host, profile):
    facts, _roots = world.build_facts(str(tmp_path), {host: profile})
    cloud["hosts"][host] = facts[host]


def iommu_off(cloud, tmp_path):
    prof = world.profile("configured-t4")
    prof["iommu"] = "none"
    prof["kernel_cmdline"] = "BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro quiet"
    _host(cloud, tmp_path, "t4-01", prof)


def iommu_off_withheld(cloud, tmp_path):
    """The same host after the Nova config stage ran on it: the T4 is kept out of Nova and Placement."""
    iommu_off(cloud, tmp_path)
    cloud["deployed"] = world.deployed_config(cloud["hosts"])
    cloud["fleet"] = world.fleet(cloud["hosts"])


def iommu_off_vgpu(cloud, tmp_path):
    """The A16 host's IOMMU off while its deployed config still enables the vGPU type on its VFs."""
    prof = world.profile("vgpu-a16")
    prof["iommu"] = "none"
    _host(cloud, tmp_path, "a16-01", prof)


def group_not_viable(cloud, tmp_path):
    prof = world.profile("configured-t4")
    prof["devices"].append(
        {"address": "0000:b1:00.0", "vendor_id": "8086", "product_id": "a0ed", "class_code": "0c0330",
         "parent": "0000:af:00.0", "numa_node": 0, "iommu_group": 81, "driver": "xhci_hcd"}
    )  # fmt: skip
    _host(cloud, tmp_path, "t4-01", prof)


def not_bound_vfio(cloud, tmp_path):
    prof = world.profile("configured-t4")
    next(d for d in prof["devices"] if d["address"] == "0000:b0:00.0")["driver"] = "nvidia"
    _host(cloud, tmp_path, "t4-01", prof)


def vfs_missing(cloud, tmp_path):
    next(e for e in cloud["policy"] if e["name"] == "a16-4q")["sriov_numvfs"] = 8


def vfs_missing_for_the_deployed_spec(cloud, tmp_path):
    """The deployed device_spec names a VF of the A16's first PF beyond the four that exist."""
    pci = cloud["deployed"]["a16-01"]["compute"].setdefault("pci", {})
    pci["device_spec"] = ['{"vendor_id": "10de", "product_id": "25b6", "address": "0000:84:01.0"}']


def vgpu_type_missing(cloud, tmp_path):
    section = cloud["deployed"]["a16-01"]["compute"]["mdev_nvidia-735"]
    section["device_addresses"] = [section["device_addresses"][0] + ",0000:84:00.0"]


def mig_layout_drift(cloud, tmp_path):
    prof = world.profile("mig-a100")
    gpu = next(d for d in prof["devices"] if d["address"] == "0000:3b:00.0")
    gpu["mig"]["instances"] = gpu["mig"]["instances"][:2]
    _host(cloud, tmp_path, "mig-01", prof)


def nova_config_drift(cloud, tmp_path):
    pci = cloud["deployed"]["t4-01"]["compute"]["pci"]
    pci["device_spec"] = [
        s.replace('"CUSTOM_NVIDIA_T4"', '"CUSTOM_NVIDIA_T4", "managed": "no"') for s in pci["device_spec"]
    ]


def alias_missing_on_service(cloud, tmp_path):
    del cloud["deployed"]["ctl-01"]["scheduler"]["pci"]["alias"]


def alias_conflict(cloud, tmp_path):
    api = cloud["deployed"]["ctl-01"]["api"]["pci"]
    api["alias"] = [a.replace('"type-PCI"', '"type-PF"') for a in api["alias"]]


def mdev_class_ignored(cloud, tmp_path):
    del cloud["deployed"]["a16-01"]["compute"]["mdev_nvidia-735"]["device_addresses"]


def pci_in_placement_partial(cloud, tmp_path):
    del cloud["deployed"]["ctl-01"]["conductor"]["filter_scheduler"]


def _provider(cloud, name):
    return next(p for p in cloud["fleet"]["resource_providers"] if p["name"] == name)


def inventory_mismatch(cloud, tmp_path):
    vgpu = next(p for p in cloud["fleet"]["resource_providers"] if p["name"].startswith("a16-01_pci_"))
    vgpu["inventories"]["CUSTOM_VGPU_A16_4Q"]["total"] += 1
    vgpu["inventories"]["CUSTOM_VGPU_A16_4Q"]["max_unit"] += 1


def provider_orphaned(cloud, tmp_path):
    root = _provider(cloud, "t4-01")
    t4 = _provider(cloud, "t4-01_0000:B0:00.0")
    gone = copy.deepcopy(t4)
    gone.update(uuid="0e0e0e0e-0000-4000-8000-00000000b100", name="t4-01_0000:B1:00.0")
    gone["parent_provider_uuid"] = root["uuid"]
    cloud["fleet"]["resource_providers"].append(gone)


def one_time_use_stuck(cloud, tmp_path):
    t4 = _provider(cloud, "t4-01_0000:B0:00.0")
    t4["traits"] = sorted({*t4["traits"], "HW_PCI_ONE_TIME_USE"})
    t4["inventories"]["CUSTOM_NVIDIA_T4"]["reserved"] = 1


def flavor_invalid(cloud, tmp_path):
    cloud["flavors"].append(
        {"name": "gpu.bad", "vcpus": 4, "ram": 4096, "disk": 10, "extra_specs": {"hw:cpu_thread_policy": "isolate"}}
    )


def flavor_unplaceable(cloud, tmp_path):
    cloud["flavors"].append(
        {"name": "gpu.t4x2", "vcpus": 4, "ram": 4096, "disk": 10, "extra_specs": {"pci_passthrough:alias": "t4:2"},
         "image_properties": world.GPU_IMAGE}
    )  # fmt: skip


def gpu_host_unreserved(cloud, tmp_path):
    cloud["flavors"].append({"name": "m1.open", "vcpus": 2, "ram": 2048, "disk": 10, "extra_specs": {}})


# plant -> (codes reported at warning or above, audited with the operator's policy)
PLANTS = {
    # the policy now keeps the T4 from Nova on that host, so the deployed device_spec also drifts from it
    iommu_off: ({"iommu_off", "nova_config_drift"}, True),
    # the T4 flavor's only host no longer offers it: the flavor has no host, which is true
    iommu_off_withheld: ({"iommu_off", "flavor_unplaceable"}, True),
    iommu_off_vgpu: ({"iommu_off", "nova_config_drift"}, True),
    group_not_viable: ({"group_not_viable"}, True),
    not_bound_vfio: ({"not_bound_vfio"}, True),
    vfs_missing: ({"vfs_missing"}, True),
    vfs_missing_for_the_deployed_spec: ({"vfs_missing"}, False),
    vgpu_type_missing: ({"vgpu_type_missing"}, False),
    mig_layout_drift: ({"mig_layout_drift"}, True),
    nova_config_drift: ({"nova_config_drift"}, True),
    alias_missing_on_service: ({"alias_missing_on_service"}, True),
    # nova-api's alias now asks a type-PF device, which no host has: the T4 flavor has no host left.
    alias_conflict: ({"alias_conflict", "flavor_unplaceable"}, True),
    # Nova then reports VGPU where Placement still has the custom class: both are true.
    mdev_class_ignored: ({"mdev_class_ignored", "inventory_mismatch"}, False),
    pci_in_placement_partial: ({"pci_in_placement_partial"}, True),
    inventory_mismatch: ({"inventory_mismatch"}, True),
    provider_orphaned: ({"provider_orphaned"}, True),
    # The only T4 is reserved: the T4 flavor has no host left.
    one_time_use_stuck: ({"one_time_use_stuck", "flavor_unplaceable"}, True),
    flavor_invalid: ({"flavor_invalid"}, True),
    flavor_unplaceable: ({"flavor_unplaceable"}, True),
    gpu_host_unreserved: ({"gpu_host_unreserved"}, True),
}


def test_every_required_code_is_planted():
    assert {code for codes, _planted in PLANTS.values() for code in codes} >= REQUIRED
    assert set(CODES) >= REQUIRED


@pytest.mark.parametrize("plant", list(PLANTS), ids=[p.__name__ for p in PLANTS])
def test_planted_defect_is_reported_exactly(healthy, plant, tmp_path):
    cloud = copy.deepcopy(healthy)
    plant(cloud, tmp_path)
    codes, use_policy = PLANTS[plant]
    result = run(cloud, use_policy=use_policy)
    found = serious(result)
    assert {f["code"] for f in found} == codes, [(f["code"], f["message"]) for f in found]
    for item in found:
        assert set(item) == set(findings_mod.FIELDS)
        assert item["area"] == CODES[item["code"]][0]
        assert item["message"] and item["fix"]


def test_planted_host_defects_name_their_host(healthy, tmp_path):
    cloud = copy.deepcopy(healthy)
    iommu_off(cloud, tmp_path)
    (item,) = [f for f in serious(run(cloud)) if f["code"] == "iommu_off"]
    assert item["host"] == "t4-01" and "0000:b0:00.0" in item["message"]


def test_an_iommu_off_host_is_an_error_while_nova_has_its_devices_and_a_warning_once_withheld(healthy, tmp_path):
    cloud = copy.deepcopy(healthy)
    iommu_off(cloud, tmp_path)
    (handed_out,) = [f for f in run(cloud)["findings"] if f["code"] == "iommu_off"]
    assert handed_out["severity"] == "error"
    assert "until then run playbooks/nova_config.yml" in handed_out["fix"] and "VT-d" in handed_out["fix"]
    iommu_off_withheld(cloud, tmp_path)
    (withheld,) = [f for f in run(cloud)["findings"] if f["code"] == "iommu_off"]
    assert withheld["severity"] == "warning" and withheld["host"] == "t4-01"
    assert "0000:b0:00.0" in withheld["message"] and "not offered" in withheld["message"]
    assert "intel_iommu=on iommu=pt" in withheld["fix"] and "reboot" in withheld["fix"]
    # without the operator's policy the audit cannot tell what the policy would offer there
    assert [f for f in run(cloud, use_policy=False)["findings"] if f["code"] == "iommu_off"] == []


def test_vgpu_types_on_an_iommu_off_host_are_named(healthy, tmp_path):
    cloud = copy.deepcopy(healthy)
    iommu_off_vgpu(cloud, tmp_path)
    (item,) = [f for f in run(cloud)["findings"] if f["code"] == "iommu_off"]
    assert item["host"] == "a16-01" and "[devices] gives 16 device(s) to vGPUs" in item["message"]
    assert "0000:84:00.4" in item["message"]


def test_drift_shows_the_difference(healthy, tmp_path):
    cloud = copy.deepcopy(healthy)
    nova_config_drift(cloud, tmp_path)
    (item,) = serious(run(cloud))
    assert '"managed": "no"' in item["message"] and "0000:b0:00.0" in item["message"]


def test_orphan_fix_leaves_the_provider_to_nova_compute(healthy, tmp_path):
    cloud = copy.deepcopy(healthy)
    provider_orphaned(cloud, tmp_path)
    (item,) = serious(run(cloud))
    assert "restart nova-compute on t4-01" in item["fix"] and "delete" not in item["fix"].split("instances")[-1]


def test_findings_from_other_sources_join_the_list(healthy):
    extra = [{"host": "t4-01", "area": "cyborg", "code": "arq_orphaned", "severity": "warning",
              "message": "ARQ 1 is bound to a deleted instance", "fix": "delete the ARQ"}]  # fmt: skip
    result = run(healthy, extra_findings=extra)
    assert [f["code"] for f in serious(result)] == ["arq_orphaned"]
    with pytest.raises(FindingError, match="area"):
        run(healthy, extra_findings=[dict(extra[0], area="gpu")])


def test_fail_on_and_tables():
    items = [
        findings_mod.finding("h1", "not_bound_vfio", "m", "f"),
        findings_mod.finding(None, "adopt_unexpressed", "m", "f"),
    ]
    assert not findings_mod.reached(items, "error")
    assert findings_mod.reached(items, "warning")
    assert not findings_mod.reached(items, "never")
    with pytest.raises(FindingError):
        findings_mod.reached(items, "fatal")
    tables = findings_mod.tables(items)
    assert set(tables) == {"host", "nova"}
    assert tables["host"][1].startswith("warning | h1 | not_bound_vfio")


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (("not a mapping", {}, {"resource_providers": []}), "hosts"),
        (({}, {"h": "x"}, {"resource_providers": []}), "deployed"),
        (({}, {}, {"resource_providers": "x"}), "resource_providers"),
    ],
)
def test_bad_input_is_named(args, word):
    with pytest.raises((AuditInputError, ValueError), match=word):
        audit_cloud(*args)


# -- the filters -----------------------------------------------------------------------------------
def test_filters_wrap_the_domain_and_name_bad_arguments(healthy):
    from ansible.errors import AnsibleFilterError

    from ansible_collections.accel.openstack.plugins.filter.audit import FilterModule

    filters = FilterModule().filters()
    adopted = filters["device_policy_from_nova"](healthy["deployed"], facts=healthy["hosts"])
    assert {e["name"] for e in adopted["accel_device_policy"]} >= {"t4"}
    assert adopted["accel_nova_report_in_placement"] is True
    result = filters["audit_cloud"](healthy["hosts"], healthy["deployed"], healthy["fleet"], flavors=healthy["flavors"])
    assert not filters["audit_reached"](result["findings"], "warning")
    assert filters["audit_tables"](result["findings"]).keys() <= {"nova"}
    with pytest.raises(AnsibleFilterError, match="fleet"):
        filters["audit_cloud"](healthy["hosts"], healthy["deployed"], "not a snapshot")
    with pytest.raises(AnsibleFilterError, match="deployed"):
        filters["device_policy_from_nova"](["not", "a", "mapping"])
    with pytest.raises(AnsibleFilterError, match="surprise"):
        filters["audit_cloud"](healthy["hosts"], healthy["deployed"], healthy["fleet"], surprise=1)


def test_adoption_lists_hosts_that_have_the_devices_but_not_the_spec(healthy):
    from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import adopt

    configs = {"t4-01": healthy["deployed"]["t4-01"]["compute"], "t4-02": {}}
    facts = {"t4-01": healthy["hosts"]["t4-01"], "t4-02": healthy["hosts"]["t4-01"]}
    adopted = adopt(configs, facts)
    assert any("not on t4-02" in u["reason"] for u in adopted["unexpressed"]), adopted["unexpressed"]


def test_adoption_skips_the_kolla_placeholder_and_lists_each_note_once(healthy):
    from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import adopt

    placeholder = {"pci": {"device_spec": ['{"vendor_id": "ffff", "product_id": "ffff"}']}}
    assert adopt({"mig-01": placeholder}, {"mig-01": healthy["hosts"]["mig-01"]}) == {
        "accel_device_policy": [],
        "accel_nova_report_in_placement": False,
        "unexpressed": [],
    }
    twice = {"pci": {"device_spec": ['{"devname": "eth0"}', '[{"devname": "eth0"}]']}}
    assert len(adopt({"h": twice}, {"h": {}})["unexpressed"]) == 1


def test_without_pci_in_placement_the_pci_filter_reads_the_hosts_pools(healthy, tmp_path):
    cloud = copy.deepcopy(healthy)
    for config in cloud["deployed"][world.CONTROL].values():
        config.get("filter_scheduler", {}).pop("pci_in_placement", None)
    assert serious(run(cloud, use_policy=False)) == []
    flavor_unplaceable(cloud, tmp_path)
    assert [f["code"] for f in serious(run(cloud, use_policy=False))] == ["flavor_unplaceable"]


def test_the_super_conductor_counts_for_pci_in_placement(healthy):
    cloud = copy.deepcopy(healthy)
    control = cloud["deployed"][world.CONTROL]
    control["super-conductor"] = {"pci": copy.deepcopy(control["conductor"]["pci"])}
    (item,) = serious(run(cloud))
    assert item["code"] == "pci_in_placement_partial" and "nova-super-conductor" in item["message"]


def test_every_code_has_its_row_in_the_docs_table_with_its_area():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[4] / "docs" / "audit.md").read_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`") and cells[0].endswith("`"):
            rows[cells[0].strip("`")] = cells[1]
    assert {code: rows.get(code) for code in CODES} == {code: area for code, (area, _s) in CODES.items()}


def test_tables_show_every_message_and_fix_whole():
    long = "x " * 400
    (line,) = findings_mod.tables([findings_mod.finding("h1", "not_bound_vfio", long, long)])["host"][1:]
    assert line.count("x") == 800 and "..." not in line


def test_a_consumer_id_that_is_no_uuid_never_reaches_a_command(healthy):
    cloud = copy.deepcopy(healthy)
    t4 = _provider(cloud, "t4-01_0000:B0:00.0")
    odd = "x; openstack project delete admin"
    cloud["fleet"]["allocations"] = {odd: {"allocations": {t4["uuid"]: {"resources": {"CUSTOM_NVIDIA_T4": 1}}}}}
    (item,) = serious(run(cloud))
    assert item["code"] == "allocation_leaked" and item["host"] == "t4-01"
    assert '"x; openstack project delete admin"' in item["message"]
    assert "project delete" not in item["fix"] and "allocation delete" not in item["fix"]
    with pytest.raises(AuditInputError, match="fleet.allocations"):
        run(dict(cloud, fleet=dict(cloud["fleet"], allocations={"c": "not a mapping"})))
    with pytest.raises(AuditInputError, match="instances must be a list of strings"):
        run(cloud, instances="all of them")


def test_a_gone_compute_node_in_use_is_an_error_even_when_its_consumers_are_not_read(healthy):
    cloud = copy.deepcopy(healthy)
    gone = copy.deepcopy(_provider(cloud, "mig-01"))
    gone.update(uuid="0e0e0e0e-0000-4000-8000-0000000000aa", name="mig-02", root_provider_uuid=None)
    gone["usages"] = {"VCPU": 8}
    cloud["fleet"]["resource_providers"].append(gone)
    (item,) = serious(run(cloud))
    assert (item["code"], item["severity"], item["host"]) == ("compute_node_gone", "error", None)
    assert "some consumer(s) still hold VCPU 8 there (accel_audit_allocations: true names them)" in item["message"]
    assert "openstack resource provider show 0e0e0e0e-0000-4000-8000-0000000000aa --allocations" in item["fix"]
    # named in the inventory (a host whose play did not run), it is no finding
    assert serious(run(cloud, inventory_hosts=["mig-02"])) == []


def test_devices_of_one_model_on_the_wrong_driver_are_one_finding_naming_each(healthy, tmp_path):
    cloud = copy.deepcopy(healthy)
    prof = world.profile("configured-t4")
    t4 = next(d for d in prof["devices"] if d["address"] == "0000:b0:00.0")
    t4["driver"] = "nvidia"
    prof["devices"].append(dict(t4, address="0000:b0:00.1", iommu_group=82))
    _host(cloud, tmp_path, "t4-01", prof)
    (item,) = [f for f in run(cloud)["findings"] if f["code"] == "not_bound_vfio"]
    assert item["host"] == "t4-01"
    assert item["message"].startswith("2 devices (") and "0000:b0:00.0, 0000:b0:00.1) are handed out" in item["message"]
    assert "bound to nvidia" in item["message"] and item["fix"].startswith("bind them to vfio-pci")
