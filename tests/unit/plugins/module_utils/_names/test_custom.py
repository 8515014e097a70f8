"""The CUSTOM_ rule, its normaliser and its length limit, as Placement applies them."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._names.custom import (
    MAX_NAME_LENGTH,
    custom_name_problem,
    is_custom,
    is_custom_name,
    normalize,
)


@pytest.mark.parametrize("name", ["CUSTOM_NVIDIA_T4", "CUSTOM_PCI_10DE_1EB8", "CUSTOM_A", "CUSTOM_" + "X" * 248])
def test_valid_custom_names_pass(name):
    assert custom_name_problem(name) is None and is_custom_name(name)


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("CUSTOM_nvidia_t4", "CUSTOM_NVIDIA_T4"),
        ("CUSTOM_GPU-T4", "CUSTOM_GPU_T4"),
        ("CUSTOM_ T4", "CUSTOM_T4"),
        ("CUSTOM_T4\n", "CUSTOM_T4_"),
    ],
)
def test_invalid_custom_names_say_what_was_meant(name, hint):
    problem = custom_name_problem(name)
    assert problem and "^CUSTOM_[A-Z0-9_]+$" in problem and repr(hint) in problem
    assert not is_custom_name(name)


@pytest.mark.parametrize("name", ["CUSTOM_", "CUSTOM_-", "custom_"])
def test_the_prefix_alone_is_not_proposed_as_what_was_meant(name):
    problem = custom_name_problem(name)
    assert problem and "give at least one of A-Z, 0-9 or _ after CUSTOM_" in problem
    assert "did you mean 'CUSTOM_'" not in problem


def test_too_long_names_are_refused_with_the_limit():
    name = "CUSTOM_" + "X" * (MAX_NAME_LENGTH - 6)
    assert "Placement allows at most 255" in custom_name_problem(name)
    assert not is_custom_name(name)


def test_empty_and_non_strings_are_refused():
    assert "empty or not a string" in custom_name_problem("")
    assert "empty or not a string" in custom_name_problem(None)


def test_normalize_turns_free_text_into_a_custom_name():
    assert normalize("nvidia t4") == "CUSTOM_NVIDIA_T4"
    assert normalize("custom-gpu.t4") == "CUSTOM_GPU_T4"
    assert normalize("custom-gpu.t4", keep_custom_word=True) == "CUSTOM_CUSTOM_GPU_T4"  # as Nova names it
    assert normalize("a--b  c") == "CUSTOM_A_B_C"
    assert normalize("CUSTOM_A100") == "CUSTOM_A100"


def test_is_custom_is_the_prefix_only():
    assert is_custom("CUSTOM_x") and not is_custom("custom_x") and not is_custom(None)


def test_normalize_is_the_rule_nova_applies_through_os_traits():
    import json
    import os
    import subprocess

    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 5))
    python = os.path.join(os.environ.get("ACCEL_NOVA_VENV") or os.path.join(repo, ".venv-nova"), "bin", "python")
    if not os.path.exists(python):
        pytest.skip(f"{python} is missing; `make nova-venv` installs os-traits there")
    texts = ["nvidia t4", "a--b  c", "gpu.t4", "x__y", "_lead", "trail-", "custom-x", "MiXeD9", "ä ö"]
    script = (
        "import json, sys, os_traits, os_resource_classes\n"
        "texts = json.load(sys.stdin)\n"
        "print(json.dumps([[os_traits.normalize_name(t), os_resource_classes.normalize_name(t)] for t in texts]))"
    )
    out = subprocess.run([python, "-c", script], input=json.dumps(texts), capture_output=True, text=True, check=True)
    for text, (trait, resource_class) in zip(texts, json.loads(out.stdout), strict=True):
        assert normalize(text, keep_custom_word=True) == trait == resource_class, text
