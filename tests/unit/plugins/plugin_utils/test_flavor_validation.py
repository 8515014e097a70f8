"""The flavor catalog validation: ok per min_hosts/expect, findings and the table."""

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import FitOptionError
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_validation import flavor_table, validate_flavors
from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, FLEET, cpu_host, flavor


def run(entries, **options):
    return validate_flavors(FLEET, entries, pci_aliases=ALIASES, pci_in_placement=True, **options)


def test_ok_follows_min_hosts_and_expect():
    result = run(
        [
            dict(flavor("gpu", **{"pci_passthrough:alias": "h100:1"}), min_hosts=2),
            dict(flavor("gpu-many", **{"pci_passthrough:alias": "h100:1"}), min_hosts=3),
            dict(flavor("typo", **{"trait:CUSTOM_GPU_NVLNK": "required"}), expect="unplaceable"),
        ]
    )
    assert [r["ok"] for r in result["flavors"]] == [True, False, True]
    assert result["ok"] is False


def test_general_flavor_on_gpu_host_is_a_finding_with_the_fix():
    result = run([flavor("general")])
    (finding,) = [f for f in result["findings"] if f["kind"] == "general_on_gpu_host"]
    assert finding["hosts"] == ["gpu1", "gpu2"]
    assert "forbidden" in finding["fix"] and "aggregate" in finding["fix"]


def test_a_host_whose_only_pci_pool_is_neutron_s_is_no_accelerator_host():
    """The audit's fleet carries nova-compute's PCI pools, the validate stage's Placement snapshot does not: a
    pool tagged with a physical_network (VFs Neutron hands out) must not make a network host an accelerator
    host, or the two would count different hosts for one general flavor."""
    vfs = {"vendor_id": "15b3", "product_id": "101e", "device_type": "type-VF", "numa_node": 0, "count": 8}
    gpus = {"vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI", "numa_node": 0, "count": 1}
    fleet = {
        "resource_providers": FLEET["resource_providers"][:-2]
        + cpu_host(1, pci_pools=[dict(vfs, physical_network="physnet1")])
        + cpu_host(2, pci_pools=[gpus])
    }
    result = validate_flavors(fleet, [flavor("general")], pci_aliases=ALIASES, pci_in_placement=True)
    (finding,) = [f for f in result["findings"] if f["kind"] == "general_on_gpu_host"]
    assert finding["hosts"] == ["cpu2", "gpu1", "gpu2"]


def test_gpu_flavor_image_needs_q35_and_uefi():
    gpu = flavor("gpu", **{"pci_passthrough:alias": "h100:1"})
    kinds = [f["kind"] for f in run([gpu])["findings"]]
    assert kinds == ["gpu_image_properties"]
    good = dict(gpu, image_properties={"hw_machine_type": "q35", "hw_firmware_type": "uefi"})
    assert run([good])["findings"] == []


def test_dedicated_typo_crash_is_a_finding():
    pinned = flavor("pinned", **{"hw:cpu_policy": "dedicated", "trait:CUSTOM_GPU_NVLNK": "required"})
    assert "scheduler_crash" in [f["kind"] for f in run([pinned])["findings"]]


def test_table_has_one_row_per_flavor_and_the_did_you_mean():
    result = run(
        [flavor("general"), dict(flavor("typo", **{"trait:CUSTOM_GPU_NVLNK": "required"}), expect="unplaceable")]
    )
    lines = flavor_table(result)
    assert "flavor" in lines[0] and "why not / did you mean" in lines[0]
    assert lines[2].split("|")[1].strip() == "general"
    assert "4 host(s)" in lines[2] and "48" in lines[2]
    assert "unknown_trait" in lines[3] and "CUSTOM_GPU_NVLINK?" in lines[3]
    assert any(line.startswith("finding general_on_gpu_host") for line in lines)


def test_bad_entry_names_the_flavor():
    with pytest.raises(FitOptionError, match="flavor gpu: min_hosts"):
        run([dict(flavor("gpu"), min_hosts=-1)])
