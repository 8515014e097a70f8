"""Adopting a hand-built cloud: deployed Nova config -> device policy -> rendering, judged by Nova 34.

For published-style configurations (written here in our own values, in the shapes operators' guides,
Kolla-Ansible's docs and Nova's functional tests use) and for generated ones, Nova's own parsers read
the deployed nova-compute and nova-api files and the files the adopted policy renders. What Nova makes of
both must be equal: the device_spec tags of every device it claims (traits and resource classes as the
names Nova derives), the aliases, and the provider tree it reports (PCI providers with
report_in_placement, vGPU types per device with their resource class). What the policy cannot say
must be listed in ``unexpressed``.
"""

from __future__ import annotations

import json
import random

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import (
    adopt,
    nova_resource_class,
    nova_traits,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import Options, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.deployed import parse_ini
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import host_inputs
from tests.support import nova_oracle
from tests.support.fake_sysfs import build_root

pytestmark = pytest.mark.nova

# Listed differences in the form of the aliases only; the comparison below checks exactly these.
ALIAS_FORM = ("rendering adds that alias", "one spec per entry", "no device_type", "copies the device_spec")
PROFILES = {"hgx": "hgx-h100", "a16": "vgpu-a16", "nic": "sriov-nic"}


def ini(sections: dict) -> str:
    lines = []
    for section, keys in sections.items():
        lines.append(f"[{section}]")
        for key, values in keys.items():
            for value in values if isinstance(values, list) else [values]:
                lines.append(f"{key} = {value if isinstance(value, str) else json.dumps(value)}")
    return "\n".join(lines) + "\n"


# Each case: host profile, nova-compute sections, nova-api aliases, reasons expected in unexpressed.
CASES = {
    # An operator's guide for an HPC cloud: whole GPUs by model, the alias on every service.
    "operator-guide-whole-gpus": (
        "hgx",
        {"pci": {"device_spec": [{"vendor_id": "10de", "product_id": "2330"}]}},
        [{"vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI", "name": "gpu-h100"}],
        [],
    ),
    # Kolla-Ansible's docs: the deprecated passthrough_whitelist name, alias without device_type.
    "kolla-docs-whitelist": (
        "hgx",
        {"pci": {"passthrough_whitelist": [{"vendor_id": "10de", "product_id": "2330"}]}},
        [{"vendor_id": "10de", "product_id": "2330", "name": "h100"}],
        [],
    ),
    # Nova's functional tests of PCI in Placement: addresses, custom classes, traits as written.
    "nova-functional-placement": (
        "hgx",
        {
            "pci": {
                "device_spec": [
                    {"address": "0000:18:00.0", "resource_class": "gpu_gold", "traits": "gold,HW_GPU_API_VULKAN"},
                    {"vendor_id": "10de", "product_id": "2330", "address": "*:2a:00.*", "live_migratable": "yes"},
                    {"vendor_id": "10de", "product_id": "2330", "address": "0000:3a:00.0", "one_time_use": "true"},
                ],
                "report_in_placement": "true",
            }
        },
        [
            {
                "vendor_id": "10de",
                "product_id": "2330",
                "device_type": "type-PCI",
                "name": "h100",
                "numa_policy": "preferred",
            }
        ],
        [],
    ),
    # SR-IOV VFs for flavors and for Neutron ports on one NIC.
    "sriov-vfs-and-neutron": (
        "nic",
        {
            "pci": {
                "device_spec": [
                    {"address": "0000:3b:00.2", "vendor_id": "15b3", "product_id": "101e"},
                    {
                        "address": "0000:3b:00.3",
                        "vendor_id": "15b3",
                        "product_id": "101e",
                        "physical_network": "physnet2",
                    },
                ]
            }
        },
        [{"vendor_id": "15b3", "product_id": "101e", "device_type": "type-VF", "name": "cx6-vf"}],
        [],
    ),
    # vGPU by addresses with a custom class, as Nova's vGPU docs show it.
    "vgpu-by-address": (
        "a16",
        {
            "devices": {"enabled_mdev_types": "nvidia-735"},
            "mdev_nvidia-735": {"device_addresses": "0000:84:00.4,0000:84:00.5", "mdev_class": "CUSTOM_VGPU_A16"},
        },
        [],
        [],
    ),
    # The catalog bug: one type, no device_addresses, an mdev_class Nova drops; a second type ignored.
    "vgpu-default-type-class-ignored": (
        "a16",
        {
            "devices": {"enabled_mdev_types": "nvidia-735,nvidia-747"},
            "mdev_nvidia-735": {"mdev_class": "CUSTOM_VGPU_A16_4Q"},
        },
        [],
        ["Nova ignores mdev_class", "Nova uses only the first type"],
    ),
    # The charm guide's form: several specs as one JSON list in one value, the deprecated option name.
    "charm-guide-json-list": (
        "nic",
        {
            "pci": {
                "passthrough_whitelist": (
                    '[{"vendor_id": "15b3", "product_id": "101e", "physical_network": "physnet1"}, '
                    '{"vendor_id": "15b3", "product_id": "101d", "address": "0000:3b:00.1"}]'
                )
            }
        },
        [{"vendor_id": "15b3", "product_id": "101d", "device_type": "type-PF", "name": "cx6-pf"}],
        [],
    ),
    # devname cannot be said by a policy: listed, not dropped.
    "devname": (
        "nic",
        {"pci": {"device_spec": [{"devname": "ens1f0", "physical_network": "physnet1"}]}},
        [],
        ["devname has no device policy key"],
    ),
}


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    return {h: discover(build_root(p, str(tmp_path_factory.mktemp(h))))[0] for h, p in PROFILES.items()}


def generated_cases(facts: dict, count: int, seed: int = 17) -> dict:
    rng = random.Random(seed)
    cases = {}
    for n in range(count):
        host = rng.choice(["hgx", "nic"])
        devices = [d for d in facts[host]["accel_pci_devices"] if d["vendor_id"] in ("10de", "15b3")]
        devices = [d for d in devices if d["physfn"] or not d.get("sriov_totalvfs")]
        chosen = rng.sample(devices, k=min(len(devices), rng.randint(1, 3)))
        specs, aliases = [], []
        for device in chosen:
            spec = {"address": device["address"]}
            if rng.random() < 0.5:
                spec.update(vendor_id=device["vendor_id"], product_id=device["product_id"])
            if rng.random() < 0.4:
                spec["resource_class"] = rng.choice(["CUSTOM_GPU_A", "gpu-b", "CUSTOM_NIC"])
            if rng.random() < 0.4:
                spec["traits"] = rng.choice(["fast", "CUSTOM_X,HW_GPU_API_VULKAN", "a,b"])
            if rng.random() < 0.2:
                spec["managed"] = rng.choice(["yes", "no"])
            specs.append(spec)
            if rng.random() < 0.7 and not any(a["product_id"] == device["product_id"] for a in aliases):
                dtype = "type-VF" if device["physfn"] else "type-PCI"
                aliases.append(
                    {"name": f"a{len(aliases)}", "vendor_id": device["vendor_id"], "product_id": device["product_id"],
                     "device_type": dtype}
                )  # fmt: skip
        sections = {"pci": {"device_spec": specs}}
        if rng.random() < 0.5:
            sections["pci"]["report_in_placement"] = "true"
        cases[f"generated-{n}"] = (host, sections, aliases, None)
    return cases


def _tags(tags: dict) -> dict:
    out = {}
    for key, value in tags.items():
        if key == "traits":
            out[key] = nova_traits(value)
        elif key == "resource_class":
            out[key] = nova_resource_class(value)
        elif key in ("managed", "live_migratable", "one_time_use", "trusted", "remote_managed"):
            out[key] = str(value).lower() in ("true", "yes", "1", "on")
        else:
            out[key] = value
    return out


def _aliases(parsed: dict) -> dict:
    return {
        name: {
            "numa_policy": alias["numa_policy"],
            "specs": sorted(json.dumps(_tags(s), sort_keys=True) for s in alias["specs"]),
        }
        for name, alias in parsed.items()
    }


def _seen(result: dict) -> dict:
    compute = result["compute"]
    assert compute["ok"], compute
    return {
        "matched": {a: _tags(t) for a, t in compute["matched"].items()},
        "providers": sorted(json.dumps(p, sort_keys=True) for p in compute["providers"]),
        "mdev_classes": compute["mdev_classes"],
        "aliases": _aliases(result["api"]["aliases"]) if "api" in result else {},
    }


def test_adopted_policy_renders_what_nova_reads_from_the_deployed_config(facts):
    cases = {**CASES, **generated_cases(facts, 40)}
    oracle_cases, expected = [], {}
    for case_id, (host, sections, aliases, reasons) in cases.items():
        compute_text = ini(sections)
        alias_values = [json.dumps(a) for a in aliases]
        adopted = adopt({host: parse_ini(compute_text)}, {host: facts[host]}, alias_values)
        found = [u["reason"] for u in adopted["unexpressed"]]
        if reasons is not None:
            for reason in reasons:
                assert any(reason in f for f in found), (case_id, adopted["unexpressed"])
        devices = facts[host]["accel_pci_devices"]
        api_text = ini({"pci": {"alias": alias_values}}) if alias_values else ""
        oracle_cases.append(
            {
                "id": f"{case_id}/deployed",
                "hostname": host,
                "compute": compute_text,
                "api": api_text,
                "devices": devices,
            }
        )
        blocking = [u for u in adopted["unexpressed"] if not any(r in u["reason"] for r in ALIAS_FORM)]
        if reasons is None and blocking:
            # A generated config the policy cannot say must be one Nova itself refuses.
            expected[case_id] = "refused"
            continue
        rendering = render_fleet(
            host_inputs([{"name": host, "facts": facts[host]}]),
            adopted["accel_device_policy"],
            Options(report_in_placement=adopted["accel_nova_report_in_placement"]),
        )
        oracle_cases.append(
            {
                "id": f"{case_id}/adopted",
                "hostname": host,
                "compute": render_text(rendering.compute[host]),
                "api": render_text(rendering.api),
                "devices": devices,
            }
        )
        formed = {
            json.loads(u["value"])["name"]
            for u in adopted["unexpressed"]
            if u["where"] == "pci.alias" and any(r in u["reason"] for r in ALIAS_FORM)
        }
        expected[case_id] = (reasons, formed)
    results = {r["id"]: r for r in nova_oracle.ask(oracle_cases)}
    compared = 0
    for case_id, reasons in expected.items():
        reasons, formed = reasons if isinstance(reasons, tuple) else (reasons, set())
        deployed = results[f"{case_id}/deployed"]
        if reasons == "refused":
            assert not deployed["compute"]["ok"], (case_id, deployed)
            continue
        ours = results[f"{case_id}/adopted"]
        if not deployed["compute"]["ok"]:
            # Nova refuses the deployed config itself (devname with nothing else): the adoption listed it.
            assert reasons, (case_id, deployed)
            continue
        before, after = _seen(deployed), _seen(ours)
        # An alias the rendering adds for a device no alias named is listed; compare the deployed ones.
        after["aliases"] = {k: v for k, v in after["aliases"].items() if k in before["aliases"]}
        for name in formed:  # listed: the rendering adds to the alias; each deployed spec is within one of its specs
            ours_specs = [json.loads(x) for x in after["aliases"][name]["specs"]]
            for spec in map(json.loads, before["aliases"][name]["specs"]):
                assert any(spec.items() <= o.items() for o in ours_specs), (case_id, name, spec)
            assert before["aliases"][name]["numa_policy"] == after["aliases"][name]["numa_policy"], case_id
            before["aliases"][name] = after["aliases"][name]
        if reasons and any("Nova ignores mdev_class" in r for r in reasons):
            # listed: Nova keeps the dropped class among its known classes; its devices report VGPU either way
            before.pop("mdev_classes"), after.pop("mdev_classes")
        assert before == after, case_id
        compared += 1
    assert compared >= len(expected) * 3 // 4, (compared, len(expected))
