"""Custom and standard trait / resource class names, as Placement accepts them."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._placement.names import (
    PlacementNameError,
    custom_name_problem,
    normalize,
    split_names,
    suggest,
)


@pytest.mark.parametrize("name", ["CUSTOM_NVIDIA_T4", "CUSTOM_PCI_10DE_1EB8", "CUSTOM_A", "CUSTOM_" + "X" * 248])
def test_valid_custom_names_pass(name):
    assert custom_name_problem(name, "trait") is None


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("CUSTOM_nvidia_t4", "CUSTOM_NVIDIA_T4"),
        ("CUSTOM_GPU-T4", "CUSTOM_GPU_T4"),
        ("CUSTOM_", "CUSTOM_"),
        ("CUSTOM_ T4", "CUSTOM__T4"),
    ],
)
def test_invalid_custom_names_say_what_was_meant(name, hint):
    problem = custom_name_problem(name, "trait")
    assert problem and "^CUSTOM_[A-Z0-9_]+$" in problem and repr(hint) in problem


def test_too_long_names_are_refused_with_the_limit():
    assert "Placement allows 255" in custom_name_problem("CUSTOM_" + "X" * 249, "trait")


def test_split_sorts_deduplicates_and_separates_standard_names():
    assert split_names(["VGPU", "CUSTOM_B", "CUSTOM_A", "CUSTOM_B"], "resource class") == (
        ["CUSTOM_A", "CUSTOM_B"],
        ["VGPU"],
    )


def test_split_reports_every_bad_name_at_once():
    with pytest.raises(PlacementNameError) as caught:
        split_names(["custom_gpu", "gpu t4", "CUSTOM_OK"], "trait")
    message = str(caught.value)
    assert "'custom_gpu'" in message and "'gpu t4'" in message and "CUSTOM_GPU_T4" in message


def test_normalize_turns_free_text_into_a_custom_name():
    assert normalize("nvidia t4") == "CUSTOM_NVIDIA_T4"
    assert normalize("custom-gpu.t4") == "CUSTOM_GPU_T4"


def test_suggest_finds_the_same_model_under_another_vendor_word():
    known = ["CUSTOM_NVIDIA_T4", "CUSTOM_NVIDIA_A100", "COMPUTE_NODE"]
    assert suggest("CUSTOM_GPU_T4", known)[0] == "CUSTOM_NVIDIA_T4"
    assert suggest("CUSTOM_NVIDIA_A10O", known) == ["CUSTOM_NVIDIA_A100"]
    assert suggest("CUSTOM_ZZZ", known) == []
