"""The device catalog: its data module matches the YAML, its schema holds, and lookups answer by PCI ID."""

import copy

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import device_catalog
from ansible_collections.accel.openstack.plugins.module_utils._host.device_catalog import (
    catalog_problems,
    lookup,
    partition_of,
    vf_creation_refusal,
)
from tests.support import gen_device_catalog
from tests.support.fake_sysfs import PCI_IDS

DOCUMENT = gen_device_catalog.load()


def test_the_data_module_is_the_yaml_as_generated():
    with open(gen_device_catalog.TARGET, encoding="utf-8") as handle:
        assert handle.read() == gen_device_catalog.render(DOCUMENT), "run make catalog after editing the YAML"
    assert device_catalog.CATALOG == DOCUMENT


def test_the_shipped_catalog_breaks_no_rule():
    assert catalog_problems(DOCUMENT) == []


def _with(change):
    document = copy.deepcopy(DOCUMENT)
    change(document)
    return catalog_problems(document)


def _model(document, product_id):
    return next(m for m in document["models"] if m["product_id"] == product_id)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d["models"].append(dict(_model(d, "74a1"))), "1002:74a1 is listed twice"),
        (lambda d: _model(d, "74a1").update(vf_resource_class="CUSTOM_mi300x_vf"), "did you mean 'CUSTOM_MI300X_VF'"),
        (lambda d: _model(d, "74a1").update(sriov="amd_sriov"), "sriov 'amd_sriov' is not one of the mechanisms"),
        (lambda d: _model(d, "74a1").update(sriov="intel_i915_sriov"), "a mechanism of another vendor"),
        (lambda d: _model(d, "74a1").update(vf_product_id=None), "both set or both null"),
        (lambda d: _model(d, "74a1").update(product_id="74A1"), "product_id '74A1' is not 4 lowercase hex digits"),
        (lambda d: _model(d, "74a5").update(vf_product_id="74b5"), "VF ID 1002:74b5 belongs to another model"),
        (
            lambda d: _model(d, "74a1")["vf_modes"].append({"vfs": 4, "compute": "QPX", "memory": "NPS2"}),
            "4 VF(s) names QPX/NPS2, a",
        ),
        (lambda d: _model(d, "56c0")["vf_profiles"].append({"name": "m3", "vfs": 3, "vf_memory_mb": 8192}), "m3 gives"),
        (lambda d: _model(d, "56c0").update(memory=16), "unknown key(s) memory"),
        (lambda d: _model(d, "56c0").pop("short"), "missing short"),
        (lambda d: _model(d, "74a1").update(partition_modes=["CPX"]), "partition_modes must be a mapping"),
        (lambda d: _model(d, "74a1").update(vf_modes=["CPX"]), "each vf_modes entry is a mapping"),
        (lambda d: _model(d, "56c0").update(vf_profiles=[4]), "each vf_profiles entry is a mapping"),
        (lambda d: d["mechanisms"]["amd_mxgpu_gim"].update(vf_creation="sysfs"), "vf_creation must be one of"),
        (lambda d: d["mechanisms"]["amd_mxgpu_gim"].update(parameter="vf_num"), "'<module> <option>'"),
    ],
)
def test_a_planted_defect_is_named(change, words):
    problems = _with(change)
    assert problems and words in problems[0], problems


def test_the_generator_refuses_a_broken_catalog():
    broken = copy.deepcopy(DOCUMENT)
    broken["models"][0]["vendor_id"] = "10DE"
    with pytest.raises(SystemExit, match="not a valid catalog:\nmodel 0 .*vendor_id '10DE' is not 4 lowercase"):
        gen_device_catalog.render(broken)


@pytest.mark.parametrize(
    ("vendor", "product", "is_vf", "model", "role", "resource_class"),
    [
        ("1002", "740f", False, "Instinct MI210", "pf", "CUSTOM_AMD_MI210"),
        ("1002", "74a1", False, "Instinct MI300X", "pf", "CUSTOM_AMD_MI300X"),
        ("1002", "74b5", True, "Instinct MI300X", "vf", "CUSTOM_AMD_MI300X_VF"),
        ("8086", "56c0", False, "Data Center GPU Flex 170", "pf", "CUSTOM_INTEL_FLEX170"),
        ("8086", "56c0", True, "Data Center GPU Flex 170", "vf", "CUSTOM_INTEL_FLEX170_VF"),
        ("8086", "56c1", False, "Data Center GPU Flex 140", "pf", "CUSTOM_INTEL_FLEX140"),
        ("8086", "0bd5", False, "Data Center GPU Max 1550", "pf", "CUSTOM_INTEL_MAX1550"),
        ("8086", "0BDA", False, "Data Center GPU Max 1100", "pf", "CUSTOM_INTEL_MAX1100"),
        ("10de", "26b9", True, "L40S", "vf", "CUSTOM_NVIDIA_L40S_VF"),
    ],
)
def test_lookup_by_ids_and_role(vendor, product, is_vf, model, role, resource_class):
    found = lookup(vendor, product, is_vf=is_vf)
    assert (found["model"], found["role"]) == (model, role)
    assert device_catalog.describe(found)["resource_class"] == resource_class


@pytest.mark.parametrize(
    ("vendor", "product", "is_vf"),
    [("1002", "74b5", False), ("1002", "74a1", True), ("1ed5", "0100", False), (None, None, False)],
)
def test_lookup_of_what_the_catalog_does_not_know_is_none(vendor, product, is_vf):
    assert lookup(vendor, product, is_vf=is_vf) is None


def test_partition_mode_from_the_driver_wins_over_the_vf_count():
    mi300x = lookup("1002", "74a1")
    assert partition_of(mi300x, 8, None, None) == {
        "compute": "CPX",
        "memory": "NPS4",
        "profile": None,
        "vf_memory_mb": 24576,
        "source": "vf_count: 8 VFs",
    }
    assert partition_of(mi300x, 1, None, None)["compute"] == "SPX"
    assert partition_of(mi300x, 0, "DPX", "NPS1")["source"] == "driver"
    assert partition_of(mi300x, 4, None, None) is None  # no published mode for 4 VFs
    flex = lookup("8086", "56c0")
    assert partition_of(flex, 4, None, None)["profile"] == "flex170_m4"
    assert partition_of(flex, 4, None, None)["vf_memory_mb"] == 3840
    assert partition_of(flex, 3, None, None) is None
    assert partition_of(lookup("10de", "1eb8"), 0, None, None) is None


def test_vf_creation_refusal_only_where_the_driver_makes_the_vfs():
    refusal = vf_creation_refusal(lookup("1002", "74a1"), "gim")
    assert "'options gim vf_num=<N>' in /etc/modprobe.d/gim.conf" in refusal
    assert "8 VF(s) = CPX/NPS4" in refusal and "reload gim" in refusal
    assert "this PF is on vfio-pci: bind it to gim" in vf_creation_refusal(lookup("1002", "74a1"), "vfio-pci")
    assert vf_creation_refusal(lookup("8086", "56c0"), "i915") is None
    assert vf_creation_refusal(None, "gim") is None


def test_every_catalog_model_in_the_profiles_pci_ids_carries_that_name_in_its_sources():
    names = {}
    vendor = None
    with open(PCI_IDS) as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            if not line.startswith("\t"):
                vendor = line[:4]
            else:
                names[(vendor, line[1:5])] = line[5:].strip()
    checked = 0
    for model in DOCUMENT["models"]:
        for product in {model["product_id"], model.get("vf_product_id")} - {None}:
            name = names.get((model["vendor_id"], product))
            if name:
                checked += 1
                assert any(f"{product} {name}" in source for source in model["sources"]), (product, name)
    assert checked >= 12


@pytest.mark.parametrize(
    ("class_code", "accelerator"),
    [("030000", True), ("030200", True), ("038000", True), ("120000", True), ("020000", False), ("0403", False)],
)
def test_accelerator_classes(class_code, accelerator):
    assert device_catalog.is_accelerator_class(class_code) is accelerator
