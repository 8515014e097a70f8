"""Deployed Nova config files that oslo.config refuses, or that Nova reads otherwise than they look.

nova_config_info fails on a file Nova would not start with, naming the file, the line and the fix, in
both layouts and in check mode; the audit sees through ID spellings that Nova reads as the plain ID (an
IOMMU-off host stays an error however its device_spec writes ``10de``) and reports the spellings Nova
refuses.
"""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._nova.adopt import adopt
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud
from tests.hostile.conftest import no_traceback
from tests.support import audit_cloud as world
from tests.support.ansible_runner import run_module

REFUSED = {
    "bom": (b"\xef\xbb\xbf[pci]\nalias = {}\n", 1, "byte-order mark"),
    "indented_section_header": (b"[DEFAULT]\n  [pci]\ndevice_spec = {}\n", 2, "remove the indentation"),
    "indented_comment_after_blank_line": (b"[pci]\nalias = {}\n\n  # note\n", 4, "comment must start"),
    "header_with_trailing_text": (b"[pci] # GPUs\n", 1, "Invalid section (must end with ])"),
    "empty_section_name": (b"[]\n", 1, "Empty section name"),
    "key_before_any_section": (b"device_spec = {}\n[pci]\n", 2, "Section must be started before assignment"),
    "line_without_separator": (b"[pci]\ndevice_spec\n", 2, "No ':' or '=' found"),
    "empty_key": (b"[pci]\n= {}\n", 2, "Key cannot be empty"),
    "not_utf8": (b'[pci]\nalias = {"name": "caf\xe9"}\n', 2, "not UTF-8"),
}


def _write(path, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_conf_d_file_oslo_refuses_fails_the_read_naming_file_and_line(tmp_path, case):
    data, line, words = REFUSED[case]
    root = tmp_path / "root"
    _write(root / "etc/nova/nova.conf", b"[pci]\nreport_in_placement = true\n")
    _write(root / "etc/nova/nova.conf.d/50-gpu.conf", data)
    result = run_module(
        "nova_config_info", {"root": str(root), "layout": "nova_conf_d", "compute_hosts": ["h"]}, check=True
    )
    assert result.get("failed"), result
    no_traceback(result)
    assert result["msg"].startswith(f"/etc/nova/nova.conf.d/50-gpu.conf line {line}: "), result["msg"]
    assert words in result["msg"], result["msg"]
    assert "..." not in result["msg"]


@pytest.mark.parametrize("case", ["bom", "indented_section_header", "key_before_any_section"])
def test_a_kolla_override_oslo_refuses_fails_the_read_naming_file_and_line(tmp_path, case):
    data, line, words = REFUSED[case]
    root = tmp_path / "root"
    _write(root / "etc/kolla/config/nova/gpu-1/nova.conf", data)
    result = run_module("nova_config_info", {"root": str(root), "compute_hosts": ["gpu-1"]}, check=True)
    assert result.get("failed"), result
    no_traceback(result)
    assert result["msg"].startswith(f"/etc/kolla/config/nova/gpu-1/nova.conf line {line}: "), result["msg"]
    assert words in result["msg"]


def test_the_first_refused_file_in_reading_order_is_named(tmp_path):
    root = tmp_path / "root"
    _write(root / "etc/nova/nova.conf", b"[pci]\n")
    _write(root / "etc/nova/nova.conf.d/20-b.conf", b"[pci\n")
    _write(root / "etc/nova/nova.conf.d/10-a.conf", b"[pci]\n\n  [devices]\n")
    result = run_module("nova_config_info", {"root": str(root), "layout": "nova_conf_d", "compute_hosts": ["h"]})
    assert result.get("failed") and result["msg"].startswith("/etc/nova/nova.conf.d/10-a.conf line 3: "), result


def test_what_looks_like_pci_config_is_read_as_nova_reads_it(tmp_path):
    """``[ pci ]`` is another group, ``[PCI]`` is [pci], ``:`` separates, an indented line continues the value."""
    root = tmp_path / "root"
    spec = '{"vendor_id": "10de", "product_id": "%s"}'
    text = (
        "[ pci ]\ndevice_spec = " + spec % "0001" + "\n"
        "[PCI]\ndevice_spec: " + spec % "0002" + "\n"
        "[pci]\nalias = {\"name\": \"a100\",\n  \"vendor_id\": \"10de\", \"product_id\": \"20b5\"}\n"
        "report_in_placement = false\nreport_in_placement = true\n"
    )  # fmt: skip
    _write(root / "etc/nova/nova.conf", text.encode())
    result = run_module(
        "nova_config_info", {"root": str(root), "layout": "nova_conf_d", "compute_hosts": ["h"]}, check=True
    )
    assert not result.get("failed"), result
    config = result["deployed"]["h"]["compute"]
    assert config["pci"]["device_spec"] == [spec % "0002"]
    assert config["pci"]["alias"] == ['{"name": "a100",\n"vendor_id": "10de", "product_id": "20b5"}']
    assert config["pci"]["report_in_placement"] == ["true"]
    assert config[" pci "]["device_spec"] == [spec % "0001"]


# -- the audit and the adoption: IDs as Nova reads them ---------------------------------------------
@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    return world.healthy(str(tmp_path_factory.mktemp("cloud")))


def _iommu_off(cloud, tmp_path, device_spec: str) -> None:
    prof = world.profile("configured-t4")
    prof["iommu"] = "none"
    facts, _roots = world.build_facts(str(tmp_path), {"t4-01": prof})
    cloud["hosts"]["t4-01"] = facts["t4-01"]
    cloud["deployed"]["t4-01"]["compute"]["pci"]["device_spec"] = [device_spec]


def _audit(cloud) -> list[dict]:
    result = audit_cloud(cloud["hosts"], cloud["deployed"], cloud["fleet"], cloud["flavors"], cloud["policy"])
    return [f for f in result["findings"] if f["host"] == "t4-01" and f["severity"] == "error"]


@pytest.mark.parametrize(
    "vendor, product",
    [("0x10de", "1eb8"), ("10DE", "1EB8"), ("10de ", " 1eb8"), (" 0X10DE\n", "0x1eb8"), ("010de", "01eb8")],
)
def test_an_iommu_off_host_is_not_hidden_by_how_device_spec_spells_the_ids(healthy, tmp_path, vendor, product):
    cloud = copy.deepcopy(healthy)
    spec = f'{{"vendor_id": "{vendor}", "product_id": "{product}", "resource_class": "CUSTOM_NVIDIA_T4"}}'.replace(
        "\n", "\\n"
    )
    _iommu_off(cloud, tmp_path, spec)
    (found,) = _audit(cloud)
    assert found["code"] == "iommu_off", found
    assert "[pci] device_spec hands out 1 device(s) (0000:b0:00.0)" in found["message"]


@pytest.mark.parametrize(
    "spec, reason",
    [
        ('{"vendor_id": "0x10dg", "product_id": "1eb8"}', 'vendor_id "0x10dg" does not parse as a hex number'),
        ('{"vendor_id": "10de", "product_id": "10000"}', 'product_id "10000" is greater than ffff'),
        ('{"vendor_id": 4318, "product_id": "1eb8"}', "vendor_id 4318 is not text"),
        ('{"vendor_id": "10de", "product_id": " * "}', 'product_id " * " does not parse as a hex number'),
    ],
)
def test_a_device_spec_nova_refuses_is_an_error_that_says_why(healthy, tmp_path, spec, reason):
    cloud = copy.deepcopy(healthy)
    _iommu_off(cloud, tmp_path, spec)
    (found,) = [f for f in _audit(cloud) if f["code"] == "nova_config_unreadable"]
    assert reason in found["message"] and "nova-compute refuses to start" in found["message"], found
    # it claims nothing: the IOMMU-off host then offers nothing through device_spec
    assert not [f for f in _audit(cloud) if f["code"] == "iommu_off"]


def test_an_alias_nova_refuses_is_an_error_and_not_adopted():
    bad = '{"name": "t4", "vendor_id": "0x10de", "product_id": "1eb8"}'
    adopted = adopt({"h": {"pci": {"alias": [bad]}}}, {"h": {}})
    assert adopted["accel_device_policy"] == []
    (note,) = adopted["unexpressed"]
    assert 'alias vendor_id "0x10de" is not exactly 4 hex digits' in note["reason"]


def test_adoption_reads_device_spec_ids_as_nova_does():
    spec = '{"vendor_id": "0x10DE", "product_id": " 2330 "}'
    alias = '{"name": "h100", "vendor_id": "10DE", "product_id": "2330", "device_type": "type-PCI"}'
    adopted = adopt({"h": {"pci": {"device_spec": [spec], "alias": [alias]}}}, {"h": {}})
    (entry,) = adopted["accel_device_policy"]
    assert (entry["name"], entry["vendor_id"], entry["product_id"]) == ("h100", "10de", "2330")
