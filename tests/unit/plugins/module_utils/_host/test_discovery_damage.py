"""Damaged hosts: discovery reports what it could not read, keeps the rest, never raises."""

import os
import shutil

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from tests.support.fake_sysfs import build_root

GPU = "0000:18:00.0"


@pytest.fixture
def root(tmp_path):
    return build_root("gpu-shared-group", str(tmp_path / "root"))


def device_dir(root, address=GPU):
    return os.path.realpath(os.path.join(root, "sys/bus/pci/devices", address))


def by_address(facts):
    return {d["address"]: d for d in facts["accel_pci_devices"]}


def test_broken_device_link_is_a_warning_and_the_rest_is_reported(root):
    shutil.rmtree(device_dir(root))  # the device vanished between listing and reading
    facts, warnings = discover(root)
    assert GPU not in by_address(facts)
    assert "0000:03:00.0" in by_address(facts)
    assert any(f"/sys/bus/pci/devices/{GPU}" in w and "vanished" in w for w in warnings)


def test_truncated_attribute_is_a_warning_naming_the_path(root):
    open(os.path.join(device_dir(root), "vendor"), "w").close()
    facts, warnings = discover(root, ["all"])
    assert by_address(facts)[GPU]["vendor_id"] is None
    assert any(w.endswith("/vendor: unexpected content ''") for w in warnings)


def test_garbage_attribute_is_a_warning(root):
    with open(os.path.join(device_dir(root), "numa_node"), "w") as handle:
        handle.write("banana\n")
    facts, warnings = discover(root)
    assert by_address(facts)[GPU]["numa_node"] is None
    assert any("numa_node: not an integer" in w for w in warnings)


def test_unreadable_attribute_is_a_warning(root):
    path = os.path.join(device_dir(root), "class")
    os.unlink(path)
    os.mkdir(path)  # reading a directory fails even for root
    facts, warnings = discover(root, ["all"])
    assert by_address(facts)[GPU]["class_code"] is None
    assert any("/class: cannot read" in w for w in warnings)


def test_binary_garbage_is_a_warning(root):
    with open(os.path.join(device_dir(root), "device"), "wb") as handle:
        handle.write(b"\xff\xfe\x00")
    facts, warnings = discover(root, ["all"])
    assert by_address(facts)[GPU]["product_id"] is None
    assert any("/device: not text" in w for w in warnings)


def test_missing_sysfs_is_reported(tmp_path):
    facts, warnings = discover(str(tmp_path))
    assert facts["accel_pci_devices"] == []
    assert any("/sys/bus/pci/devices: missing" in w for w in warnings)


def test_broken_recorded_nvidia_smi_output_is_a_warning(tmp_path):
    root = build_root("mig-a100", str(tmp_path / "root"))
    with open(os.path.join(root, "var/lib/accel-openstack/nvidia-smi/q-x.xml"), "w") as handle:
        handle.write("<nvidia_smi_log><gpu")
    facts, warnings = discover(root)
    assert all(d["mig"] is None for d in facts["accel_pci_devices"])
    assert any("not valid XML" in w for w in warnings)


def test_symlink_loop_is_a_warning(root):
    link = os.path.join(root, "sys/bus/pci/devices", "0000:99:00.0")
    os.symlink("0000:99:00.0", link)
    facts, warnings = discover(root)
    assert GPU in by_address(facts)
    assert any("0000:99:00.0" in w for w in warnings)


def _write(root, path, text):
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w") as handle:
        handle.write(text)


def test_a_huge_page_pool_that_is_not_numbers_is_left_out_with_a_warning(root):
    pools = "sys/devices/system/node/node0/hugepages"
    _write(root, f"{pools}/hugepages-2048kB/nr_hugepages", "1024\n")
    _write(root, f"{pools}/hugepages-2048kB/free_hugepages", "1000\n")
    _write(root, f"{pools}/hugepages-1048576kB/nr_hugepages", "lots\n")
    _write(root, f"{pools}/hugepages-1048576kB/free_hugepages", "1\n")
    _write(root, f"{pools}/hugepages-9{'9' * 40}kB/nr_hugepages", "1\n")  # a size of 41 digits: not a pool
    facts, warnings = discover(root)
    assert facts["accel_numa_nodes"][0]["hugepages"] == {"2048": {"total": 1024, "free": 1000}}
    assert any(
        w.endswith("hugepages-1048576kB: nr_hugepages or free_hugepages is not a whole number; pool skipped")
        for w in warnings
    )


def test_thread_siblings_that_do_not_form_cores_leave_the_cores_unknown(root):
    cpus = discover(root)[0]["accel_numa_nodes"][0]["cpus"]
    for cpu in cpus:  # every CPU names itself and the next one: overlapping, not cores
        _write(root, f"sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list", f"{cpu},{cpu + 1}\n")
    facts, warnings = discover(root)
    assert facts["accel_numa_nodes"][0]["siblings"] == []
    assert any("do not form cores; cores left unknown" in w for w in warnings)
    for cpu in cpus:  # pairs: 0-1, 2-3, ...
        first = cpu - cpu % 2
        _write(root, f"sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list", f"{first}-{first + 1}\n")
    siblings = discover(root)[0]["accel_numa_nodes"][0]["siblings"]
    assert siblings[0] == [cpus[0], cpus[0] + 1] and sum(map(len, siblings)) == len(cpus)
