"""docs/install.md "Try it first", word for word, from the built tarball installed with ansible-core only.

The collection is installed where ``ansible-galaxy collection install`` puts it by default (a fresh
``$HOME/.ansible/collections``, the only collections path), ``$HOME/placement-venv`` is the real
Placement 16 the tests use (``make placement-venv``). The read-only plan of the page (``site.yml --check
--diff``) runs on fresh simulated roots and must leave them and Placement as they were. Then the first-run
command runs as a user types it (bash, in an empty directory): it builds the simulated fleet from the
shipped profiles, starts and stops its local Placement and runs site.yml's stages; the same command again
in the same directory, given a Placement that runs (``-e accel_placement_auth``, the page's other way),
rebuilds the roots the pipeline changed and registers the fleet there. That cloud is then audited by the
installed collection's ``accel.openstack.audit``, from another directory.
"""

import json
import os
import re
import subprocess

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._simulate.simulated_root import MARKER, read_tree
from tests.support.fake_sysfs import build_inventory_roots, inventory_profiles
from tests.support.placement_server import placement_venv

pytestmark = pytest.mark.xdist_group("tarball")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(REPO, "docs", "install.md")


def documented(prefix: str) -> str:
    """The one line of a sh block in docs/install.md that starts with ``prefix``."""
    with open(DOC) as handle:
        blocks = re.findall(r"```sh\n(.*?)```", handle.read(), re.DOTALL)
    lines = [line for block in blocks for line in block.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, lines
    return lines[0].split("   #")[0].strip()


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie that no parent has reaped yet does not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def bash(command: str, cwd, env, timeout=900):
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def user_home(user_venv, collection_tarball, tmp_path_factory):
    """A user's fresh home: the tarball installed at the default path, the Placement venv at the docs' path."""
    home = tmp_path_factory.mktemp("home")
    env = {
        "PATH": user_venv + os.pathsep + os.environ["PATH"],
        "HOME": str(home),
        "ANSIBLE_COLLECTIONS_PATH": str(home / ".ansible" / "collections"),
        "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false",
        "ANSIBLE_NOCOLOR": "1",
    }
    done = bash(f"ansible-galaxy collection install {collection_tarball}", home, env)
    assert done.returncode == 0, done.stdout + done.stderr
    os.symlink(os.path.abspath(placement_venv()), home / "placement-venv")
    return home, env


def test_the_read_only_plan_writes_nothing(user_home, placement, tmp_path):
    home, env = user_home
    collection = home / ".ansible/collections/ansible_collections/accel/openstack"
    build_inventory_roots(str(collection / "inventories/demo/hosts.yml"), str(tmp_path / "run" / "roots"))
    before = read_tree(str(tmp_path / "run"))
    providers = placement.request("GET", "/resource_providers")[1]
    command = documented("ansible-playbook accel.openstack.site -i <inventory> --check --diff")
    command = command.replace("<inventory>", str(collection / "inventories" / "demo"))
    command += " -e " + json.dumps(json.dumps({"accel_placement_auth": placement.auth}))
    done = bash(command, tmp_path, dict(env, ACCEL_DEMO_DIR=str(tmp_path / "run")))
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    changing = "epyc-01, flex170-01, hgx-01, legacy-01, mi300x-01, mig-01, net-01, vgpu-a16-01"
    assert f"Nova config would change on {changing}" in done.stdout
    assert "+++ after: /etc/modprobe.d/accel-openstack-vfio.conf" in done.stdout  # the plan, as a diff
    assert read_tree(str(tmp_path / "run")) == before
    assert placement.request("GET", "/resource_providers")[1] == providers
    assert placement.request("GET", "/traits?name=startswith:CUSTOM_")[1] == {"traits": []}


@pytest.fixture(scope="module")
def try_it_runs(user_home, placement, tmp_path_factory):
    """The documented first run in an empty directory, then the same command there again with
    ``-e accel_placement_auth`` of the module's Placement: (the directory, the first run, the second run)."""
    home, env = user_home
    work = tmp_path_factory.mktemp("try-it")
    command = documented("ansible-playbook accel.openstack.try_it ")
    first = bash(command, work, env)
    again = bash(command + " -e " + json.dumps(json.dumps({"accel_placement_auth": placement.auth})), work, env)
    return work, first, again


def recap_ok(out: str) -> None:
    recap = out[out.index("PLAY RECAP") :]
    assert not re.search(r"failed=[1-9]|unreachable=[1-9]", recap), recap


def test_the_documented_first_run_builds_the_simulated_fleet_and_validates_its_flavors(user_home, try_it_runs):
    home, _env = user_home
    work, done, _again = try_it_runs
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    recap_ok(done.stdout)
    run_dir = work / "accel-try-it"
    inventory = home / ".ansible/collections/ansible_collections/accel/openstack/inventories/demo/hosts.yml"
    hosts = inventory_profiles(str(inventory))
    assert len(hosts) == 11
    for host, profile in hosts.items():
        marker = json.loads((run_dir / "roots" / host / MARKER.lstrip("/")).read_text())
        assert marker == {"profile": profile, "written_by": "accel.openstack.simulated_host"}
    report = json.loads((run_dir / "validate-report.json").read_text())["flavors"]
    outcomes = {f["name"]: (f["outcome"], f["ok"]) for f in report["flavors"]}
    assert report["ok"] is True
    assert outcomes.pop("gpu.h100-typo") == ("rejected_by_placement", True)  # declared expect: unplaceable
    assert set(outcomes.values()) == {("fits", True)} and len(outcomes) == 11, outcomes
    assert (run_dir / "kolla-config" / "nova" / "hgx-01" / "nova.conf").is_file()
    # Its local Placement was started for the run and is gone after it.
    assert re.search(r"A local Placement listens on http://127\.0\.0\.1:\d+", done.stdout)
    assert not (run_dir / "placement" / "placement.pid").exists()
    assert "auth_strategy = noauth2" in (run_dir / "placement" / "placement.conf").read_text()


def test_a_second_run_given_a_running_placement_rebuilds_the_roots_and_registers_the_fleet(
    user_home, try_it_runs, placement
):
    home, _env = user_home
    _work, first, again = try_it_runs
    assert again.returncode == 0, again.stdout[-6000:] + again.stderr[-3000:]
    recap_ok(again.stdout)
    assert "A local Placement listens" not in again.stdout  # the given one is used, none is started
    assert "accel.openstack.validate : Report where each flavor fits" in again.stdout
    collection = home / ".ansible/collections/ansible_collections/accel/openstack"
    assert not (collection / "tests").exists() and not (collection / "benchmarks").exists()
    status, providers = placement.request("GET", "/resource_providers")
    assert status == 200
    names = {p["name"] for p in providers["resource_providers"]}
    assert {"hgx-01", "mig-01", "net-01"} <= names
    assert first.returncode == 0


# What the audit says of the demo right after the pipeline, as `make demo` shows it: the flavor with a
# mistyped trait the demo carries on purpose, the hosts whose devices move to vfio-pci at the next boot
# (accel_reboot: never), the host whose IOMMU is off, and a general flavor that can land on GPU hosts.
DEMO_FINDINGS = sorted(
    [("error", None, "flavor_unplaceable"), ("warning", None, "gpu_host_unreserved"),
     ("warning", "legacy-01", "iommu_off")]
    + [("info", host, "adopt_unexpressed") for host in ("flex170-01", "vgpu-l40s-01")]
    + [("warning", host, "not_bound_vfio") for host in ("epyc-01", "hgx-01", "mig-01", "workstation-01")],
    key=str,
)  # fmt: skip


def test_the_installed_collection_audits_the_demo_by_fqcn(user_home, try_it_runs, placement, tmp_path):
    """The audit of the cloud the second run built, from a directory of the operator's: the report and the
    adopted policy are written there and nothing inside the collection; the fixes name the playbooks by
    their FQCN."""
    home, env = user_home
    work, _first, again = try_it_runs
    assert again.returncode == 0, again.stdout[-6000:] + again.stderr[-3000:]
    collection = home / ".ansible/collections/ansible_collections/accel/openstack"
    inside = sorted(str(p) for p in collection.rglob("*"))
    extra = json.dumps({"accel_placement_auth": placement.auth, "accel_audit_fail_on": "never"})
    command = f"ansible-playbook accel.openstack.audit -i {collection}/inventories/demo -e '{extra}'"
    done = bash(command, tmp_path, dict(env, ACCEL_DEMO_DIR=str(work / "accel-try-it")))
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    out = done.stdout
    recap_ok(out)
    assert "[WARNING]" not in out
    assert sorted(os.listdir(tmp_path)) == ["accel-adopted-policy.yml", "accel-audit.json"]
    assert sorted(str(p) for p in collection.rglob("*")) == inside
    report = json.loads((tmp_path / "accel-audit.json").read_text())
    assert sorted(((f["severity"], f["host"], f["code"]) for f in report["findings"]), key=str) == DEMO_FINDINGS
    assert "audit: 1 error, 6 warnings and 2 info findings" in out
    unreserved = next(f for f in report["findings"] if f["code"] == "gpu_host_unreserved")
    assert len(unreserved["fix"]) > 140 and unreserved["fix"] in out  # the table shows it whole
    fixes = " ".join(f["fix"] for f in report["findings"])
    assert "playbooks/" not in fixes
    assert "run accel.openstack.prepare_hosts for this host" in fixes
    assert "see accel.openstack.validate's table" in fixes


def test_the_local_placement_script_starts_stops_and_refuses_unknown_settings(user_home, tmp_path):
    home, env = user_home
    script = (
        home / ".ansible/collections/ansible_collections/accel/openstack/roles/simulated_fleet/files/local_placement.py"
    )
    venv = home / "placement-venv"
    settings = json.dumps({"max_allocation_candidates": 1000})
    start = f"python3 {script} start --venv {venv} --workdir {tmp_path}/p --settings '{settings}'"
    first = bash(start, tmp_path, env)
    assert first.returncode == 0, first.stderr
    started = json.loads(first.stdout)
    assert started["auth"] == {"auth_type": "admin_token", "auth": {"endpoint": started["url"], "token": "admin"}}
    assert "[placement]\nmax_allocation_candidates = 1000\n" in (tmp_path / "p" / "placement.conf").read_text()
    second = bash(start, tmp_path, env)  # a second start stops the first
    assert second.returncode == 0, second.stderr
    assert running(started["pid"]) is False
    pid = json.loads(second.stdout)["pid"]
    assert running(pid) is True
    stopped = bash(f"python3 {script} stop --workdir {tmp_path}/p", tmp_path, env)
    assert json.loads(stopped.stdout) == {"stopped": True} and running(pid) is False
    bad = bash(
        f"python3 {script} start --venv {venv} --workdir {tmp_path}/q --settings '{{\"workers\": 4}}'", tmp_path, env
    )
    assert (
        bad.returncode == 1
        and "workers is not a Placement setting this script knows; give max_allocation_candidates" in bad.stderr
    )
    assert not (tmp_path / "q").exists()  # refused before anything is written
