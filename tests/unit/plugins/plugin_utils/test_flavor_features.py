"""The guest features Nova 34 turns into Placement resources and traits (the flavor differential test
proves them against Nova's own request building; these pin each rule and its refusal)."""

import itertools
import random
import re

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.extra_specs import LINEAR_PATTERNS, fullmatch
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor import translate

BASE = {"name": "f", "vcpus": 4, "ram": 2048, "disk": 10}
UEFI = {"hw_firmware_type": "uefi"}


def _query(specs, image=None):
    request = translate(dict(BASE, extra_specs=specs), image_properties=image or {})
    assert request.refusal is None, request.refusal
    return request.queries[0]


def _refusal(specs, image=None):
    request = translate(dict(BASE, extra_specs=specs), image_properties=image or {})
    assert request.refusal is not None and not request.queries
    return request.refusal


@pytest.mark.parametrize(
    ("specs", "image", "present"),
    [
        (
            {"hw:tpm_version": "2.0"},
            {},
            ["COMPUTE_SECURITY_TPM_TIS", "COMPUTE_SECURITY_TPM_2_0", "TPM_SECRET_SECURITY_USER"],
        ),
        (
            {"hw:tpm_version": "2.0", "hw:tpm_model": "tpm-crb", "hw:tpm_secret_security": "host"},
            {},
            ["COMPUTE_SECURITY_TPM_CRB", "TPM_SECRET_SECURITY_HOST"],
        ),
        ({}, {"hw_tpm_version": "1.2"}, ["COMPUTE_SECURITY_TPM_1_2"]),
        ({"hw:mem_encryption": "true"}, UEFI, ["MEM_ENCRYPTION_CONTEXT:1", "HW_CPU_X86_AMD_SEV"]),
        (
            {"hw:mem_encryption": "yes", "hw:mem_encryption_model": "amd-sev-snp"},
            dict(UEFI, hw_firmware_stateless="true"),
            ["HW_CPU_X86_AMD_SEV_SNP", "COMPUTE_SECURITY_STATELESS_FIRMWARE"],
        ),
        ({"hw:pmem": "4GB,4GB,SMALL"}, {}, ["CUSTOM_PMEM_NAMESPACE_4GB:2", "CUSTOM_PMEM_NAMESPACE_SMALL:1"]),
        ({"os:secure_boot": "required"}, {}, ["COMPUTE_SECURITY_UEFI_SECURE_BOOT"]),
        ({}, {"hw_maxphysaddr_mode": "emulate"}, ["COMPUTE_ADDRESS_SPACE_EMULATED"]),
        ({"hw:virtio_packed_ring": "true"}, {}, ["root_required=COMPUTE_NET_VIRTIO_PACKED"]),
        (
            {"hw:ephemeral_encryption": "true", "hw:ephemeral_encryption_format": "luks"},
            {},
            ["COMPUTE_EPHEMERAL_ENCRYPTION,COMPUTE_EPHEMERAL_ENCRYPTION_LUKS"],
        ),
        ({"hw:sound_model": "virtio"}, {}, ["COMPUTE_SOUND_MODEL_VIRTIO"]),
    ],
)
def test_a_feature_adds_what_nova_adds(specs, image, present):
    query = _query(specs, image)
    for text in present:
        assert text in query, (text, query)


@pytest.mark.parametrize(
    ("specs", "image", "absent"),
    [
        ({"hw:mem_encryption": "false"}, {}, "MEM_ENCRYPTION_CONTEXT"),
        ({"os:secure_boot": "disabled"}, {}, "SECURE_BOOT"),
        ({}, {"hw_firmware_stateless": "true", "hw_firmware_type": "bios"}, "STATELESS"),
        ({"hw:ephemeral_encryption_format": "luks"}, {}, "EPHEMERAL"),
        ({"hw:tpm_secret_security": "host"}, {}, "TPM"),
        ({"hw:sound_model": "ich9"}, {}, "SOUND"),
    ],
)
def test_a_feature_that_is_off_adds_nothing(specs, image, absent):
    assert absent not in _query(specs, image)


@pytest.mark.parametrize(
    ("specs", "image", "message", "key"),
    [
        (
            {"hw:mem_encryption": "true"},
            {},
            "doesn't have the 'hw_firmware_type' property set to 'uefi'",
            "hw_firmware_type",
        ),
        ({"hw:mem_encryption": "true"}, dict(UEFI, hw_machine_type="pc"), "q35 type is required", "hw_machine_type"),
        (
            {"hw:mem_encryption": "true", "hw:mem_encryption_model": "intel-tdx"},
            UEFI,
            "requires stateless firmware",
            "hw_firmware_stateless",
        ),
        (
            {"hw:mem_encryption": "false"},
            dict(UEFI, hw_mem_encryption="true"),
            "conflicting with image",
            "hw_mem_encryption",
        ),
        ({"hw:tpm_version": "1.2", "hw:tpm_model": "tpm-crb"}, {}, "only valid with TPM version 2.0", "tpm_model"),
        ({"hw:tpm_version": "2.0"}, {"hw_tpm_version": "1.2"}, "conflicting with image", "hw_tpm_version"),
        ({"hw:locked_memory": "true"}, {}, "forbidden when mem_page_size is not set", "hw:locked_memory"),
        ({"hw:cpu_realtime": "true"}, {}, "requires either one or more non-realtime CPU", "hw:cpu_realtime"),
        (
            {"hw:cpu_realtime": "true", "hw:cpu_realtime_mask": "^0"},
            {},
            "non dedicated cpu pinning policy",
            "hw:cpu_realtime",
        ),
    ],
)
def test_nova_refuses_a_feature_combination_with_its_message(specs, image, message, key):
    refusal = _refusal(specs, image)
    assert message in refusal["message"] and key in refusal["key"], refusal


def test_mixed_realtime_pins_the_realtime_vcpus():
    query = _query({"hw:cpu_policy": "mixed", "hw:cpu_realtime": "true", "hw:cpu_realtime_mask": "^0"})
    assert "PCPU:3" in query and "VCPU:1" in query


@pytest.mark.parametrize("nova_pattern", sorted(LINEAR_PATTERNS))
def test_the_linear_patterns_match_exactly_what_novas_match(nova_pattern):
    alphabet = "a1_,^-:=" if "a-z" in nova_pattern else "12^-,a"
    rng = random.Random(7)
    strings = ["".join(p) for n in range(1, 6) for p in itertools.product(alphabet, repeat=n)]
    strings += ["".join(rng.choice(alphabet) for _char in range(rng.randint(6, 14))) for _string in range(3000)]
    for text in strings:
        assert fullmatch(nova_pattern, text) == (re.fullmatch(nova_pattern, text) is not None), text
