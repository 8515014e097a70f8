"""Trait / resource class name lists as the Placement modules take them: custom and standard, checked."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._placement.names import (
    PlacementNameError,
    name_problem,
    split_names,
)


def test_problems_name_the_kind_the_name_and_the_fix():
    problem = name_problem("CUSTOM_nvidia_t4", "trait")
    assert problem.startswith("trait name 'CUSTOM_nvidia_t4' ") and "'CUSTOM_NVIDIA_T4'" in problem
    assert name_problem("CUSTOM_NVIDIA_T4", "trait") is None


def test_too_long_names_are_shown_shortened_with_the_limit():
    problem = name_problem("CUSTOM_" + "X" * 249, "resource class")
    assert problem.startswith("resource class name CUSTOM_XXX") and "Placement allows at most 255" in problem
    assert len(problem) < 120


def test_split_sorts_deduplicates_and_separates_standard_names():
    assert split_names(["VGPU", "CUSTOM_B", "CUSTOM_A", "CUSTOM_B"], "resource class") == (
        ["CUSTOM_A", "CUSTOM_B"],
        ["VGPU"],
    )


def test_split_reports_every_bad_name_at_once():
    with pytest.raises(PlacementNameError) as caught:
        split_names(["custom_gpu", "gpu t4", "CUSTOM_OK", "VGPU\n"], "trait")
    message = str(caught.value)
    assert "'custom_gpu'" in message and "'gpu t4'" in message and "CUSTOM_GPU_T4" in message
    assert "'VGPU\\n'" in message
