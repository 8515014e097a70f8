"""nova_config_info reads Kolla-Ansible's overrides as Kolla-Ansible 23 merges them.

Operator files at every level of Kolla's precedence set, replace and repeat the keys the audit reads;
Kolla's own ``merge_configs`` (through its nova and nova-cell role templates) renders the final
nova.conf of each service; every key nova_config_info returns must equal that file's value.
"""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._nova.deployed import parse_ini
from tests.support import kolla_render
from tests.support.ansible_runner import run_module

pytestmark = [
    pytest.mark.skipif(not kolla_render.available(), reason="kolla venv missing: make kolla-venv"),
]

A = '{"name": "a", "vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI"}'
B = '{"name": "b", "vendor_id": "10de", "product_id": "1eb8", "device_type": "type-PCI"}'
SPEC_X = '{"vendor_id": "10de", "product_id": "2330"}'
SPEC_Y = '{"vendor_id": "10de", "product_id": "1eb8"}'
FILES = {
    "global.conf": f"[pci]\nalias = {A}\n[filter_scheduler]\npci_in_placement = false\n",
    "nova.conf": f"[pci]\ndevice_spec = {SPEC_X}\n",
    "nova/nova-compute.conf": f"[pci]\ndevice_spec = {SPEC_Y}\ndevice_spec = {SPEC_X}\n",
    "nova/gpu-1/nova.conf": "[pci]\nreport_in_placement = true\n[devices]\nenabled_mdev_types = nvidia-735\n",
    "nova/gpu-1/nova-compute.conf": (
        f"[pci]\nalias = {A}\nalias = {B}\n[mdev_nvidia-735]\ndevice_addresses = 0000:84:00.4\n"
    ),
    "nova/nova-api.conf": f"[pci]\nalias = {B}\n[filter_scheduler]\npci_in_placement = true\n",
    "nova/nova-scheduler.conf": "[filter_scheduler]\npci_in_placement = true\n",
    "nova/ctl-1/nova.conf": "[pci]\nalias = {}\n",
}
SERVICES = {
    "gpu-1": ["nova-compute"],
    "gpu-2": ["nova-compute"],
    "ctl-1": ["nova-api", "nova-scheduler", "nova-conductor"],
}
READ = ("pci", "devices", "mdev_nvidia-735", "filter_scheduler")


def test_reads_what_kolla_merges(tmp_path):
    config_dir = tmp_path / "config"
    for path, text in FILES.items():
        (config_dir / path).parent.mkdir(parents=True, exist_ok=True)
        (config_dir / path).write_text(text)
    rendered = kolla_render.render(str(config_dir), SERVICES)
    ours = run_module(
        "nova_config_info",
        {"config_dir": str(config_dir), "compute_hosts": ["gpu-1", "gpu-2"], "control_hosts": ["ctl-1"]},
        check=True,
    )
    assert not ours.get("failed"), ours
    compared = 0
    for host, services in SERVICES.items():
        for service in services:
            short = service.removeprefix("nova-")
            kolla = parse_ini(rendered[host][service])
            mine = ours["deployed"][host][short]
            for section in READ:
                for key, values in (mine.get(section) or {}).items():
                    if section == "filter_scheduler" and key != "pci_in_placement":
                        continue
                    assert kolla.get(section, {}).get(key) == values, (host, service, section, key)
                    compared += 1
                for key in kolla.get(section) or {}:
                    if section in ("pci", "devices", "mdev_nvidia-735") or key == "pci_in_placement":
                        assert key in (mine.get(section) or {}), (host, service, section, key)
    assert compared >= 12
    assert ours["deployed"]["gpu-1"]["compute"]["pci"]["alias"] == [A, B]
    assert ours["deployed"]["gpu-2"]["compute"]["pci"]["device_spec"] == [SPEC_Y, SPEC_X]
    assert ours["deployed"]["ctl-1"]["api"]["pci"]["alias"] == ["{}"]
