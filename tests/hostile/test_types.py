"""Every entry point checks types first and answers with the argument, the type and what it expected."""

from __future__ import annotations

import math

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter import discovery, flavors, nova, validate
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, FleetError
from tests.hostile.conftest import no_traceback
from tests.support.ansible_runner import run_module

FACTS: dict = {"accel_pci_devices": []}
FLEET = {"resource_providers": [{"uuid": "cn1", "name": "c1", "inventories": {"VCPU": {"total": 8}}}]}

FILTER_CASES = [
    (nova.nova_device_spec, ("not facts", []), "facts is a string"),
    (nova.nova_device_spec, (FACTS, {"name": "x"}), "policy is a mapping"),
    (nova.nova_device_spec, (FACTS, [], ["h"]), "hostname is a list"),
    (nova.nova_device_spec, (FACTS, [], "h", "maybe"), "report_in_placement is a string"),
    (nova.nova_compute_conf, (["x"], [], "h"), "facts is a list"),
    (nova.nova_compute_conf, (FACTS, "policy", "h"), "policy is a string"),
    (nova.nova_providers_filter, (FACTS, [], 5), "hostname is an integer"),
    (nova.nova_pci_alias, ("policy",), "policy is a string"),
    (nova.nova_pci_alias, ([], "hosts"), "hosts_facts is a string"),
    (nova.nova_pci_alias, ([], {"h": "facts"}), "hosts_facts['h'] is a string"),
    (validate._validate_requests, ("requests", FLEET), "requests is a string"),
    (validate._validate_requests, ([], "fleet"), "fleet is a string"),
    (validate._validate_requests, ([], FLEET, -1), "count_limit is -1"),
    (validate._validate_requests, ([], FLEET, "many"), "count_limit is a string"),
    (validate._validation_report, ("results",), "results is a string"),
    (flavors.nova_request, ("m1.small",), "flavor is a string"),
    (flavors.nova_request, ({"vcpus": 1}, None, "perhaps"), "pci_in_placement is a string"),
    (flavors.nova_request, ({"vcpus": 1}, None, False, "profiles"), "device_profiles is a string"),
    (flavors.nova_request, ({"vcpus": 1}, None, False, None, None, False, -5), "max_placement_results is -5"),
    (discovery._discovery_report, ("facts",), "discovery_report"),
]


@pytest.mark.parametrize(("function", "args", "fragment"), FILTER_CASES)
def test_filters_refuse_wrong_types_naming_the_argument(function, args, fragment):
    with pytest.raises(AnsibleFilterError) as caught:
        function(*args)
    assert fragment in str(caught.value)
    assert "Traceback" not in str(caught.value) and "object has no attribute" not in str(caught.value)


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("total", math.nan, "must be an integer"),
        ("total", math.inf, "must be an integer"),
        ("total", -3, "Placement takes 1 or more"),
        ("total", "8", "must be an integer"),
        ("reserved", -1, "Placement takes 0 or more"),
        ("step_size", 0, "Placement takes 1 or more"),
        ("allocation_ratio", math.nan, "positive number"),
        ("allocation_ratio", -1.0, "positive number"),
        ("allocation_ratio", True, "positive number"),
    ],
)
def test_fleet_snapshots_refuse_amounts_placement_would_never_hold(field, value, fragment):
    inventory = {"total": 8, field: value}
    with pytest.raises(FleetError, match=fragment):
        Fleet.from_snapshot({"resource_providers": [{"uuid": "a", "inventories": {"VCPU": inventory}}]})


@pytest.mark.parametrize(
    ("record", "fragment"),
    [
        ({"traits": "CUSTOM_X"}, "traits must be a list of names"),
        ({"aggregates": "agg"}, "aggregates must be a list of names"),
        ({"traits": [1]}, "must hold names"),
        ({"inventories": ["VCPU"]}, "inventories must be a mapping"),
        ({"usages": "x"}, "usages must be a mapping"),
    ],
)
def test_fleet_snapshots_refuse_strings_where_lists_belong(record, fragment):
    with pytest.raises(FleetError, match=fragment):
        Fleet.from_snapshot({"resource_providers": [{"uuid": "a", **record}]})


PROVIDER_CASES = [
    ({"name": "p", "max_retries": -5}, "max_retries is -5"),
    ({"name": "p", "inventories": {"VCPU": {"total": math.nan}}}, "is not a number"),
    ({"name": "p", "inventories": {"VCPU": {"total": math.inf}}}, "is not a number"),
    ({"name": "p", "inventories": {"VCPU": {"total": 2.5}}}, "is not a number"),
    ({"name": "p", "inventories": {"VCPU": {"total": -4}}}, "total must be at least 1"),
    ({"name": "p", "inventories": {"VCPU": {"total": 4, "allocation_ratio": math.nan}}}, "is not a number"),
    ({"name": "p", "traits": ["CUSTOM_X\n"]}, "CUSTOM_X"),
    ({"providers": [{"name": 5}]}, "name is int"),
    ({"providers": [{"name": "p", "traits": "CUSTOM_X"}]}, "traits must be a list"),
    ({"providers": [{"name": "p", "inventories": "VCPU"}]}, "inventories must be a dict"),
]


@pytest.mark.parametrize(("args", "fragment"), PROVIDER_CASES)
def test_placement_provider_refuses_bad_values_before_any_call(args, fragment):
    params = {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": "admin"}, **args}
    result = run_module("placement_provider", params)
    assert result.get("failed") and fragment in result["msg"], result
    no_traceback(result)
    assert "api_calls" not in result or not result["api_calls"]


@pytest.mark.parametrize(
    ("module", "args", "fragment"),
    [
        # Ansible's own check of a list of dicts given a string; its message does not name the option.
        ("nova_config", {"layout": "kolla", "hosts": "c1", "policy": []}, "dictionary requested"),
        ("nova_config", {"layout": "kolla", "hosts": [{"name": "c1", "facts": "x"}], "policy": []}, "facts"),
        ("nova_config", {"layout": "kolla", "hosts": [], "policy": "x"}, "policy"),
        ("vfio_pci", {"devices": "0000:18:00.0\n"}, "0000:18:00.0"),
        ("vfio_pci", {"devices": ["0000:18:00.0\n"]}, "0000:18:00.0"),
        ("vfio_pci", {"blacklist": ["nouveau\ninstall x /bin/sh"]}, "blacklist"),
        ("kernel_cmdline", {"present": "iommu=pt;reboot"}, "iommu=pt;reboot"),
    ],
)
def test_module_options_with_wrong_shapes_fail_with_a_message(tmp_path, module, args, fragment):
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "proc/cmdline").write_text("ro\n")
    result = run_module(module, {"root": str(root), **args})
    assert result.get("failed") and fragment in result["msg"], result
    no_traceback(result)


def test_secrets_are_taken_out_of_messages_without_no_log():
    from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import (
        credential_problems,
        redact,
    )

    params = {
        "cloud": {"auth": {"password": "Cloud-Password-123"}, "region_name": "RegionOne"},
        "auth": {"token": "Token-Value-456", "username": "operator"},
    }
    message = redact("failed for Cloud-Password-123 and Token-Value-456 in RegionOne as operator", params)
    assert "Cloud-Password-123" not in message and "Token-Value-456" not in message
    assert "RegionOne" in message and "operator" in message
    assert credential_problems({"auth": {"token": "abc"}}) == [
        "auth.token is 3 characters; a secret shorter than 8 would make Ansible hide every occurrence of that "
        "text in all output, so it is refused: use a longer one (a Placement running noauth2 takes "
        "the token 'admin', which is not a secret)"
    ]
    # noauth2's "admin" is a convention, not a secret: neither refused nor masked
    assert credential_problems({"auth": {"token": "admin"}}) == []
    assert redact("admin_token as admin", {"auth": {"token": "admin"}}) == "admin_token as admin"
    assert credential_problems({"cloud": 5})[0].startswith("cloud is int")
