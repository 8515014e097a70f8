"""AMD Instinct MI300X and Intel Data Center GPU Flex 170 VFs end to end, without a pipeline run.

The demo fleet's two hosts of these GPUs (mi300x-01, flex170-01 in inventories/demo) are built from their
hardware profiles, discovered, rendered with the demo policy's entries for them, checked by Nova 34's own
parsers (tests/support/nova_oracle.py: device_spec, alias, the PCI-in-Placement view), predicted as Placement
providers, and its flavors are fitted to that prediction by the collection's Placement solver.
"""

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import HostInput, Options, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import predict_providers
from ansible_collections.accel.openstack.plugins.module_utils._nova.sharing_plan import host_plan
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import nova_fleet
from tests.support import nova_oracle
from tests.support.fake_sysfs import build_root, inventory_profiles

pytestmark = pytest.mark.nova

DEMO = "inventories/demo"
VENDOR_HOSTS = ("mi300x-01", "flex170-01")
with open(f"{DEMO}/group_vars/all/device_policy.yml") as handle:
    # The policy's entries for these GPUs: the demo's other entries match nothing on these two hosts.
    POLICY = [e for e in yaml.safe_load(handle)["accel_device_policy"] if e["name"] in ("mi300x-vf", "flex170-vf")]
with open(f"{DEMO}/group_vars/all/validate.yml") as handle:
    FLAVORS = [f for f in yaml.safe_load(handle)["accel_validate_flavors"] if "-vf." in f["name"]]
OPTIONS = Options(report_in_placement=True, pci_in_placement=True)
MI300X_VFS = [f"0000:05:00.{f}" for f in range(1, 8)] + ["0000:05:01.0"]
FLEX_VFS = [f"0000:4d:00.{f}" for f in range(1, 5)]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    base = tmp_path_factory.mktemp("vendors")
    out = {}
    for host, profile in sorted(inventory_profiles(f"{DEMO}/hosts.yml").items()):
        if host not in VENDOR_HOSTS:
            continue
        facts, warnings = discover(build_root(profile, str(base / host)))
        assert warnings == []
        out[host] = facts
    return out


@pytest.fixture(scope="module")
def rendering(hosts):
    return render_fleet([HostInput(name=h, facts=f) for h, f in hosts.items()], POLICY, OPTIONS)


@pytest.fixture(scope="module")
def answers(hosts, rendering):
    cases = [
        {
            "id": host,
            "hostname": host,
            "compute": render_text(rendering.compute[host]),
            "scheduler": render_text(rendering.scheduler),
            "api": render_text(rendering.api),
            "provider_config": None,
            "devices": facts["accel_pci_devices"],
        }
        for host, facts in hosts.items()
    ]
    return {r["id"]: r for r in nova_oracle.ask(cases)}


def test_the_policy_selects_the_vfs_and_never_a_pf(rendering):
    selected = {
        host: {item.entry.name: [d["address"] for d in item.devices] for item in selection.passthrough}
        for host, selection in rendering.selections.items()
    }
    assert selected == {"mi300x-01": {"mi300x-vf": MI300X_VFS}, "flex170-01": {"flex170-vf": FLEX_VFS}}
    assert rendering.warnings == []


@pytest.mark.parametrize("host", ["mi300x-01", "flex170-01"])
def test_nova_accepts_the_config_and_claims_exactly_the_vfs(answers, host):
    answer = answers[host]
    for service in ("compute", "scheduler", "api"):
        assert answer[service]["ok"], f"{service}: {answer[service].get('error')}"
    assert sorted(answer["compute"]["matched"]) == (MI300X_VFS if host == "mi300x-01" else FLEX_VFS)


def test_the_flex_vfs_are_written_by_address_because_they_carry_the_pfs_own_id(rendering):
    specs = rendering.compute["flex170-01"]["pci"]["device_spec"]
    assert len(specs) == 4 and all('"address": "0000:4d:00.' in s and '"product_id": "56c0"' in s for s in specs)
    assert rendering.compute["mi300x-01"]["pci"]["device_spec"] == [
        '{"vendor_id": "1002", "product_id": "74b5", "resource_class": "CUSTOM_AMD_MI300X_VF", '
        '"traits": "CUSTOM_GPU_PARTITION_CPX,CUSTOM_GPU_MEMORY_NPS4"}'
    ]


def test_every_service_gets_type_vf_aliases(answers):
    for answer in answers.values():
        aliases = answer["scheduler"]["aliases"]
        assert answer["api"]["aliases"] == aliases == answer["compute"]["aliases"]
        assert {name: [s["dev_type"] for s in alias["specs"]] for name, alias in aliases.items()} == {
            "mi300x-vf": ["type-VF"],
            "flex170-vf": ["type-VF"],
        }


@pytest.mark.parametrize("host", ["mi300x-01", "flex170-01"])
def test_nova_builds_the_vf_providers_we_predict(answers, hosts, host):
    predicted = predict_providers(hosts[host], parse_policy(POLICY), host, True)
    nova = answers[host]["compute"]["providers"]
    ours = {p["name"]: (p["inventories"], sorted(p["traits"])) for p in predicted[1:]}
    theirs = {p["name"]: (p["inventories"], sorted(p["traits"])) for p in nova[1:]}
    assert sorted(ours) == sorted(theirs)
    for name, (inventories, traits) in theirs.items():
        assert {rc: inv["total"] for rc, inv in inventories.items()} == {
            rc: inv["total"] for rc, inv in ours[name][0].items()
        }
        assert traits == ours[name][1]
    if host == "mi300x-01":
        assert {n: {rc: i["total"] for rc, i in inv.items()} for n, (inv, _t) in theirs.items()} == {
            "mi300x-01_0000:05:00.0": {"CUSTOM_AMD_MI300X_VF": 8}
        }
        assert {"CUSTOM_GPU_PARTITION_CPX", "CUSTOM_GPU_MEMORY_NPS4"} <= set(theirs["mi300x-01_0000:05:00.0"][1])
    else:
        assert {n: {rc: i["total"] for rc, i in inv.items()} for n, (inv, _t) in theirs.items()} == {
            "flex170-01_0000:4D:00.0": {"CUSTOM_INTEL_FLEX170_VF": 4}
        }


def test_the_example_flavors_fit_as_many_times_as_there_are_vfs(hosts, rendering):
    fleet = nova_fleet(hosts, POLICY, report_in_placement=True)
    aliases = rendering.api["pci"]["alias"]
    fits = {f["name"]: f for f in flavor_fit(FLAVORS, fleet, pci_aliases=aliases, pci_in_placement=True)}
    assert {name: fit["outcome"] for name, fit in fits.items()} == {
        "gpu.mi300x-vf.1": "fits",
        "gpu.mi300x-vf.8": "fits",
        "gpu.flex170-vf.1": "fits",
    }
    assert fits["gpu.mi300x-vf.1"]["max_instances"] == {"flex170-01": 0, "mi300x-01": 8}
    assert fits["gpu.mi300x-vf.8"]["max_instances"] == {"flex170-01": 0, "mi300x-01": 1}
    assert fits["gpu.flex170-vf.1"]["max_instances"] == {"flex170-01": 4, "mi300x-01": 0}


def test_the_prepare_stage_makes_flex_vfs_on_every_flex_pf_and_leaves_gim_alone(hosts):
    # The demo takes the Flex VFs as they are (its roots have no kernel that makes VFs); a real host's
    # policy sets sriov_numvfs, docs/vendors.md.
    policy = [dict(e, sriov_numvfs=4) if e["name"] == "flex170-vf" else e for e in POLICY]
    assert host_plan(hosts["flex170-01"]["accel_pci_devices"], POLICY)["sriov"] == []
    flex = host_plan(hosts["flex170-01"]["accel_pci_devices"], policy)
    assert flex["sriov"] == [{"devices": ["0000:4d:00.0", "0000:cb:00.0"], "numvfs": 4, "entry": "flex170-vf"}]
    assert host_plan(hosts["mi300x-01"]["accel_pci_devices"], policy)["sriov"] == []
