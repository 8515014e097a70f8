"""The ownership rule: which writes would play nova-compute, and what a real cloud's stage adds."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._placement.ownership import (
    NovaTrees,
    OwnershipError,
    creation_refusal,
    split_ownership,
    write_refusals,
)

ROOT = {"name": "gpu-01", "parent_name": None, "inventories": {"VCPU": {"total": 64}},
        "traits": ["COMPUTE_NODE", "CUSTOM_FROM_PROVIDER_CONFIG", "OWNER_NOVA"]}  # fmt: skip
PCI = {"name": "gpu-01_0000:41:00.0", "parent_name": "gpu-01", "inventories": {"CUSTOM_NVIDIA_H100": {"total": 1}},
       "traits": ["COMPUTE_MANAGED_PCI_DEVICE", "CUSTOM_GPU_NVLINK", "OWNER_NOVA"]}  # fmt: skip
VGPU = {"name": "gpu-01_pci_0000_84_00_0", "parent_name": "gpu-01", "inventories": {"CUSTOM_VGPU_A16": {"total": 4}},
        "traits": ["CUSTOM_VGPU_A16", "OWNER_NOVA"]}  # fmt: skip


def test_nova_trees_own_the_marked_providers_and_everything_under_their_roots():
    trees = NovaTrees.from_records([{"uuid": "r", "root_provider_uuid": "r"}, {"uuid": "c", "root_provider_uuid": "r"}])
    assert trees.owns("r", "r") and trees.owns("c", "r") and trees.owns("cyborg-child", "r")
    assert not trees.owns("shared-disk", "shared-disk")


@pytest.mark.parametrize(
    ("inventories", "traits", "refused"),
    [
        ({"VCPU": 8}, [], "inventories VCPU"),
        ({"MEMORY_MB": 8, "DISK_GB": 8}, [], "inventories DISK_GB, MEMORY_MB"),
        (None, ["COMPUTE_NODE"], "trait COMPUTE_NODE"),
        ({"DISK_GB": 1000}, ["MISC_SHARES_VIA_AGGREGATE"], None),  # a sharing provider is nobody's compute node
        ({"CUSTOM_LICENSE": 4}, ["CUSTOM_POOL"], None),
    ],
)
def test_creating_a_root_that_looks_like_a_compute_node_is_refused(inventories, traits, refused):
    message = creation_refusal("node", None, inventories, traits)
    if refused is None:
        assert message is None
    else:
        assert refused in message and "409" in message and "simulate_compute: true" in message


def test_creating_under_a_nova_provider_is_refused():
    message = creation_refusal("gpu-01_0000:99:00.0", "gpu-01", {"CUSTOM_X": 1}, [])
    assert "under gpu-01, a provider of a nova-compute tree" in message


def test_only_added_custom_traits_and_aggregates_pass_on_a_nova_provider():
    ok = write_refusals(
        "gpu-01",
        traits=(["COMPUTE_NODE"], ["COMPUTE_NODE", "CUSTOM_MINE"]),
        aggregates=([], ["7d1b4e2c-1111-4a5b-9c3d-000000000001"]),
    )
    assert ok == []
    refused = write_refusals(
        "gpu-01",
        renamed=True,
        reparented=True,
        inventories=["DISK_GB"],
        traits=(["COMPUTE_NODE", "OWNER_NOVA"], ["COMPUTE_NODE", "HW_CPU_X86_AVX2"]),
        aggregates=(["a"], []),
        deleting=True,
    )
    text = " | ".join(refused)
    for fragment in (
        "deleting it refused",
        "renaming and re-parenting it refused",
        "writing inventories DISK_GB refused",
        "removing traits OWNER_NOVA refused",
        "adding standard traits HW_CPU_X86_AVX2 refused",
        "removing aggregates a refused",
    ):
        assert fragment in text
    pci = write_refusals(PCI["name"], traits=(PCI["traits"], [*PCI["traits"], "CUSTOM_EXTRA"]))
    assert len(pci) == 1 and "device_spec" in pci[0]


def test_a_real_cloud_waits_for_every_predicted_provider_and_adds_only_kept_traits():
    split = split_ownership([ROOT, PCI, VGPU], [ROOT["name"], PCI["name"]], ["CUSTOM_ACCEL"])
    assert split["expected"] == [ROOT["name"], PCI["name"], VGPU["name"]]
    assert split["missing"] == [VGPU["name"]]
    assert split["missing_by_host"] == {"gpu-01": [VGPU["name"]]}
    assert split["resource_classes"] == ["CUSTOM_NVIDIA_H100", "CUSTOM_VGPU_A16"]
    assert split["traits"] == ["CUSTOM_ACCEL", "CUSTOM_FROM_PROVIDER_CONFIG", "CUSTOM_GPU_NVLINK", "CUSTOM_VGPU_A16"]
    # the PCI provider's traits are Nova's (device_spec); the missing vGPU provider waits for Nova
    assert split["declarations"] == [
        {"name": "gpu-01", "traits": ["CUSTOM_ACCEL", "CUSTOM_FROM_PROVIDER_CONFIG"], "traits_mode": "merge"}
    ]
    found = split_ownership([ROOT, PCI, VGPU], [ROOT["name"], PCI["name"], VGPU["name"]])
    assert found["missing"] == [] and found["declarations"][-1] == {
        "name": VGPU["name"], "traits": ["CUSTOM_VGPU_A16"], "traits_mode": "merge"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("providers", "found", "root_traits", "message"),
    [
        ("gpu-01", [], [], "providers must be a list"),
        ([{"parent_name": None}], [], [], "providers[0] needs a name"),
        ([{"name": "a", "parent_name": 3}], [], [], "parent_name must be a name"),
        ([ROOT], [1], [], "found must be a list of provider names"),
        ([ROOT], [], ["COMPUTE_NODE"], "not custom trait names"),
        ([ROOT], [], ["CUSTOM_bad"], "not custom trait names"),
    ],
)
def test_bad_input_is_refused_with_the_fix(providers, found, root_traits, message):
    with pytest.raises(OwnershipError, match=message.replace("[", r"\[").replace("]", r"\]")):
        split_ownership(providers, found, root_traits)


def test_a_parent_cycle_cannot_loop():
    cyclic = [{"name": "a", "parent_name": "b"}, {"name": "b", "parent_name": "a"}]
    assert set(split_ownership(cyclic, [])["missing_by_host"]) <= {"a", "b"}
