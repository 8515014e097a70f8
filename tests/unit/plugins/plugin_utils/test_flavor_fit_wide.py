"""Full-node GPU flavors (N devices of one alias, N one-device groups) as flavor_fit answers them at
Placement's settings: exact counts without listing N! candidates, and the overload a default Placement
meets."""

from __future__ import annotations

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import capacity_plan
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import flavor_fit
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import RECOMMENDED
from tests.support.wide_fleets import ALIASES, gpu_flavor
from tests.support.wide_fleets import uniform as hgx

ADVISED = RECOMMENDED.as_dict()


def fit(snapshot, devices, **options):
    return flavor_fit([gpu_flavor(devices)], snapshot, pci_aliases=ALIASES, pci_in_placement=True, **options)[0]


@pytest.mark.parametrize("devices", [5, 6, 7, 8])
def test_five_to_eight_of_eight_gpus_fit_once_per_host_at_placements_advised_settings(devices):
    report = fit(hgx(3, 8), devices, placement_config=ADVISED)
    assert report["outcome"] == "fits" and report["reason"] is None
    assert report["max_instances"] == {"hgx-0": 1, "hgx-1": 1, "hgx-2": 1}
    assert report["hosts"] == ["hgx-0", "hgx-1", "hgx-2"]  # breadth-first: every host gets candidates
    (work,) = report["placement"]
    assert not work["overload"] and work["roots_determined"]


@pytest.mark.parametrize("devices", [6, 8])
def test_at_placements_defaults_a_full_node_flavor_is_placement_overload_with_the_settings_as_fix(devices):
    report = fit(hgx(3, 8), devices)
    assert report["outcome"] == "no_host" and report["hosts"] == []
    assert report["reason"]["code"] == "placement_overload"
    for setting in ("optimize_for_wide_provider_trees=true", "max_allocation_candidates=1000", "breadth-first"):
        assert setting in report["reason"]["detail"]
    assert report["fleet_max_instances"] == 3  # what the hosts hold is still counted
    assert report["placement"][0]["overload"]


def test_four_of_eight_at_the_defaults_is_answered_quickly_and_fits():
    report = fit(hgx(3, 8), 4)
    assert report["outcome"] == "fits" and not report["placement"][0]["overload"]


def test_depth_first_with_a_bound_offers_nova_the_first_host_only_and_says_why_not_the_others():
    report = fit(hgx(3, 8), 8, placement_config={"max_allocation_candidates": 1000})
    assert len(report["hosts"]) == 1
    others = [name for name in report["max_instances"] if name not in report["hosts"]]
    for name in others:
        assert "max_allocation_candidates=1000 (depth-first)" in report["why_not"][name]
        assert "breadth-first" in report["why_not"][name]


@pytest.mark.parametrize(("gpus", "devices"), [(16, 12), (16, 16)])
def test_wide_sixteen_gpu_hosts_are_exact_without_listing_permutations(gpus, devices):
    report = fit(hgx(2, gpus, busy=0), devices, placement_config=ADVISED)
    assert report["outcome"] == "fits"
    assert report["max_instances"] == {"hgx-0": 1, "hgx-1": 1}


def test_a_host_with_gpus_in_use_holds_what_is_free():
    report = fit(hgx(2, 8, busy=3), 2, placement_config=ADVISED)
    assert report["max_instances"] == {"hgx-0": 2, "hgx-1": 2}  # 5 free GPUs: two copies of two


def test_capacity_plan_places_no_full_node_flavor_where_placement_overloads():
    demand = [{"flavor": gpu_flavor(8), "count": 2}]
    common = {"pci_aliases": ALIASES, "pci_in_placement": True}
    stuck = capacity_plan(demand, hgx(3, 8), **common)
    assert stuck["placed"]["gpu.h100.8"] == 0
    assert stuck["reasons"]["gpu.h100.8"]["code"] == "placement_overload"
    fine = capacity_plan(demand, hgx(3, 8), placement_config=ADVISED, **common)
    assert fine["placed"]["gpu.h100.8"] == 2


def _flavor_checks(placement_config):
    from types import SimpleNamespace

    from ansible_collections.accel.openstack.plugins.plugin_utils.audit.flavor_checks import check_flavors

    snapshot = hgx(3, 8)
    cloud = SimpleNamespace(
        flavors=[gpu_flavor(8), gpu_flavor(1)],
        flavor_fleet=lambda: snapshot,
        aliases=ALIASES,
        pci_in_placement=True,
        flavor_options={"placement_config": placement_config},
    )
    return check_flavors(cloud)


def test_the_audit_reports_a_deployed_placement_that_cannot_answer_a_sold_flavor_once():
    found = _flavor_checks({})
    assert [(f["code"], f["area"], f["severity"]) for f in found] == [("placement_overload", "placement", "error")]
    assert "gpu.h100.8" in found[0]["message"] and "breadth-first" in found[0]["fix"]
    assert _flavor_checks(ADVISED) == []


def test_the_audit_warns_when_a_depth_first_bound_narrows_a_flavor_to_few_hosts():
    found = _flavor_checks({"max_allocation_candidates": 1000})
    assert [(f["code"], f["severity"]) for f in found] == [("placement_narrow", "warning")]
    assert "1 of the 3 hosts" in found[0]["message"]


def test_placement_settings_are_read_as_placement_api_reads_them(tmp_path):
    from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
    from ansible_collections.accel.openstack.plugins.module_utils._nova import deployed

    (tmp_path / "cfg/placement").mkdir(parents=True)
    (tmp_path / "cfg/global.conf").write_text("[placement]\nmax_allocation_candidates = 50\n")
    (tmp_path / "cfg/placement.conf").write_text(
        "[placement]\nmax_allocation_candidates = 1000\nallocation_candidates_generation_strategy = breadth-first\n"
    )
    (tmp_path / "cfg/placement/placement-api.conf").write_text(
        "[workarounds]\noptimize_for_wide_provider_trees = True\n"
    )
    root = HostRoot(str(tmp_path))
    settings, sources = deployed.read_placement(root, {"layout": "kolla", "config_dir": "/cfg"})
    assert settings == ADVISED
    assert sources == ["/cfg/global.conf", "/cfg/placement.conf", "/cfg/placement/placement-api.conf"]
    empty, _none = deployed.read_placement(root, {"layout": "nova_conf_d"})
    assert empty == {
        "max_allocation_candidates": -1,
        "allocation_candidates_generation_strategy": "depth-first",
        "optimize_for_wide_provider_trees": False,
    }
    (tmp_path / "cfg/placement.conf").write_text("[placement]\nmax_allocation_candidates = lots\n")
    with pytest.raises(deployed.DeployedConfigError, match="/cfg/placement.conf"):
        deployed.read_placement(root, {"layout": "kolla", "config_dir": "/cfg"})


def test_the_placement_entry_names_hosts_as_the_report_does():
    report = fit(hgx(3, 8), 8, placement_config=ADVISED)
    (work,) = report["placement"]
    assert set(work["roots"]) == set(work["per_root"]) == {"hgx-0", "hgx-1", "hgx-2"}
    assert sum(work["per_root"].values()) == work["candidates"] == 1000
