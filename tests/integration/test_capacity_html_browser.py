"""The capacity page rendered by a real browser: headless Chromium takes a screenshot, kept and checked.

``make integration`` installs Debian's chromium first (``make browser``). The screenshot is kept under
``.build/screenshots/`` and must show the page: mostly white background, dark text, and the bar colours
of used, free and stranded devices in the places the SVG puts them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import capacity_plan
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity_report import capacity_html
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit
from ansible_collections.accel.openstack.plugins.plugin_utils.weighers import MULTIPLIERS
from tests.support.png import read_png
from tests.unit.plugins.plugin_utils.test_flavor_fit import ALIASES, flavor, gpu_host

REPO = Path(__file__).resolve().parents[2]
COLOURS = {"used": (0x4A, 0x78, 0xB5), "free": (0x9F, 0xD3, 0x9F), "stranded": (0xE0, 0x8A, 0x3C)}


def _browser() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("chromium is not installed (make browser installs Debian's chromium)")


def test_chromium_renders_the_capacity_page(tmp_path):
    browser = _browser()
    fleet = {"resource_providers": gpu_host(1, gpus=4) + gpu_host(2, gpus=4, used_gpus=1) + gpu_host(3, gpus=4)}
    demand = [
        {"flavor": flavor("small", vcpus=2, ram=16384), "count": 7},
        {"flavor": flavor("gpu", vcpus=8, ram=32768, **{"pci_passthrough:alias": "h100:1"}), "count": 1},
    ]
    options = {"pci_aliases": ALIASES, "pci_in_placement": True}
    # RAMWeigher alone (the other multipliers 0), so the small instances spread by free RAM only.
    ram_only = {name: 0.0 for name in MULTIPLIERS if name != "ram_weight_multiplier"}
    plan = capacity_plan(demand, fleet, failures=1, **options, **ram_only)
    # all three colours to show: gpu1 strands its GPUs (RAM gone), gpu2 has used ones, gpu3 free ones
    assert "gpu1" in plan["stranded"] and plan["left"]["gpu3"]["CUSTOM_NVIDIA_H100"] == 4, plan
    reports = flavor_fit([d["flavor"] for d in demand], fleet, **options)
    page = tmp_path / "capacity-report.html"
    page.write_text(capacity_html(fleet, flavors=reports, plan=plan))
    shot = tmp_path / "capacity-report.png"
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1000,700",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shot.exists(), done.stderr[-2000:]
    kept = REPO / ".build" / "screenshots"
    kept.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, kept / shot.name)
    width, height, pixels = read_png(shot.read_bytes())
    assert (width, height) == (1000, 700)
    white = sum(1 for p in pixels if p == (255, 255, 255))
    dark = sum(1 for p in pixels if max(p) < 90)
    assert 0.5 < white / len(pixels) < 0.99 and dark > 500  # a page with text, not a blank or black frame
    # The bars start at x=300 of the SVG (the legend's swatches are left of it): look only there.
    bars = [p for i, p in enumerate(pixels) if i % width >= 310]
    for name, colour in COLOURS.items():
        near = sum(1 for p in bars if all(abs(a - b) <= 6 for a, b in zip(p, colour, strict=True)))
        assert near > 1000, f"no {name} bar in the screenshot ({near} pixels of its colour)"
