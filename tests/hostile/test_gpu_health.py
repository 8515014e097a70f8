"""Hostile input to the gpu_health module, its filters and its role: refused with a message, bounded,
nothing read from outside the root, nothing written."""

from __future__ import annotations

import json
import os
import sys

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter.gpu_health import FilterModule
from tests.hostile.conftest import SECRET, assert_secret_absent, no_traceback, regular_files, warnings_of
from tests.support.ansible_runner import run_module, run_playbook

CASE_SECONDS = 60
RECORDED = "var/lib/accel-openstack/nvidia-smi/q-x.xml"
FILTERS = FilterModule().filters()
GOOD_XML = '<nvidia_smi_log><gpu id="00000000:18:00.0"><product_name>NVIDIA H100</product_name></gpu></nvidia_smi_log>'


def root_with(tmp_path, files: dict[str, str]) -> str:
    root = tmp_path / "root"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    root.mkdir(exist_ok=True)
    return str(root)


def test_a_recorded_xml_linked_outside_the_root_is_read_inside_it(tmp_path, outside):
    root = root_with(tmp_path, {"var/log/kern.log": ""})
    (tmp_path / "root" / RECORDED).parent.mkdir(parents=True)
    os.symlink(str(outside / "secret.txt"), tmp_path / "root" / RECORDED)
    before = regular_files(root)
    result = run_module("gpu_health", {"root": root})
    # the absolute link target is resolved inside the root, where there is no such file
    assert result.get("failed") is None and result["devices"] == [], result
    assert_secret_absent(result)
    assert regular_files(root) == before


def test_a_kernel_log_that_is_a_fifo_is_refused_not_opened(tmp_path):
    root = root_with(tmp_path, {RECORDED: GOOD_XML})
    (tmp_path / "root" / "var" / "log").mkdir(parents=True)
    os.mkfifo(tmp_path / "root" / "var" / "log" / "kern.log")
    result = run_module("gpu_health", {"root": root})
    no_traceback(result)
    assert result["msg"] == "/var/log/kern.log: not a regular file; give the kernel log as a file"


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY s SYSTEM "file:///etc/passwd">]><nvidia_smi_log>&s;</nvidia_smi_log>',
         "the XML carries an internal DTD subset"),
        ('<nvidia_smi_log><gpu id="00000000:18:00.0"><ecc_errors><volatile><dram_uncorrectable>1e9'
         "</dram_uncorrectable></volatile></ecc_errors></gpu></nvidia_smi_log>",
         "GPU 0000:18:00.0: ecc_errors/volatile/dram_uncorrectable is '1e9'; nvidia-smi writes a whole number or N/A"),
        ("<nvidia_smi_log><gpu id=\"00000000:18:00.0\"><remapped_rows><remapped_row_failure>" + "Y" * 5000
         + "</remapped_row_failure></remapped_rows></gpu></nvidia_smi_log>",
         "remapped_rows/remapped_row_failure is '" + "Y" * 60 + "' (and 4940 more characters)"),
        ("<nvidia_smi_log>" + "<gpu/>" * 3 + "</nvidia_smi_log>", "gpu 1: its id '' is not a PCI bus id"),
    ],
    ids=["external-entity", "float-count", "long-flag", "no-id"],
)  # fmt: skip
def test_a_recorded_xml_of_the_wrong_shape_fails_naming_the_file_and_field(tmp_path, xml, message):
    root = root_with(tmp_path, {RECORDED: xml})
    result = run_module("gpu_health", {"root": root})
    no_traceback(result)
    assert result["msg"].startswith(f"/{RECORDED}: ") and message in result["msg"], result["msg"]
    assert "/etc/passwd" not in str(result.get("devices"))


def test_a_kernel_log_of_binary_noise_and_lying_xid_lines_counts_nothing(tmp_path):
    noise = "\x00\x1b[31mNVRM: Xid (PCI:0000:18:00): 79\x00, pid=1\n" + "NVRM: Xid (PCI:../../etc): 79, x\n"
    root = root_with(tmp_path, {RECORDED: GOOD_XML, "var/log/kern.log": noise * 3})
    result = run_module("gpu_health", {"root": root})
    assert [d["state"] for d in result["devices"]] == ["healthy"], result
    said = warnings_of(result)
    assert (
        "line 1: an Xid line whose PCI address or Xid number cannot be read (NVRM: Xid (PCI:0000:18:00): 79 , pid=1)"
        in said
    )
    assert (
        "line 2: an Xid line whose PCI address or Xid number cannot be read (NVRM: Xid (PCI:../../etc): 79, x)" in said
    )


@pytest.mark.parametrize(
    ("health", "message"),
    [
        ({"h": {"devices": "all"}}, "host h: accel_gpu_health must be the gpu_health module's fact"),
        ({"h": {"devices": [{"address": "../x", "state": "failed", "classes": []}]}}, "address ../x is not a PCI"),
        ({"h": {"devices": [{"address": "0000:18:00.0", "state": "failed", "classes": [], "last_event": "soon"}]}},
         "last_event soon is not a time such as 2026-12-01T09:12:41Z"),
    ],
)  # fmt: skip
def test_the_metrics_filter_refuses_facts_of_the_wrong_shape(health, message):
    with pytest.raises(AnsibleFilterError) as caught:
        FILTERS["gpu_health_metrics"](health["h"], "h")
    assert message in str(caught.value)


def test_the_plan_filter_refuses_a_fleet_that_is_no_snapshot():
    with pytest.raises(AnsibleFilterError, match="the fleet must be placement_info's snapshot"):
        FILTERS["gpu_health_plan"]({}, "fleet")


@pytest.mark.parametrize("name", ["../../outside.prom", "metrics.txt", "gpu.prom\n"], ids=["path", "suffix", "newline"])
def test_the_role_refuses_a_metrics_file_name_before_anything(tmp_path, name):
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    inventory = tmp_path / "hosts.json"
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory.write_text(json.dumps({"all": {"children": {"compute": {"hosts": {"h1": host}}}}}))
    extra = {
        "accel_placement_auth": {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": "t"}},
        "gpu_health_textfile_dir": str(textfile),
        "gpu_health_textfile_name": name,
    }
    report = run_playbook("playbooks/health.yml", str(inventory), extra)
    assert report["rc"] != 0
    assert "gpu_health_textfile_name must be a plain file name ending in .prom" in report["stdout"] + str(
        report["plays"]
    )
    assert list(tmp_path.rglob("*.prom")) == [] and not (tmp_path.parent / "outside.prom").exists()
    assert SECRET not in str(report["plays"])
