"""Calibrate the model of Placement's work (solver/generation.py COSTS) on the real Placement 16.

Usage: python benchmarks/calibrate_placement.py [--quick] [--out FILE]

Loads HGX-like fleets (hosts with 8 or 16 single-GPU children, some with GPUs in use) into the real
Placement started at four settings (defaults; max_allocation_candidates=1000 depth-first; the same
breadth-first; and Placement's advice for wide trees: optimize_for_wide_provider_trees with 1000
breadth-first), asks Nova's query for N devices of one alias (N from 2 up to where Placement still
answers within 60 s), and times each answer. For every case it also prints the model's counts (tuples
or prefixes walked, candidates, equality checks in the candidate set) and what it predicts, then fits
the per-item costs by least squares (no cost below zero) and prints them as the COSTS dict to paste into
generation.py, with the model's error per case.

Cases that the model predicts above 150 s are not sent; the model's prediction is printed for them. The
others are given 300 s each.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
importlib.import_module("conftest")
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request  # noqa: E402
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import generation as model  # noqa: E402
from tests.support.placement_loader import load_fleet  # noqa: E402
from tests.support.placement_server import PlacementServer  # noqa: E402
from tests.support.wide_fleets import nova_query, uniform  # noqa: E402

SETTINGS = {
    "defaults": {},
    "depth-first 1000": {"max_allocation_candidates": 1000},
    "breadth-first 1000": {
        "max_allocation_candidates": 1000,
        "allocation_candidates_generation_strategy": "breadth-first",
    },
    "recommended": model.RECOMMENDED.as_dict(),
}


FEATURES = ("query", "root", "tuple", "prefix", "candidate", "collision")


def features(fleet: Fleet, query: str, config: model.PlacementConfig) -> tuple[dict, list[float]]:
    report = model.generation(fleet, Request.parse(query), config)
    walked = len(report["roots"]) if report["truncated"] else len(fleet.roots)
    optimize = config.optimize_for_wide_provider_trees
    row = [
        1.0,
        float(walked),
        0.0 if optimize else float(report["examined"]),
        float(report["examined"]) if optimize else 0.0,
        float(report["candidates"]),
        float(report["collisions"]),
    ]
    return report, row


def nnls(rows: list[list[float]], times: list[float]) -> list[float]:
    """Least squares on relative error with every cost at least 0 (active set, by hand: few unknowns)."""
    weights = [1.0 / max(t, 0.05) for t in times]
    free = list(range(len(rows[0])))
    while True:
        a = [[rows[i][j] * weights[i] for j in free] for i in range(len(rows))]
        b = [times[i] * weights[i] for i in range(len(rows))]
        n = len(free)
        ata = [[sum(a[k][i] * a[k][j] for k in range(len(a))) for j in range(n)] for i in range(n)]
        atb = [sum(a[k][i] * b[k] for k in range(len(a))) for i in range(n)]
        solution = _solve(ata, atb)
        if all(x >= 0 for x in solution):
            out = [0.0] * len(rows[0])
            for j, x in zip(free, solution, strict=True):
                out[j] = x
            return out
        worst = min(range(n), key=lambda i: solution[i])
        free.pop(worst)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-30:
            continue
        for r in range(n):
            if r != col:
                factor = m[r][col] / m[col][col]
                for c in range(col, n + 1):
                    m[r][c] -= factor * m[col][c]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-30 else 0.0 for i in range(n)]


def _slow_get(server: PlacementServer, path: str) -> tuple[int, dict]:
    """GET with a 300-second timeout (the test client waits 60 s)."""
    request = urllib.request.Request(
        server.url + path, headers={"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.39"}
    )
    with urllib.request.urlopen(request, timeout=300) as answer:  # noqa: S310 - loopback test server
        return answer.status, json.load(answer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer cases (about a minute)")
    parser.add_argument("--out", help="write the measurements as JSON lines to this file")
    args = parser.parse_args()
    shapes = [(3, 8, 0), (2, 16, 4)] if not args.quick else [(3, 8, 0)]
    devices = {8: [2, 3, 4, 5, 6, 8], 16: [4, 6, 8, 12]}
    measured = []
    out = open(args.out, "w") if args.out else None  # noqa: SIM115 - closed below
    for hosts, gpus, busy in shapes:
        snapshot = uniform(hosts, gpus, busy)
        fleet = Fleet.from_snapshot(snapshot)
        server = PlacementServer()
        try:
            server.start()
            load_fleet(server, snapshot)
            for label, settings in SETTINGS.items():
                config = model.PlacementConfig.checked(settings)
                server.reconfigure(settings)
                for n in devices[gpus]:
                    query = nova_query(n)
                    report, row = features(fleet, query, config)
                    case = {"fleet": f"{hosts}x{gpus} busy {busy}", "settings": label, "devices": n}
                    case.update({k: report[k] for k in ("candidates", "examined", "collisions", "seconds")})
                    if report["seconds"] > 150:
                        case["measured"] = None
                        print(json.dumps(case), flush=True)
                        continue
                    start = time.perf_counter()
                    status, body = _slow_get(server, "/allocation_candidates?" + query)
                    case["measured"] = round(time.perf_counter() - start, 3)
                    case["answered"] = len(body.get("allocation_requests", [])) if status == 200 else status
                    measured.append((row, case["measured"]))
                    print(json.dumps(case), flush=True)
                    if out:
                        out.write(json.dumps(case) + "\n")
        finally:
            server.close()
    if out:
        out.close()
    costs = nnls([row for row, _t in measured], [t for _row, t in measured])
    print("COSTS = " + json.dumps({name: float(f"{cost:.3g}") for name, cost in zip(FEATURES, costs, strict=True)}))
    for row, took in measured:
        predicted = sum(c * x for c, x in zip(costs, row, strict=True))
        print(f"measured {took:8.3f} s  fitted {predicted:8.3f} s")


if __name__ == "__main__":
    main()
