"""Kolla-Ansible overrides written the ways oslo.config allows, read by nova_config_info as Nova reads the result.

The overrides use upper- and mixed-case section names, ``key: value``, a continued value with an indented
``#`` line, a spaced ``[ pci ]``, the deprecated ``passthrough_whitelist`` and a Jinja block. Kolla-Ansible
23's own ``merge_configs`` renders each service's nova.conf (``tests/support/kolla_render.py``), oslo.config
reads that file with Nova's ``[pci]`` options (``tests/support/oslo_ini_oracle.py``), and nova_config_info
must return exactly what oslo.config gives Nova: ``[pci] device_spec``, ``[pci] alias`` and every other key.
"""

from __future__ import annotations

import pytest

from tests.support import kolla_render, oslo_ini_oracle
from tests.support.ansible_runner import run_module

pytestmark = [
    pytest.mark.nova,
    pytest.mark.skipif(not kolla_render.available(), reason="kolla venv missing: make kolla-venv"),
]

A = '{"name": "a", "vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI"}'
B = '{"name": "b", "vendor_id": "10DE", "product_id": "1eb8"}'
SPEC_X = '{"vendor_id": "10de", "product_id": "2330"}'
SPEC_Y = '{"vendor_id": "0x10de", "product_id": "1eb8"}'
FILES = {
    "global.conf": f"[PCI]\nalias: {A}\n[filter_scheduler]\npci_in_placement: false\n",
    "nova.conf": '[pci]\ndevice_spec = {"vendor_id": "10de",\n  "product_id": "2330"}\n',
    "nova/nova-compute.conf": f"[pci]\nalias = {B}\n  # joined to the value\n[ pci ]\nalias = {A}\n",
    "nova/gpu-1/nova.conf": f"[Pci]\nreport_in_placement = true\n[pci]\npassthrough_whitelist = {SPEC_Y}\n",
    "nova/gpu-1/nova-compute.conf": (
        "{% if true %}\n[devices]\nenabled_mdev_types = 'nvidia-35'\n{% endif %}\n[pci]\ndevice_spec: " + SPEC_X + "\n"
    ),
    "nova/nova-api.conf": f"[PCI]\nalias = {B}\n[Filter_Scheduler]\npci_in_placement = true\n",
}
SERVICES = {"gpu-1": ["nova-compute"], "ctl-1": ["nova-api"]}


def test_nova_config_info_returns_what_oslo_reads_from_kolla_s_merge(tmp_path):
    config_dir = tmp_path / "config"
    for path, text in FILES.items():
        (config_dir / path).parent.mkdir(parents=True, exist_ok=True)
        (config_dir / path).write_text(text)
    rendered = kolla_render.render(str(config_dir), SERVICES)
    ours = run_module(
        "nova_config_info", {"config_dir": str(config_dir), "compute_hosts": ["gpu-1"], "control_hosts": ["ctl-1"]}
    )
    assert not ours.get("failed"), ours
    cases = [
        {"id": f"{host}/{service}", "files": {"nova.conf": rendered[host][service]}}
        for host, services in SERVICES.items()
        for service in services
    ]
    answers = {a["id"]: a for a in oslo_ini_oracle.ask(cases)}
    compared = 0
    for case in cases:
        host, service = case["id"].split("/")
        oslo = answers[case["id"]]
        assert oslo["ok"], oslo
        mine = ours["deployed"][host][service.removeprefix("nova-")]
        assert (mine.get("pci") or {}).get("device_spec", []) == oslo["device_spec"], (case["id"], mine, oslo)
        assert (mine.get("pci") or {}).get("alias", []) == oslo["alias"], (case["id"], mine, oslo)
        for group in ("pci", "devices", "filter_scheduler", " pci "):
            for key, value in (oslo["values"].get(group) or {}).items():
                if (group, key) in (("pci", "device_spec"), ("pci", "alias"), ("pci", "passthrough_whitelist")):
                    continue
                assert mine[group][key][-1] == value, (case["id"], group, key, mine, oslo)
                compared += 1
    assert compared >= 5
    compute = ours["deployed"]["gpu-1"]["compute"]
    # the whitelist first, then the spec of the per-host file (it replaced nova.conf's continued one)
    assert compute["pci"]["device_spec"] == [SPEC_Y, SPEC_X]
    # [PCI] (global.conf) and [pci] (nova-compute.conf) both reach Nova; [ pci ] does not
    assert compute["pci"]["alias"] == [A, B + "\n# joined to the value"]
    assert compute["devices"]["enabled_mdev_types"] == ["nvidia-35"]
    assert compute["pci"]["report_in_placement"] == ["true"]
    assert ours["deployed"]["ctl-1"]["api"]["filter_scheduler"]["pci_in_placement"] == ["false", "true"]
