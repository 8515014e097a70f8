"""The IOMMU facts decide whether a host offers any device, so they are checked before they decide.

A fact cache anyone could have rewritten may say ``"false"`` (a string, true to Python) or hold a command
line of any size and shape: the string is refused naming the fact and the host, never read as "on"; the
command line only shapes the advice, and a hostile one changes neither what is offered nor how long it
takes.
"""

from __future__ import annotations

import os
import time

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter import nova
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import select
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import FleetPredictionError, nova_fleet
from tests.hostile.conftest import no_traceback
from tests.support.ansible_runner import run_module

T4 = {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough"}
DEVICE = {"address": "0000:04:00.0", "vendor_id": "10de", "product_id": "1eb8", "driver": "nvidia"}
FACTS = {
    "accel_pci_devices": [DEVICE],
    "accel_numa_nodes": [{"id": 0, "cpus": [0, 1], "memory_mb": 1024}],
    "accel_cpu_vendor": "intel",
    "accel_iommu_enabled": False,
}


@pytest.mark.parametrize(
    ("fact", "value", "named"),
    [
        ("accel_iommu_enabled", "false", "accel_iommu_enabled is a string ('false'); expected true or false"),
        ("accel_iommu_enabled", 0, "accel_iommu_enabled is an integer"),
        ("accel_iommu_enabled", [False], "accel_iommu_enabled is a list"),
        ("accel_kernel_cmdline", ["intel_iommu=on"], "accel_kernel_cmdline is a list"),
        ("accel_cpu_vendor", {"intel": True}, "accel_cpu_vendor is a mapping"),
    ],
)
def test_an_iommu_fact_of_the_wrong_type_is_refused_by_every_entry_point(tmp_path, fact, value, named):
    facts = {**FACTS, fact: value}
    with pytest.raises(AnsibleFilterError, match="nova_device_spec: facts: " + fact):
        nova.nova_device_spec(facts, [T4])
    with pytest.raises(AnsibleFilterError, match=fact):
        nova.nova_providers_filter(facts, [T4], "c1", True)
    with pytest.raises(FleetPredictionError, match=f"{fact} is"):
        nova_fleet({"c1": facts}, [T4])
    root = tmp_path / "root"
    root.mkdir()
    result = run_module(
        "nova_config",
        {"layout": "nova_conf_d", "root": str(root), "host": "c1", "services": ["compute"],
         "config_dir": "/etc/nova/nova.conf.d", "policy": [T4], "hosts": [{"name": "c1", "facts": facts}]},
    )  # fmt: skip
    assert result.get("failed") and named in result["msg"], result
    no_traceback(result)
    assert not any(files for _d, _s, files in os.walk(root)), "nothing may be written"


@pytest.mark.parametrize(
    "cmdline",
    [
        "intel_iommu=on " * 200000,  # 3 MB: far past any kernel's command line
        '"' * 100000,
        "intel_iommu=on\x00iommu=pt",
        "$(reboot) `id` ; intel_iommu=off",
        "intel_iommu=" + "o" * 100000,
    ],
)
def test_a_hostile_command_line_neither_offers_the_device_nor_takes_long(cmdline):
    started = time.monotonic()
    selection = select("c1", {**FACTS, "accel_kernel_cmdline": cmdline}, parse_policy([T4]), True)
    assert time.monotonic() - started < 2
    assert selection.passthrough == [] and selection.withheld_addresses() == ["0000:04:00.0"]
    (warning,) = selection.warnings
    assert len(warning) < 1500  # the command line is never echoed into the message
