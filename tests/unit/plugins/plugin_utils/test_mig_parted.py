"""mig-parted configs to device policy entries by PCI address and back, for one host's facts."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.filter.mig_parted import FilterModule
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy
from ansible_collections.accel.openstack.plugins.plugin_utils import mig_parted
from ansible_collections.accel.openstack.plugins.plugin_utils.mig_parted import MigPartedError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "..", "fixtures", "mig-parted")


def _load(name: str) -> dict:
    with open(os.path.join(FIXTURES, name)) as handle:
        return yaml.safe_load(handle)


def _gpu(address: str, product: str, driver: str = "nvidia", name: str | None = None) -> dict:
    return {
        "address": address,
        "vendor_id": "10de",
        "product_id": product,
        "class_code": "030200",
        "driver": driver,
        "physfn": None,
        "product_name": name,
    }


A100_HOST = {
    "accel_pci_devices": [
        _gpu(f"0000:{bus:02x}:00.0", "20b0") for bus in (0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD)
    ]
}
MIXED_HOST = {
    "accel_pci_devices": [
        _gpu("0000:05:00.0", "1eb8", driver="vfio-pci"),  # a T4 for passthrough: nvidia-smi does not list it
        _gpu("0000:0a:00.0", "2941"),
        _gpu("0000:1a:00.0", "2901"),
        _gpu("0000:2a:00.0", "2bb5"),
        _gpu("0000:3a:00.0", "2335"),
        _gpu("0000:4a:00.0", "2330"),
        _gpu("0000:5a:00.0", "20b7"),
        {"address": "0000:6a:00.0", "vendor_id": "15b3", "product_id": "101d", "class_code": "020000"},
    ]
}
CASES = [("by-index.yaml", A100_HOST, name) for name in _load("by-index.yaml")["mig-configs"]] + [
    ("by-model.yaml", MIXED_HOST, name) for name in _load("by-model.yaml")["mig-configs"]
]


@pytest.mark.parametrize(("file", "facts", "name"), CASES, ids=[f"{f}:{n}" for f, _facts, n in CASES])
def test_each_config_converts_both_ways_without_loss(file, facts, name):
    config = _load(file)
    wanted = mig_parted.resolve(config, facts, name)
    assert wanted, "the config selects no GPU of the host"
    policy = mig_parted.policy_from_mig_parted(config, facts, name)
    parse_policy(policy, "policy")  # a valid device policy
    back = mig_parted.mig_parted_from_policy(policy, facts, name)
    assert mig_parted.resolve(back, facts, name) == wanted
    assert mig_parted.policy_from_mig_parted(back, facts, name) == policy
    assert yaml.safe_load(yaml.safe_dump(back)) == back


def test_indices_follow_nvidia_smi_s_order_by_address():
    per_index = mig_parted.resolve(_load("by-index.yaml"), A100_HOST, "per-index")
    assert per_index["0000:4e:00.0"] == {"mig_enabled": True, "mig_devices": {"1g.5gb": 7}}
    assert per_index["0000:07:00.0"]["mig_enabled"] is False
    first_two = mig_parted.resolve(_load("by-model.yaml"), MIXED_HOST, "first-two")
    assert sorted(first_two) == ["0000:0a:00.0", "0000:1a:00.0"]  # the vfio-bound T4 has no index


def test_device_filters_select_models_and_the_policy_is_by_address():
    policy = mig_parted.policy_from_mig_parted(_load("by-model.yaml"), MIXED_HOST, "balanced")
    by_product = {e["product_id"]: e for e in policy}
    assert set(by_product) == {"2941", "2901", "2bb5", "2335", "2330", "20b7"}
    assert by_product["2bb5"] == {
        "name": "mig-2bb5-2",
        "vendor_id": "10de",
        "product_id": "2bb5",
        "mode": "mig",
        "addresses": ["0000:2a:00.0"],
        "mig_layout": [{"profile": "1g.24gb", "count": 2}, {"profile": "2g.48gb", "count": 1}],
    }
    graphics = mig_parted.policy_from_mig_parted(_load("by-model.yaml"), MIXED_HOST, "graphics")
    assert [(e["product_id"], e["mode"]) for e in graphics] == [("2bb5", "mig"), ("2330", "none")]


def test_a_later_item_overrides_an_earlier_one_for_its_gpus():
    resolved = mig_parted.resolve(_load("by-index.yaml"), A100_HOST, "later-item-wins")
    assert resolved["0000:47:00.0"] == {"mig_enabled": False, "mig_devices": {}}
    assert resolved["0000:07:00.0"]["mig_devices"] == {"7g.40gb": 1}


def _config(items) -> dict:
    return {"version": "v1", "mig-configs": {"c": items}}


@pytest.mark.parametrize(
    ("config", "name", "words"),
    [
        ({"version": "v2", "mig-configs": {}}, "c", "version: v1"),
        (_config([]), "other", "the config has c"),
        (_config([{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.5gb": 8}}]), "c", "at most"),
        (_config([{"devices": "all", "mig-enabled": True, "mig-devices": {}}]), "c", "no mig_layout equivalent"),
        (_config([{"devices": "all", "mig-enabled": "yes"}]), "c", "true or false"),
        (_config([{"devices": [-1], "mig-enabled": False}]), "c", "not a GPU index"),
        (_config([{"devices": "some", "mig-enabled": False}]), "c", "'all' or a list"),
        (_config([{"devices": "all", "device-filter": "10de:20b0", "mig-enabled": False}]), "c", "not a PCI ID"),
        (_config([{"devices": "all", "mig-enabled": False, "gpu": 1}]), "c", "unknown key 'gpu'"),
        (_config([{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.5gb": 10**9}}]), "c", "0 to 64"),
        (_config([{"devices": "all", "mig-enabled": True, "mig-devices": {"9g.1tb": 1}}]), "c", "does not exist"),
    ],
)
def test_bad_configs_are_refused_with_the_item_named(config, name, words):
    with pytest.raises(MigPartedError, match=words):
        mig_parted.resolve(config, A100_HOST, name)


def test_an_index_the_host_does_not_have_is_skipped_as_mig_parted_does():
    config = _config([{"devices": [9], "mig-enabled": False}])
    assert mig_parted.resolve(config, A100_HOST, "c") == {}


def test_a_placement_cannot_go_back_to_mig_parted():
    policy = [
        {
            "name": "a100",
            "vendor_id": "10de",
            "product_id": "20b0",
            "mode": "mig",
            "mig_layout": [{"profile": "3g.20gb", "count": 1, "placement": 4}],
        }
    ]
    with pytest.raises(MigPartedError, match="has a placement"):
        mig_parted.mig_parted_from_policy(policy, A100_HOST, "c")


def test_the_filters_wrap_the_functions_and_name_bad_input():
    filters = FilterModule().filters()
    config = _load("by-index.yaml")
    policy = filters["mig_parted_to_policy"](config, A100_HOST, "all-3x2g")
    assert policy[0]["mig_layout"] == [{"profile": "2g.10gb", "count": 3}]
    back = filters["mig_parted_from_policy"](policy, A100_HOST, "all-3x2g")
    assert back["mig-configs"]["all-3x2g"][0]["devices"] == list(range(8))
    from ansible.errors import AnsibleFilterError

    with pytest.raises(AnsibleFilterError, match="config_name"):
        filters["mig_parted_to_policy"](config, A100_HOST, ["x"])
    with pytest.raises(AnsibleFilterError, match="pci_facts"):
        filters["mig_parted_to_policy"](config, {"x": 1}, "all-3x2g")
