"""gpu_restore stands alone on the host, so it repeats the PCI address grammar: it must answer exactly as
_names/pci.py does, on valid addresses and on hostile text alike."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import boot_state, gpu_restore
from ansible_collections.accel.openstack.plugins.module_utils._names import pci

VALID = ["0000:41:00.0", "0000:00:00.7", "10000:00:05.0", "ffffffff:ff:1f.7", "0001:ab:cd.3", "abcd:ef:01.2"]
HOSTILE = [
    "",
    "0000:41:00.8",
    "41:00.0",
    "0000:41:00.0\n",
    "\n0000:41:00.0",
    " 0000:41:00.0",
    "0000:41:00.0 ",
    "0000:41:00.0\x00",
    "0000:41:00.0\r",
    "0000:41:00.0\x1b[2J",
    "0000:41:00.0/../../etc",
    "../0000:41:00.0",
    "..",
    "/",
    "0000:41:00.0/",
    "0000:41:00",
    "0000:4:00.0",
    "000:41:00.0",
    "000000000:41:00.0",
    "00000000:41:00.0",
    "00010000:00:05.0",
    "0000:41:00.0.0",
    "0000:41:00:0",
    "0000:AB:00.0",
    "ABCD:ef:01.2",
    "0000:٤1:00.0",
    "0000:41:00.٠",
    "0000:４1:00.0",
    "0x00:41:00.0",
    "0000:41:00.-1",
    "g000:41:00.0",
    None,
    41,
    ["0000:41:00.0"],
    b"0000:41:00.0",
]


@pytest.mark.parametrize("text", VALID + HOSTILE, ids=repr)
def test_the_standalone_check_answers_as_the_one_grammar(text):
    assert gpu_restore.is_normal_address(text) is pci.is_normal_address(text)


def test_the_valid_set_is_valid_and_the_hostile_set_is_not():
    assert all(gpu_restore.is_normal_address(t) for t in VALID)
    assert not any(gpu_restore.is_normal_address(t) for t in HOSTILE)


def test_every_case_variant_of_a_valid_address_agrees():
    for text in VALID:
        for variant in (text.upper(), text.swapcase(), text.title()):
            assert gpu_restore.is_normal_address(variant) is pci.is_normal_address(variant), variant


def test_pci_facts_reads_the_boot_state_where_the_restore_code_writes_it():
    assert boot_state.PATH == gpu_restore.BOOT_STATE
