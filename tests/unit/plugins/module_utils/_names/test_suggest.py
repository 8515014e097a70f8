"""The one "did you mean" for names."""

from ansible_collections.accel.openstack.plugins.module_utils._names.standard import STANDARD_RESOURCE_CLASSES
from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import did_you_mean, suggest


def test_suggest_finds_the_same_model_under_another_vendor_word():
    known = ["CUSTOM_NVIDIA_T4", "CUSTOM_NVIDIA_A100", "COMPUTE_NODE"]
    assert suggest("CUSTOM_GPU_T4", known)[0] == "CUSTOM_NVIDIA_T4"
    assert suggest("CUSTOM_NVIDIA_A10O", known) == ["CUSTOM_NVIDIA_A100"]
    assert suggest("CUSTOM_ZZZ", known) == []


def test_suggest_keeps_only_the_nearest_names():
    assert suggest("VPCU", STANDARD_RESOURCE_CLASSES) == ["VGPU", "VCPU", "PCPU"]
    assert suggest("MEMORY", STANDARD_RESOURCE_CLASSES) == ["MEMORY_MB"]


def test_did_you_mean_is_a_phrase_or_nothing():
    assert did_you_mean("CUSTOM_GPU_T4", {"CUSTOM_NVIDIA_T4"}) == "; did you mean CUSTOM_NVIDIA_T4?"
    assert did_you_mean("CUSTOM_ZZZ", {"CUSTOM_NVIDIA_T4"}) == ""
