"""MIG profile tables read from the GPU (nvidia-smi mig -lgip / -lgipp) against the built-in ones."""

from __future__ import annotations

import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import mig, mig_profiles, nvidia_smi
from ansible_collections.accel.openstack.plugins.module_utils._host.mig_profiles import MigLayoutError
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from tests.support.fake_sysfs import build_root

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = os.path.join(HERE, "..", "..", "..", "..", "fixtures", "nvidia", "mig-tables")
MODELS = {m.model: m for m in mig_profiles.MODELS}
RECORDED_MODELS = sorted(f[: -len(".lgip.txt")] for f in os.listdir(RECORDED) if f.endswith(".lgip.txt"))
H100 = "0000:3b:00.0"


def _read(model: str, kind: str) -> str:
    with open(os.path.join(RECORDED, f"{model}.{kind}.txt")) as handle:
        return handle.read()


def _shape(model: mig_profiles.MigModel) -> tuple:
    profiles = {(p.name, p.profile_id, p.compute, p.size, p.starts, p.max_count) for p in model.profiles}
    return model.compute_slices, model.memory_slices, frozenset(profiles)


def test_at_least_six_models_are_recorded():
    assert len(RECORDED_MODELS) >= 6 and set(RECORDED_MODELS) <= set(MODELS)


@pytest.mark.parametrize("name", RECORDED_MODELS)
def test_recorded_output_parses_to_the_built_in_table(name):
    builtin = MODELS[name]
    parsed = mig_profiles.model_from_gpu(_read(name, "lgip"), _read(name, "lgipp"), builtin.product_ids[0], None)
    assert parsed is not None
    assert parsed.model == builtin.model
    assert _shape(parsed) == _shape(builtin)


def _recorded_root(tmp_path, lgip: str, lgipp: str) -> HostRoot:
    root = build_root("mig-hopper", str(tmp_path / "root"))
    host = HostRoot(root)
    host.write_text(f"{nvidia_smi.RECORDED_DIR}/mig-lgip/{H100}.txt", lgip)
    host.write_text(f"{nvidia_smi.RECORDED_DIR}/mig-lgipp/{H100}.txt", lgipp)
    return host


def test_the_gpu_s_own_table_is_preferred_over_the_built_in_one(tmp_path):
    # A newer driver offers a profile the built-in table does not know: the GPU's table wins.
    lgip = _read("H100-80GB", "lgip").replace("MIG 4g.40gb    ", "MIG 4g.40gb+gfx")
    lgipp = _read("H100-80GB", "lgipp")
    host = _recorded_root(tmp_path, lgip, lgipp)
    plan = mig.plan(host, H100, [{"profile": "4g.40gb+gfx", "count": 1}])
    assert plan.table == "gpu" and plan.result()["profile_table"] == "gpu"
    assert [p.profile for p in plan.desired] == ["4g.40gb+gfx"]


def test_without_recorded_tables_the_built_in_one_is_used(tmp_path):
    host = HostRoot(build_root("mig-hopper", str(tmp_path / "root")))
    plan = mig.plan(host, H100, [{"profile": "3g.40gb", "count": 2}])
    assert plan.table == "built-in"


@pytest.mark.parametrize(
    ("lgip", "lgipp", "words"),
    [
        ("|   0  MIG bogus            19     7/7        4.75       No     14     0     0   |", "", "is not like"),
        ("", "GPU  0 Profile ID 19 Placements: {0,7}:4", "outside 8 slots"),
        ("", "GPU  0 Profile ID 19 Placements: {0}:99", "outside 8 slots"),
        (
            "|   0  MIG 1g.5gb            19     7/7        4.75       No     14     0     0   |\n"
            "|   1  MIG 1g.5gb            19     7/7        4.75       No     14     0     0   |",
            "",
            "one GPU",
        ),
    ],
)
def test_output_that_is_not_nvidia_smi_s_is_refused(lgip, lgipp, words):
    with pytest.raises(MigLayoutError, match=words):
        mig_profiles.model_from_gpu(lgip, lgipp, "2330", None)


def test_a_profile_without_placement_is_refused_and_empty_output_falls_back():
    lgip = _read("A30", "lgip")
    lgipp = "\n".join(line for line in _read("A30", "lgipp").splitlines() if "ID 21" not in line)
    with pytest.raises(MigLayoutError, match="no placement for profile 1g.6gb\\+me"):
        mig_profiles.model_from_gpu(lgip, lgipp, "20b7", None)
    assert mig_profiles.model_from_gpu("No MIG-enabled devices found.", "", "20b7", None) is None


def test_blackwell_models_are_found_by_id_and_by_name():
    assert mig_profiles.model_for("2941", None).model == "GB200-186GB"
    assert mig_profiles.model_for(None, "NVIDIA GB200").model == "GB200-186GB"
    assert mig_profiles.model_for(None, "NVIDIA B200").model == "B200-180GB"
    assert mig_profiles.model_for("3182", None).model == "B300-269GB"
    assert mig_profiles.model_for(None, "NVIDIA RTX PRO 6000 Blackwell Server Edition").model == "RTX-PRO-6000-96GB"


def test_a_running_system_reads_the_table_from_nvidia_smi(tmp_path):
    from tests.support.fake_nvidia_smi import FakeNvidiaSmi

    root = build_root("mig-hopper", str(tmp_path / "root"))
    host, smi = HostRoot(root), FakeNvidiaSmi(root)
    h200 = "0000:19:00.0"  # MIG mode on: nvidia-smi lists its profiles
    plan = mig.plan(host, h200, [{"profile": "3g.71gb", "count": 2}], smi)
    assert plan.table == "gpu" and plan.model == "H200-141GB"
    lgip, lgipp = nvidia_smi.read_profile_tables(host, h200, smi)
    parsed = mig_profiles.model_from_gpu(lgip, lgipp, "2335", None)
    assert _shape(parsed) == _shape(MODELS["H200-141GB"])
    # MIG mode off: nvidia-smi answers with an error, and the built-in table is used.
    assert mig.plan(host, H100, [{"profile": "3g.40gb", "count": 2}], smi).table == "built-in"
