"""Benchmark: pci_facts on a host with 8 GPUs, 4 NVSwitches and two NICs with 128 VFs each.

Run with ``make benchmark-discovery``. Reports (1) the discovery itself in-process, the module's own
work, and (2) the module executed as ansible executes it (a fresh Python process running the module file
with its arguments), which adds interpreter start-up and imports. Median of N runs each.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover  # noqa: E402
from tests.support.fake_sysfs import build_root  # noqa: E402

RUNS = 15


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = build_root("bench-hgx-sriov", os.path.join(tmp, "root"))
        facts, warnings = discover(root)
        devices = len(facts["accel_pci_devices"])
        in_process = []
        for _unused in range(RUNS):
            start = time.perf_counter()
            discover(root)
            in_process.append(time.perf_counter() - start)
        args = os.path.join(tmp, "args.json")
        with open(args, "w") as handle:
            json.dump({"ANSIBLE_MODULE_ARGS": {"root": root}}, handle)
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, ".build", "collections"))
        module = os.path.join(REPO, "plugins", "modules", "pci_facts.py")
        as_module = []
        for _unused in range(RUNS):
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, module, args], env=env, capture_output=True, text=True, check=False)
            as_module.append(time.perf_counter() - start)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        reported = len(json.loads(proc.stdout)["ansible_facts"]["accel_pci_devices"])
    print(f"host: bench-hgx-sriov, {devices} reported devices ({reported} via the module), warnings={len(warnings)}")
    for label, times in (("discovery in-process", in_process), ("module process", as_module)):
        median_ms, max_ms = statistics.median(times) * 1000, max(times) * 1000
        print(f"{label:<21}: median {median_ms:.1f} ms, max {max_ms:.1f} ms")


if __name__ == "__main__":
    main()
