"""The command output the docs show comes from a real run: each sample is recomputed and compared.

``ACCEL_WRITE_DOCS=1`` writes the recomputed samples into the docs instead of comparing.
"""

import os
import re

import yaml

from ansible_collections.accel.openstack.plugins.filter.nova import FilterModule as NovaFilters
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import HostInput, Options, render_fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_validation import flavor_table, validate_flavors
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import nova_fleet
from tests.support.fake_sysfs import build_root

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(REPO, "inventories", "demo")
SAMPLE = re.compile(r"(<!-- sample (input|output):[^\n]*-->\n```[a-z]*\n)(.*?)(```)", re.S)


def _load(path):
    with open(os.path.join(REPO, path)) as handle:
        return yaml.safe_load(handle)


def _demo_facts(tmp_path) -> dict:
    hosts = _load("inventories/demo/hosts.yml")["all"]["children"]["compute"]["hosts"]
    return {name: discover(build_root(spec["accel_profile"], str(tmp_path / name)))[0] for name, spec in hosts.items()}


def _check_sample(doc: str, compute) -> None:
    path = os.path.join(REPO, "docs", doc)
    with open(path) as handle:
        text = handle.read()
    blocks = {kind: match for match in SAMPLE.finditer(text) for kind in [match.group(2)]}
    wanted = compute(yaml.safe_load(blocks["input"].group(3)))
    if os.environ.get("ACCEL_WRITE_DOCS") == "1":
        out = blocks["output"]
        with open(path, "w") as handle:
            handle.write(text[: out.start(3)] + wanted + text[out.end(3) :])
        return
    assert blocks["output"].group(3) == wanted, f"{doc}: the sample differs from a real run:\n{wanted}"


def test_the_validation_table_in_docs_is_what_the_validate_stage_prints(tmp_path):
    facts = _demo_facts(tmp_path)
    policy = _load("inventories/demo/group_vars/all/device_policy.yml")["accel_device_policy"]

    def compute(settings):
        assert settings["accel_validate_fleet_source"] == "facts"
        fleet = nova_fleet(facts, policy, **settings["accel_validate_fleet_options"])
        aliases = NovaFilters().filters()["nova_pci_alias"](policy)
        result = validate_flavors(
            fleet,
            settings["accel_validate_flavors"],
            pci_aliases=aliases,
            pci_in_placement=settings["accel_validate_pci_in_placement"],
        )
        return "\n".join(flavor_table(result)) + "\n"

    _check_sample("validation.md", compute)


def _check_output(doc: str, about: str, wanted: str) -> None:
    """An output-only sample: the block whose marker names ``about``."""
    path = os.path.join(REPO, "docs", doc)
    with open(path) as handle:
        text = handle.read()
    (block,) = [m for m in SAMPLE.finditer(text) if m.group(2) == "output" and about in m.group(0).split("\n")[0]]
    if os.environ.get("ACCEL_WRITE_DOCS") == "1":
        with open(path, "w") as handle:
            handle.write(text[: block.start(3)] + wanted + text[block.end(3) :])
        return
    assert block.group(3) == wanted, f"{doc}: the sample differs from a real run:\n{wanted}"


def test_the_iommu_off_warning_in_docs_is_what_the_nova_config_stage_says(tmp_path):
    hosts = _load("inventories/demo/hosts.yml")["all"]["children"]["compute"]["hosts"]
    facts = discover(build_root(hosts["legacy-01"]["accel_profile"], str(tmp_path / "legacy-01")))[0]
    policy = _load("inventories/demo/group_vars/all/device_policy.yml")["accel_device_policy"]
    options = Options(report_in_placement=True, pci_in_placement=True)  # as inventories/demo sets them
    rendering = render_fleet([HostInput(name="legacy-01", facts=facts)], policy, options)
    (warning,) = [w for w in rendering.warnings if w.startswith("legacy-01:")]
    _check_output("nova-config.md", "legacy-01", warning + "\n")


def test_the_keys_docs_give_for_nova_request_details_are_the_ones_it_returns():
    from ansible_collections.accel.openstack.plugins.filter.flavors import nova_request

    flavor = {"name": "g", "vcpus": 2, "ram": 2048, "disk": 10, "extra_specs": {"hw:cpu_policy": "dedicated"}}
    details = nova_request(flavor, details=True)
    with open(os.path.join(REPO, "docs", "flavors.md")) as handle:
        text = handle.read()
    section = text[text.index("## What `details=true` returns") : text.index("## Not modelled")]
    documented = re.findall(r"^- `([a-z_]+)`:", section, re.M)
    assert documented == list(details)
    assert details["pcpu_fallback"] is True and len(details["queries"]) == 2
    numa = re.search(r"- `numa`: (.*?);\n- ", section, re.S).group(1)
    assert set(re.findall(r"`([a-z_]+)`", numa)) == set(details["numa"])


def test_the_policy_error_docs_show_is_the_one_the_parser_gives():
    from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError, parse_policy

    with open(os.path.join(REPO, "docs", "device-policy.md")) as handle:
        text = handle.read()
    shown = re.search(r"```\n(device policy entry .*?)\n```", text).group(1)
    policy = _load("inventories/demo/group_vars/all/device_policy.yml")["accel_device_policy"][:3]
    policy[2] = dict(policy[2], product_id="1eb")
    try:
        parse_policy(policy)
    except PolicyError as exc:
        assert shown in str(exc).splitlines() or shown == str(exc) or shown in exc.errors, (shown, str(exc))
    else:
        raise AssertionError("the policy docs show as bad was accepted")
