"""The baremetal policy entries, the inspection rules made from them, and the rule declaration."""

from __future__ import annotations

import re
import tempfile

import pytest

from ansible_collections.accel.openstack.plugins.filter.nova import nova_compute_conf, nova_pci_alias
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._ironic.inspection_rules import (
    RuleError,
    declared_rule,
    rule_uuid,
)
from ansible_collections.accel.openstack.plugins.module_utils._ironic.node_classes import (
    PCI_DEVICES,
    baremetal_rules,
    baremetal_summary,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import (
    PolicyError,
    baremetal_policy,
    parse_policy,
)
from tests.support.fake_sysfs import build_root

HGX = {"name": "hgx", "vendor_id": "10de", "product_id": "2330", "mode": "baremetal", "count": 8,
       "model": "H100", "interconnect": "nvswitch", "resource_class": "GPU_H100X8"}  # fmt: skip
PASSTHROUGH = {"name": "h100", "vendor_id": "10de", "product_id": "2330", "mode": "passthrough"}


def devices_text(*devices: tuple[str, str, str]) -> str:
    """The text Ironic interpolates for {plugin_data[pci_devices]} (the list's str)."""
    return str([{"vendor_id": v, "product_id": p, "class": c, "revision": "a1", "bus": f"0000:{n:02x}:00.0"}
                for n, (v, p, c) in enumerate(devices)])  # fmt: skip


def matches(rule: dict, text: str) -> bool:
    """Ironic's contains operator (re.search on the value) with ! inverting it, for every condition."""
    results = []
    for condition in rule["conditions"]:
        assert condition["args"]["value"] == PCI_DEVICES
        found = re.search(condition["args"]["regex"], text) is not None
        results.append(not found if condition["op"].startswith("!") else found)
    return all(results)


GPU, NVSWITCH, NIC = ("10de", "2330", "030200"), ("10de", "22a3", "068000"), ("15b3", "1021", "020000")


def test_nova_stages_never_see_baremetal_entries_and_the_ironic_side_sees_only_them():
    policy = [PASSTHROUGH, HGX]
    assert [e.name for e in parse_policy(policy)] == ["h100"]
    assert [e.name for e in baremetal_policy(policy)] == ["hgx"]


@pytest.mark.parametrize(
    ("devices", "expected"),
    [
        ([GPU] * 8 + [NVSWITCH] * 4 + [NIC], True),
        ([NIC] + [GPU] * 8 + [NVSWITCH], True),
        ([GPU] * 7 + [NVSWITCH] * 4, False),
        ([GPU] * 9 + [NVSWITCH] * 4, False),
        ([GPU] * 8, False),
        ([("10de", "20b5", "030200")] * 8 + [NVSWITCH], False),
        ([("0x10de", "0x2330", "0x030200")] * 8 + [NVSWITCH], True),
    ],
)
def test_the_rule_matches_exactly_count_gpus_of_the_model(devices, expected):
    (rule,) = baremetal_rules([HGX])
    assert matches(rule, devices_text(*devices)) is expected


def test_a_node_without_pci_data_matches_nothing():
    (rule,) = baremetal_rules([HGX])
    # Ironic leaves a value it cannot interpolate as written.
    assert matches(rule, PCI_DEVICES) is False


def test_pcie_entries_refuse_nvswitch_boards_and_key_order_does_not_matter():
    pair = dict(HGX, name="pair", count=2, interconnect="pcie", resource_class="gpu-h100x2")
    (rule,) = baremetal_rules([pair])
    reordered = str([{"bus": "0000:01:00.0", "product_id": "2330", "vendor_id": "10de"}] * 2)
    assert matches(rule, reordered)
    assert not matches(rule, devices_text(GPU, GPU, NVSWITCH))


def test_actions_set_the_class_and_the_traits():
    (rule,) = baremetal_rules([dict(HGX, traits=["CUSTOM_HGX"])], priority=70)
    assert rule["priority"] == 70 and rule["name"] == "accel-baremetal-hgx"
    assert rule["actions"][0] == {"op": "set-attribute", "args": {"path": "resource_class", "value": "GPU_H100X8"}}
    assert [a["args"]["name"] for a in rule["actions"][1:]] == [
        "CUSTOM_GPU_H100", "CUSTOM_GPU_COUNT_8", "CUSTOM_GPU_NVLINK", "CUSTOM_GPU_NVSWITCH", "CUSTOM_HGX"]  # fmt: skip
    (summary,) = baremetal_summary([HGX])
    assert summary["placement_resource_class"] == "CUSTOM_GPU_H100X8"
    assert summary["flavor_extra_specs"]["resources:CUSTOM_GPU_H100X8"] == "1"
    assert summary["flavor_extra_specs"]["resources:VCPU"] == "0"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"count": 0}, "count 0 must be the number"),
        ({"count": 65}, "1 to 64"),
        ({"count": True}, "count True"),
        ({"resource_class": "CUSTOM_GPU_H100X8"}, "write 'GPU_H100X8'"),
        ({"resource_class": "gpu h100"}, "must be the Ironic node's resource class"),
        ({"interconnect": "infiniband"}, "interconnect 'infiniband' is not one of"),
        ({"mdev_type": "nvidia-1"}, "mdev_type does not apply to mode baremetal"),
        ({"traits": ["gpu"]}, "traits item 'gpu'"),
        ({"model": "H100; rm"}, "model 'H100; rm'"),
    ],
)
def test_bad_baremetal_entries_are_refused_naming_the_fix(change, words):
    with pytest.raises(PolicyError) as caught:
        parse_policy([dict(HGX, **change)])
    assert words in str(caught.value)


def test_two_entries_inspection_cannot_tell_apart_are_refused():
    nvlink = dict(HGX, name="nvl", interconnect="nvlink", resource_class="A")
    pcie = dict(HGX, name="pci", interconnect="pcie", resource_class="B")
    with pytest.raises(PolicyError, match="cannot tell them apart"):
        parse_policy([nvlink, pcie])
    assert len(baremetal_policy([HGX, nvlink])) == 2


def test_count_and_interconnect_apply_to_baremetal_only():
    with pytest.raises(PolicyError, match="count applies to mode baremetal only"):
        parse_policy([dict(PASSTHROUGH, count=2)])


def test_declared_rule_is_validated_before_any_call():
    rule = declared_rule("r1", [], [{"op": "add-trait", "args": {"name": "CUSTOM_X"}}])
    assert rule["uuid"] == rule_uuid("r1") and rule["conditions"] == [] and rule["description"] == "r1"
    with pytest.raises(RuleError) as caught:
        declared_rule("r 1", [{"op": "=="}], [{"op": "run-shell", "args": {}}], priority=-1, rule_id="x")
    errors = caught.value.extra["errors"]
    assert any("name 'r 1'" in e for e in errors) and any("op '=='" in e for e in errors)
    assert any("run-shell" in e for e in errors) and any("priority -1" in e for e in errors)
    assert any("uuid 'x'" in e for e in errors)
    with pytest.raises(RuleError, match="actions is empty"):
        declared_rule("r1", [], [])
    assert declared_rule("r1", [{"op": "!eq", "args": {"values": [1, 1]}}], None)["actions"] == []


def test_the_nova_config_stage_renders_the_same_with_or_without_baremetal_entries():
    with tempfile.TemporaryDirectory() as tmp:
        facts, _warnings = discover(build_root("hgx-h100", tmp))
    plain = [dict(PASSTHROUGH, traits=["CUSTOM_GPU_NVLINK"])]
    both = plain + [HGX, dict(HGX, name="pair", count=2, interconnect="pcie", resource_class="GPU_H100X2")]
    assert nova_pci_alias(both) == nova_pci_alias(plain)
    assert nova_compute_conf(facts, both, "hgx-01", True) == nova_compute_conf(facts, plain, "hgx-01", True)
    assert "alias" in nova_compute_conf(facts, both, "hgx-01", True)
