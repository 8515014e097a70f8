"""Nova's extra-spec validation: the generated table is Nova 34's registry, and nova_refusal answers as Nova does.

Every registered validator is tried with a name built from its pattern and a spread of values (empty,
words, numbers, booleans, its own enum values), plus names Nova does not know in namespaces it knows
and names outside them; each answer (None or the message) must equal Nova's own
``validators.validate`` run in the nova venv.
"""

import os
import re
import subprocess

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._names import extra_specs as table
from ansible_collections.accel.openstack.plugins.plugin_utils import flavor as nova_flavor
from ansible_collections.accel.openstack.plugins.plugin_utils.extra_specs import nova_refusal
from tests.support.nova_venv import REPO, ask, nova_python

GENERATOR = os.path.join(REPO, "tests", "support", "gen_extra_specs.py")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
FILLERS = ["", "1", "_G", "0", "foo", "FOO_BAR", ":x"]
VALUES = ["", "x", "1", "0", "-1", "16", "99999", "true", "False", " on ", "yes", "required", "forbidden", "2.0", " 3 "]
UNKNOWN = [
    ("vmware:hv_enabled", "True"),
    ("capabilities:profile", "gpu"),
    ("hw:pmem", "NVDIMM=4GB"),
    ("hw:pmem", "4GB,SMALL"),
    ("hw:tpm_model", "2.0"),
    ("hw:tpm_version", "2.0"),
    ("hw:nope", "1"),
    ("hw_rng:nope", "1"),
    ("resources:VCPU", "two"),
    ("resources1:CUSTOM_GPU", "1"),
    ("resources:NOT_A_CLASS", "1"),
    ("trait:CUSTOM_lower", "required"),
    ("trait:HW_CPU_X86_AVX2", "maybe"),
    ("custom:anything", "x"),
    ("no_namespace", "x"),
    ("hw:mem_page_size", "2MB"),
    ("hw:numa_cpus.0", "0-3,^2"),
    ("pci_passthrough:alias", "a100:2, t4:1"),
]


def _name(validator: tuple) -> str | None:
    """A name the validator's pattern matches, its placeholders filled from FILLERS."""
    name, regex = validator[0], re.compile(validator[1])
    places = PLACEHOLDER.findall(name)
    for filler in FILLERS:
        candidate = PLACEHOLDER.sub(lambda _m, f=filler: f, name)
        if regex.fullmatch(candidate):
            return candidate
    return None if places else name


def cases() -> list[tuple[str, str]]:
    found = list(UNKNOWN)
    for validator in table.VALIDATORS:
        name = _name(validator)
        assert name is not None, f"no sample name for {validator[0]}"
        values = VALUES + list(validator[4] or ())
        found += [(name, value) for value in values]
    return found


@pytest.fixture(scope="module")
def nova_answers():
    try:
        nova_python()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    pairs = cases()
    return pairs, ask("tests/support/nova_extra_spec_oracle.py", [list(p) for p in pairs], 300, "Nova extra specs")


def test_the_table_is_what_novas_registry_generates():
    try:
        python = nova_python()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    generated = subprocess.run([python, GENERATOR, "--print"], capture_output=True, text=True, timeout=120, check=True)
    with open(table.__file__, encoding="utf-8") as handle:
        assert generated.stdout == handle.read(), "run `make names`: the extra-spec table differs from Nova's registry"


def test_every_registered_key_is_judged_as_nova_judges_it(nova_answers):
    pairs, answers = nova_answers
    differ = [(n, v, nova, nova_refusal(n, v)) for (n, v), nova in zip(pairs, answers, strict=True)]
    differ = [d for d in differ if d[2] != d[3]]
    assert not differ, differ[:5]
    refused = sum(1 for a in answers if a)
    assert 1000 < refused < len(answers) - 1000  # both answers are well represented


def test_the_keys_real_operators_used_that_nova_refuses():
    assert nova_refusal("vmware:hv_enabled", "True") == (
        "Validation failed; extra spec 'vmware:hv_enabled' does not appear to be a valid extra spec."
    )
    assert nova_refusal("hw:tpm_model", "2.0") == "Validation failed; '2.0' is not one of: tpm-tis, tpm-crb."
    assert nova_refusal("hw:pmem", "NVDIMM=4GB").startswith("Validation failed; 'NVDIMM=4GB' is not of the format")
    assert nova_refusal("custom:anything", "x") is None and nova_refusal("hw:tpm_version", "2.0") is None


@pytest.mark.parametrize(
    ("key", "value", "nova"),
    [
        ("vmware:hv_enabled", "True", "extra spec 'vmware:hv_enabled' does not appear to be a valid extra spec"),
        ("capabilities:profile", "gpu", "extra spec 'capabilities:profile' does not appear to be a valid"),
        ("hw:tpm_model", "2.0", "'2.0' is not one of: tpm-tis, tpm-crb."),
        ("hw:pmem", "NVDIMM=4GB", "'NVDIMM=4GB' is not of the format"),
        ("quota:cpu_shares", "-5", "'-5' is less than the min value of '0'."),
    ],
)
def test_the_translation_refuses_what_nova_refuses_with_novas_message(key, value, nova):
    flavor = {"name": "f", "vcpus": 2, "ram": 1024, "disk": 10, "extra_specs": {key: value}}
    req = nova_flavor.translate(flavor)
    assert req.refusal is not None, key
    assert nova in req.refusal["message"]
    assert "microversion 2.86" in req.refusal["detail"] and "still boots" in req.refusal["detail"]
