"""Each bad field of the device policy is reported on its own, naming entry, field and fix."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import (
    PolicyError,
    parse_policy,
    policy_errors,
)

GOOD = {"name": "h100", "vendor_id": "10DE", "product_id": "2330", "mode": "passthrough"}


def entry(**changes):
    item = dict(GOOD, **changes)
    return {k: v for k, v in item.items() if v is not None}


def test_a_valid_policy_parses_and_normalises_ids():
    (parsed,) = parse_policy([entry(addresses=["0000:1A:00.0"], traits=["CUSTOM_A"])])
    assert parsed.vendor_id == "10de" and parsed.addresses == ("0000:1a:00.0",) and parsed.traits == ("CUSTOM_A",)


@pytest.mark.parametrize(
    "bad,field,fix",
    [
        (entry(product_id=None), "product_id is missing", "lspci -nn"),
        (entry(product_id="233"), "product_id '233' is not 4 hex digits", '"2330"'),
        (entry(vendor_id=1002), "vendor_id 1002 was read as a number", "quote it"),
        (entry(mode="passthru"), "mode 'passthru'", "passthrough, vgpu, mig, none"),
        (entry(name="a b"), "name 'a b'", "pci_passthrough:alias"),
        (entry(resource_class="nvidia-h100"), "resource_class 'nvidia-h100'", "CUSTOM_NVIDIA_H100"),
        (entry(resource_class="VCPU"), "resource_class 'VCPU'", "standard resource class for host"),
        (entry(traits=["gpu"]), "traits item 'gpu'", "CUSTOM_GPU"),
        (entry(traits="CUSTOM_A"), "traits must be a list", "CUSTOM_GPU_H100"),
        (entry(numa_policy="strict"), "numa_policy 'strict'", "required"),
        (entry(device_type="VF"), "device_type 'VF'", "type-VF"),
        (entry(addresses=["41:00.0"]), "addresses item '41:00.0'", "0000:41:00.0"),
        (entry(mdev_type="nvidia-1"), "mdev_type applies to mode vgpu only", "set mode: vgpu"),
        (entry(mode="vgpu"), "mode vgpu needs mdev_type", "nvidia-735"),
        (entry(mode="vgpu", mdev_type="nvidia-1", mdev_class="vgpu-x"), "mdev_class 'vgpu-x'", "CUSTOM_"),
        (entry(live_migratable="maybe"), "live_migratable 'maybe' is not a boolean", "true or false"),
        (entry(colour="red"), "unknown key 'colour'", "the keys are"),
    ],
)
def test_each_bad_field_is_named_with_its_fix(bad, field, fix):
    errors = policy_errors([GOOD, bad])
    assert len(errors) == 1, errors
    assert errors[0].startswith("device policy entry 2")
    assert field in errors[0] and fix in errors[0]


def test_every_bad_field_is_reported_at_once():
    errors = policy_errors([entry(vendor_id="xx", product_id="yy", mode="z")])
    assert len(errors) == 3


def test_same_alias_name_with_different_device_type_or_numa_policy_is_refused():
    other = entry(product_id="1eb8", device_type="type-PF")
    errors = policy_errors([entry(device_type="type-PCI"), other])
    assert len(errors) == 1 and "device_type" in errors[0] and "Nova refuses" in errors[0]
    errors = policy_errors([entry(numa_policy="required"), entry(product_id="1eb8")])
    assert len(errors) == 1 and "numa_policy" in errors[0]


def test_two_vgpu_types_on_one_address_are_refused():
    a = {
        "name": "a",
        "vendor_id": "10de",
        "product_id": "25b6",
        "mode": "vgpu",
        "mdev_type": "nvidia-1",
        "addresses": ["0000:84:00.0"],
    }
    b = dict(a, name="b", mdev_type="nvidia-2")
    errors = policy_errors([a, b])
    assert any("0000:84:00.0 is already given mdev_type nvidia-1" in e for e in errors)


def test_a_model_split_between_entries_needs_addresses_everywhere():
    errors = policy_errors([entry(), entry(name="other", mode="none")])
    assert len(errors) == 1 and "every entry must list its addresses" in errors[0]
    assert not policy_errors(
        [entry(addresses=["0000:18:00.0"]), entry(name="o", mode="none", addresses=["0000:2a:00.0"])]
    )


def test_a_policy_that_is_not_a_list_is_refused():
    with pytest.raises(PolicyError, match="must be a list"):
        parse_policy({"name": "x"})
    assert parse_policy(None) == []
