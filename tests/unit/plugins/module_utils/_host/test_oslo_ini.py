"""oslo.config's INI rules, one by one (the differential test checks the same reader against oslo.config itself)."""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.oslo_ini import OsloIniError, parse, parse_groups
from ansible_collections.accel.openstack.plugins.module_utils._nova import device_ids


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[pci]\nalias = a\n  b\n\tc\n", {"pci": {"alias": ["a\nb\nc"]}}),
        ("[pci]\nalias = a\n  # kept\nx = 1\n", {"pci": {"alias": ["a\n# kept"], "x": ["1"]}}),
        ("[pci]\ndevice_spec: {\"a\": 1}\n", {"pci": {"device_spec": ['{"a": 1}']}}),
        ("[pci]\na:b = c\nd = e:f\n", {"pci": {"a": ["b = c"], "d": ["e:f"]}}),
        ("[PCI]\nalias = 1\n[pci]\nalias = 2\n[Pci]\nalias = 3\n", {"pci": {"alias": ["1", "2", "3"]}}),
        ("[ pci ]\nalias = 1\n", {" pci ": {"alias": ["1"]}}),
        ("[DEFAULT]\nx = 1\n[default]\nx = 2\n", {"DEFAULT": {"x": ["1"]}, "default": {"x": ["2"]}}),
        ("[pci]\na = \"q\"\nb = 'r'\nc = \"s'\nd = \"\n", {"pci": {"a": ["q"], "b": ["r"], "c": ["\"s'"], "d": [""]}}),
        ("[pci]\r\nalias = a\r\n  b\r\n", {"pci": {"alias": ["a\nb"]}}),
        ("[pci]\ralias = a\r", {"pci": {"alias": ["a"]}}),
        ("[pci]\nDevice_Spec = x\n", {"pci": {"Device_Spec": ["x"]}}),
    ],
)  # fmt: skip
def test_a_file_reads_as_oslo_config_reads_it(text, expected):
    assert parse_groups(text, "/etc/nova/nova.conf") == expected


def test_sections_keep_their_names_as_written_before_grouping():
    assert parse("[PCI]\nalias = 1\n[pci]\nalias = 2\n") == {"PCI": {"alias": ["1"]}, "pci": {"alias": ["2"]}}


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("\ufeff[pci]\n", 1, "No ':' or '=' found in assignment"),
        ("[DEFAULT]\n  [pci]\n", 2, "Unexpected continuation line"),
        ("[pci]\nalias = a\n\n  # c\n", 4, "Unexpected continuation line"),
        ("[pci] # c\n", 1, "Invalid section (must end with ])"),
        ("[]\n", 1, "Empty section name"),
        ("[pci]\n= 1\n", 2, "Key cannot be empty"),
        ("alias = a\n[pci]\n", 2, "Section must be started before assignment"),
        ("alias = a", 1, "Section must be started before assignment"),
    ],
)
def test_a_file_oslo_config_refuses_is_refused_at_its_line(text, line, reason):
    with pytest.raises(OsloIniError) as caught:
        parse_groups(text, "/etc/nova/nova.conf.d/50-gpu.conf")
    assert (caught.value.line_number, caught.value.reason) == (line, reason)
    assert str(caught.value).startswith(f"/etc/nova/nova.conf.d/50-gpu.conf line {line}: oslo.config refuses this file")


def test_jinja_statement_lines_of_a_kolla_override_are_skipped():
    text = "[pci]\n{% if gpu %}\nalias = a\n  b\n{% endif %}\n"
    assert parse(text, "global.conf", template_lines=True) == {"pci": {"alias": ["a\nb"]}}
    with pytest.raises(OsloIniError):
        parse(text, "nova.conf")


@pytest.mark.parametrize(
    ("spec", "ids"),
    [
        ({"vendor_id": "0x10DE", "product_id": " 1eb8 "}, ("10de", "1eb8")),
        ({"vendor_id": " * "}, ("*", "*")),
        ({"vendor_id": "010de", "product_id": "-1"}, ("10de", "-001")),
    ],
)
def test_device_spec_ids_read_as_nova_reads_them(spec, ids):
    assert device_ids.spec_ids(spec) == ids


@pytest.mark.parametrize(
    "spec",
    [{"vendor_id": "10dg"}, {"vendor_id": "10000"}, {"vendor_id": 4318}, {"product_id": " * "}, {"vendor_id": None}],
)
def test_device_spec_ids_nova_refuses_are_refused(spec):
    with pytest.raises(device_ids.DeviceIdError):
        device_ids.spec_ids(spec)
