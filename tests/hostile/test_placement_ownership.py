"""The ownership filter and guard take hostile input: wrong types, names that are not traits, cycles."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter.placement import placement_ownership
from tests.support.ansible_runner import run_module

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
