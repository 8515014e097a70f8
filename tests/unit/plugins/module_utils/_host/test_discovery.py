"""Discovery on every hardware profile: the facts match what the profile declares."""

import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import (
    DiscoveryError,
    discover,
    normalize_device_classes,
)
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRootError
from tests.support.fake_sysfs import build_root, initially_creatable, is_bridge, load_profile, profile_names

PROFILES = profile_names()


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    base = tmp_path_factory.mktemp("roots")
    return {name: build_root(name, str(base / name)) for name in PROFILES}


def declared_default_addresses(profile):
    chosen = {d["address"] for d in profile["devices"] if d["class_code"].startswith(("03", "12")) or d.get("sriov")}
    chosen |= {d["address"] for d in profile["devices"] if d.get("physfn") in chosen}
    return chosen


@pytest.mark.parametrize("name", PROFILES)
def test_default_discovery_reports_accelerators_sriov_devices_and_their_vfs(name, roots):
    profile = load_profile(name)
    facts, warnings = discover(roots[name])
    assert warnings == []
    reported = [d["address"] for d in facts["accel_pci_devices"]]
    assert reported == sorted(reported)
    assert set(reported) == declared_default_addresses(profile)


@pytest.mark.parametrize("name", PROFILES)
def test_every_declared_attribute_is_reported_as_declared(name, roots):
    profile = load_profile(name)
    facts, _unused = discover(roots[name], ["all"])
    by_address = {d["address"]: d for d in facts["accel_pci_devices"]}
    assert set(by_address) == {d["address"] for d in profile["devices"]}
    iommu_on = profile.get("iommu", "none") != "none"
    for declared in profile["devices"]:
        fact = by_address[declared["address"]]
        assert fact["vendor_id"] == declared["vendor_id"]
        assert fact["product_id"] == declared["product_id"]
        assert fact["class_code"] == declared["class_code"]
        assert fact["subsystem_vendor_id"] == declared.get("subsystem_vendor_id", "0000")
        assert fact["subsystem_product_id"] == declared.get("subsystem_product_id", "0000")
        assert fact["driver"] == declared.get("driver")
        numa = declared.get("numa_node", -1)
        assert fact["numa_node"] == (None if numa < 0 else numa)
        assert fact["iommu_group"] == (declared.get("iommu_group") if iommu_on else None)
        assert fact["physfn"] == declared.get("physfn")
        assert fact["is_boot_vga"] is bool(declared.get("boot_vga"))
        sriov = declared.get("sriov")
        assert fact["sriov_totalvfs"] == (sriov["totalvfs"] if sriov else None)
        assert fact["sriov_numvfs"] == (sriov["numvfs"] if sriov else None)
        assert fact["sriov_vfs"] == declared.get("_vfs", [])
        mdev = [(t["type"], t["name"], t["available_instances"]) for t in declared.get("mdev_types", [])]
        mdev += [(str(t["id"]), t["name"], 1) for t in initially_creatable(declared)]
        assert [(t["type"], t["name"], t["available_instances"]) for t in fact["mdev_types"]] == mdev
        if profile.get("pci_ids", True):
            assert fact["vendor_name"] and fact["product_name"]
        else:
            assert fact["vendor_name"] is None and fact["product_name"] is None


@pytest.mark.parametrize("name", PROFILES)
def test_iommu_groups_list_every_member_of_groups_holding_reported_devices(name, roots):
    profile = load_profile(name)
    facts, _unused = discover(roots[name])
    if profile.get("iommu", "none") == "none":
        assert facts["accel_iommu_enabled"] is False
        assert facts["accel_iommu_groups"] == {}
        return
    assert facts["accel_iommu_enabled"] is True
    declared_groups = {}
    for d in profile["devices"]:
        if d.get("iommu_group") is not None:
            declared_groups.setdefault(str(d["iommu_group"]), []).append(d["address"])
    expected = {str(d["iommu_group"]) for d in facts["accel_pci_devices"] if d["iommu_group"] is not None}
    assert set(facts["accel_iommu_groups"]) == expected
    for group, members in facts["accel_iommu_groups"].items():
        assert members == sorted(declared_groups[group])


@pytest.mark.parametrize("name", PROFILES)
def test_numa_cpu_vendor_and_cmdline(name, roots):
    profile = load_profile(name)
    facts, _unused = discover(roots[name])
    assert [n["id"] for n in facts["accel_numa_nodes"]] == [n["id"] for n in profile["numa_nodes"]]
    for node, declared in zip(facts["accel_numa_nodes"], profile["numa_nodes"], strict=True):
        assert node["memory_mb"] == declared["memory_mb"]
        first = int(str(declared["cpus"]).split(",", maxsplit=1)[0].split("-", maxsplit=1)[0])
        assert node["cpus"][0] == first
    assert facts["accel_cpu_vendor"] == profile["cpu"]["vendor"]
    assert facts["accel_kernel_cmdline"] == profile["kernel_cmdline"]


def test_gpu_sharing_its_group_with_audio_and_usb_is_viable_with_all_functions(roots):
    facts, _unused = discover(roots["gpu-shared-group"])
    gpu = next(d for d in facts["accel_pci_devices"] if d["address"] == "0000:18:00.0")
    assert [p["address"] for p in gpu["iommu_group_peers"]] == [
        "0000:18:00.1",
        "0000:18:00.2",
        "0000:18:00.3",
    ]
    assert [p["driver"] for p in gpu["iommu_group_peers"]] == ["snd_hda_intel", "xhci_hcd", "nvidia-gpu"]
    assert gpu["passthrough_viable"] is True
    assert "0000:18:00.1" in gpu["passthrough_note"]
    boot = next(d for d in facts["accel_pci_devices"] if d["is_boot_vga"])
    assert boot["address"] == "0000:03:00.0"
    assert boot["passthrough_viable"] is False
    assert "boot VGA" in boot["passthrough_note"]


def test_group_shared_with_another_card_is_not_viable(tmp_path):
    profile = load_profile("gpu-shared-group")
    for device in profile["devices"]:
        if device["address"] == "0000:66:00.0":  # move the NIC into the GPU's group
            device["iommu_group"] = 17
    facts, _unused = discover(build_root(profile, str(tmp_path)))
    gpu = next(d for d in facts["accel_pci_devices"] if d["address"] == "0000:18:00.0")
    assert gpu["passthrough_viable"] is False
    assert "0000:66:00.0 (igb)" in gpu["passthrough_note"]


def test_iommu_off_is_not_viable_and_says_how_to_fix(roots):
    facts, _unused = discover(roots["iommu-off"])
    (gpu,) = facts["accel_pci_devices"]
    assert gpu["passthrough_viable"] is False
    assert "intel_iommu=on" in gpu["passthrough_note"]


def test_mig_state_is_matched_by_bus_id(roots):
    facts, _unused = discover(roots["mig-a100"])
    by_address = {d["address"]: d for d in facts["accel_pci_devices"]}
    enabled = by_address["0000:3b:00.0"]["mig"]
    assert enabled["mode_current"] == "enabled"
    assert [(gi["profile"], gi["placement"]["start"], gi["placement"]["size"]) for gi in enabled["gpu_instances"]] == [
        ("2g.10gb", 0, 2),
        ("1g.5gb", 2, 1),
        ("1g.5gb", 3, 1),
        ("3g.20gb", 4, 4),
    ]
    pending = by_address["0000:d8:00.0"]["mig"]
    assert (pending["mode_current"], pending["mode_pending"], pending["gpu_instances"]) == (
        "disabled",
        "enabled",
        [],
    )


def test_gpus_without_mig_support_have_no_mig_state(roots):
    facts, _unused = discover(roots["vgpu-l40s"])
    assert all(d["mig"] is None for d in facts["accel_pci_devices"])


def test_vgpu17_types_on_vfs_name_their_mechanism(roots):
    facts, _unused = discover(roots["vgpu-l40s"])
    vf = next(d for d in facts["accel_pci_devices"] if d["physfn"])
    assert {t["mechanism"] for t in vf["mdev_types"]} == {"nvidia_vgpu_vf"}
    assert vf["current_vgpu_type"] == "0"
    facts, _unused = discover(roots["vgpu-a16"])
    vf = next(d for d in facts["accel_pci_devices"] if d["physfn"])
    assert {t["mechanism"] for t in vf["mdev_types"]} == {"mdev"}
    assert os.path.islink(os.path.join(roots["vgpu-a16"], "sys/class/mdev_bus", vf["address"]))


def test_non_zero_pci_domain(roots):
    facts, _unused = discover(roots["amd-epyc"])
    assert [d["address"] for d in facts["accel_pci_devices"]] == ["0001:41:00.0", "0001:c1:00.0"]


@pytest.mark.parametrize(
    "classes, expected",
    [(None, ("03", "12")), (["all"], None), (["0302", "0x12"], ("0302", "12")), (["ALL"], None)],
)
def test_device_classes_are_normalised(classes, expected):
    assert normalize_device_classes(classes) == expected


@pytest.mark.parametrize("classes", [["3"], ["zz"], ["03", "all"], ["0302000"]])
def test_bad_device_classes_name_the_value_and_the_fix(classes):
    with pytest.raises(DiscoveryError, match="device_classes"):
        normalize_device_classes(classes)


def test_missing_root_is_a_clear_error(tmp_path):
    with pytest.raises(HostRootError, match="does not exist"):
        discover(str(tmp_path / "nope"))
    (tmp_path / "file").write_text("")
    with pytest.raises(HostRootError, match="not a directory"):
        discover(str(tmp_path / "file"))


def test_bridges_are_known_as_bridges():
    profile = load_profile("hgx-h100")
    assert any(is_bridge(d) for d in profile["devices"])


def test_devices_in_a_vmd_domain_are_discovered(tmp_path):
    """Intel VMD puts the devices behind it in domains from 10000: five hex digits in sysfs."""
    profile = load_profile("amd-epyc")
    for device in profile["devices"]:
        for key in ("address", "parent"):
            if device.get(key, "").startswith("0001:"):
                device[key] = "10000:" + device[key][len("0001:") :]
    facts, warnings = discover(build_root(profile, str(tmp_path / "vmd")))
    assert warnings == []
    assert {d["address"] for d in facts["accel_pci_devices"]} == {"10000:41:00.0", "10000:c1:00.0"}


def test_vfs_report_every_vgpu_type_the_gpu_supports(tmp_path):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    facts, _warnings = discover(root, ["all"])
    vfs = [d for d in facts["accel_pci_devices"] if d["physfn"] and d["vendor_id"] == "10de"]
    assert vfs and all(d["supported_vgpu_types"] for d in vfs)
    for vf in vfs:
        supported = {t["type"] for t in vf["supported_vgpu_types"]}
        creatable = {t["type"] for t in vf["mdev_types"]}
        assert creatable <= supported and "1155" in supported


def test_a_device_on_a_host_whose_iommu_is_off_says_how_to_turn_it_on(roots):
    # iommu-off: an Intel host whose kernel has no intel_iommu=on; the note is the Nova config stage's advice.
    facts, _unused = discover(roots["iommu-off"])
    (t4,) = [d for d in facts["accel_pci_devices"] if d["vendor_id"] == "10de"]
    assert t4["passthrough_viable"] is False
    note = t4["passthrough_note"]
    assert note.startswith("the IOMMU is off on this host; to turn it on, ")
    assert "enable VT-d in the firmware" in note and "intel_iommu=on iommu=pt" in note, note
    assert "amd_iommu" not in note
