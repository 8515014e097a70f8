"""The real ``openstack`` CLI with osc-placement, to read the test Placement from outside the collection."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def osc(placement, *args: str):
    """Run ``openstack <args> -f json`` against ``placement`` (a PlacementServer); return the parsed output."""
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "openstack"),
        "--os-auth-type", "admin_token", "--os-endpoint", placement.url, "--os-token", "admin",
        "--os-placement-api-version", "1.39", *args, "-f", "json",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(proc.stdout)
