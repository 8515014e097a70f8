"""What counts as the same config for Nova when the nova_config stage compares before and after."""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._nova.deployed import merge_oslo, parse_ini
from ansible_collections.accel.openstack.plugins.module_utils._nova.equivalence import normalized

SPEC = '{"vendor_id": "10de", "product_id": "1eb8", "resource_class": "CUSTOM_NVIDIA_T4"}'
SPEC_REORDERED = '{"resource_class": "CUSTOM_NVIDIA_T4", "product_id": "1eb8", "vendor_id": "10de"}'


def view(*texts: str) -> dict:
    return normalized(merge_oslo(list(texts)))


@pytest.mark.parametrize(
    ("operator", "rendered"),
    [
        (f"[pci]\ndevice_spec = {SPEC_REORDERED}\n",
         f"# accel.openstack owns: pci.device_spec\n[pci]\ndevice_spec = {SPEC}\n"),
        (f"[pci]\nalias = [{SPEC}]\n", f"[pci]\nalias = {SPEC}\nalias = {SPEC}\n"),
        ("[pci]\nreport_in_placement = True\n", "[pci]\nreport_in_placement = yes\n"),
        ("[filter_scheduler]\nenabled_filters = A, B,C\n", "[filter_scheduler]\nenabled_filters = A,B,C\n"),
        ("[mdev_x]\ndevice_addresses = 0000:84:00.5,0000:84:00.4\n",
         "[mdev_x]\ndevice_addresses = 0000:84:00.4,0000:84:00.5\nmdev_class = VGPU\n"),
        ("[pci]\nreport_in_placement = true\n",
         '[pci]\nreport_in_placement = true\ndevice_spec = {"vendor_id": "ffff", "product_id": "ffff"}\n'),
        # IDs as Nova reads them, and the file as oslo.config reads it
        (f"[PCI]\ndevice_spec: {SPEC.replace('10de', '0x10DE').replace('1eb8', ' 1eb8 ')}\n",
         f"[pci]\ndevice_spec = {SPEC}\n"),
        ('[pci]\nalias = {"name": "t4", "vendor_id": "10DE", "product_id": "1EB8"}\n',
         '[pci]\nalias = {"name": "t4",\n  "vendor_id": "10de", "product_id": "1eb8"}\n'),
    ],
)  # fmt: skip
def test_the_same_config_in_other_words_reads_the_same(operator, rendered):
    assert view(operator) == view(rendered)


@pytest.mark.parametrize(
    ("operator", "rendered"),
    [
        (f"[pci]\ndevice_spec = {SPEC}\n", f'[pci]\ndevice_spec = {SPEC[:-1]}, "traits": "GOLD"}}\n'),
        ("[filter_scheduler]\nenabled_filters = A,B\n", "[filter_scheduler]\nenabled_filters = B,A\n"),
        ("[mdev_x]\nmdev_class = CUSTOM_X\n", "[mdev_x]\nmdev_class = VGPU\n"),
        ("[pci]\nreport_in_placement = false\n", "[pci]\nreport_in_placement = true\n"),
        ("[mdev_x]\nmax_instances = 1\n", "[mdev_x]\nmax_instances = true\n"),
        ('[pci]\nalias = {"name": "a"}\nalias = {"name": "b"}\n',
         '[pci]\nalias = {"name": "b"}\nalias = {"name": "a"}\n'),
        # Nova refuses an alias ID written as a number: not the same as the plain ID
        ('[pci]\nalias = {"name": "t4", "vendor_id": "0x10de", "product_id": "1eb8"}\n',
         '[pci]\nalias = {"name": "t4", "vendor_id": "10de", "product_id": "1eb8"}\n'),
        (f"[ pci ]\ndevice_spec = {SPEC}\n", f"[pci]\ndevice_spec = {SPEC}\n"),
    ],
)  # fmt: skip
def test_a_difference_nova_reads_is_a_difference(operator, rendered):
    assert view(operator) != view(rendered)


def test_a_later_conf_d_file_that_repeats_the_config_changes_nothing_nova_reads():
    nova_conf = f"[pci]\ndevice_spec = {SPEC}\nreport_in_placement = true\n"
    ours = f"# accel.openstack owns: pci.device_spec pci.report_in_placement\n[pci]\ndevice_spec = {SPEC}\n"
    assert view(nova_conf) == view(nova_conf, ours + "report_in_placement = true\n")
    assert normalized(parse_ini("[pci]\nalias = not json\n")) == {("pci", "alias"): ("not json",)}
