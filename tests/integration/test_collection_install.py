"""The built tarball, installed with ansible-core only, runs ``ansible-playbook accel.openstack.site`` and
``ansible-playbook accel.openstack.audit``.

A clean venv gets ansible-core (pinned as in requirements/test.txt) and the collection's own
requirements.txt, nothing else: no ``ansible`` package, so no openstack.cloud (tests/support/
installed_collection.py; the session fixture ``installed_collection`` builds and installs the tarball once
per run). The demo inventory of the installed copy then runs the whole pipeline against a real Placement,
and the audit of the cloud it built runs from another directory: its report lands there, never inside the
collection, and the fixes name the playbooks as an installed collection runs them.
"""

import json
import os
import re

import pytest

from tests.support.fake_sysfs import main as build_roots
from tests.support.installed_collection import pin, run

pytestmark = pytest.mark.xdist_group("tarball")


def recap_ok(out: str) -> None:
    recap = out[out.index("PLAY RECAP") :]
    assert "failed=0" in recap and not re.search(r"failed=[1-9]|unreachable=[1-9]", recap), recap


def test_the_venv_holds_ansible_core_and_the_requirements_only(user_venv):
    frozen = run([os.path.join(user_venv, "python"), "-m", "pip", "freeze"]).lower()
    assert pin("ansible-core").lower() in frozen
    assert not re.search(r"^ansible==", frozen, re.MULTILINE), "the full ansible package would bring openstack.cloud"
    assert "openstacksdk==" in frozen


@pytest.fixture(scope="module")
def demo(installed_collection, placement, tmp_path_factory):
    """The demo built by ``ansible-playbook accel.openstack.site`` from the installed copy."""
    root, env = installed_collection
    top = tmp_path_factory.mktemp("demo")
    build_roots(["--all", "--dest", str(top / "roots"), "--inventory", str(root / "inventories/demo/hosts.yml")])
    env = dict(env, ACCEL_DEMO_DIR=str(top))
    extra = json.dumps({"accel_placement_auth": placement.auth})
    cmd = ["ansible-playbook", "accel.openstack.site", "-i", str(root / "inventories" / "demo"), "-e", extra]
    return top, env, run(cmd, cwd=str(top), env=env)


def test_the_installed_collection_runs_the_demo_by_fqcn(installed_collection, demo, placement):
    root, _env = installed_collection
    top, _env, out = demo
    assert not (root / "tests").exists() and not (root / "benchmarks").exists()
    recap_ok(out)
    assert "accel.openstack.validate : Report where each flavor fits" in out
    status, providers = placement.request("GET", "/resource_providers")
    assert status == 200
    names = {p["name"] for p in providers["resource_providers"]}
    assert {"hgx-01", "mig-01", "net-01"} <= names
    assert (top / "kolla-config" / "nova" / "hgx-01" / "nova.conf").is_file()


# What the audit says of the demo right after the pipeline, as `make demo` shows it: the flavor with a
# mistyped trait the demo carries on purpose, the hosts whose devices move to vfio-pci at the next boot
# (accel_reboot: never), the host whose IOMMU is off, and a general flavor that can land on GPU hosts.
DEMO_FINDINGS = sorted(
    [("error", None, "flavor_unplaceable"), ("warning", None, "gpu_host_unreserved"),
     ("warning", "legacy-01", "iommu_off"), ("info", "vgpu-l40s-01", "adopt_unexpressed")]
    + [("warning", host, "not_bound_vfio") for host in ("epyc-01", "hgx-01", "mig-01", "workstation-01")],
    key=str,
)  # fmt: skip


def test_the_installed_collection_audits_the_demo_by_fqcn(installed_collection, demo, placement, tmp_path):
    """The audit of the demo cloud, run from a directory of the operator's: the report and the adopted policy
    are written there and nothing inside the collection; the fixes name the playbooks by their FQCN."""
    root, _env = installed_collection
    _top, env, _out = demo
    inside = sorted(str(p) for p in root.rglob("*"))
    extra = json.dumps({"accel_placement_auth": placement.auth, "accel_audit_fail_on": "never"})
    cmd = ["ansible-playbook", "accel.openstack.audit", "-i", str(root / "inventories" / "demo"), "-e", extra]
    out = run(cmd, cwd=str(tmp_path), env=env)
    recap_ok(out)
    assert "[WARNING]" not in out
    assert sorted(os.listdir(tmp_path)) == ["accel-adopted-policy.yml", "accel-audit.json"]
    assert sorted(str(p) for p in root.rglob("*")) == inside
    report = json.loads((tmp_path / "accel-audit.json").read_text())
    assert sorted(((f["severity"], f["host"], f["code"]) for f in report["findings"]), key=str) == DEMO_FINDINGS
    assert "audit: 1 error, 6 warnings and 1 info finding" in out
    unreserved = next(f for f in report["findings"] if f["code"] == "gpu_host_unreserved")
    assert len(unreserved["fix"]) > 140 and unreserved["fix"] in out  # the table shows it whole
    fixes = " ".join(f["fix"] for f in report["findings"])
    assert "playbooks/" not in fixes
    assert "run accel.openstack.prepare_hosts for this host" in fixes
    assert "see accel.openstack.validate's table" in fixes
