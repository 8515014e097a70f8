"""nvidia-smi parsing: bus ids, MIG modes and GPU instances; the live path selects GPUs by bus id."""

import os

from ansible_collections.accel.openstack.plugins.module_utils._host.nvidia_smi import (
    bus_id_to_address,
    parse_lgi,
    parse_query_xml,
    read_mig_state,
)
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from tests.support.fake_sysfs import NVIDIA_SMI_DIR, build_root


def recorded(root, name):
    with open(os.path.join(root, NVIDIA_SMI_DIR.lstrip("/"), name)) as handle:
        return handle.read()


def test_bus_ids_become_lowercase_addresses():
    assert bus_id_to_address("00000000:3B:00.0") == "0000:3b:00.0"
    assert bus_id_to_address("00000001:C1:00.0") == "0001:c1:00.0"
    assert bus_id_to_address("0000:3b:00.0") == "0000:3b:00.0"
    assert bus_id_to_address("GPU-1234") is None


def test_lgi_rows_are_parsed_with_profile_and_placement():
    text = (
        "| GPU   Name             Profile  Instance   Placement  |\n"
        "|=======================================================|\n"
        "|   0  MIG 1g.10gb+me       20        13          6:1     |\n"
        "|   0  MIG 3g.40gb          9         2          0:4     |\n"
    )
    assert parse_lgi(text) == [
        {"profile": "3g.40gb", "profile_id": 9, "instance_id": 2, "placement": {"start": 0, "size": 4}},
        {"profile": "1g.10gb+me", "profile_id": 20, "instance_id": 13, "placement": {"start": 6, "size": 1}},
    ]


def test_query_xml_modes(tmp_path):
    root = build_root("mig-a100", str(tmp_path / "root"))
    gpus = parse_query_xml(recorded(root, "q-x.xml"))
    assert gpus["0000:3b:00.0"]["mode_current"] == "enabled"
    assert gpus["0000:d8:00.0"]["mode_pending"] == "enabled"


def test_live_host_runs_nvidia_smi_and_selects_gpus_by_bus_id(tmp_path):
    root = build_root("mig-a100", str(tmp_path / "root"))
    calls = []

    def run(argv):
        calls.append(argv)
        if argv[:2] == ["nvidia-smi", "-q"]:
            return 0, recorded(root, "q-x.xml"), ""
        return 0, recorded(root, "mig-lgi/0000:3b:00.0.txt"), ""

    state = read_mig_state(HostRoot("/"), run)
    assert calls == [["nvidia-smi", "-q", "-x"], ["nvidia-smi", "mig", "-lgi", "-i", "00000000:3B:00.0"]]
    assert [gi["instance_id"] for gi in state["0000:3b:00.0"]["gpu_instances"]] == [3, 9, 10, 2]


def test_live_host_without_nvidia_smi_is_silent():
    host = HostRoot("/")
    assert read_mig_state(host, lambda argv: (127, "", "nvidia-smi not found")) == {}
    assert host.warnings == []


def test_failing_nvidia_smi_is_a_warning():
    host = HostRoot("/")
    assert read_mig_state(host, lambda argv: (9, "", "NVIDIA-SMI has failed")) == {}
    assert any("NVIDIA-SMI has failed" in w for w in host.warnings)
