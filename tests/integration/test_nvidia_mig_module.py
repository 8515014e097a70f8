"""nvidia_mig through its real main(): check -> apply -> check -> apply, assert, bad input."""

import json
import os

import pytest

from tests.support.ansible_runner import run_module
from tests.support.fake_sysfs import build_root

GPU = "0000:3b:00.0"
PENDING = "0000:d8:00.0"


@pytest.fixture
def root(tmp_path):
    return build_root("mig-a100", str(tmp_path / "root"))


def _tree(root: str) -> dict:
    out = {}
    for base, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(base, name)
            with open(path, "rb") as handle:
                out[os.path.relpath(path, root)] = handle.read()
    return out


def test_check_apply_check_apply(root):
    args = {"root": root, "address": PENDING, "layout": [{"profile": "3g.20gb", "count": 2}]}
    before = _tree(root)
    checked = run_module("nvidia_mig", args, check=True, diff=True)
    assert checked["changed"] is True, checked
    assert checked["plan"] == ["nvidia-smi mig -i 00000000:D8:00.0 -cgi 9:0,9:4 -C"]
    assert checked["reset_required"] is True
    assert "3g.20gb@4" in checked["diff"][0]["after"]
    assert _tree(root) == before
    applied = run_module("nvidia_mig", args)
    assert applied["changed"] is True
    assert [c["status"] for c in applied["commands"]] == ["pending"]
    with open(os.path.join(root, "etc/accel-openstack/mig", PENDING + ".json")) as handle:
        state = json.load(handle)
    assert [(i["profile"], i["start"]) for i in state["instances"]] == [("3g.20gb", 0), ("3g.20gb", 4)]
    assert run_module("nvidia_mig", args, check=True)["changed"] is False
    assert run_module("nvidia_mig", args)["changed"] is False


def test_assert_reports_drift_and_changes_nothing(root):
    before = _tree(root)
    ok = run_module(
        "nvidia_mig",
        {
            "root": root,
            "address": GPU,
            "state": "assert",
            "layout": [
                {"profile": "3g.20gb", "count": 1},
                {"profile": "2g.10gb", "count": 1, "placement": 0},
                {"profile": "1g.5gb", "count": 2},
            ],
        },
    )
    assert ok.get("failed") is not True and ok["changed"] is False and ok["drift"] == []
    drift = run_module(
        "nvidia_mig", {"root": root, "address": GPU, "state": "assert", "layout": [{"profile": "7g.40gb", "count": 1}]}
    )
    assert drift["failed"] is True and "7g.40gb@0" in drift["msg"]
    assert _tree(root) == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"address": "0000:99:00.0", "layout": []}, ["not on this host", GPU]),
        ({"address": GPU, "layout": [{"profile": "2g.20gb", "count": 1}]}, ["entry 0", "2g.10gb"]),
        (
            {"address": GPU, "layout": [{"profile": "4g.20gb", "count": 1}, {"profile": "4g.20gb", "count": 1}]},
            ["at most 1"],
        ),
    ],
)
def test_bad_input_fails_in_check_mode_too_and_changes_nothing(root, args, words):
    before = _tree(root)
    for check in (True, False):
        result = run_module("nvidia_mig", dict(args, root=root), check=check)
        assert result["failed"] is True
        for word in words:
            assert word in result["msg"]
    assert _tree(root) == before
