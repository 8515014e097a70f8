"""Bare-metal flavors: what flavor_fit answers, and the findings for the classic mistakes."""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_validation import validate_flavors

ZERO = {"resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0"}


def node(n: int, rc: str, reserved: int = 0, used: int = 0) -> dict:
    inventory = {
        "total": 1,
        "reserved": reserved,
        "min_unit": 1,
        "max_unit": 1,
        "step_size": 1,
        "allocation_ratio": 1.0,
    }
    uuid = f"00000000-0000-4000-8000-{n:012d}"
    return {"uuid": uuid, "name": f"node-{n}", "parent_provider_uuid": None, "inventories": {rc: inventory},
            "usages": {rc: used}, "traits": ["OWNER_NOVA"], "aggregates": []}  # fmt: skip


FLEET = {"resource_providers": [node(1, "CUSTOM_GPU_H100X8"), node(2, "CUSTOM_GPU_H100X8", reserved=1),
                                node(3, "CUSTOM_GPU_H100X8", used=1), node(4, "CUSTOM_GPU_A100X4")]}  # fmt: skip


def flavor(name: str, **specs) -> dict:
    return {"name": name, "vcpus": 64, "ram": 524288, "disk": 800, "extra_specs": specs}


def test_a_baremetal_flavor_fits_only_free_nodes_of_its_class():
    (report,) = flavor_fit([flavor("bm", **{"resources:CUSTOM_GPU_H100X8": "1"}, **ZERO)], FLEET)
    assert report["outcome"] == "fits" and report["hosts"] == ["node-1"]
    assert report["max_instances"] == {"node-1": 1, "node-2": 0, "node-3": 0, "node-4": 0}


@pytest.mark.parametrize(
    ("name", "specs", "kind", "fix"),
    [
        ("unzeroed", {"resources:CUSTOM_GPU_H100X8": "1"}, "baremetal_not_zeroed",
         "--property resources:VCPU=0 --property resources:MEMORY_MB=0 --property resources:DISK_GB=0"),
        ("two", {"resources:CUSTOM_GPU_H100X8": "2", **ZERO}, "baremetal_units", "resources:CUSTOM_GPU_H100X8=1"),
        ("lower", {"resources:CUSTOM_gpu_h100x8": "1", **ZERO}, "baremetal_class_name",
         "resources:CUSTOM_GPU_H100X8=1"),
        ("bare", {"resources:GPU_H100X8": "1", **ZERO}, "baremetal_class_name", "resources:CUSTOM_GPU_H100X8=1"),
    ],
)  # fmt: skip
def test_classic_mistakes_are_findings_with_the_fix(name, specs, kind, fix):
    result = validate_flavors(FLEET, [flavor(name, **specs)])
    found = [f for f in result["findings"] if f["kind"] == kind]
    assert found and fix in found[0]["fix"] and not result["ok"]


def test_a_right_baremetal_flavor_has_no_finding():
    result = validate_flavors(FLEET, [flavor("bm", **{"resources:CUSTOM_GPU_A100X4": "1"}, **ZERO)])
    assert result["ok"] and result["findings"] == []


def test_vm_classes_are_not_taken_for_baremetal_ones():
    vm = dict(node(9, "CUSTOM_PCI_10DE_2330"), inventories={"CUSTOM_PCI_10DE_2330": {"total": 8, "max_unit": 8}})
    result = validate_flavors({"resource_providers": [vm]}, [flavor("x", **{"resources:CUSTOM_PCI_10DE_2330": "2"})])
    assert not [f for f in result["findings"] if f["kind"].startswith("baremetal")]
