"""Run the whole pipeline on the demo fleet: start a local Placement, run site.yml, stop Placement.

``make demo`` builds the fake roots first and then runs ``python -m tests.support.run_demo``. The local
Placement (the embedded default) is the real openstack-placement service on 127.0.0.1 with a fresh
SQLite database under ``.demo/placement``; its address reaches the playbooks as ``accel_placement_auth``.

The discover stage's facts are cached as JSON files under ``.demo/facts``; after site.yml the demo shows
the fleet through the ``accel.openstack.fleet`` inventory (``.demo/demo.fleet.yml``: that fact cache,
the local Placement and the demo's device policy) with ``ansible-inventory --graph``, and ends with
an audit of the demo cloud (``playbooks/audit.yml``, read-only; its report in ``.demo/accel-audit.json``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import yaml

from tests.support.placement_server import REPO, PlacementServer


def main(argv: list[str]) -> int:
    demo_dir = os.environ.get("ACCEL_DEMO_DIR") or os.path.join(REPO, ".demo")
    workdir = os.path.join(demo_dir, "placement")
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    shutil.rmtree(os.path.join(demo_dir, "kolla-config"), ignore_errors=True)
    server = PlacementServer(workdir, config=demo_placement_config())
    print(f"starting a local Placement (openstack-placement, SQLite in {workdir}) ...", flush=True)
    server.start()
    try:
        print(f"Placement listens on {server.url}", flush=True)
        extra = json.dumps({"accel_placement_auth": server.auth})
        playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
        cmd = [playbook, "site.yml", "-i", "inventories/demo", "-e", extra, *argv]
        facts = os.path.join(demo_dir, "facts")
        shutil.rmtree(facts, ignore_errors=True)
        env = dict(
            os.environ,
            ACCEL_DEMO_DIR=demo_dir,
            ANSIBLE_CACHE_PLUGIN="jsonfile",
            ANSIBLE_CACHE_PLUGIN_CONNECTION=facts,
        )
        status = subprocess.call(cmd, cwd=REPO, env=env)
        if status == 0:
            status = show_fleet(demo_dir, facts, server.auth)
        if status == 0:
            status = show_capacity(demo_dir, playbook, extra, env)
        if status == 0:
            status = audit(demo_dir, server.auth, env)
        return status
    finally:
        server.close()


def demo_placement_config() -> dict:
    """The Placement settings the demo's inventory declares (accel_placement_config), for its local Placement."""
    with open(os.path.join(REPO, "inventories", "demo", "group_vars", "all", "main.yml")) as handle:
        return yaml.safe_load(handle).get("accel_placement_config") or {}


def fleet_source(facts: str, auth: dict) -> dict:
    """The demo's accel.openstack.fleet inventory source: the fact cache, the local Placement, the policy."""
    with open(os.path.join(REPO, "inventories", "demo", "group_vars", "all", "device_policy.yml")) as handle:
        policy = yaml.safe_load(handle)["accel_device_policy"]
    return {"plugin": "accel.openstack.fleet", "fact_cache_connection": facts, **auth, "device_policy": policy}


def show_fleet(demo_dir: str, facts: str, auth: dict) -> int:
    source = os.path.join(demo_dir, "demo.fleet.yml")
    with open(source, "w") as handle:
        yaml.safe_dump(fleet_source(facts, auth), handle, sort_keys=False)
    print(f"\nThe demo fleet as the accel.openstack.fleet inventory sees it ({source}):", flush=True)
    inventory = os.path.join(os.path.dirname(sys.executable), "ansible-inventory")
    env = dict(os.environ, ANSIBLE_INVENTORY_UNPARSED_FAILED="true")
    return subprocess.call([inventory, "-i", source, "--graph"], cwd=REPO, env=env)


def audit(demo_dir: str, auth: dict, env: dict) -> int:
    """The day-2 audit of the cloud the demo built; it reports and changes nothing."""
    print("\nAuditing the demo cloud (playbooks/audit.yml, read-only):", flush=True)
    extra = {
        "accel_placement_auth": auth,
        "accel_audit_report": os.path.join(demo_dir, "accel-audit.json"),
        "accel_audit_fail_on": "never",
    }
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    cmd = [playbook, "playbooks/audit.yml", "-i", "inventories/demo", "-e", json.dumps(extra)]
    return subprocess.call(cmd, cwd=REPO, env=env)


def show_capacity(demo_dir: str, playbook: str, extra: str, env: dict) -> int:
    """Day 2: the demo mix placed together (inventories/demo/group_vars/all/capacity.yml), its metrics written."""
    os.makedirs(os.path.join(demo_dir, "textfile"), exist_ok=True)
    print("\nThe demo mix placed together as Nova would (playbooks/capacity.yml):", flush=True)
    # The play runs on the controller (localhost), which has no inventory_dir: the demo dir is given.
    cmd = [playbook, "playbooks/capacity.yml", "-i", "inventories/demo", "-e", extra]
    cmd += ["-e", json.dumps({"accel_demo_dir": demo_dir})]
    return subprocess.call(cmd, cwd=REPO, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
