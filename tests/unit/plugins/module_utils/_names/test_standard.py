"""The generated standard names are exactly what the pinned os-traits and os-resource-classes define."""

import os
import subprocess

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._names import standard

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))))
GENERATOR = os.path.join(REPO, "tests", "support", "gen_standard_names.py")
# Both venvs install the pinned packages: Nova's, and the real Placement's whose database these sets describe.
VENVS = {
    "nova": os.environ.get("ACCEL_NOVA_VENV") or os.path.join(REPO, ".venv-nova"),
    "placement": os.environ.get("ACCEL_PLACEMENT_VENV") or os.path.join(REPO, ".venv-placement"),
}


@pytest.mark.parametrize("venv", sorted(VENVS))
def test_data_module_is_what_the_installed_packages_generate(venv):
    python = os.path.join(VENVS[venv], "bin", "python")
    if not os.path.exists(python):
        pytest.skip(f"{python} is missing; `make {venv}-venv` installs os-traits and os-resource-classes there")
    generated = subprocess.run(
        [python, GENERATOR, "--print"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    with open(standard.__file__, encoding="utf-8") as handle:
        current = handle.read()
    assert generated == current, f"run `make names`: {standard.__file__} differs from os-traits/os-resource-classes"


def test_the_sets_hold_the_names_the_collection_relies_on():
    assert {"VGPU", "PCI_DEVICE", "SRIOV_NET_VF", "VCPU", "MEMORY_MB", "DISK_GB"} <= standard.STANDARD_RESOURCE_CLASSES
    assert {
        "COMPUTE_MANAGED_PCI_DEVICE",
        "MISC_SHARES_VIA_AGGREGATE",
        "HW_PCI_LIVE_MIGRATABLE",
    } <= standard.STANDARD_TRAITS
    assert not any(name.startswith("CUSTOM_") for name in standard.STANDARD_TRAITS | standard.STANDARD_RESOURCE_CLASSES)
