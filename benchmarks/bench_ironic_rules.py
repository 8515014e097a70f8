"""Benchmark: the bare-metal inspection rules in the real Ironic 39's own rule engine, by GPU count.

Run with ``.venv/bin/python benchmarks/bench_ironic_rules.py`` (``make ironic-venv`` first; the Ironic venv
is ``ACCEL_IRONIC_VENV`` or ``.venv-ironic``). The rules come from the collection's filter code; the
timing runs in the Ironic venv, where ``ironic.common.inspection_rules.engine.check_conditions`` checks
a rule's conditions against plugin data wrapped as Ironic wraps it during inspection (the masking
views whose text the conditions read). Each node holds GPUs 10de:2330 (count - 1, count and count + 1
of them), 4 NVSwitch bridges and 10 NICs, shuffled. Median of 5 runs each, all conditions of the rule.

``--before N`` also times the expression the rules used before (an unanchored search for ``count``
device entries separated by ``.*?``) up to N GPUs: its failing match backtracks over every choice of
``count`` devices, so its time doubles with each GPU (N above 18 takes minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, ".build", "collections"))

from ansible_collections.accel.openstack.plugins.module_utils._ironic import node_classes  # noqa: E402

RUNS = 5
COUNTS = (8, 12, 16, 18, 20, 32, 64)

# Runs in the Ironic venv: reads {"cases": [[label, count, gpus, runs, rule], ...]} on stdin, prints one line per case.
ENGINE = r"""
import json, random, statistics, sys, time
from ironic.common.inspection_rules import engine, utils

class Node:
    uuid = "00000000-0000-4000-8000-000000000000"
    resource_class = None

class Task:
    node = Node()

def plugin_data(gpus):
    devices = [("10de", "2330", "030200")] * gpus + [("10de", "22a3", "068000")] * 4 + [("15b3", "1021", "020000")] * 10
    devices = [{"vendor_id": v, "product_id": p, "class": c, "revision": "a1", "bus": f"0000:{n:02x}:00.0"}
               for n, (v, p, c) in enumerate(devices)]
    random.Random(gpus).shuffle(devices)
    return utils.ShallowMaskDict({"pci_devices": devices}, sensitive_fields=engine.SENSITIVE_FIELDS)

cases = json.load(sys.stdin)["cases"]
for label, count, gpus, runs, rule in cases:
    data = plugin_data(gpus)
    inventory = utils.ShallowMaskDict({}, sensitive_fields=engine.SENSITIVE_FIELDS)
    rule["uuid"] = Node.uuid
    times, result = [], None
    for _unused in range(runs):
        start = time.perf_counter()
        result = engine.check_conditions(Task(), rule, inventory, data)
        times.append(time.perf_counter() - start)
    row = {"label": label, "count": count, "gpus": gpus, "matched": result}
    row.update(median_ms=statistics.median(times) * 1000, max_ms=max(times) * 1000)
    print(json.dumps(row), flush=True)
"""


def before_rule(rule: dict, count: int) -> dict:
    """The same rule with the count conditions the collection wrote before: at least count, not count + 1."""
    device = node_classes._device("10de", "2330")
    search = "(?s)(?:" + device + ".*?){%d}"
    conditions = [
        {"op": "contains", "args": {"value": node_classes.PCI_DEVICES, "regex": search % count}},
        {"op": "!contains", "args": {"value": node_classes.PCI_DEVICES, "regex": search % (count + 1)}},
    ]
    return dict(rule, conditions=conditions + rule["conditions"][1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=int, default=18, help="time the former expression up to this many GPUs")
    args = parser.parse_args()
    venv = os.environ.get("ACCEL_IRONIC_VENV") or os.path.join(REPO, ".venv-ironic")
    cases = []
    for count in COUNTS:
        entry = {"name": f"gpu{count}", "vendor_id": "10de", "product_id": "2330", "mode": "baremetal",
                 "count": count, "model": "H100", "interconnect": "nvswitch",
                 "resource_class": f"GPU_H100X{count}"}  # fmt: skip
        (_reset, rule) = node_classes.baremetal_rules([entry])
        rule = {k: rule[k] for k in ("conditions", "actions")}
        for gpus in (count - 1, count, count + 1):
            cases.append(["linear", count, gpus, RUNS, rule])
            if count <= args.before:
                cases.append(["before", count, gpus, 1, before_rule(rule, count)])
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONWARNINGS"] = "ignore"  # Ironic's imports warn about eventlet
    proc = subprocess.Popen(
        [os.path.join(venv, "bin", "python"), "-c", ENGINE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    proc.stdin.write(json.dumps({"cases": cases}))
    proc.stdin.close()
    print("| expression | count | GPUs on the node | matched | median | max |")
    print("|---|---:|---:|---|---:|---:|")
    for line in proc.stdout:
        row = json.loads(line)
        print(
            f"| {row['label']} | {row['count']} | {row['gpus']} | {row['matched']} | {row['median_ms']:.2f} ms "
            f"| {row['max_ms']:.2f} ms |",
            flush=True,
        )
    sys.exit(proc.wait())


if __name__ == "__main__":
    main()
