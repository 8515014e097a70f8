"""The PCI address grammar: one parser and one normal form for every caller."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import (
    PciAddressError,
    is_address,
    is_normal_address,
    is_pci_id,
    normalize_address,
    parse_address,
)


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("0000:41:00.0", "0000:41:00.0"),
        ("0000:3B:00.1", "0000:3b:00.1"),
        ("41:00.0", "0000:41:00.0"),
        ("10000:00:05.0", "10000:00:05.0"),  # Intel VMD puts its devices in domains from 0x10000
        ("00000000:3B:00.0", "0000:3b:00.0"),  # nvidia-smi pads the domain to eight digits
        ("0001:00:1f.7", "0001:00:1f.7"),
    ],
)
def test_addresses_parse_to_the_form_sysfs_uses(text, normal):
    assert normalize_address(text) == normal
    assert str(parse_address(text)) == normal
    assert is_address(text)


@pytest.mark.parametrize(
    "text",
    [
        "0000:41:00.0\n",
        " 0000:41:00.0",
        "0000:41:00.8",
        "000:41:00.0",
        "0000:41:00",
        "0000:4:00.0",
        "000000000:41:00.0",
        "0000:41:00.0.0",
        "pci0000:00",
        "",
        None,
        4100,
    ],
)
def test_anything_else_is_refused_with_the_form_to_write(text):
    assert not is_address(text)
    with pytest.raises(PciAddressError) as caught:
        parse_address(text)
    assert isinstance(caught.value, AccelError)
    assert "0000:41:00.0" in str(caught.value) and repr(text) in str(caught.value)


def test_a_caller_may_require_the_domain():
    assert is_address("41:00.0") and not is_address("41:00.0", require_domain=True)
    with pytest.raises(PciAddressError, match="full PCI address"):
        normalize_address("41:00.0", require_domain=True)


def test_only_the_normal_form_is_a_sysfs_name():
    assert is_normal_address("0000:41:00.0") and is_normal_address("10000:00:05.0")
    assert not is_normal_address("0000:3B:00.0") and not is_normal_address("41:00.0")


def test_pci_ids_are_four_hex_digits():
    assert is_pci_id("10de") and is_pci_id("2A3F")
    assert not is_pci_id("10de\n") and not is_pci_id("10d") and not is_pci_id(4318)
