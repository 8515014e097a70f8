"""The audit's tables show every message and fix whole, on one line each."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding, tables


def test_a_long_fix_is_shown_whole():
    fix = "put a trait such as CUSTOM_GPU_HOST on the accelerator hosts' compute nodes " * 6
    message = "general.small asks no accelerator\nbut can land on   7 accelerator host(s)"
    (row,) = tables([finding(None, "gpu_host_unreserved", message, fix)])["flavor"][1:]
    assert row == (
        "warning | - | gpu_host_unreserved | general.small asks no accelerator but can land on 7 accelerator host(s) | "
        + " ".join(fix.split())
    )
    assert "..." not in row
