"""The INI editor owns only the keys it writes."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import (
    IniError,
    owned_keys,
    render_text,
    update_text,
)

OPERATOR = """# operator's file
[DEFAULT]
debug = True

[pci]
# keep this comment
passthrough_whitelist_note = mine

[libvirt]
cpu_mode = host-passthrough
"""
WANTED = {"pci": {"device_spec": ['{"a": 1}', '{"b": 2}'], "alias": ['{"name": "x"}']}, "devices": {"x": ["1"]}}


def test_multi_valued_keys_are_repeated_lines_in_the_given_order():
    text = render_text(WANTED)
    assert text.splitlines()[0] == "# accel.openstack owns: devices.x pci.alias pci.device_spec"
    assert '[pci]\ndevice_spec = {"a": 1}\ndevice_spec = {"b": 2}\nalias = {"name": "x"}\n' in text
    assert text.endswith("[devices]\nx = 1\n")


def test_other_keys_and_comments_are_kept():
    text = update_text(OPERATOR, WANTED)
    for line in OPERATOR.splitlines():
        assert line in text.splitlines()
    assert owned_keys(text) == {("pci", "device_spec"), ("pci", "alias"), ("devices", "x")}


def test_second_update_is_identical():
    once = update_text(OPERATOR, WANTED)
    assert update_text(once, WANTED) == once


def test_keys_no_longer_wanted_are_removed_and_empty_sections_dropped():
    once = update_text(OPERATOR, WANTED)
    later = update_text(once, {"pci": {"alias": ['{"name": "y"}']}})
    assert "device_spec" not in later and "[devices]" not in later
    assert 'alias = {"name": "y"}' in later and '"x"' not in later
    assert "passthrough_whitelist_note = mine" in later
    assert update_text(later, {}).count("accel.openstack owns") == 0


def test_a_key_we_now_own_replaces_the_operators_copy():
    text = update_text('[pci]\nalias = {"name": "old"}\n', {"pci": {"alias": ['{"name": "new"}']}})
    assert '"old"' not in text and text.count("alias =") == 1


def test_untouched_file_is_returned_byte_for_byte():
    assert update_text("[a]\nb=c\n\n\n", {}) == "[a]\nb=c\n\n\n"


@pytest.mark.parametrize(
    "bad",
    [{"pci": {"alias": ["a\nb"]}}, {"pc]i": {"a": ["1"]}}, {"pci": {"a=b": ["1"]}}, {"pci": {"a": "1"}}],
)
def test_values_that_cannot_be_written_are_refused(bad):
    with pytest.raises(IniError):
        update_text("", bad)
