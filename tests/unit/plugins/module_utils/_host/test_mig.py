"""MIG plan/apply against the stateful nvidia-smi double (a running system) and recorded roots."""

import json
import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import mig, nvidia_smi
from ansible_collections.accel.openstack.plugins.module_utils._host.mig_profiles import MigLayoutError
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from tests.support.fake_nvidia_smi import STATE, FakeNvidiaSmi
from tests.support.fake_sysfs import build_root

H200 = "0000:19:00.0"
H100 = "0000:3b:00.0"


@pytest.fixture
def hopper(tmp_path):
    root = build_root("mig-hopper", str(tmp_path / "root"))
    return HostRoot(root), FakeNvidiaSmi(root)


def _double_state(root: str) -> dict:
    with open(os.path.join(root, STATE.lstrip("/"))) as handle:
        return json.load(handle)


def test_a_layout_is_created_then_left_alone(hopper):
    host, smi = hopper
    layout = [{"profile": "3g.71gb", "count": 1}, {"profile": "2g.35gb", "count": 2}]
    first = mig.plan(host, H200, layout, smi)
    assert first.changed and first.instances_change
    assert first.commands == [["nvidia-smi", "mig", "-i", "00000000:19:00.0", "-cgi", "14:0,14:2,9:4", "-C"]]
    outcomes = mig.apply(host, first, smi)
    assert [o["status"] for o in outcomes] == ["ran"]
    gpu = next(g for g in _double_state(host.root)["gpus"] if g["address"] == H200)
    assert sorted((i["profile"], i["placement"]) for i in gpu["instances"]) == [
        ("2g.35gb", "0:2"),
        ("2g.35gb", "2:2"),
        ("3g.71gb", "4:4"),
    ]
    second = mig.plan(host, H200, layout, smi)
    assert not second.changed and second.commands == []
    saved = json.loads(host.read_text(mig.state_path(H200)))
    assert [(i["profile"], i["start"]) for i in saved["instances"]] == [("2g.35gb", 0), ("2g.35gb", 2), ("3g.71gb", 4)]
    # what discovery reads through the root follows the double
    recorded = nvidia_smi.read_mig_state(host, None)[H200]["gpu_instances"]
    assert len(recorded) == 3


def test_a_different_layout_replaces_the_instances(hopper):
    host, smi = hopper
    mig.apply(host, mig.plan(host, H200, [{"profile": "7g.141gb", "count": 1}], smi), smi)
    plan = mig.plan(host, H200, [{"profile": "1g.18gb", "count": 7}], smi)
    assert [c[2] for c in plan.commands] == ["-dci", "-dgi", "-i"]
    mig.apply(host, plan, smi)
    assert not mig.plan(host, H200, [{"profile": "1g.18gb", "count": 7}], smi).changed


def test_a_busy_gpu_is_refused_naming_the_process_and_nothing_runs(hopper):
    host, smi = hopper
    before = _double_state(host.root)
    plan = mig.plan(host, H100, [{"profile": "1g.10gb", "count": 2}], smi)
    reason = mig.refusal(plan)
    assert "python3 (pid 4242)" in reason and "Stop those processes" in reason
    assert _double_state(host.root) == before
    assert not host.exists(mig.state_path(H100))


def test_a_mode_change_is_reported_pending_a_reset_never_forced(hopper):
    host, smi = hopper
    state = _double_state(host.root)
    state["gpus"][1]["processes"] = []
    smi.save(state)
    layout = [{"profile": "3g.40gb", "count": 2}]
    plan = mig.plan(host, H100, layout, smi)
    assert plan.mode_change and plan.result()["reset_required"]
    assert mig.refusal(plan) is None
    outcomes = mig.apply(host, plan, smi)
    assert [o["status"] for o in outcomes] == ["ran", "pending"]
    assert not any("-r" in call for call in smi.calls)
    again = mig.plan(host, H100, layout, smi)
    assert again.reset_pending and not again.changed
    # after the reset (a reboot), the same layout creates the instances
    assert smi(["nvidia-smi", "-r", "-i", "00000000:3B:00.0"])[0] == 0
    mig.apply(host, mig.plan(host, H100, layout, smi), smi)
    assert not mig.plan(host, H100, layout, smi).changed


def test_nvidia_drm_blocks_a_mode_change(hopper):
    host, smi = hopper
    state = _double_state(host.root)
    state["gpus"][1]["processes"] = []
    smi.save(state)
    os.makedirs(host.path("/sys/module/nvidia_drm"))
    plan = mig.plan(host, H100, [{"profile": "7g.80gb", "count": 1}], smi)
    assert "modprobe -r nvidia_drm" in mig.refusal(plan)


def test_the_double_refuses_what_nvidia_refuses(hopper):
    host, smi = hopper
    bus = "00000000:19:00.0"
    assert smi(["nvidia-smi", "mig", "-i", bus, "-cgi", "9:2", "-C"])[0] != 0  # 3g only at 0 or 4
    assert smi(["nvidia-smi", "mig", "-i", bus, "-cgi", "0", "-C"])[0] == 0
    rc, _out, err = smi(["nvidia-smi", "mig", "-i", bus, "-cgi", "19", "-C"])
    assert rc != 0 and "Insufficient Resources" in err
    assert smi(["nvidia-smi", "mig", "-i", "00000000:3B:00.0", "-cgi", "19", "-C"])[0] != 0  # MIG disabled


def test_the_recorded_root_is_planned_without_running_anything(tmp_path):
    host = HostRoot(build_root("mig-a100", str(tmp_path / "root")))
    layout = [{"profile": "3g.20gb", "count": 1}, {"profile": "2g.10gb", "count": 1}, {"profile": "1g.5gb", "count": 2}]
    plan = mig.plan(host, "0000:3b:00.0", layout)
    assert not plan.instances_change and plan.state_changed and plan.commands == []
    pending = mig.plan(host, "0000:d8:00.0", [{"profile": "7g.40gb", "count": 1}])
    assert pending.reset_pending and not pending.mode_change
    outcomes = mig.apply(host, pending)
    assert [o["status"] for o in outcomes] == ["pending"]
    assert json.loads(host.read_text(mig.state_path("0000:d8:00.0")))["instances"][0]["profile"] == "7g.40gb"


def test_bad_input_names_the_fix_and_changes_nothing(tmp_path):
    host = HostRoot(build_root("mig-a100", str(tmp_path / "root")))
    with pytest.raises(mig.MigError, match="0000:3b:00.0, 0000:d8:00.0"):
        mig.plan(host, "0000:99:00.0", [])
    with pytest.raises(mig.MigError, match="not a PCI address"):
        mig.plan(host, "GPU-0", [])
    with pytest.raises(MigLayoutError, match="layout for 0000:3b:00.0 entry 0.*1g.5gb"):
        mig.plan(host, "0000:3b:00.0", [{"profile": "1g.10gb+gfx", "count": 1}])
    assert not host.exists(mig.STATE_DIR)
