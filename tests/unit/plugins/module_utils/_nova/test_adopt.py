"""Adoption, case by case (Nova's parsers judge the whole round trip in tests/integration)."""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import adopt, nova_resource_class, nova_traits
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy
from tests.support.fake_sysfs import build_root


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    return {
        name: discover(build_root(profile, str(tmp_path_factory.mktemp(name))))[0]
        for name, profile in (("t4", "configured-t4"), ("a16", "vgpu-a16"), ("nic", "sriov-nic"))
    }


def test_names_as_nova_derives_them():
    assert nova_traits("gold,HW_GPU_API_VULKAN, x") == ["CUSTOM_GOLD", "CUSTOM__X", "HW_GPU_API_VULKAN"]
    assert nova_resource_class("gpu-b") == "CUSTOM_GPU_B"
    assert nova_resource_class("VGPU") == "VGPU"


def test_address_only_spec_takes_its_ids_from_the_facts(facts):
    config = {"pci": {"device_spec": ['{"address": "0000:b0:00.0", "managed": "no", "traits": "fast"}']}}
    alias = ['{"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "numa_policy": "preferred"}']
    adopted = adopt({"t4": config}, {"t4": facts["t4"]}, alias)
    (entry,) = adopted["accel_device_policy"]
    assert entry == {
        "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough", "addresses": ["0000:b0:00.0"],
        "traits": ["CUSTOM_FAST"], "managed": False, "name": "t4", "numa_policy": "preferred",
    }  # fmt: skip
    assert parse_policy(adopted["accel_device_policy"])


def test_neutron_devices_get_no_alias_and_an_alias_without_devices_stays(facts):
    config = {"pci": {"device_spec": ['{"vendor_id": "15b3", "product_id": "101e", "physical_network": "net1", '
                                      '"trusted": "true"}']}}  # fmt: skip
    alias = ['{"name": "k80", "vendor_id": "10de", "product_id": "102d", "device_type": "type-PCI"}']
    adopted = adopt({"nic": config}, {"nic": facts["nic"]}, alias)
    by_name = {e["name"]: e for e in adopted["accel_device_policy"]}
    assert by_name["net1-15b3-101e"]["physical_network"] == "net1"
    assert by_name["net1-15b3-101e"]["trusted"] is True
    assert by_name["k80"]["device_type"] == "type-PCI"
    assert adopted["unexpressed"] == []


def test_vgpu_types_by_address_with_their_class_and_limit(facts):
    config = {
        "devices": {"enabled_mdev_types": ["nvidia-735, nvidia-747"]},
        "mdev_nvidia-735": {"device_addresses": ["0000:84:00.4,0000:84:00.5"], "mdev_class": ["CUSTOM_A"],
                            "max_instances": ["1"]},
        "mdev_nvidia-747": {"device_addresses": ["0000:85:00.4,0000:99:00.0"]},
    }  # fmt: skip
    adopted = adopt({"a16": config}, {"a16": facts["a16"]})
    entries = {e["mdev_type"]: e for e in adopted["accel_device_policy"]}
    assert entries["nvidia-735"]["addresses"] == ["0000:84:00.4", "0000:84:00.5"]
    assert entries["nvidia-735"]["mdev_class"] == "CUSTOM_A" and entries["nvidia-735"]["max_instances"] == 1
    assert entries["nvidia-747"]["addresses"] == ["0000:85:00.4"]
    assert [u["value"] for u in adopted["unexpressed"]] == ["0000:99:00.0"]


def test_tags_without_a_policy_key_are_listed(facts):
    config = {"pci": {"device_spec": ['{"vendor_id": "10de", "product_id": "1eb8", "capability_type": "x"}']}}
    adopted = adopt({"t4": config}, {"t4": facts["t4"]})
    assert adopted["accel_device_policy"] == []
    assert "capability_type" in adopted["unexpressed"][0]["reason"]
