"""GPU health from recorded outputs of real GPUs: nvidia-smi -q -x, kernel logs in their four formats, DCGM.

The fixtures under tests/fixtures/nvidia/health are written as the tools write them: nvidia-smi 550's XML
(nvsmi_device_v12, with its DOCTYPE line), /var/log/kern.log of rsyslog's traditional format, journalctl -k
-o short-iso, dmesg -T, plain dmesg, and dcgm-exporter's metrics with its labels.
"""

from __future__ import annotations

import calendar
import os
import time

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_health, xid
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "..", "..", "fixtures", "nvidia", "health")
NOW = calendar.timegm((2026, 12, 1, 17, 0, 0, 0, 0, 0))  # 2026-12-01T17:00:00Z


def fixture(name: str) -> str:
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def by_address(devices: list[dict]) -> dict[str, dict]:
    return {d["address"]: d for d in devices}


# -- nvidia-smi -q -x -------------------------------------------------------------------------------------
def test_healthy_gpus_have_no_condition_and_keep_their_identity():
    smi = gpu_health.parse_smi(fixture("q-x-healthy.xml"), "q-x-healthy.xml")
    assert sorted(smi) == ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0"]
    gpu = smi["0000:2a:00.0"]
    assert (gpu["index"], gpu["minor_number"], gpu["product_name"], gpu["uuid"]) == (
        1, 1, "NVIDIA H100 80GB HBM3", "GPU-7b1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e02"
    )  # fmt: skip
    assert all(g["conditions"] == [] and g["lost"] is False for g in smi.values())
    devices = gpu_health.assess(smi, [], NOW, 3600)
    assert [d["state"] for d in devices] == ["healthy"] * 4
    assert devices[0]["bus_id"] == "00000000:18:00.0" and devices[0]["device"] == "nvidia0"


def test_failing_gpus_row_remap_failure_pending_rows_pending_pages_and_a_lost_gpu():
    smi = gpu_health.parse_smi(fixture("q-x-failing.xml"), "q-x-failing.xml")
    devices = by_address(gpu_health.assess(smi, [], NOW, 3600))
    assert devices["0000:18:00.0"]["classes"] == ["row_remap_failure", "uncorrectable_ecc"]
    assert devices["0000:18:00.0"]["state"] == "failed"
    assert smi["0000:18:00.0"]["volatile_uncorrectable"] == 3
    assert (devices["0000:2a:00.0"]["state"], devices["0000:2a:00.0"]["classes"]) == ("degraded", ["row_remap_pending"])
    assert (devices["0000:3a:00.0"]["state"], devices["0000:3a:00.0"]["classes"]) == (
        "degraded", ["retired_pages_pending"]
    )  # fmt: skip
    lost = devices["0000:5d:00.0"]
    assert (lost["state"], lost["classes"], lost["product_name"], lost["uuid"]) == ("failed", ["gpu_lost"], None, None)
    assert lost["events"][0]["detail"] == "its product_name or uuid reads Unknown Error or GPU is lost"
    assert lost["events"][0]["action"].startswith("drain the host, then reset the GPU or power-cycle the host")


def test_older_drivers_double_bit_total_and_pending_blacklist_count_too():
    text = (
        '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">\n<nvidia_smi_log>'
        '<gpu id="00000000:3B:00.0"><product_name>Tesla V100-SXM2-32GB</product_name>'
        "<ecc_errors><volatile><single_bit><total>4</total></single_bit><double_bit><total>1</total></double_bit>"
        "</volatile></ecc_errors><retired_pages><pending_blacklist>Yes</pending_blacklist></retired_pages></gpu>"
        "</nvidia_smi_log>"
    )
    device = gpu_health.assess(gpu_health.parse_smi(text, "v100.xml"), [], NOW, 60)[0]
    assert (device["address"], device["state"], device["classes"]) == (
        "0000:3b:00.0", "failed", ["retired_pages_pending", "uncorrectable_ecc"]
    )  # fmt: skip


def test_nvidia_smi_error_text_names_the_lost_gpu():
    text = "Unable to determine the device handle for GPU0000:5D:00.0: Unknown Error\n"
    assert gpu_health.lost_from_errors(text) == ["0000:5d:00.0"]
    assert gpu_health.lost_from_errors("GPU 00000000:3B:00.0: GPU is lost. Reboot the system to recover this GPU") == [
        "0000:3b:00.0"
    ]
    device = gpu_health.assess({}, [], NOW, 60, lost=["0000:5d:00.0"])[0]
    assert (device["state"], device["classes"], device["in_nvidia_smi"]) == ("failed", ["gpu_lost"], False)


# -- kernel logs ------------------------------------------------------------------------------------------
def test_xid_79_in_kern_log_with_its_local_time():
    events, warnings = xid.parse_kernel_log(fixture("kern-xid79.log"), "/var/log/kern.log", NOW)
    assert warnings == []
    assert [(e["address"], e["xid"], e["class"], e["state"], e["line"]) for e in events] == [
        ("0000:18:00.0", 79, "fell_off_bus", "failed", 7)
    ]
    event = events[0]
    assert event["meaning"] == "GPU has fallen off the bus (it no longer answers on PCI Express)"
    assert event["detail"] == "GPU has fallen off the bus." and event["pid"] is None and event["process"] is None
    assert event["stamp"] == time.mktime((2026, 12, 1, 9, 12, 41, 0, 0, -1))  # the host's local time


def test_ecc_xids_48_94_95_and_row_remapping_63_64_from_journalctl():
    events, warnings = xid.parse_kernel_log(fixture("journal-ecc.txt"), "journalctl -k", NOW)
    assert warnings == []
    found = [(e["address"], e["xid"], e["class"], e["state"], e["time"]) for e in events]
    assert found == [
        ("0000:18:00.0", 48, "uncorrectable_ecc", "failed", "2026-12-01T14:20:07Z"),
        ("0000:18:00.0", 63, "row_remap_pending", "degraded", "2026-12-01T14:20:07Z"),
        ("0000:2a:00.0", 94, "contained_ecc", "degraded", "2026-12-01T15:41:52Z"),
        ("0000:3a:00.0", 95, "uncorrectable_ecc", "failed", "2026-12-01T16:03:30Z"),
        ("0000:5d:00.0", 92, "high_sbe_rate", "degraded", "2026-12-01T16:09:11Z"),
        ("0000:5d:00.0", 64, "row_remap_failure", "failed", "2026-12-01T16:10:45Z"),
    ]
    assert events[2]["pid"] == "88213" and events[2]["process"] == "python3"
    assert events[2]["meaning"].startswith("Contained ECC error")
    assert events[3]["meaning"].startswith("Uncontained ECC error")
    devices = by_address(gpu_health.assess({}, events, NOW, 3600))
    # 14:20 is more than an hour before 17:00: the 48 and 63 are past, the GPU is healthy again
    assert devices["0000:18:00.0"]["state"] == "healthy" and devices["0000:18:00.0"]["classes"] == []
    assert [e["current"] for e in devices["0000:18:00.0"]["events"]] == [False, False]
    assert devices["0000:18:00.0"]["last_event"] == "2026-12-01T14:20:07Z"
    assert devices["0000:2a:00.0"]["state"] == "healthy"  # 15:41, past too
    assert (devices["0000:3a:00.0"]["state"], devices["0000:3a:00.0"]["classes"]) == ("failed", ["uncorrectable_ecc"])
    assert devices["0000:5d:00.0"]["classes"] == ["high_sbe_rate", "row_remap_failure"]
    # a wider window makes the older ones count
    wide = by_address(gpu_health.assess({}, events, NOW, 6 * 3600))
    assert wide["0000:18:00.0"]["classes"] == ["row_remap_pending", "uncorrectable_ecc"]


def test_every_catalogued_xid_has_its_meaning_and_application_xids_leave_the_gpu_healthy():
    events, _warnings = xid.parse_kernel_log(fixture("dmesg-T.txt"), "dmesg -T", NOW)
    assert [e["xid"] for e in events] == [13, 13, 31, 43, 45, 61, 62, 74, 119, 120]
    devices = by_address(gpu_health.assess({}, events, NOW, 86400))
    assert devices["0000:18:00.0"]["state"] == "healthy"  # 13, 31, 43, 45: the application's fault
    assert len(devices["0000:18:00.0"]["events"]) == 5
    assert (devices["0000:2a:00.0"]["state"], devices["0000:2a:00.0"]["classes"]) == ("failed", ["microcontroller"])
    assert devices["0000:3a:00.0"]["classes"] == ["nvlink"]
    assert devices["0000:5d:00.0"]["classes"] == ["gsp"]
    required = {13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120}
    assert required <= set(xid.CATALOG)
    assert xid.describe(79)["meaning"].startswith("GPU has fallen off the bus")
    assert xid.describe(48)["meaning"].startswith("Double-bit ECC error")
    assert xid.describe(92)["meaning"] == "High single-bit ECC error rate"
    assert xid.describe(63)["class"] == "row_remap_pending" and xid.describe(64)["class"] == "row_remap_failure"
    assert xid.describe(154)["class"] == "xid_other" and xid.describe(154)["state"] == "degraded"


def test_dmesg_seconds_since_boot_are_placed_with_the_boot_time_or_count_as_now():
    events, _warnings = xid.parse_kernel_log(fixture("dmesg.txt"), "dmesg", NOW, boot_time=NOW - 30000)
    assert [(e["xid"], e["stamp"]) for e in events] == [(79, NOW - 30000 + 21518.961110)]
    assert gpu_health.assess({}, events, NOW, 3600)[0]["state"] == "healthy"  # 2.3 hours ago
    unknown, _warnings = xid.parse_kernel_log(fixture("dmesg.txt"), "dmesg", NOW)
    assert unknown[0]["time"] is None
    assert gpu_health.assess({}, unknown, NOW, 3600)[0]["state"] == "failed"  # no time: it counts


# -- DCGM -------------------------------------------------------------------------------------------------
def test_dcgm_exporter_metrics_last_xid_row_remap_failure_and_health_status():
    samples, warnings = gpu_health.parse_dcgm(fixture("dcgm-metrics.txt"), "dcgm-metrics.txt")
    assert warnings == []
    assert len(samples) == 6 and samples[1]["labels"] == {
        "gpu": "1", "UUID": "GPU-7b1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e02", "device": "nvidia1",
        "modelName": "NVIDIA H100 80GB HBM3",
    }  # fmt: skip
    seen = [s["address"] for s in samples]
    devices = by_address(gpu_health.assess({}, gpu_health._dcgm_events(samples), NOW, 3600, seen=seen))
    assert devices["0000:18:00.0"]["state"] == "healthy"
    assert devices["0000:2a:00.0"]["classes"] == ["dcgm_health", "row_remap_failure", "uncorrectable_ecc"]
    assert devices["0000:2a:00.0"]["state"] == "failed"


# -- hostile input ----------------------------------------------------------------------------------------
def test_an_xml_with_an_entity_or_internal_dtd_is_refused_unexpanded():
    laughs = (
        '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>\n'
        '<nvidia_smi_log><gpu id="00000000:18:00.0"><product_name>&b;</product_name></gpu></nvidia_smi_log>'
    )
    with pytest.raises(gpu_health.GpuHealthError) as caught:
        gpu_health.parse_smi(laughs, "/var/lib/accel-openstack/nvidia-smi/q-x.xml")
    assert str(caught.value) == (
        "/var/lib/accel-openstack/nvidia-smi/q-x.xml: the XML carries an internal DTD subset; nvidia-smi -q -x never "
        "does, so it is refused unread (no entity is expanded)"
    )
    external = '<?xml version="1.0"?>\n<!DOCTYPE x SYSTEM "nvsmi.dtd">\n<nvidia_smi_log>&secret;</nvidia_smi_log>'
    with pytest.raises(gpu_health.GpuHealthError, match="refers to the undeclared entity secret"):
        gpu_health.parse_smi(external, "q-x.xml")


def test_huge_deep_or_broken_xml_is_refused_naming_the_file():
    with pytest.raises(gpu_health.GpuHealthError, match=r"^q-x.xml: 8,388,609 characters of XML; .* at most 8,388,608"):
        gpu_health.parse_smi("<" * (gpu_health.MAX_XML + 1), "q-x.xml")
    deep = "<nvidia_smi_log>" + "<a>" * 40 + "</a>" * 40 + "</nvidia_smi_log>"
    with pytest.raises(gpu_health.GpuHealthError, match="nests elements deeper than 32 levels"):
        gpu_health.parse_smi(deep, "q-x.xml")
    with pytest.raises(gpu_health.GpuHealthError, match=r"^q-x.xml: not well-formed XML \(mismatched tag at line 1\)"):
        gpu_health.parse_smi("<nvidia_smi_log><gpu></nvidia_smi_log>", "q-x.xml")
    with pytest.raises(gpu_health.GpuHealthError, match="the document element is <html>, not <nvidia_smi_log>"):
        gpu_health.parse_smi("<html/>", "q-x.xml")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("ecc_errors/volatile/dram_uncorrectable", "lots", "ecc_errors/volatile/dram_uncorrectable is 'lots'; "
         "nvidia-smi writes a whole number or N/A there"),
        ("ecc_errors/volatile/dram_uncorrectable", "-1", "is '-1'; nvidia-smi writes a whole number or N/A there"),
        ("remapped_rows/remapped_row_failure", "Maybe", "remapped_rows/remapped_row_failure is 'Maybe'; nvidia-smi "
         "writes Yes, No or N/A there"),
        ("retired_pages/pending_retirement", "1", "retired_pages/pending_retirement is '1'; nvidia-smi writes Yes, "
         "No or N/A there"),
    ],
)  # fmt: skip
def test_a_field_of_the_wrong_type_names_the_file_the_gpu_and_the_field(field, value, message):
    outer, inner = field.rsplit("/", 1)[0], field.rsplit("/", 1)[1]
    nested = "".join(f"<{p}>" for p in outer.split("/")) + f"<{inner}>{value}</{inner}>"
    nested += "".join(f"</{p}>" for p in reversed(outer.split("/")))
    text = f'<nvidia_smi_log><gpu id="00000000:18:00.0">{nested}</gpu></nvidia_smi_log>'
    with pytest.raises(gpu_health.GpuHealthError) as caught:
        gpu_health.parse_smi(text, "/tmp/q-x.xml")
    assert str(caught.value).startswith("/tmp/q-x.xml: GPU 0000:18:00.0: ")
    assert message in str(caught.value)


def test_a_gpu_with_no_bus_id_or_listed_twice_is_refused():
    with pytest.raises(gpu_health.GpuHealthError, match=r"gpu 1: its id 'GPU0' is not a PCI bus id"):
        gpu_health.parse_smi('<nvidia_smi_log><gpu id="GPU0"/></nvidia_smi_log>', "q-x.xml")
    twice = '<nvidia_smi_log><gpu id="00000000:18:00.0"/><gpu id="0000:18:00.0"/></nvidia_smi_log>'
    with pytest.raises(gpu_health.GpuHealthError, match="GPU 0000:18:00.0: listed twice"):
        gpu_health.parse_smi(twice, "q-x.xml")


def test_an_xid_line_with_a_bad_pci_address_is_a_warning_naming_the_line_and_counts_for_no_gpu():
    text = (
        "2026-12-01T16:59:00+0000 gpu-node-1 kernel: NVRM: Xid (PCI:0000:zz:00): 79, pid='<unknown>', name=<unknown>, "
        "GPU has fallen off the bus.\n"
        "2026-12-01T16:59:01+0000 gpu-node-1 kernel: NVRM: Xid (PCI:0000:18:00): seventy-nine\n"
        "2026-12-01T16:59:02+0000 gpu-node-1 kernel: NVRM: Xid (PCI:0000:18:00): 0, pid=1\n"
    )
    events, warnings = xid.parse_kernel_log(text, "/var/log/kern.log", NOW)
    assert events == []
    assert warnings == [
        "/var/log/kern.log line 1: an Xid line whose PCI address or Xid number cannot be read (NVRM: Xid "
        "(PCI:0000:zz:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.); it is not counted for "
        "any GPU",
        "/var/log/kern.log line 2: an Xid line whose PCI address or Xid number cannot be read (NVRM: Xid "
        "(PCI:0000:18:00): seventy-nine); it is not counted for any GPU",
        "/var/log/kern.log line 3: an Xid line whose PCI address or Xid number cannot be read (NVRM: Xid "
        "(PCI:0000:18:00): 0, pid=1); it is not counted for any GPU",
    ]


def test_dcgm_text_of_the_wrong_shape_is_refused_naming_the_line():
    with pytest.raises(
        gpu_health.GpuHealthError, match=r"^m.txt line 1: DCGM_FI_DEV_XID_ERRORS's value 'x' is not a number"
    ):
        gpu_health.parse_dcgm('DCGM_FI_DEV_XID_ERRORS{pci_bus_id="00000000:18:00.0"} x\n', "m.txt")
    with pytest.raises(gpu_health.GpuHealthError, match="m.txt line 2: labels .* are not in the exposition format"):
        gpu_health.parse_dcgm("# x\nDCGM_FI_DEV_XID_ERRORS{pci_bus_id=00000000:18:00.0} 79\n", "m.txt")
    with pytest.raises(gpu_health.GpuHealthError, match=r"m.txt: 200,001 lines of metrics; at most 200,000 are read"):
        gpu_health.parse_dcgm("#\n" * 200001, "m.txt")
    samples, warnings = gpu_health.parse_dcgm('DCGM_FI_DEV_XID_ERRORS{pci_bus_id="bus 3"} 79\n', "m.txt")
    assert samples == [] and warnings == [
        "m.txt line 1: DCGM_FI_DEV_XID_ERRORS has pci_bus_id 'bus 3', not a PCI bus id; the sample is not counted"
    ]


def test_a_huge_recorded_xml_is_refused_and_a_huge_log_is_read_from_its_end(tmp_path):
    recorded = tmp_path / "var" / "lib" / "accel-openstack" / "nvidia-smi"
    recorded.mkdir(parents=True)
    (recorded / "q-x.xml").write_text(" " * (gpu_health.MAX_XML + 1))
    host = HostRoot(str(tmp_path))
    with pytest.raises(gpu_health.GpuHealthError) as caught:
        gpu_health.gather(host, {"window": 3600}, NOW)
    assert str(caught.value) == (
        "/var/lib/accel-openstack/nvidia-smi/q-x.xml: 8,388,609 bytes; a nvidia-smi -q -x output is read up to "
        "8,388,608 bytes: give the nvidia-smi -q -x output itself"
    )
    (recorded / "q-x.xml").write_text(fixture("q-x-healthy.xml"))
    log = tmp_path / "var" / "log" / "kern.log"
    log.parent.mkdir(parents=True)
    old = "Dec  1 16:00:00 gpu-node-1 kernel: NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.\n"
    recent = "2026-12-01T16:59:00+0000 gpu-node-1 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n"
    with open(log, "w") as handle:
        handle.write(old)
        handle.write(("x" * 1023 + "\n") * (gpu_health.MAX_LOG // 1024 + 1))
        handle.write(recent)
    result = gpu_health.gather(host, {"window": 3600}, NOW)
    assert result["sources"]["kernel_log"] == {"file": "/var/log/kern.log", "cut": True}
    states = {d["address"]: d["state"] for d in result["devices"]}
    assert states["0000:18:00.0"] == "failed" and states["0000:2a:00.0"] == "healthy"  # the old line was not read


@pytest.mark.parametrize("window", [0, -5, True, "3600", 31 * 86400 + 1])
def test_a_window_that_is_not_seconds_is_refused(window):
    with pytest.raises(gpu_health.GpuHealthError, match="give the seconds an event counts for the GPU's state, 1 to"):
        gpu_health.check_window(window)


def test_a_flood_of_xid_lines_keeps_the_most_recent_and_says_how_many_were_not_counted():
    line = "2026-12-01T16:59:{:02d}+0000 n kernel: NVRM: Xid (PCI:0000:18:00): {}, pid=1, name=x, y\n"
    text = line.format(0, 79) + "".join(line.format(1, 13) for _index in range(xid.MAX_EVENTS))
    events, warnings = xid.parse_kernel_log(text, "kern.log", NOW)
    assert len(events) == xid.MAX_EVENTS and {e["xid"] for e in events} == {13}
    assert warnings == ["kern.log: 20,001 Xid events; the most recent 20,000 are counted, the 1 older one is not"]


def test_dcgm_families_whose_names_start_alike_are_not_ours():
    text = 'DCGM_FI_DEV_XID_ERRORS_COUNT{pci_bus_id="00000000:18:00.0",window_size_in_ms="300000"} 2\n'
    assert gpu_health.parse_dcgm(text, "m.txt") == ([], [])
    with pytest.raises(gpu_health.GpuHealthError, match="m.txt line 1: 'DCGM_FI_DEV_XID_ERRORS' is not a sample line"):
        gpu_health.parse_dcgm("DCGM_FI_DEV_XID_ERRORS\n", "m.txt")


@pytest.mark.parametrize(
    "line",
    [
        "Dec 01 16:59:30 gpu-node-1 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.",  # -o short
        "Dec 01 16:59:30.481220 gpu-node-1 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.",
        "Dec  1 16:59:30 gpu-node-1 kernel: [21518.961110] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.",
    ],
    ids=["journalctl-short", "journalctl-short-precise", "rsyslog-traditional"],
)
def test_every_syslog_style_prefix_gives_the_local_time(line):
    (event,), warnings = xid.parse_kernel_log(line, "journalctl -k", NOW)
    assert warnings == [] and event["stamp"] == time.mktime((2026, 12, 1, 16, 59, 30, 0, 0, -1))
