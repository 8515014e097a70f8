"""The flavor translation against Nova 34's own code, then the queries against the real Placement.

Seeded flavors over CPU policies, request groups, traits, PCI aliases (with and without PCI in
Placement), Cyborg device profiles, images and bad values go through Nova's extra-spec validators,
its server-create checks and its scheduler request building in one nova-venv process
(tests/support/nova_flavor_oracle.py). For each flavor the collection must refuse exactly when Nova
refuses, with Nova's message, and otherwise send the same queries (group suffixes compared
canonically: Nova names PCI groups after random request IDs). ``ACCEL_FLAVOR_CASES`` sets the number
of flavors (default 600).

A subset is then asked of the real Placement on a fleet of GPU hosts: Placement must answer the
collection's queries exactly as it answers Nova's, and ``merge_answers`` must reach the outcome Nova's
own ``SchedulerManager.select_destinations`` reaches with those answers (candidates, NoValidHost, or
the TypeError of a dedicated flavor whose fallback query Placement refuses).
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from urllib.parse import parse_qsl

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._names.extra_specs import (
    VALIDATORS as EXTRA_SPEC_VALIDATORS,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor import merge_answers, translate
from tests.support import nova_flavor_oracle
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.nova

CASES = int(os.environ.get("ACCEL_FLAVOR_CASES", "600"))
FEATURE_CASES = int(os.environ.get("ACCEL_FLAVOR_FEATURE_CASES", "300"))
PLACEMENT_CASES = int(os.environ.get("ACCEL_FLAVOR_PLACEMENT_CASES", "150"))
SEED = 34

ALIASES = [
    {"name": "a16", "vendor_id": "10de", "product_id": "25b6"},
    {"name": "a100", "vendor_id": "10de", "product_id": "20b5", "resource_class": "CUSTOM_A100", "traits": "gold"},
    {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "numa_policy": "preferred", "device_type": "type-PCI"},
    {"name": "vf", "vendor_id": "15b3", "product_id": "101e", "device_type": "type-VF", "traits": "HW_NIC_SRIOV"},
]
BAD_ALIASES = [
    {"name": "bad", "vendor_id": "10de"},
    {"name": "a16", "vendor_id": "10de", "product_id": "25b6", "numa_policy": "required"},
    {"name": "x", "vendor_id": "10de", "product_id": "25b6", "colour": "blue"},
]
PROFILES = {
    "fpga1": [{"resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required"}],
    "gpu2": [{"resources:PGPU": "1"}, {"resources:CUSTOM_GPU_X": "1", "trait:CUSTOM_GOLD": "forbidden"}],
}
STANDARD_TRAITS = ["HW_CPU_X86_AVX2", "HW_GPU_API_VULKAN", "COMPUTE_NODE"]
CUSTOM_TRAITS = ["CUSTOM_GOLD", "CUSTOM_RACK_1", "CUSTOM_NVIDIA_A16"]
TYPO_TRAITS = ["CUSTOM_GOLDD", "CUSTOM_NVIDA_A16"]


def _maybe(rng, value, p=0.3):
    return value if rng.random() < p else None


def random_flavor_case(rng: random.Random, index: int) -> dict:  # noqa: C901
    vcpus = rng.choice([1, 2, 4, 8])
    specs: dict[str, str] = {}
    policy = rng.choice([None, None, "shared", "dedicated", "dedicated", "mixed"])
    if rng.random() < 0.04:
        policy = "dedicate"
    if policy:
        specs["hw:cpu_policy"] = policy
    if policy == "mixed" or rng.random() < 0.05:
        specs["hw:cpu_dedicated_mask"] = rng.choice(["^0", "^0", "0-1", "0", "1-9", "^0-99"])
    thread = _maybe(
        rng, rng.choice(["prefer", "isolate", "require"]), 0.25 if policy in ("dedicated", "mixed") else 0.04
    )
    if rng.random() < 0.02:
        thread = "isolated"
    if thread:
        specs["hw:cpu_thread_policy"] = thread
    if rng.random() < (0.15 if policy in ("dedicated", "mixed") else 0.03):
        specs["hw:emulator_threads_policy"] = rng.choice(["isolate", "share"])
    if rng.random() < 0.08:
        specs[rng.choice(["resources:PCPU", "resources:VCPU"])] = str(rng.choice([vcpus, vcpus + 1]))
    if rng.random() < 0.08:
        specs["trait:HW_CPU_HYPERTHREADING"] = rng.choice(["required", "forbidden"])
    if rng.random() < 0.3:
        specs[rng.choice(["trait:", "trait1:", "trait_X:"]) + rng.choice(STANDARD_TRAITS + CUSTOM_TRAITS)] = rng.choice(
            ["required", "required", "forbidden", "required", "forbidden", "yes"]
        )
    if rng.random() < 0.12:
        specs["trait:" + rng.choice(TYPO_TRAITS)] = "required"
    if rng.random() < 0.04:
        specs["trait:HW_CPU_X86_AVX9"] = "required"
    if rng.random() < 0.3:
        suffix = rng.choice(["1", "2", "_GPU"])
        specs[f"resources{suffix}:" + rng.choice(["VGPU", "CUSTOM_GPU_X", "PGPU", "CUSTOM_VGPU_A16_4Q"])] = rng.choice(
            ["1", "1", "2", "0", "x"]
        )
    if rng.random() < 0.15:
        specs["resources2:" + rng.choice(["VGPU", "CUSTOM_GPU_X"])] = "1"
    if rng.random() < 0.08:
        specs["resources:" + rng.choice(["MEMORY_MB", "DISK_GB", "VGPU"])] = rng.choice(["0", "1024", "-1"])
    if rng.random() < 0.25:
        specs["group_policy"] = rng.choice(["none", "isolate", "none", "isolate", "isolated"])
    aliases = [json.dumps(a) for a in ALIASES]
    if rng.random() < 0.03:
        aliases.append(json.dumps(rng.choice(BAD_ALIASES)))
    if rng.random() < 0.05:
        aliases.append(json.dumps({**ALIASES[0], "product_id": "25b7"}))  # a second spec for alias a16
    if rng.random() < 0.4:
        chosen = rng.sample(["a16", "a100", "t4", "vf"], rng.choice([1, 1, 2]))
        if rng.random() < 0.05:
            chosen = ["a61"]
        specs["pci_passthrough:alias"] = ",".join(f"{n}:{rng.choice([1, 1, 2])}" for n in chosen)
    if rng.random() < 0.03:
        specs["pci_passthrough:alias"] = rng.choice(["a16", "a16:x", ""])
    if rng.random() < 0.15:
        specs["hw:pci_numa_affinity_policy"] = rng.choice(
            ["required", "preferred", "socket", "legacy", "socket", "strict"]
        )
    if rng.random() < 0.2:
        specs["accel:device_profile"] = rng.choice(["fpga1", "gpu2", "fpga1", "gpu2", "fgpa1"])
    if rng.random() < 0.05:
        specs["hw:numa_nodes"] = rng.choice(["1", "2", "0", "two"])
    image: dict[str, str] = {}
    if rng.random() < 0.2:
        image["trait:" + rng.choice(CUSTOM_TRAITS)] = rng.choice(["required", "required", "forbidden"])
    if rng.random() < 0.04:
        image["hw_cpu_policy"] = rng.choice(["shared", "dedicated", "mixed"])
    if rng.random() < 0.03:
        image["hw_cpu_thread_policy"] = rng.choice(["isolate", "require", "prefer"])
    if rng.random() < 0.06:
        image["hw_pci_numa_affinity_policy"] = rng.choice(["required", "socket"])
    return {
        "id": f"flavor-{index}",
        "flavor": {
            "name": f"flavor-{index}",
            "vcpus": vcpus,
            "ram": rng.choice([512, 2048, 8192]),
            "disk": rng.choice([0, 10, 40]),
            "ephemeral": rng.choice([0, 0, 5]),
            "swap": rng.choice([0, 0, 512, 1500]),
            "extra_specs": specs,
        },
        "pci_aliases": aliases,
        "pci_in_placement": rng.random() < 0.6,
        "device_profiles": PROFILES,
        "image_properties": image,
        "boot_from_volume": rng.random() < 0.15,
    }


def canonical_query(query: str) -> tuple:
    """A query with its group suffixes replaced by the groups' contents (and same_subtree by theirs)."""
    wide: dict[str, str] = {}
    groups: dict[str, dict[str, str]] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key in ("limit", "group_policy", "root_required"):
            wide[key] = value
            continue
        for prefix in ("resources", "required", "member_of", "in_tree"):
            if key.startswith(prefix):
                groups.setdefault(key[len(prefix) :], {})[prefix] = value
                break
        else:
            wide[key] = value
    unsuffixed = groups.pop("", None)
    suffixed = sorted(tuple(sorted(g.items())) for g in groups.values())
    return tuple(sorted(wide.items())), tuple(sorted((unsuffixed or {}).items())), tuple(suffixed)


def ours(case: dict):
    return translate(
        case["flavor"],
        pci_aliases=case["pci_aliases"],
        pci_in_placement=case["pci_in_placement"],
        device_profiles=case["device_profiles"],
        image_properties=case["image_properties"],
        boot_from_volume=case["boot_from_volume"],
        image_name="image",
    )


@pytest.fixture(scope="module")
def cases():
    rng = random.Random(SEED)
    return [random_flavor_case(rng, n) for n in range(CASES)]


@pytest.fixture(scope="module")
def nova_answers(cases):
    return nova_flavor_oracle.ask(cases)


def test_queries_and_refusals_equal_novas(cases, nova_answers):
    assert len(nova_answers) == len(cases) >= 500
    seen = Counter()
    differences = []
    for case, nova in zip(cases, nova_answers, strict=True):
        assert "error" not in nova, f"{case['id']}: Nova's scheduler code failed: {nova['error']}"
        mine = ours(case)
        if nova["refusal"]:
            seen["refused"] += 1
            if not mine.refusal:
                differences.append(f"{case}\n  Nova refuses ({nova['refusal']}), we send {mine.queries}")
            elif mine.refusal["message"] != nova["refusal"]["message"]:
                differences.append(
                    f"{case}\n  Nova says {nova['refusal']['message']!r}, we {mine.refusal['message']!r}"
                )
            continue
        if mine.refusal:
            differences.append(f"{case}\n  we refuse ({mine.refusal['message']}), Nova sends {nova['queries']}")
            continue
        seen["fallback" if nova["pcpu_fallback"] else "one query"] += 1
        seen["pci groups"] += "_pci" in mine.queries[0]
        seen["device profile"] += "device_profile_" in mine.queries[0]
        if mine.pcpu_fallback != nova["pcpu_fallback"] or len(mine.queries) != len(nova["queries"]):
            differences.append(f"{case}\n  fallback: Nova {nova['queries']}, we {mine.queries}")
            continue
        for theirs, ours_query in zip(nova["queries"], mine.queries, strict=True):
            if canonical_query(theirs) != canonical_query(ours_query):
                differences.append(f"{case}\n  Nova {canonical_query(theirs)}\n  we   {canonical_query(ours_query)}")
    assert not differences, f"{len(differences)} of {len(cases)} differ:\n" + "\n".join(differences[:10])
    # the generator reaches every kind of answer
    assert seen["refused"] >= 50 and seen["fallback"] >= 50 and seen["one query"] >= 100, seen
    assert seen["pci groups"] >= 30 and seen["device profile"] >= 20, seen


def gpu_fleet() -> dict:
    """Compute nodes as Nova 34 reports them: VCPU or PCPU, PCI and vGPU children, OWNER_NOVA."""
    providers = []

    def add(name, parent, inventories, traits):
        uid = f"00000000-0000-4000-8000-{len(providers):012d}"
        providers.append(
            {
                "uuid": uid,
                "name": name,
                "parent_provider_uuid": parent,
                "inventories": {
                    rc: {
                        "total": n,
                        "reserved": 0,
                        "min_unit": 1,
                        "max_unit": n,
                        "step_size": 1,
                        "allocation_ratio": 1.0,
                    }
                    for rc, n in inventories.items()
                },
                "traits": sorted(traits),
                "aggregates": [],
            }
        )
        return uid

    base = {"MEMORY_MB": 65536, "DISK_GB": 500}
    add("cpu-only", None, {**base, "VCPU": 32}, {"OWNER_NOVA", "COMPUTE_NODE", "HW_CPU_X86_AVX2"})
    pinned = add(
        "pinned", None, {**base, "VCPU": 16, "PCPU": 16}, {"OWNER_NOVA", "COMPUTE_NODE", "HW_CPU_HYPERTHREADING"}
    )
    add("pinned_A16", pinned, {"CUSTOM_PCI_10DE_25B6": 1}, {"OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE"})
    gpu = add("gpu", None, {**base, "VCPU": 64}, {"OWNER_NOVA", "COMPUTE_NODE", "COMPUTE_ACCELERATORS", "CUSTOM_GOLD"})
    for n in range(2):
        add(f"gpu_A16_{n}", gpu, {"CUSTOM_PCI_10DE_25B6": 1}, {"OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE"})
    add("gpu_A100", gpu, {"CUSTOM_A100": 1}, {"OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE", "CUSTOM_GOLD"})
    add("gpu_vgpu", gpu, {"VGPU": 8, "CUSTOM_GPU_X": 2}, {"OWNER_NOVA"})
    add("gpu_fpga", gpu, {"FPGA": 2}, {"CUSTOM_FPGA_INTEL"})
    add("gpu_pgpu", gpu, {"PGPU": 1}, set())
    add("disabled", None, {**base, "VCPU": 64, "PCPU": 8}, {"OWNER_NOVA", "COMPUTE_STATUS_DISABLED", "CUSTOM_GOLD"})
    return {
        "resource_providers": providers,
        "traits": CUSTOM_TRAITS + ["CUSTOM_FPGA_INTEL"],
        "resource_classes": ["CUSTOM_VGPU_A16_4Q", "CUSTOM_PCI_1EB8", "CUSTOM_PCI_15B3_101E", "CUSTOM_PCI_10DE_1EB8"],
    }


def _allocations(body) -> Counter:
    """Candidates without their mappings (group suffixes differ between Nova's query and ours)."""
    return Counter(json.dumps(a["allocations"], sort_keys=True) for a in body["allocation_requests"])


def test_placement_answers_our_queries_as_novas_and_the_merge_matches_novas_scheduler(
    cases, nova_answers, placement_session
):
    server = placement_session.reset()
    load_fleet(server, gpu_fleet())
    chosen = [(c, n) for c, n in zip(cases, nova_answers, strict=True) if not n["refusal"]][:PLACEMENT_CASES]
    assert len(chosen) >= min(PLACEMENT_CASES, 100)
    scheduled_cases = []
    merged = []
    for case, nova in chosen:
        mine = ours(case)
        answers = []
        for theirs, ours_query in zip(nova["queries"], mine.queries, strict=True):
            status, body = server.request("GET", "/allocation_candidates?" + theirs)
            our_status, our_body = server.request("GET", "/allocation_candidates?" + ours_query)
            assert status == our_status, f"{case['id']}: Placement {status} for Nova's query, {our_status} for ours"
            if status == 200:
                assert _allocations(body) == _allocations(our_body), f"{case['id']}: {theirs} vs {ours_query}"
            answers.append([our_status, our_body])
        merged.append(merge_answers(mine, answers))
        scheduled_cases.append({**case, "answers": answers})
    scheduled = nova_flavor_oracle.ask(scheduled_cases)
    outcomes = Counter()
    expected = {"fits": "candidates", "no_host": "no_valid_host", "rejected_by_placement": "no_valid_host"}
    for case, merge, nova in zip(scheduled_cases, merged, scheduled, strict=True):
        run = nova["scheduled"]
        outcomes[merge["outcome"]] += 1
        if merge["outcome"] == "scheduler_error":
            assert run["outcome"] == "crash" and run["error"]["type"] == "TypeError", (case["id"], run)
            continue
        assert run["outcome"] == expected[merge["outcome"]], (case["id"], merge["outcome"], run)
        if run["outcome"] == "candidates":
            providers = sorted({u for a in merge["candidates"] for u in a["allocations"]})
            assert providers == run["providers"], case["id"]
            assert sorted(merge["provider_summaries"]) == run["provider_summaries"], case["id"]
    assert outcomes["fits"] >= 20 and outcomes["no_host"] + outcomes["rejected_by_placement"] >= 10, outcomes
    assert outcomes["scheduler_error"] >= 1, outcomes


# -- every key of Nova's extra-spec registry, and the guest features Nova turns into traits --------
PATTERN_SAMPLES = {
    "hw:cpu_realtime_mask": ["^0", "0-1", "^0-1"],
    "hw:cpu_dedicated_mask": ["^0", "0-1"],
    "hw:mem_page_size": ["large", "small", "any", "2048", "1GiB"],
    "hw:numa_cpus.{num}": ["0-3", "0,1,2,3", "0-1"],
    "hw:pmem": ["4GB", "4GB,4GB", "SMALL,LARGE_1,4GB"],
    "pci_passthrough:alias": ["a16:1", "a100:1,vf:2"],
}
PLACEHOLDERS = {"{filter}": ["", ":a", ":a:b"], "{num}": ["0", "1"], "{key}": ["k"], "{resource}": ["CUSTOM_X"]}
FEATURE_IMAGE = {
    "hw_firmware_type": ["uefi", "uefi", "bios"],
    "hw_firmware_stateless": ["true", "false"],
    "hw_machine_type": ["q35", "pc-q35-8.2", "pc"],
    "hw_video_model": ["none", "virtio"],
    "hw_maxphysaddr_mode": ["passthrough", "emulate"],
    "hw_mem_encryption": ["true", "false"],
    "hw_mem_encryption_model": ["amd-sev", "amd-sev-es", "amd-sev-snp", "intel-tdx"],
    "hw_tpm_version": ["1.2", "2.0"],
    "hw_tpm_model": ["tpm-tis", "tpm-crb"],
    "os_secure_boot": ["required", "disabled", "optional"],
    "hw_sound_model": ["virtio", "ich9"],
    "hw_virtio_packed_ring": ["true", "false"],
    "hw_ephemeral_encryption": ["true", "false"],
    "hw_ephemeral_encryption_format": ["luks", "luksv2", "plain"],
}
FEATURE_SPECS = {
    "hw:tpm_version": ["1.2", "2.0", "2.0"],
    "hw:tpm_model": ["tpm-tis", "tpm-crb"],
    "hw:tpm_secret_security": ["user", "host", "deployment"],
    "hw:mem_encryption": ["true", "false", "yes"],
    "hw:mem_encryption_model": ["amd-sev", "amd-sev-es", "amd-sev-snp", "intel-tdx"],
    "hw:pmem": ["4GB", "4GB,4GB,SMALL", "a-b"],
    "os:secure_boot": ["required", "disabled"],
    "hw:virtio_packed_ring": ["true", "false"],
    "hw:ephemeral_encryption": ["true", "false"],
    "hw:ephemeral_encryption_format": ["luks", "luksv2", "plain"],
    "hw:sound_model": ["virtio", "ich9", "usb"],
}
# the flavor key and image property of a feature Nova reads through _get_unique_flavor_image_meta (or a
# flag of the same kind): a difference fails the build in nova-scheduler, not nova-api, so the generator
# keeps both equal where both are set
SAME_IN_BOTH = {
    "hw:tpm_version": "hw_tpm_version",
    "hw:tpm_model": "hw_tpm_model",
    "os:secure_boot": "os_secure_boot",
    "hw:sound_model": "hw_sound_model",
    "hw:ephemeral_encryption_format": "hw_ephemeral_encryption_format",
}
SAME_FLAG = {"hw:virtio_packed_ring": "hw_virtio_packed_ring", "hw:ephemeral_encryption": "hw_ephemeral_encryption"}


def _registry_key(rng, name: str) -> str:
    key = name.replace("{group}", rng.choice(["", "1", "_G"]))
    for placeholder, choices in PLACEHOLDERS.items():
        key = key.replace(placeholder, rng.choice(choices))
    return key


def _registry_value(rng, row) -> str:
    name, _regex, kind, pattern, enum, minimum, maximum = row
    if rng.random() < 0.1:
        return rng.choice(["bogus", "-5", "99999", ""])
    if pattern is not None:
        return rng.choice(PATTERN_SAMPLES[name])
    if enum is not None:
        return rng.choice(enum)
    if kind == "int":
        low = minimum if minimum is not None else 0
        return str(rng.randint(low, maximum if maximum is not None else low + 4))
    if kind == "bool":
        return rng.choice(["true", "false", "yes", "0"])
    return rng.choice(["x", "1", "gold"])


def registry_cases(rng: random.Random) -> list[dict]:
    """Two flavors per validator of Nova's registry (the generated table), a valid value mostly, some with
    another key of the registry or a CPU policy beside it."""
    out = []
    for index, row in enumerate(EXTRA_SPEC_VALIDATORS * 2):
        specs = {_registry_key(rng, row[0]): _registry_value(rng, row)}
        if rng.random() < 0.3:
            other = rng.choice(EXTRA_SPEC_VALIDATORS)
            specs.setdefault(_registry_key(rng, other[0]), _registry_value(rng, other))
        if rng.random() < 0.25:
            specs.setdefault("hw:cpu_policy", rng.choice(["dedicated", "mixed", "shared"]))
        image = {"hw_cpu_realtime_mask": "^0"} if rng.random() < 0.05 else {}
        out.append(_simple_case(f"registry-{index}", specs, image, rng))
    return out


def feature_cases(rng: random.Random, count: int) -> list[dict]:
    """Flavors and images with the guest features Nova turns into resources and traits."""
    out = []
    for index in range(count):
        specs = {k: rng.choice(v) for k, v in FEATURE_SPECS.items() if rng.random() < 0.3}
        image = {k: rng.choice(v) for k, v in FEATURE_IMAGE.items() if rng.random() < 0.3}
        for flavor_key, image_key in SAME_IN_BOTH.items():
            if flavor_key in specs and image_key in image:
                image[image_key] = specs[flavor_key]
        for flavor_key, image_key in SAME_FLAG.items():
            if flavor_key in specs and image_key in image:
                image[image_key] = "true" if specs[flavor_key] in ("true", "yes") else "false"
        out.append(_simple_case(f"feature-{index}", specs, image, rng))
    return out


def _simple_case(ident: str, specs: dict, image: dict, rng) -> dict:
    return {
        "id": ident,
        "flavor": {"name": ident, "vcpus": 4, "ram": 2048, "disk": 10, "ephemeral": 0, "swap": 0, "extra_specs": specs},
        "pci_aliases": [json.dumps(a) for a in ALIASES],
        "pci_in_placement": rng.random() < 0.5,
        "device_profiles": PROFILES,
        "image_properties": image,
        "boot_from_volume": False,
    }


@pytest.fixture(scope="module")
def registry_and_feature_cases():
    rng = random.Random(SEED + 1)
    cases = registry_cases(rng) + feature_cases(rng, FEATURE_CASES)
    return cases, nova_flavor_oracle.ask(cases)


def _differences(cases, answers, seen) -> list[str]:
    out = []
    for case, nova in zip(cases, answers, strict=True):
        mine = ours(case)
        # a refusal by nova-api, or the failure of nova-scheduler's request building (a flavor and image
        # that set a feature differently): the translation refuses both with Nova's message
        refusal = nova["refusal"] or nova.get("error")
        if refusal or mine.refusal:
            seen["refused"] += 1
            seen["scheduler failure"] += "error" in nova
            theirs = (refusal or {}).get("message")
            if theirs != (mine.refusal or {}).get("message"):
                out.append(f"{case}\n  Nova: {theirs or nova['queries']}\n  we:   {mine.refusal or mine.queries}")
            continue
        seen["queries"] += 1
        if [canonical_query(q) for q in nova["queries"]] != [canonical_query(q) for q in mine.queries]:
            out.append(f"{case}\n  Nova {nova['queries']}\n  we   {mine.queries}")
    return out


def test_every_registered_extra_spec_and_every_guest_feature_as_nova(registry_and_feature_cases):
    cases, answers = registry_and_feature_cases
    seen = Counter()
    differences = _differences(cases, answers, seen)
    assert not differences, f"{len(differences)} of {len(cases)} differ:\n" + "\n".join(differences[:8])
    # every validator of the table was drawn, and the features reached Placement's query
    assert sum(c["id"].startswith("registry-") for c in cases) == 2 * len(EXTRA_SPEC_VALIDATORS)
    queries = " ".join(q for n in answers for q in n["queries"])
    for name in (
        "MEM_ENCRYPTION_CONTEXT",
        "CUSTOM_PMEM_NAMESPACE_4GB",
        "COMPUTE_SECURITY_TPM_2_0",
        "COMPUTE_SECURITY_TPM_CRB",
        "COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST",
        "COMPUTE_SECURITY_UEFI_SECURE_BOOT",
        "COMPUTE_ADDRESS_SPACE_EMULATED",
        "COMPUTE_SECURITY_STATELESS_FIRMWARE",
        "COMPUTE_NET_VIRTIO_PACKED",
        "COMPUTE_EPHEMERAL_ENCRYPTION_LUKSV2",
        "COMPUTE_SOUND_MODEL_VIRTIO",
        "HW_CPU_X86_AMD_SEV_SNP",
    ):
        assert name in queries, name
    assert seen["refused"] >= 50 and seen["queries"] >= 300, seen
