"""Run the whole pipeline on the demo fleet: start a local Placement, run site.yml, stop Placement.

``make demo`` builds the fake roots first and then runs ``python -m tests.support.run_demo``. The local
Placement (the embedded default) is the real openstack-placement service on 127.0.0.1 with a fresh
SQLite database under ``.demo/placement``; its address reaches the playbooks as ``accel_placement_auth``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from tests.support.placement_server import REPO, PlacementServer


def main(argv: list[str]) -> int:
    demo_dir = os.environ.get("ACCEL_DEMO_DIR") or os.path.join(REPO, ".demo")
    workdir = os.path.join(demo_dir, "placement")
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    shutil.rmtree(os.path.join(demo_dir, "kolla-config"), ignore_errors=True)
    server = PlacementServer(workdir)
    print(f"starting a local Placement (openstack-placement, SQLite in {workdir}) ...", flush=True)
    server.start()
    try:
        print(f"Placement listens on {server.url}", flush=True)
        extra = json.dumps({"accel_placement_auth": server.auth})
        playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
        cmd = [playbook, "site.yml", "-i", "inventories/demo", "-e", extra, *argv]
        env = dict(os.environ, ACCEL_DEMO_DIR=demo_dir)
        return subprocess.call(cmd, cwd=REPO, env=env)
    finally:
        server.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
