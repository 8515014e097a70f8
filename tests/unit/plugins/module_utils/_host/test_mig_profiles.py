"""The MIG profile table and planner, checked against NVIDIA's published tables and the nvidia-smi double."""

import itertools

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import mig_profiles
from ansible_collections.accel.openstack.plugins.module_utils._host.mig_profiles import MigLayoutError, plan_layout
from tests.support.fake_nvidia_smi import load_tables

TABLES = load_tables()
MODELS = {m.model: m for m in mig_profiles.MODELS}


def test_the_table_covers_exactly_the_published_models():
    assert set(MODELS) == set(TABLES)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_profile_matches_the_published_table(name):
    model, published = MODELS[name], TABLES[name]
    assert model.compute_slices == published["compute_slices"]
    assert model.memory_slices == published["memory_slices"]
    assert set(model.product_ids) == set(published["product_ids"])
    ours = {(p.name, p.profile_id, p.compute, p.size, p.starts, p.max_count) for p in model.profiles}
    theirs = {
        (p["name"], p["id"], p["compute"], p["size"], tuple(p["starts"]), p["max"]) for p in published["profiles"]
    }
    assert ours == theirs


def _brute_force_fits(published: dict, names: list[str]) -> bool:
    """An independent check: try every combination of allowed starts (the published placements)."""
    profiles = {p["name"]: p for p in published["profiles"]}
    chosen = [profiles[n] for n in names]
    if sum(p["compute"] for p in chosen) > published["compute_slices"]:
        return False
    if sum(1 for n in names if n.endswith("+me")) > 1:
        return False
    for name in set(names):
        if names.count(name) > profiles[name]["max"]:
            return False
    for starts in itertools.product(*[p["starts"] for p in chosen]):
        slots = [s for p, start in zip(chosen, starts, strict=True) for s in range(start, start + p["size"])]
        if max(slots, default=0) < published["memory_slices"] and len(slots) == len(set(slots)):
            return True
    return False


def _multisets(published: dict, limit: int):
    names = [p["name"] for p in published["profiles"]]
    for size in range(1, limit + 1):
        yield from itertools.combinations_with_replacement(names, size)


@pytest.mark.parametrize("name", ["A100-40GB", "A30", "H200-141GB"])
def test_the_planner_agrees_with_a_brute_force_search_over_the_published_placements(name):
    model, published = MODELS[name], TABLES[name]
    checked = fits = 0
    for names in _multisets(published, 4 if name != "A30" else 4):
        layout = [{"profile": n, "count": names.count(n)} for n in sorted(set(names))]
        expected = _brute_force_fits(published, list(names))
        try:
            placements = plan_layout(model, layout)
        except MigLayoutError:
            assert not expected, f"planner refused a layout that fits: {names}"
        else:
            assert expected, f"planner accepted a layout that does not fit: {names}"
            assert sorted(p.profile for p in placements) == sorted(names)
            fits += 1
        checked += 1
    assert checked > 100 and 0 < fits < checked


@pytest.mark.parametrize(
    "layout",
    [
        [{"profile": "1g.5gb", "count": 7}],
        [{"profile": "3g.20gb", "count": 2}],
        [{"profile": "4g.20gb", "count": 1}, {"profile": "3g.20gb", "count": 1}],
        [{"profile": "2g.10gb", "count": 3}, {"profile": "1g.5gb", "count": 1}],
        [{"profile": "1g.10gb", "count": 4}],
        [{"profile": "2g.10gb", "count": 1, "placement": 0}, {"profile": "1g.5gb", "count": 5}],
    ],
)
def test_layouts_nvidia_lists_as_valid_fit_an_a100(layout):
    placements = plan_layout(MODELS["A100-40GB"], layout)
    slots = [s for p in placements for s in range(p.start, p.start + p.size)]
    assert len(slots) == len(set(slots))


@pytest.mark.parametrize(
    ("layout", "words"),
    [
        ([{"profile": "1g.10gb", "count": 1}, {"profile": "9g.90gb", "count": 1}], ["entry 1", "9g.90gb", "1g.5gb"]),
        ([{"profile": "1g.5gb", "count": 8}], ["at most 7"]),
        ([{"profile": "4g.20gb", "count": 1}, {"profile": "4g.20gb", "count": 1}], ["at most 1"]),
        ([{"profile": "3g.20gb", "count": 2}, {"profile": "1g.5gb", "count": 1}], ["do not fit", "3g.20gb at [0, 4]"]),
        ([{"profile": "7g.40gb", "count": 1}, {"profile": "1g.5gb", "count": 1}], ["compute slices"]),
        ([{"profile": "3g.20gb", "count": 1, "placement": 2}], ["placement 2", "allowed starts are [0, 4]"]),
        ([{"profile": "1g.5gb+me", "count": 1}, {"profile": "1g.5gb+me", "count": 1}], ["+me"]),
        ([{"profile": "2g.10gb", "count": 2, "placement": [0]}], ["1 placement(s) for count 2"]),
    ],
)
def test_bad_layouts_name_the_entry_and_the_fix(layout, words):
    with pytest.raises(MigLayoutError) as caught:
        plan_layout(MODELS["A100-40GB"], layout)
    for word in words:
        assert word in str(caught.value)


def test_models_are_found_by_pci_id_then_by_name():
    assert mig_profiles.model_for("2335", None).model == "H200-141GB"
    assert mig_profiles.model_for(None, "NVIDIA A100-PCIE-40GB").model == "A100-40GB"
    assert mig_profiles.model_for("1eb8", "Tesla T4") is None
