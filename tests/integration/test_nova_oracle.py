"""Every rendered Nova file, for every hardware profile, through Nova 34's own parsers.

One nova-venv process answers all cases (tests/support/nova_oracle.py). For each profile the test
checks that Nova accepts the nova-compute, nova-scheduler and nova-api files and the provider config,
that the devices Nova claims are exactly the devices the policy selects, and that the providers Nova
builds (PCI-in-Placement view and libvirt vGPU providers) are exactly the ones we predict.
"""

import copy

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
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
    meant = {naming.normalize_address(d["address"]) for item in selection.passthrough for d in item.devices}
    assert set(results[host]["compute"]["matched"]) == meant
    vgpu_meant = {
        naming.normalize_address(d["address"]): item.entry.mdev_type for item in selection.vgpu for d in item.parents
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
