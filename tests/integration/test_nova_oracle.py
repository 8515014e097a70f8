"""Every rendered Nova file, for every hardware profile, through Nova 34's own parsers.

One nova-venv process answers all cases (tests/support/nova_oracle.py). For each profile the test
checks that Nova accepts the nova-compute, nova-scheduler and nova-api files and the provider config,
that the devices Nova claims are exactly the devices the policy selects, and that the providers Nova
builds (PCI-in-Placement view and libvirt vGPU providers) are exactly the ones we predict.
"""

import copy
import json

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._names.standard import STANDARD_TRAITS
from ansible_collections.accel.openstack.plugins.module_utils._nova import naming
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import HostInput, Options, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy, policy_errors
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import predict_providers
from tests.support import nova_oracle
from tests.support.fake_sysfs import build_root, profile_names

pytestmark = pytest.mark.nova

PROFILES = profile_names()
with open("inventories/demo/group_vars/all/device_policy.yml") as handle:
    DEMO_POLICY = yaml.safe_load(handle)["accel_device_policy"]
# One A16 passed through whole while the other three serve vGPU: the model is split on one host.
MIXED_POLICY = [
    {
        "name": "a16-whole",
        "vendor_id": "10de",
        "product_id": "25b6",
        "mode": "passthrough",
        "addresses": ["0000:84:00.0"],
        "device_type": "type-PF",
    },
    {
        "name": "a16-4q",
        "vendor_id": "10de",
        "product_id": "25b6",
        "mode": "vgpu",
        "mdev_type": "nvidia-735",
        "addresses": ["0000:85:00.0", "0000:86:00.0"],
    },
    {
        "name": "a16-1q",
        "vendor_id": "10de",
        "product_id": "25b6",
        "mode": "vgpu",
        "mdev_type": "nvidia-732",
        "addresses": ["0000:87:00.0"],
        "mdev_class": "CUSTOM_VGPU_A16_1Q",
    },
]
PLACEMENT_DEFAULTS = {"reserved": 0, "min_unit": 1, "step_size": 1, "allocation_ratio": 1.0}
SCENARIOS = {
    "plain": (DEMO_POLICY, Options()),
    "placement": (DEMO_POLICY, Options(report_in_placement=True, pci_in_placement=True)),
}


def _whole_pf_facts(facts: dict, pf_address: str) -> dict:
    """The host with ``pf_address``'s VFs disabled, as passing that PF through whole needs: its VFs
    carry the PF's own IDs, and Nova's device_spec for the PF's address would claim them too."""
    facts = copy.deepcopy(facts)
    facts["accel_pci_devices"] = [d for d in facts["accel_pci_devices"] if d.get("physfn") != pf_address]
    for device in facts["accel_pci_devices"]:
        if device["address"] == pf_address:
            device["sriov_numvfs"] = 0
    return facts


def _scenario_facts(tag, host, fleet):
    facts = next(h.facts for h in fleet if h.name == host)
    return _whole_pf_facts(facts, "0000:84:00.0") if tag == "mixed" else facts


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    hosts = []
    for profile in PROFILES:
        facts, _unused = discover(build_root(profile, str(tmp_path_factory.mktemp(profile))))
        hosts.append(HostInput(name=profile, facts=facts))
    return hosts


def _cases(tag, hosts, policy, options):
    rendering = render_fleet(hosts, policy, options)
    cases = []
    for host in hosts:
        doc = rendering.provider_configs.get(host.name)
        cases.append(
            {
                "id": f"{tag}/{host.name}",
                "hostname": host.name,
                "compute": render_text(rendering.compute[host.name]),
                "scheduler": render_text(rendering.scheduler),
                "api": render_text(rendering.api),
                "provider_config": yaml.safe_dump(doc) if doc else None,
                "devices": host.facts["accel_pci_devices"],
            }
        )
    return rendering, cases


@pytest.fixture(scope="module")
def answers(fleet):
    """Render every scenario, ask Nova once, return {scenario: (rendering, {host: answer})}."""
    renderings, cases = {}, []
    for tag, (policy, options) in SCENARIOS.items():
        renderings[tag], more = _cases(tag, fleet, policy, options)
        cases.extend(more)
    a16 = [HostInput(name="vgpu-a16", facts=_scenario_facts("mixed", "vgpu-a16", fleet))]
    mixed_options = Options(report_in_placement=True)
    renderings["mixed"], more = _cases("mixed", a16, MIXED_POLICY, mixed_options)
    cases.extend(more)
    SCENARIOS["mixed"] = (MIXED_POLICY, mixed_options)
    results = {r["id"]: r for r in nova_oracle.ask(cases)}
    out = {}
    for tag, rendering in renderings.items():
        out[tag] = (rendering, {k.split("/", 1)[1]: v for k, v in results.items() if k.startswith(tag + "/")})
    return out


def _host_ids():
    return [(tag, p) for tag in ("plain", "placement") for p in PROFILES] + [("mixed", "vgpu-a16")]


@pytest.mark.parametrize("tag,host", _host_ids(), ids=lambda v: v if isinstance(v, str) else None)
def test_nova_accepts_every_rendered_file(answers, tag, host):
    _unused, results = answers[tag]
    answer = results[host]
    for service in ("compute", "scheduler", "api"):
        assert answer[service]["ok"], f"{service}: {answer[service].get('error')}"
    if answer.get("provider_config") is not None:
        assert answer["provider_config"]["ok"], answer["provider_config"]["error"]


@pytest.mark.parametrize("tag,host", _host_ids(), ids=lambda v: v if isinstance(v, str) else None)
def test_nova_claims_exactly_the_devices_the_policy_selects(answers, tag, host):
    rendering, results = answers[tag]
    selection = rendering.selections[host]
    meant = {normalize_address(d["address"]) for item in selection.passthrough for d in item.devices}
    assert set(results[host]["compute"]["matched"]) == meant
    vgpu_meant = {
        normalize_address(d["address"]): item.entry.mdev_type for item in selection.vgpu for d in item.parents
    }
    assert results[host]["compute"]["pgpu_types"] == vgpu_meant


@pytest.mark.parametrize("tag,host", _host_ids(), ids=lambda v: v if isinstance(v, str) else None)
def test_nova_builds_the_providers_we_predict(answers, fleet, tag, host):
    rendering, results = answers[tag]
    policy, options = SCENARIOS[tag]
    facts = _scenario_facts(tag, host, fleet)
    predicted = predict_providers(facts, parse_policy(policy), host, options.report_in_placement)
    nova = results[host]["compute"]["providers"]
    # The compute node's own inventory comes from the virt driver, not from this config.
    assert nova[0]["name"] == host and nova[0]["parent_name"] is None
    extra = {}
    doc = results[host].get("provider_config")
    for provider in (doc or {}).get("providers", {}).values():
        name = provider["identification"].get("name")
        if name:
            extra[name] = set(provider.get("traits", {}).get("additional", []))
    nova_children = sorted(
        (
            {
                "name": p["name"],
                "parent_name": p["parent_name"],
                "inventories": {rc: {**PLACEMENT_DEFAULTS, **inv} for rc, inv in p["inventories"].items()},
                "traits": sorted(set(p["traits"]) | extra.get(p["name"], set())),
            }
            for p in nova[1:]
        ),
        key=lambda p: p["name"],
    )
    ours = sorted(
        ({k: p[k] for k in ("name", "parent_name", "inventories", "traits")} for p in predicted[1:]),
        key=lambda p: p["name"],
    )
    assert ours == nova_children
    # Every provider the provider config names exists in Nova's tree, so Nova applies it.
    assert set(extra) <= {p["name"] for p in nova}


@pytest.mark.parametrize("tag", ["plain", "placement", "mixed"])
def test_every_service_sees_the_same_aliases_and_the_pci_filter(answers, tag):
    rendering, results = answers[tag]
    policy, _unused = SCENARIOS[tag]
    served = {e.name for e in parse_policy(policy) if e.mode == "passthrough"}
    for answer in results.values():
        aliases = answer["scheduler"]["aliases"]
        assert set(aliases) >= served
        assert answer["api"]["aliases"] == aliases == answer["compute"]["aliases"]
        assert "PciPassthroughFilter" in answer["scheduler"]["enabled_filters"]
        assert answer["scheduler"]["pci_in_placement"] == SCENARIOS[tag][1].pci_in_placement


def test_split_model_is_rendered_by_address_and_vgpu_types_stay_apart(answers):
    rendering, results = answers["mixed"]
    compute = rendering.compute["vgpu-a16"]
    assert compute["pci"]["device_spec"] == ['{"address": "0000:84:00.0", "vendor_id": "10de", "product_id": "25b6"}']
    nova = results["vgpu-a16"]["compute"]
    assert nova["enabled_mdev_types"] == ["nvidia-735", "nvidia-732"]
    assert nova["mdev_classes"] == ["CUSTOM_VGPU_A16_1Q", "VGPU"]
    classes = {p["name"]: set(p["inventories"]) for p in nova["providers"][1:]}
    assert classes["vgpu-a16_pci_0000_87_00_4"] == {"CUSTOM_VGPU_A16_1Q"}
    assert classes["vgpu-a16_pci_0000_85_00_4"] == {"VGPU"}
    assert classes["vgpu-a16_0000:84:00.0"] == {"CUSTOM_PCI_10DE_25B6"}


def test_names_we_predict_are_the_names_nova_derives():
    names = [
        {"key": "default", "vendor_id": "10de", "product_id": "2330"},
        {
            "key": "custom",
            "vendor_id": "10de",
            "product_id": "2330",
            "resource_class": "CUSTOM_NVIDIA_H100",
            "traits": "CUSTOM_GPU_NVLINK,CUSTOM_A",
        },
        {"key": "hex", "vendor_id": "15b3", "product_id": "101e"},
    ]
    (answer,) = nova_oracle.ask([{"id": "names", "names": names}])
    assert answer["names"]["default"]["resource_class"] == naming.default_pci_resource_class("10de", "2330")
    assert answer["names"]["hex"]["resource_class"] == naming.default_pci_resource_class("15b3", "101e")
    assert answer["names"]["custom"] == {
        "resource_class": "CUSTOM_NVIDIA_H100",
        "traits": ["CUSTOM_A", "CUSTOM_GPU_NVLINK"],
    }


def test_nova_refuses_what_the_policy_validation_refuses(fleet):
    """The checks before writing mirror Nova: configs we refuse to write, Nova refuses too."""
    conflicting = [
        {"name": "gpu", "vendor_id": "10de", "product_id": "2330", "mode": "passthrough", "device_type": "type-PCI"},
        {"name": "gpu", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough", "device_type": "type-PF"},
    ]
    assert any("device_type" in e for e in policy_errors(conflicting))
    alias_lines = "\n".join(
        f'alias = {{"name": "gpu", "vendor_id": "{e["vendor_id"]}", "product_id": "{e["product_id"]}", '
        f'"device_type": "{e["device_type"]}"}}'
        for e in conflicting
    )
    pf_and_vf = copy.deepcopy(next(h for h in fleet if h.name == "sriov-nic").facts["accel_pci_devices"])
    cases = [
        {"id": "alias", "api": f"[pci]\n{alias_lines}\n"},
        {
            "id": "pf-vf",
            "hostname": "cn1",
            "compute": "[pci]\nreport_in_placement = true\n"
            'device_spec = {"vendor_id": "15b3", "product_id": "101d"}\n'
            'device_spec = {"vendor_id": "15b3", "product_id": "101e"}\n',
            "devices": pf_and_vf,
        },
        {
            "id": "bad-id",
            "hostname": "cn1",
            "compute": '[pci]\ndevice_spec = {"vendor_id": "10de1", "product_id": "1"}\n',
            "devices": [],
        },
    ]
    answers = {a["id"]: a for a in nova_oracle.ask(cases)}
    assert not answers["alias"]["api"]["ok"] and "mismatch" in answers["alias"]["api"]["error"]
    assert not answers["pf-vf"]["compute"]["ok"]
    assert not answers["bad-id"]["compute"]["ok"]
    pf_policy = [
        {"name": "cx6", "vendor_id": "15b3", "product_id": "101d", "mode": "passthrough"},
        {"name": "cx6-vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough"},
    ]
    with pytest.raises(Exception, match="PF 0000:3b:00.0"):
        render_fleet([h for h in fleet if h.name == "sriov-nic"], pf_policy, Options(report_in_placement=True))


# -- Nova's device_spec tags and address patterns ------------------------------------------------------
# The sriov-nic host: PF 0000:3b:00.0 (15b3:101d) with eight VFs (101e) at 3b:00.2-3b:01.1, PF 0000:3b:00.1
# with none enabled, and a T4 (10de:1eb8) at 0000:b0:00.0.
T4 = {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough"}
CX6_PF = {"name": "cx6-pf", "vendor_id": "15b3", "product_id": "101d", "mode": "passthrough"}
CX6_VF = {"name": "cx6-vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough"}
PLACEMENT = Options(report_in_placement=True, pci_in_placement=True)
TAG_SCENARIOS = {
    # One-time-use whole devices in Placement beside Neutron's VFs, split by a glob and a regex.
    "neutron": (
        [
            {**T4, "one_time_use": True, "traits": ["HW_GPU_API_VULKAN", "CUSTOM_T4"]},
            {**CX6_PF, "addresses": ["0000:3b:00.1"], "device_type": "type-PF", "one_time_use": "yes"},
            {**CX6_VF, "name": "physnet1-vf", "addresses": ["0000:3b:00.*"], "physical_network": "physnet1"},
            {
                **CX6_VF,
                "name": "physnet2-vf",
                "addresses": [{"bus": "3b", "slot": "01"}],
                "physical_network": "physnet2",
                "trusted": True,
            },
        ],
        PLACEMENT,
        {"card_serials": True},
    ),
    # Remote-managed VFs (no physical network): Nova reports them to Placement on their PF's provider.
    "remote": ([{**CX6_VF, "remote_managed": True, "trusted": False}, T4], PLACEMENT, {"card_serials": True}),
    # Every VF of the PF whose address is given as a regex that names one address: Nova extends it to the VFs.
    "pf-regex": (
        [{**CX6_VF, "addresses": [{"domain": "0000", "bus": "3b", "slot": "00", "function": "0"}]}],
        Options(report_in_placement=True),
        {},
    ),
}


@pytest.fixture(scope="module")
def sriov_host(fleet):
    return next(h for h in fleet if h.name == "sriov-nic")


@pytest.fixture(scope="module")
def tag_answers(sriov_host):
    renderings, cases = {}, []
    for tag, (policy, options, extra) in TAG_SCENARIOS.items():
        renderings[tag], more = _cases(tag, [sriov_host], policy, options)
        cases.extend({**case, **extra} for case in more)
    # The same neutron host once an instance holds the T4: Nova reserves a one-time-use device.
    held = dict(cases[0], id="held/sriov-nic", allocated=["0000:b0:00.0"])
    results = {r["id"]: r for r in nova_oracle.ask([*cases, held])}
    return renderings, results


@pytest.mark.parametrize("tag", list(TAG_SCENARIOS))
def test_nova_accepts_the_tags_and_claims_what_we_select(tag_answers, tag):
    renderings, results = tag_answers
    answer = results[f"{tag}/sriov-nic"]
    for service in ("compute", "scheduler", "api"):
        assert answer[service]["ok"], f"{service}: {answer[service].get('error')}"
    selection = renderings[tag].selections["sriov-nic"]
    meant = {normalize_address(d["address"]) for item in selection.passthrough for d in item.devices}
    assert set(answer["compute"]["matched"]) == meant
    # Each claimed device carries the tags its entry asked for, as Nova reads them back.
    for item in selection.passthrough:
        for device in item.devices:
            tags = answer["compute"]["matched"][device["address"]]
            for key, value in config_tags(item.entry).items():
                assert tags[key] == value, (device["address"], key)


def config_tags(entry):
    from ansible_collections.accel.openstack.plugins.module_utils._nova.config import nova_tag_values

    return nova_tag_values(entry)


@pytest.mark.parametrize("tag", list(TAG_SCENARIOS))
def test_nova_reports_to_placement_exactly_the_providers_we_predict(tag_answers, sriov_host, tag):
    renderings, results = tag_answers
    policy, options, _extra = TAG_SCENARIOS[tag]
    nova = results[f"{tag}/sriov-nic"]["compute"]["providers"]
    predicted = predict_providers(sriov_host.facts, parse_policy(policy), "sriov-nic", options.report_in_placement)
    nova_children = sorted(
        (
            {
                "name": p["name"],
                "inventories": {rc: {**PLACEMENT_DEFAULTS, **inv} for rc, inv in p["inventories"].items()},
                "traits": p["traits"],
            }
            for p in nova[1:]
        ),
        key=lambda p: p["name"],
    )
    ours = sorted(
        ({k: p[k] for k in ("name", "inventories", "traits")} for p in predicted[1:]), key=lambda p: p["name"]
    )
    assert ours == nova_children


def test_neutron_devices_stay_out_of_placement_and_aliases(tag_answers):
    _renderings, results = tag_answers
    answer = results["neutron/sriov-nic"]
    names = {p["name"] for p in answer["compute"]["providers"][1:]}
    assert names == {"sriov-nic_0000:B0:00.0", "sriov-nic_0000:3B:00.1"}
    t4 = next(p for p in answer["compute"]["providers"] if p["name"] == "sriov-nic_0000:B0:00.0")
    assert {"HW_PCI_ONE_TIME_USE", "HW_GPU_API_VULKAN", "CUSTOM_T4"} <= set(t4["traits"])
    assert set(answer["scheduler"]["aliases"]) == {"t4", "cx6-pf"}
    remote = {p["name"]: p["inventories"] for p in results["remote/sriov-nic"]["compute"]["providers"][1:]}
    assert remote["sriov-nic_0000:3B:00.0"]["CUSTOM_PCI_15B3_101E"]["total"] == 8


def test_nova_reserves_a_one_time_use_device_once_an_instance_holds_it(tag_answers):
    _renderings, results = tag_answers
    fresh = {p["name"]: p for p in results["neutron/sriov-nic"]["compute"]["providers"]}
    held = {p["name"]: p for p in results["held/sriov-nic"]["compute"]["providers"]}
    name = "sriov-nic_0000:B0:00.0"
    assert fresh[name]["inventories"]["CUSTOM_PCI_10DE_1EB8"].get("reserved", 0) == 0
    assert held[name]["inventories"]["CUSTOM_PCI_10DE_1EB8"]["reserved"] == 1


def _spec(entry, address=None, **tags):
    spec = {"vendor_id": entry["vendor_id"], "product_id": entry["product_id"]}
    if address is not None:
        spec["address"] = address
    spec.update(tags)
    return json.dumps(spec)


# Each: the policy, what our refusal names, the device_spec it would have written, report_in_placement,
# and what Nova's refusal says.
REFUSALS = {
    "otu-on-vf-type": (
        [{**CX6_VF, "device_type": "type-VF", "one_time_use": True}],
        "one_time_use with device_type type-VF",
        _spec(CX6_VF, one_time_use="true"),
        True,
        "Only type-PCI and type-PF devices may set one_time_use",
    ),
    "otu-on-vfs": (
        [{**CX6_VF, "one_time_use": True}],
        "one_time_use on VF(s) 0000:3b:00.2",
        _spec(CX6_VF, one_time_use="true"),
        True,
        "Only type-PCI and type-PF devices may set one_time_use",
    ),
    "otu-without-placement": (
        [{**T4, "one_time_use": True}],
        "without [pci] report_in_placement",
        _spec(T4, one_time_use="true"),
        False,
        "requires pci.report_in_placement",
    ),
    "otu-not-boolean": (
        [{**T4, "one_time_use": "maybe"}],
        "one_time_use 'maybe' is not a boolean",
        _spec(T4, one_time_use="maybe"),
        True,
        "Cannot parse tag 'one_time_use'",
    ),
    "remote-managed-pf": (
        [{**CX6_PF, "addresses": ["0000:3b:00.0"], "remote_managed": True}],
        "are not VFs; only VFs are remote managed",
        _spec(CX6_PF, "0000:3b:00.0", remote_managed="true"),
        False,
        "PciDeviceNotFoundById",
    ),
    "remote-managed-pf-type": (
        [{**CX6_PF, "addresses": ["0000:3b:00.0"], "device_type": "type-PF", "remote_managed": True}],
        "remote_managed with device_type type-PF",
        _spec(CX6_PF, "0000:3b:00.0", remote_managed="true"),
        False,
        "PciDeviceNotFoundById",
    ),
    "glob-bus-too-big": (
        [{**CX6_VF, "addresses": ["*:100:00.*"]}],
        "above the largest PCI bus",
        _spec(CX6_VF, "*:100:00.*"),
        False,
        "greater than the maximum",
    ),
    "glob-too-many-fields": (
        [{**CX6_VF, "addresses": ["0:0000:3b:00.*"]}],
        "more than domain:bus:slot",
        _spec(CX6_VF, "0:0000:3b:00.*"),
        False,
        "PciDeviceWrongAddressFormat",
    ),
    "glob-partial-wildcard": (
        [{**CX6_VF, "addresses": ["0000:3b:0*.*"]}],
        "neither '*' nor a hex number",
        _spec(CX6_VF, "0000:3b:0*.*"),
        False,
        "does not parse as a hex number",
    ),
    "regex-does-not-compile": (
        [{**CX6_VF, "addresses": [{"bus": "3[b"}]}],
        "does not compile",
        _spec(CX6_VF, {"bus": "3[b"}),
        False,
        "PciDeviceWrongAddressFormat",
    ),
    "pf-with-same-id-vfs": (
        [
            {
                "name": "a16",
                "vendor_id": "10de",
                "product_id": "25b6",
                "mode": "passthrough",
                "addresses": ["0000:84:00.0"],
            }
        ],
        "disable the PF's VFs",
        _spec({"vendor_id": "10de", "product_id": "25b6"}, "0000:84:00.0"),
        True,
        "Either the parent PF or its children VFs can be configured",
    ),
}


def refusal_host(fleet, case: str):
    return next(h for h in fleet if h.name == ("vgpu-a16" if case == "pf-with-same-id-vfs" else "sriov-nic"))


@pytest.fixture(scope="module")
def refusal_answers(fleet) -> dict:
    """What Nova says of each refused device_spec, all asked of one nova-venv process."""
    cases = []
    for case, (_policy, _ours, spec, in_placement, _theirs) in REFUSALS.items():
        placement = "report_in_placement = true\n" if in_placement else ""
        host = refusal_host(fleet, case)
        cases.append(
            {
                "id": case,
                "hostname": host.name,
                "compute": f"[pci]\n{placement}device_spec = {spec}\n",
                "devices": host.facts["accel_pci_devices"],
                "card_serials": True,
            }
        )
    return {answer["id"]: answer for answer in nova_oracle.ask(cases)}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_we_refuse_what_nova_refuses_and_write_nothing(fleet, refusal_answers, case):
    policy, ours, _spec, in_placement, theirs = REFUSALS[case]
    with pytest.raises(AccelError) as refused:
        render_fleet([refusal_host(fleet, case)], policy, Options(report_in_placement=in_placement))
    assert ours in str(refused.value) and "device policy entry 1" in str(refused.value)
    answer = refusal_answers[case]
    assert not answer["compute"]["ok"]
    assert theirs in answer["compute"]["error"]


def test_one_time_use_with_a_physical_network_would_be_silently_ignored_by_nova(sriov_host):
    """Why the policy refuses the pair: Nova accepts it and leaves the device out of Placement."""
    assert any(
        "one_time_use with physical_network" in e
        for e in policy_errors([{**T4, "one_time_use": True, "physical_network": "p1"}])
    )
    (answer,) = nova_oracle.ask(
        [
            {
                "id": "otu-physnet",
                "hostname": "cn1",
                "compute": "[pci]\nreport_in_placement = true\ndevice_spec = "
                + _spec(T4, one_time_use="true", physical_network="p1")
                + "\n",
                "devices": sriov_host.facts["accel_pci_devices"],
            }
        ]
    )
    assert answer["compute"]["ok"] and "0000:b0:00.0" in answer["compute"]["matched"]
    assert answer["compute"]["providers"][1:] == []


ADDRESS_ITEMS = [
    "0000:3b:00.*",
    "*:3b:01.*",
    "*:*:*.3",
    "3b:*.*",
    "*:3b:00.",
    "0000:3b:00.0",
    {"bus": "3b", "function": "[2-4]"},
    {"slot": "0"},
    {"domain": "0000", "bus": "3b", "slot": "00", "function": "0"},
    {"bus": "3B"},
]


def test_address_patterns_select_exactly_what_nova_matches(sriov_host):
    cases, selections = [], {}
    for index, item in enumerate(ADDRESS_ITEMS):
        for entry in (CX6_VF, CX6_PF):
            policy = [{**entry, "addresses": [item]}]
            rendering = render_fleet([sriov_host], policy, Options())
            key = f"{index}-{entry['name']}"
            selection = rendering.selections["sriov-nic"]
            selections[key] = {d["address"] for i in selection.passthrough for d in i.devices}
            cases.append(
                {
                    "id": key,
                    "hostname": "sriov-nic",
                    "compute": render_text(rendering.compute["sriov-nic"]) or "[pci]\n",
                    "devices": sriov_host.facts["accel_pci_devices"],
                }
            )
            # And the pattern itself, as Nova would read it written by hand, matches the same devices.
            cases.append(
                {
                    "id": key + "/as-written",
                    "hostname": "sriov-nic",
                    "compute": f"[pci]\ndevice_spec = {_spec(entry, item)}\n",
                    "devices": sriov_host.facts["accel_pci_devices"],
                }
            )
    answers = {a["id"]: a["compute"] for a in nova_oracle.ask(cases)}
    for key, meant in selections.items():
        assert answers[key]["ok"], (key, answers[key].get("error"))
        assert set(answers[key]["matched"]) == meant, key
        assert set(answers[key + "/as-written"]["matched"]) == meant, key
    # The PF regex naming one address reaches all eight VFs, as Nova extends a PF's address.
    assert len(selections["8-cx6-vf"]) == 8 and selections["9-cx6-vf"] == set()


def test_standard_traits_are_kept_and_custom_names_too_as_nova_derives_them():
    names = [
        {
            "key": "mixed",
            "vendor_id": "10de",
            "product_id": "1eb8",
            "traits": "HW_GPU_API_VULKAN,CUSTOM_T4,COMPUTE_ACCELERATORS",
        }
    ]
    (answer,) = nova_oracle.ask([{"id": "names", "names": names, "standard_traits": True}])
    assert answer["names"]["mixed"]["traits"] == ["COMPUTE_ACCELERATORS", "CUSTOM_T4", "HW_GPU_API_VULKAN"]
    standard = answer["standard_traits"]
    # The policy knows exactly the standard names Nova's os-traits knows, and Nova's own traits are among them.
    assert set(standard) == STANDARD_TRAITS
    assert set(naming.NOVA_SET_TRAITS) <= set(standard)
    # A name outside those namespaces is one os-traits does not know: Nova makes it custom, the policy refuses.
    assert not any(t.startswith("NVLINK") for t in standard)
    assert any("'CUSTOM_NVLINK'" in e for e in policy_errors([{**T4, "traits": ["NVLINK"]}]))
