"""The adopted policy, given back to the nova_config stage, changes nothing on a healthy cloud.

The healthy cloud of tests/support/audit_cloud.py gets its Nova config from the nova_config module in
the kolla layout; the audit's reading of those files (nova_config_info) is adopted
(device_policy_from_nova); nova_config run in check mode with the adopted policy must report no change.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.filter.audit import FilterModule
from tests.support import audit_cloud as world
from tests.support.ansible_runner import run_module


def test_adopted_policy_reproduces_the_deployed_files(tmp_path):
    cloud = world.healthy(str(tmp_path / "roots"))
    hosts = [{"name": h, "facts": cloud["hosts"][h]} for h in sorted(world.PROFILES)]
    args = {
        "layout": "kolla",
        "hosts": hosts,
        "policy": cloud["policy"],
        "report_in_placement": True,
        "pci_in_placement": True,
        "config_dir": str(tmp_path / "kolla"),
        "kolla_control_hosts": [world.CONTROL],
    }
    assert run_module("nova_config", args)["changed"] is True
    read = run_module(
        "nova_config_info",
        {
            "config_dir": str(tmp_path / "kolla"),
            "compute_hosts": list(world.PROFILES),
            "control_hosts": [world.CONTROL],
        },
        check=True,
    )
    adopted = FilterModule().filters()["device_policy_from_nova"](read["deployed"], facts=cloud["hosts"])
    assert adopted["unexpressed"] == []
    again = run_module(
        "nova_config",
        dict(
            args, policy=adopted["accel_device_policy"], report_in_placement=adopted["accel_nova_report_in_placement"]
        ),
        check=True,
        diff=True,
    )
    assert again["changed"] is False, again.get("diff") or again.get("msg")
