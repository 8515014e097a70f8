"""placement_config: Placement's candidate-generation settings written where placement-api reads them."""

from __future__ import annotations

import pytest

from tests.support.ansible_runner import run_module

ADVICE = {
    "max_allocation_candidates": 1000,
    "allocation_candidates_generation_strategy": "breadth-first",
    "optimize_for_wide_provider_trees": True,
}
OPERATOR = "[DEFAULT]\ndebug = True\n\n[placement]\nrandomize_allocation_candidates = false\n"


def test_check_apply_check_apply_then_read_back_as_placement_reads_it(tmp_path):
    conf = tmp_path / "etc/kolla/config/placement.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(OPERATOR)
    args = {"root": str(tmp_path), "settings": ADVICE}
    checked = run_module("placement_config", args, check=True, diff=True)
    assert checked["changed"] and conf.read_text() == OPERATOR
    assert "optimize_for_wide_provider_trees = true" in checked["diff"][0]["after"]
    applied = run_module("placement_config", args)
    assert applied["changed"] and applied["command"] == "kolla-ansible reconfigure -t placement"
    assert run_module("placement_config", args, check=True)["changed"] is False
    again = run_module("placement_config", args)
    assert again["changed"] is False and again["command"] is None
    # The operator's own keys stay; what the module wrote reads back as the settings given.
    text = conf.read_text()
    assert "debug = True" in text and "randomize_allocation_candidates = false" in text
    read = run_module("nova_config_info", {"root": str(tmp_path), "compute_hosts": ["h1"], "placement": True})
    assert read["placement_config"] == ADVICE
    # An empty dict takes back what the module wrote, and only that.
    run_module("placement_config", {"root": str(tmp_path), "settings": {}})
    assert conf.read_text().strip() == OPERATOR.strip()


def test_a_plain_placement_conf_is_created_and_the_restart_named(tmp_path):
    done = run_module(
        "placement_config",
        {"root": str(tmp_path), "layout": "placement_conf", "settings": {"max_allocation_candidates": 500}},
    )
    assert done["changed"] and "restart placement-api" in done["command"]
    assert "max_allocation_candidates = 500" in (tmp_path / "etc/placement/placement.conf").read_text()


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"max_allocation_candidates": True}, "max_allocation_candidates must be -1"),
        ({"max_allocation_candidates": "1000\n[DEFAULT]"}, "max_allocation_candidates must be -1"),
        ({"allocation_candidates_generation_strategy": "breadth-first\nauth_strategy = noauth2"}, "must be one of"),
        ({"optimize_for_wide_provider_trees": "yes"}, "must be true or false"),
        ({"max_allocation_candidate": 10}, "unknown option(s) max_allocation_candidate"),
    ],
)
def test_bad_settings_are_refused_and_nothing_is_written(tmp_path, settings, words):
    failed = run_module("placement_config", {"root": str(tmp_path), "settings": settings})
    assert failed["failed"] and words in failed["msg"]
    assert not (tmp_path / "etc").exists()


def test_placement_settings_alone_are_read_where_placement_api_runs(tmp_path):
    conf = tmp_path / "etc/placement/placement.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("[placement]\nallocation_candidates_generation_strategy = breadth-first\n")
    read = run_module("nova_config_info", {"root": str(tmp_path), "layout": "nova_conf_d", "placement": True})
    assert read["placement_config"]["allocation_candidates_generation_strategy"] == "breadth-first"
    assert read["placement_sources"] == ["/etc/placement/placement.conf"]
