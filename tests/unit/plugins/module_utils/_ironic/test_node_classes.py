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
    owned_name,
    prune_rules,
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
    """Ironic 39's operators on the value, for every condition: contains is re.search, matches is re.match
    with '$' added unless the expression ends with one; '!' inverts."""
    results = []
    for condition in rule["conditions"]:
        assert condition["args"]["value"] == PCI_DEVICES
        op, regex = condition["op"].lstrip("!"), condition["args"]["regex"]
        if op == "matches":
            found = re.match(regex if regex.endswith("$") else regex + "$", text) is not None
        else:
            assert op == "contains"
            found = re.search(regex, text) is not None
        results.append(not found if condition["op"].startswith("!") else found)
    return all(results)


def match_rule(policy: list, priority: int = 50) -> dict:
    """The rule of the policy's one baremetal entry that classes matching nodes (the other one resets)."""
    reset, rule = baremetal_rules(policy, priority)
    assert reset["name"] == rule["name"] + ":reset"
    return rule


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
    assert matches(match_rule([HGX]), devices_text(*devices)) is expected


@pytest.mark.parametrize("count", [1, 2, 63, 64])
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_any_count_to_64_is_matched_exactly_among_other_devices(count, delta):
    entry = dict(HGX, count=count, interconnect="pcie")
    gpus = count + delta
    # GPUs interleaved with NICs, a GPU of another model and an NVIDIA audio function.
    others = [NIC, ("10de", "20b5", "030200"), ("10de", "22e8", "040300")]
    devices = [d for n in range(gpus) for d in ([GPU] + ([others[n % 3]] if n % 2 else []))]
    devices = devices or [NIC]
    assert matches(match_rule([entry]), devices_text(*devices)) is (delta == 0)


@pytest.mark.parametrize(
    "text",
    [
        PCI_DEVICES,  # Ironic leaves a value it cannot interpolate as written
        "None",
        "[]",
        # a device entry broken by braces in a value: the list no longer reads as device entries
        devices_text(*([GPU] * 8 + [NVSWITCH])).replace("'a1'", "'}{'", 1),
        # the list's text with something before or after it
        "x" + devices_text(*([GPU] * 8 + [NVSWITCH])),
        devices_text(*([GPU] * 8 + [NVSWITCH])) + "x",
    ],
)
def test_a_node_without_usable_pci_data_matches_nothing(text):
    assert matches(match_rule([HGX]), text) is False


def test_pcie_entries_refuse_nvswitch_boards_and_key_order_does_not_matter():
    pair = dict(HGX, name="pair", count=2, interconnect="pcie", resource_class="gpu-h100x2")
    rule = match_rule([pair])
    reordered = str([{"bus": "0000:01:00.0", "product_id": "2330", "vendor_id": "10de"}] * 2)
    assert matches(rule, reordered)
    assert not matches(rule, devices_text(GPU, GPU, NVSWITCH))


def test_actions_set_the_class_and_the_traits():
    rule = match_rule([dict(HGX, traits=["CUSTOM_HGX"])], priority=70)
    assert rule["priority"] == 70 and rule["name"] == "accel-baremetal-hgx"
    assert rule["description"].startswith("accel-baremetal-hgx: ")
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
        ({"resource_class": "gpu h100"}, "must be an Ironic node's resource class"),
        ({"fallback_resource_class": "gpu h100"}, "fallback_resource_class 'gpu h100' must be an Ironic"),
        ({"fallback_resource_class": "CUSTOM_X"}, "write 'X'"),
        ({"fallback_resource_class": "GPU_H100X8"}, "fallback_resource_class is the entry's own resource_class"),
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


def test_the_reset_rule_runs_first_and_takes_the_class_and_traits_away():
    entry = dict(HGX, traits=["CUSTOM_HGX"], fallback_resource_class="GPU_DEGRADED")
    reset, rule = baremetal_rules([entry], priority=70)
    assert (reset["name"], reset["priority"], rule["priority"]) == ("accel-baremetal-hgx:reset", 71, 70)
    assert reset["conditions"] == [{"op": "eq", "args": {"values": ["{node.resource_class}", "GPU_H100X8"]}}]
    assert reset["actions"][0] == {"op": "set-attribute", "args": {"path": "resource_class", "value": "GPU_DEGRADED"}}
    assert [a["op"] for a in reset["actions"][1:]] == ["remove-trait"] * 5
    assert [a["args"]["name"] for a in reset["actions"][1:]] == [a["args"]["name"] for a in rule["actions"][1:]]
    # Without a fallback the class is taken away: Ironic sets the attribute to null.
    (bare, _rule) = baremetal_rules([HGX])
    assert bare["actions"][0]["args"] == {"path": "resource_class", "value": None}
    assert "falls back to no class" in bare["description"]


def test_fallbacks_that_would_offer_a_node_to_a_flavor_are_refused():
    pair = dict(HGX, name="pair", count=2, interconnect="pcie", resource_class="GPU_H100X2")
    with pytest.raises(PolicyError, match="is the resource_class of baremetal entry 2"):
        parse_policy([dict(HGX, fallback_resource_class="GPU_H100X2"), pair])
    twin = dict(HGX, name="twin", interconnect="pcie", fallback_resource_class="GPU_DEGRADED")
    with pytest.raises(PolicyError, match="falls back to GPU_DEGRADED here but to no class in baremetal entry 1"):
        parse_policy([HGX, twin])
    assert len(baremetal_policy([dict(HGX, fallback_resource_class="GPU_DEGRADED"), twin])) == 2


def test_priorities_leave_room_for_the_reset_rules_and_long_names_fail_early():
    with pytest.raises(RuleError, match="priority is 9999; give 0 to 9998"):
        baremetal_rules([HGX], 9999)
    with pytest.raises(RuleError, match="must be 1-200 letters"):
        baremetal_rules([dict(HGX, name="h" * 190)])


def test_a_rule_is_owned_by_a_prefix_only_when_its_description_names_the_uuid():
    prefix = "accel-baremetal-"
    rules = {r["name"]: declared_rule(r["name"], r["conditions"], r["actions"], r["description"])
             for r in baremetal_rules([HGX])}  # fmt: skip
    assert {owned_name(rule, prefix) for rule in rules.values()} == set(rules)
    made = rules["accel-baremetal-hgx"]
    # The description written before the reset rules existed: the entry's name after "accel.openstack baremetal".
    legacy = dict(made, description="accel.openstack baremetal hgx: 8 x 10de:2330 (nvswitch) -> resource class X")
    assert owned_name(legacy, prefix) == "accel-baremetal-hgx"
    # A rule by hand that only claims the name, a rule of another prefix, and answers of the wrong shape.
    assert owned_name(dict(made, uuid="0b0bb0a6-4d1f-5c83-9c5e-8a3e8f1c2d10"), prefix) is None
    assert owned_name(declared_rule("site-gpu", [], made["actions"]), prefix) is None
    assert owned_name(declared_rule("site-gpu", [], made["actions"]), "site-") == "site-gpu"
    assert owned_name({"uuid": made["uuid"], "description": None}, prefix) is None
    assert owned_name({"uuid": 7, "description": made["description"]}, prefix) is None


def test_prune_refuses_a_short_prefix_or_bad_names_before_any_call():
    with pytest.raises(RuleError) as caught:
        prune_rules(None, "acc", ["ok", "a b"], check_mode=False)
    assert "prefix 'acc' must be 4 to 200" in caught.value.msg and "the first 'a b'" in caught.value.msg
