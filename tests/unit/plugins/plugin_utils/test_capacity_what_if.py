"""capacity_plan's what-if: hypothetical hosts from the device catalog, the MIG tables and the simulated
hardware shapes, predicted by nova_fleet, added to the fleet or alone; and every bad option."""

import importlib.util
from pathlib import Path

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import CapacityOptionError, capacity_plan
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_what_if import what_if_hosts
from tests.unit.plugins.plugin_utils.test_capacity import sized_host
from tests.unit.plugins.plugin_utils.test_flavor_fit import flavor

H200_MIG = {"name": "h200-mig", "model": "H200", "count": 2, "mode": "mig", "layout": "3g.71gb"}
L40S_4Q = {"name": "l40s-4q", "model": "L40S", "count": 3, "mode": "vgpu", "type": "NVIDIA L40S-4Q", "gpus": 2}


def fleet():
    return {"resource_providers": [sized_host("h1", 65536), sized_host("h2", 65536)]}


def vgpu_flavor(name):
    return flavor(name, vcpus=8, ram=16384, disk=0, **{"resources:VGPU": "1"})


def gpu_counts(records):
    roots = [r for r in records if r["parent_provider_uuid"] is None]
    devices = {}
    for record in records:
        for rc, inventory in record["inventories"].items():
            if rc not in ("VCPU", "MEMORY_MB", "DISK_GB"):
                devices[rc] = devices.get(rc, 0) + inventory["total"]
    return len(roots), devices


def test_each_mode_gives_the_devices_its_tables_say():
    # H200: 3g.71gb twice per GPU (mig_profiles), 8 GPUs by default, one MIG-backed vGPU per GPU instance.
    assert gpu_counts(what_if_hosts(H200_MIG, True, set())[1]) == (2, {"VGPU": 2 * 8 * 2})
    # L40S: 48 GB / 4 GB = 12 vGPUs of the 4Q type per GPU.
    assert gpu_counts(what_if_hosts(L40S_4Q, True, set())[1]) == (3, {"VGPU": 3 * 2 * 12})
    passthrough = {"name": "h200", "model": "H200", "count": 1, "mode": "passthrough"}
    assert gpu_counts(what_if_hosts(passthrough, True, set())[1]) == (1, {"CUSTOM_NVIDIA_H200": 8})
    sriov = {"name": "l40s-vf", "model": "L40S", "count": 1, "mode": "sriov", "gpus": 1, "vfs": 4}
    assert gpu_counts(what_if_hosts(sriov, True, set())[1]) == (1, {"CUSTOM_NVIDIA_L40S_VF": 4})


def test_the_host_shape_comes_from_the_simulated_hardware_profile():
    (root, *_children) = what_if_hosts({**L40S_4Q, "count": 1, "shape": "vgpu-l40s"}, True, set())[1]
    assert root["name"] == "l40s-4q-0001"
    cells = root["numa_cells"]
    assert len(cells) == 2 and all(cell["vcpus"] and cell["memory_mb"] for cell in cells)
    assert root["inventories"]["VCPU"]["total"] == sum(cell["vcpus"] for cell in cells)


def test_what_if_adds_to_the_fleet_what_the_new_hosts_take():
    demand = [{"flavor": vgpu_flavor("v"), "count": 50}, {"flavor": flavor("small"), "count": 4}]
    result = capacity_plan(demand, fleet(), pci_in_placement=True, what_if=[L40S_4Q, {**H200_MIG, "alone": True}])
    assert result["placed"] == {"v": 0, "small": 4}
    l40s, h200 = result["what_if"]
    assert l40s["name"] == "l40s-4q" and l40s["hosts_added"] == 3 and l40s["alone"] is False
    assert l40s["placed"] == {"v": 50, "small": 4} and l40s["added"] == {"v": 50, "small": 0}
    assert l40s["on_new_hosts"]["v"] == 50
    assert l40s["stranded"] == {}  # 72 vGPUs, 50 used, the rest still usable
    # The H200 hosts alone: 32 MIG-backed vGPUs; the small flavor lands on them too.
    assert h200["placed"] == {"v": 32, "small": 4} and h200["unplaced"] == {"v": 18, "small": 0}
    assert h200["added"] == {"v": 32, "small": 0} and h200["reasons"]["v"]["code"] == "in_use"


def test_devices_the_demand_cannot_use_are_stranded_on_the_new_hosts():
    # RAM-hungry vGPU instances: an L40S host's 2,063,000 MB hold 15 of them, its 24 vGPUs are not all used.
    demand = [{"flavor": flavor("big", vcpus=8, ram=131072, disk=0, **{"resources:VGPU": "1"}), "count": 100}]
    result = capacity_plan(demand, fleet(), pci_in_placement=True, what_if=[{**L40S_4Q, "count": 1}])
    (answer,) = result["what_if"]
    assert answer["placed"] == {"big": 15}
    assert answer["stranded"] == {"VGPU": 24 - 15}


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ({**H200_MIG, "model": "H900"}, "what_if h200-mig: model 'H900' is not in the device catalog; known models: "),
        (
            {**H200_MIG, "layout": "5g.99gb"},
            "layout '5g.99gb' is not a MIG profile of the H200-141GB; give one of 1g.18gb",
        ),
        ({**H200_MIG, "model": "L40S"}, "the L40S has no MIG; models with MIG: "),
        (
            {**L40S_4Q, "type": "NVIDIA L40S-5Q"},
            "type 'NVIDIA L40S-5Q' is not a time-sliced vGPU type of the L40S (48 GB)",
        ),
        ({**L40S_4Q, "mode": "timeslice"}, "mode must be one of passthrough, vgpu, mig, sriov, got 'timeslice'"),
        ({**L40S_4Q, "count": 0}, "count must be a whole number from 1 to 10000, got 0"),
        ({**L40S_4Q, "gpus": 17}, "gpus must be a whole number from 1 to 16, got 17"),
        ({**L40S_4Q, "shape": "nope"}, "shape 'nope' is not a simulated hardware profile; known shapes: amd-epyc"),
        ({**L40S_4Q, "colour": "red"}, "unknown key(s) colour"),
        ({**L40S_4Q, "name": "bad name"}, "what_if: name 'bad name' must be 1 to 63 letters"),
        ({**H200_MIG, "model": "H200", "mode": "sriov"}, "the H200 has no SR-IOV VFs; models with VFs: "),
    ],
)
def test_bad_what_if_options_are_refused_naming_them(option, words):
    with pytest.raises(CapacityOptionError) as exc:
        capacity_plan([{"flavor": flavor("m"), "count": 1}], fleet(), what_if=[option])
    assert words in str(exc.value)


def test_a_host_name_clash_and_a_name_given_twice_are_refused():
    clash = {"resource_providers": [sized_host("x-0001", 65536)]}
    with pytest.raises(CapacityOptionError) as exc:
        capacity_plan([], clash, what_if=[{**L40S_4Q, "name": "x"}])
    assert str(exc.value) == "what_if x: host name x-0001 is already in the fleet; choose another name"
    with pytest.raises(CapacityOptionError, match="what_if l40s-4q: the name is given twice"):
        capacity_plan([], fleet(), what_if=[L40S_4Q, L40S_4Q])
    with pytest.raises(CapacityOptionError, match="what_if must be a list"):
        capacity_plan([], fleet(), what_if=L40S_4Q)
    with pytest.raises(CapacityOptionError, match="what_if gives 21 options, more than the 20 allowed"):
        capacity_plan([], fleet(), what_if=[{**L40S_4Q, "name": f"o{i}"} for i in range(21)])


def test_the_docs_example_is_the_output_of_a_real_run():
    root = Path(__file__).resolve().parents[4]
    spec = importlib.util.spec_from_file_location(
        "capacity_what_if_example", root / "docs/examples/capacity_what_if.py"
    )
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    output = example.main()
    assert "what if h200-mig (20 host(s) added to the fleet)" in output
    assert "what if l40s-4q (40 host(s) added to the fleet)" in output
    assert f"```text\n{output}\n```" in (root / "docs/capacity.md").read_text()
