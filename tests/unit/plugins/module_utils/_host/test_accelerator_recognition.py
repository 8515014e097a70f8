"""Accelerators by PCI class: catalog models are named, unknown ones reported (never dropped), the host's
console GPU never offered."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import select
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.host_checks import _unknown_accelerators
from ansible_collections.accel.openstack.plugins.plugin_utils.discovery_report import discovery_report
from tests.support.fake_sysfs import build_root

# A fictional vendor (abcd) with a 3D controller and a processing accelerator the catalog cannot know,
# in the root's own pci.ids; the MI210 is a catalog model; the ASPEED VGA is the BMC's console.
PCI_IDS = """\
1002  Advanced Micro Devices, Inc. [AMD/ATI]
\t740f  Aldebaran/MI200 [Instinct MI210]
1a03  ASPEED Technology, Inc.
\t2000  ASPEED Graphics Family
abcd  Example Accelerators
\t0302  Example 3D Accelerator X1
"""
PROFILE = {
    "name": "recognition",
    "cpu": {"vendor": "amd"},
    "iommu": "amd",
    "kernel_cmdline": "BOOT_IMAGE=/boot/vmlinuz ro",
    "numa_nodes": [{"id": 0, "cpus": "0-7", "memory_mb": 64000}, {"id": 1, "cpus": "8-15", "memory_mb": 64000}],
    "devices": [
        {"address": "0000:02:00.0", "vendor_id": "1a03", "product_id": "2000", "class_code": "030000",
         "numa_node": 0, "iommu_group": 2, "driver": "ast", "boot_vga": True},
        {"address": "0000:41:00.0", "vendor_id": "abcd", "product_id": "0302", "class_code": "030200",
         "numa_node": 1, "iommu_group": 41, "driver": "vfio-pci"},
        {"address": "0000:42:00.0", "vendor_id": "abcd", "product_id": "1200", "class_code": "120000",
         "numa_node": 1, "iommu_group": 42},
        {"address": "0000:c1:00.0", "vendor_id": "1002", "product_id": "740f", "class_code": "038000",
         "numa_node": 1, "iommu_group": 61, "driver": "vfio-pci"},
        {"address": "0000:c2:00.0", "vendor_id": "8086", "product_id": "1521", "class_code": "020000",
         "numa_node": 1, "iommu_group": 62, "driver": "igb"},
    ],
    "files": {"/usr/share/misc/pci.ids": PCI_IDS},
}  # fmt: skip


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return build_root(PROFILE, str(tmp_path_factory.mktemp("recognition") / "root"))


def test_an_unknown_3d_controller_is_reported_with_what_to_do(root):
    facts, warnings = discover(root)
    assert warnings == []
    unknown = {u["address"]: u for u in facts["accel_unknown_accelerators"]}
    assert sorted(unknown) == ["0000:41:00.0", "0000:42:00.0"]
    three_d = unknown["0000:41:00.0"]
    assert {k: three_d[k] for k in three_d if k != "advice"} == {
        "kind": "unknown_accelerator",
        "address": "0000:41:00.0",
        "vendor_id": "abcd",
        "product_id": "0302",
        "class_code": "030200",
        "class_name": "3D controller",
        "vendor_name": "Example Accelerators",
        "product_name": "Example 3D Accelerator X1",
        "driver": "vfio-pci",
        "numa_node": 1,
        "iommu_group": 41,
        "sriov_totalvfs": None,
    }
    assert 'vendor_id "abcd" and product_id "0302"' in three_d["advice"]
    assert "plugins/module_utils/_host/device_catalog.yml" in three_d["advice"]
    accelerator = unknown["0000:42:00.0"]
    assert (accelerator["class_name"], accelerator["product_name"], accelerator["driver"]) == (
        "processing accelerator",
        None,  # the root's pci.ids has no name for abcd:1200
        None,
    )


def test_unknown_accelerators_are_reported_whatever_device_classes_selects(root):
    facts, _unused = discover(root, ["02"])
    assert [d["address"] for d in facts["accel_pci_devices"]] == ["0000:c2:00.0"]
    assert [u["address"] for u in facts["accel_unknown_accelerators"]] == ["0000:41:00.0", "0000:42:00.0"]


def test_the_catalog_names_a_known_model_and_the_console_is_neither_unknown_nor_viable(root):
    facts, _unused = discover(root)
    by_address = {d["address"]: d for d in facts["accel_pci_devices"]}
    mi210 = by_address["0000:c1:00.0"]["accelerator"]
    assert (mi210["vendor"], mi210["model"], mi210["role"], mi210["memory_gb"]) == ("AMD", "Instinct MI210", "pf", 64)
    assert mi210["resource_class"] == "CUSTOM_AMD_MI210" and mi210["partition"] is None
    console = by_address["0000:02:00.0"]
    assert console["is_boot_vga"] is True and console["accelerator"] is None
    assert console["passthrough_viable"] is False
    assert "0000:02:00.0" not in {u["address"] for u in facts["accel_unknown_accelerators"]}


def test_the_discovery_report_names_each_unknown_accelerator_and_the_fix(root):
    facts, _unused = discover(root)
    lines = discovery_report(facts)
    unknown = [line for line in lines if line.startswith("unknown accelerator")]
    assert unknown[0] == (
        "unknown accelerator 0000:41:00.0 Example 3D Accelerator X1 [abcd:0302] (3D controller) | driver=vfio-pci | "
        "numa=1 | iommu_group=41 | " + facts["accel_unknown_accelerators"][0]["advice"]
    )
    assert len(unknown) == 2
    assert any("AMD Instinct MI210, 64 GB HBM2e" in line for line in lines)
    assert any("0000:02:00.0" in line and "BOOT VGA (the host's console: never offered)" in line for line in lines)


def test_the_boot_vga_gpu_is_never_offered_even_when_the_policy_selects_it(root):
    facts, _unused = discover(root)
    policy = parse_policy(
        [
            {"name": "console", "vendor_id": "1a03", "product_id": "2000", "mode": "passthrough"},
            {"name": "x1", "vendor_id": "abcd", "product_id": "0302", "mode": "passthrough"},
        ]
    )
    selection = select("host1", facts, policy, report_in_placement=False)
    offered = {item.entry.name: [d["address"] for d in item.devices] for item in selection.passthrough}
    assert offered == {"x1": ["0000:41:00.0"]}  # an unknown model is usable by its IDs alone
    (warning,) = [w for w in selection.warnings if "boot VGA" in w]
    assert warning.startswith("host1: device policy entry 1 (name: console) selects 0000:02:00.0 (ASPEED Graphics")
    assert "never offered to instances" in warning and "primary display" in warning


def test_the_audit_reports_unknown_accelerators_that_nova_does_not_hand_out(root):
    facts, _unused = discover(root)
    found = _unknown_accelerators("host1", facts, {"0000:41:00.0": {}})
    assert [(f["code"], f["severity"], f["message"]) for f in found] == [
        (
            "unknown_accelerator",
            "info",
            "0000:42:00.0 (abcd:1200, processing accelerator) is an accelerator the device catalog does not know, "
            "and Nova's config does not hand it out",
        )
    ]
    assert 'product_id "1200"' in found[0]["fix"]


def test_the_audit_keeps_hostile_fact_cache_text_out_of_the_fix():
    facts = {
        "accel_unknown_accelerators": [
            {"address": "0000:43:00.0", "vendor_id": "ab; rm -rf /", "product_id": "0302", "class_code": "x"},
            {"address": "not an address", "vendor_id": "abcd", "product_id": "0302"},
            "not a mapping",
        ]
    }
    (found,) = _unknown_accelerators("host1", facts, {})
    assert "rm -rf" not in found["message"] + found["fix"]
    assert "IDs unreadable, accelerator" in found["message"] and "unreadable" in found["fix"]


def test_a_damaged_partition_file_is_a_warning_naming_it_and_the_rest_is_reported(tmp_path):
    from tests.support.fake_sysfs import load_profile

    profile = load_profile("amd-mi300x")
    amdgpu = next(d for d in profile["devices"] if d["address"] == "0000:85:00.0")
    amdgpu["attributes"] = {
        "current_compute_partition": "SPX; rm -rf /",
        "available_compute_partition": "SPX, DPX, " + "X" * 5000,
        "current_memory_partition": "NPS4",
    }
    facts, warnings = discover(build_root(profile, str(tmp_path / "root")))
    assert len(warnings) == 2
    assert warnings[0].endswith("0000:85:00.0/current_compute_partition: unexpected content 'SPX; rm -rf /'; "
                                "a partition mode such as SPX, CPX or NPS4 expected")  # fmt: skip
    assert "available_compute_partition: unexpected content" in warnings[1] and len(warnings[1]) < 300
    partition = next(d for d in facts["accel_pci_devices"] if d["address"] == "0000:85:00.0")["accelerator"][
        "partition"
    ]
    assert (partition["compute"], partition["memory"], partition["source"]) == (None, "NPS4", "driver")
    assert "available_compute" not in partition


@pytest.mark.parametrize("product_id", ["74a1", "74b5"])
def test_the_policy_refuses_sriov_numvfs_on_a_gim_model_before_anything_is_written(product_id):
    from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import policy_errors

    entry = {"name": "mi300x-vf", "vendor_id": "1002", "product_id": product_id, "mode": "passthrough"}
    assert policy_errors([dict(entry, device_type="type-VF")]) == []
    errors = policy_errors([dict(entry, device_type="type-VF", sriov_numvfs=8)])
    assert errors == [
        "device policy entry 1 (name: mi300x-vf): sriov_numvfs cannot make VFs of the AMD Instinct MI300X: its VFs "
        "come from the gim host driver, which enables them itself from its vf_num setting ('options gim "
        "vf_num=<N>' in /etc/modprobe.d/gim.conf) and refuses sriov_numvfs; remove sriov_numvfs from the entry "
        "and set the count there"
    ]
    flex = {"name": "flex170-vf", "vendor_id": "8086", "product_id": "56c0", "mode": "passthrough"}
    assert policy_errors([dict(flex, device_type="type-VF", sriov_numvfs=4)]) == []
