"""The ownership filter and guard take hostile input: wrong types, names that are not traits, cycles."""

from __future__ import annotations

import sys

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter.placement import placement_ownership
from tests.support.ansible_runner import run_module, run_playbook

TREE = [{"name": "gpu-01", "parent_name": None, "traits": ["COMPUTE_NODE"]}]


@pytest.mark.parametrize(
    ("args", "kwargs", "fragment"),
    [
        (("gpu-01",), {}, "_input is a string"),
        ((TREE, "gpu-01"), {}, "found is a string"),
        ((TREE, []), {"root_traits": "CUSTOM_X"}, "root_traits is a string"),
        ((TREE, []), {"root_traits": ["CUSTOM_X\n"]}, "not custom trait names"),
        ((TREE, []), {"root_traits": ["COMPUTE_STATUS_DISABLED"]}, "Nova manages the standard ones"),
        (([{"name": ["gpu-01"]}], []), {}, "needs a name"),
        (([{"name": "a", "parent_name": {"x": 1}}], []), {}, "parent_name must be a name or null"),
        (([None], []), {}, "needs a name"),
    ],
)
def test_the_ownership_filter_refuses_bad_input_naming_it(args, kwargs, fragment):
    with pytest.raises(AnsibleFilterError) as caught:
        placement_ownership(*args, **kwargs)
    assert fragment in str(caught.value) and "Traceback" not in str(caught.value)


def test_hostile_traits_and_classes_in_a_tree_are_not_declared():
    tree = [{"name": "n", "parent_name": None, "traits": [1, None, "CUSTOM_OK"], "inventories": {"CUSTOM_A": 1, 2: 1}}]
    split = placement_ownership(tree, ["n"])
    assert split["traits"] == ["CUSTOM_OK"] and split["resource_classes"] == ["CUSTOM_A"]


def test_the_guard_option_takes_only_a_boolean():
    result = run_module("placement_provider", {"name": "p", "simulate_compute": "sometimes", "cloud": "none"})
    assert result["failed"] and "simulate_compute" in result["msg"]


@pytest.mark.parametrize(("retries", "delay"), [(10**9, 1), (1, -5), ("1; rm", 1), (1, 10**6)])
def test_the_wait_refuses_unbounded_or_odd_settings_before_any_call(retries, delay):
    variables = {
        "accel_placement_auth": {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": "t"}},
        "accel_placement_providers": TREE,
        "accel_placement_wait_retries": retries,
        "accel_placement_wait_delay": delay,
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
    }
    report = run_playbook("playbooks/placement.yml", "gpu-01,", variables)
    assert report["rc"] != 0
    failed = [
        result.get("msg", "")
        for play in report["plays"]
        for task in play["tasks"]
        for result in task["hosts"].values()
        if result.get("failed")
    ]
    # the role's argument spec refuses a non-number; the role's own check bounds the numbers
    assert len(failed) == 1 and "accel_placement_wait_" in failed[0], failed
    assert "Traceback" not in failed[0]
