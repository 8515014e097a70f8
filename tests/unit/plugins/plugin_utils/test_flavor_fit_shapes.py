"""flavor_fit counts, explains and relaxes once per tree shape; it must answer exactly as it does host by host.

Hosts whose trees are identical (shape, inventories, usages, traits, aggregates) share one count, one
explanation and one answer to each relaxed query. These tests build fleets of many equal hosts and of
hosts that all differ, and compare every report, key order included, with the straightforward path that
treats every host on its own and asks the whole fleet."""

import json
import random

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import flavor_fit as flavor_fit_module
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import FitOptions, FlavorFit
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError

ALIASES = [
    {"name": "h100", "vendor_id": "10de", "product_id": "2330", "resource_class": "CUSTOM_NVIDIA_H100"},
    {"name": "vf", "vendor_id": "15b3", "product_id": "101e", "device_type": "type-VF"},
]


def _inv(total, ratio=1.0, reserved=0):
    return {"total": total, "reserved": reserved, "min_unit": 1, "max_unit": total, "step_size": 1,
            "allocation_ratio": ratio}  # fmt: skip


def generated_fleet(rng: random.Random, hosts: int, patterns: int, sharing: bool = False) -> dict:
    """Hosts of four models with usage from ``patterns`` patterns (0: every host differs)."""
    usage = [
        {"VCPU": rng.randint(0, 40), "MEMORY_MB": rng.randint(0, 60) * 1024} for _pattern in range(max(patterns, 1))
    ]
    providers = []

    def add(name, parent, inventories, traits, usages=None, aggregates=()):
        uuid = f"{len(providers):08d}-0000-4000-8000-{rng.getrandbits(48):012x}"
        providers.append({"uuid": uuid, "name": name, "parent_provider_uuid": parent, "inventories": inventories,
                          "traits": traits, "aggregates": list(aggregates), "usages": usages or {}})  # fmt: skip
        return uuid

    for n in range(hosts):
        model = n % 4
        inventories = {"VCPU": _inv(32, 4.0), "MEMORY_MB": _inv(131072, 1.0, 512), "DISK_GB": _inv(500)}
        if model == 3:
            inventories["PCPU"] = _inv(16)
        traits = ["COMPUTE_NODE", "OWNER_NOVA"] + (["COMPUTE_STATUS_DISABLED"] if n % 7 == 6 else [])
        pattern = rng.randrange(len(usage))
        if patterns:
            used = dict(usage[pattern])
        else:
            used = {"VCPU": rng.randint(0, 120), "MEMORY_MB": rng.randint(0, 120) * 1024}
        root = add(f"host{n:03d}", None, inventories, traits, used, aggregates=["agg1"] if sharing and n < 4 else ())
        if model == 0:
            for g in range(3):
                # With patterns, one GPU of each host is in use (which one follows the pattern).
                taken = g == pattern % 3 if patterns else rng.random() < 0.4
                busy = {"CUSTOM_NVIDIA_H100": 1} if taken else {}
                add(f"host{n:03d}_gpu{g}", root, {"CUSTOM_NVIDIA_H100": _inv(1)},
                    ["OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE", "CUSTOM_GPU_NVLINK"], busy)  # fmt: skip
        elif model == 1:
            for v in range(4):
                add(f"host{n:03d}_vgpu{v}", root, {"CUSTOM_VGPU_A16_4Q": _inv(1)}, ["OWNER_NOVA"])
        elif model == 2:
            add(f"host{n:03d}_nic", root, {"CUSTOM_PCI_15B3_101E": _inv(4)},
                ["OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE"])  # fmt: skip
    if sharing:
        add("shared_disk", None, {"DISK_GB": _inv(4000)}, ["MISC_SHARES_VIA_AGGREGATE"], aggregates=["agg1"])
    return {"resource_providers": providers}


SPECS = [
    {},
    {"hw:cpu_policy": "dedicated"},
    {"pci_passthrough:alias": "h100:1"},
    {"pci_passthrough:alias": "h100:2"},
    {"pci_passthrough:alias": "h100:4"},
    {"pci_passthrough:alias": "h100:3"},
    {"resources:CUSTOM_VGPU_A16_4Q": "2"},
    {"pci_passthrough:alias": "vf:2"},
    {"pci_passthrough:alias": "h100:1", "trait:CUSTOM_GPU_NVLINK": "required"},
    {"trait:CUSTOM_GPU_NVLNK": "required"},
    {"trait:COMPUTE_NODE": "forbidden"},
    {"resources:CUSTOM_NVIDIA_A100": "1"},
]
SIZES = [(2, 4096, 20), (8, 32768, 40), (24, 100000, 100), (64, 200000, 900)]


def flavors() -> list[dict]:
    return [
        {"name": f"f{i:02d}", "vcpus": v, "ram": r, "disk": d, "extra_specs": SPECS[i % len(SPECS)]}
        for i, (v, r, d) in enumerate(SIZES[i % len(SIZES)] for i in range(len(SPECS) * 2))
    ]


def reports(snapshot: dict, share_shapes: bool, **options) -> tuple[FlavorFit, str]:
    fit = FlavorFit(snapshot, FitOptions.checked(pci_aliases=ALIASES, pci_in_placement=True, **options), share_shapes)
    return fit, json.dumps([fit.check(f) for f in flavors()])  # key order included


@pytest.mark.parametrize(
    ("seed", "patterns", "sharing", "options"),
    [
        (1, 3, False, {}),
        (2, 2, False, {"max_placement_results": 3, "count_limit": 5}),
        (3, 0, False, {}),
        (4, 0, False, {"max_placement_results": 2}),
        (5, 3, True, {"max_placement_results": 4}),
    ],
)
def test_shape_sharing_answers_exactly_as_host_by_host(seed, patterns, sharing, options):
    snapshot = generated_fleet(random.Random(seed), 48, patterns, sharing)
    shared, fast = reports(snapshot, True, **options)
    alone, plain = reports(snapshot, False, **options)
    assert fast == plain
    assert len(alone.representative) == len(alone.fleet.roots)
    if patterns and not sharing:
        # Equal hosts really are taken as one shape, and the whole-fleet questions as per-shape ones.
        # (four models, each enabled or disabled, times the usage patterns)
        assert len(shared.representative) <= 4 * 2 * patterns < len(shared.fleet.roots)
        assert shared.by_shape
    outcomes = {r["outcome"] for r in json.loads(fast)}
    assert {"fits", "no_host", "rejected_by_placement"} <= outcomes
    codes = {r["reason"]["code"] for r in json.loads(fast) if r["reason"]}
    assert len(codes) >= 3, codes
    if patterns:
        # Every GPU host has a GPU in use: three fit only an empty host, four fit none at all.
        assert {"in_use", "too_many_devices"} <= codes, codes


def test_hosts_of_one_shape_are_explained_in_their_own_names():
    snapshot = generated_fleet(random.Random(7), 12, 1)
    _fit, text = reports(snapshot, True)
    big = next(r for r in json.loads(text) if r["name"] == "f04")  # four H100s on three-GPU hosts
    gpu_hosts = [f"host{n:03d}" for n in range(0, 12, 4)]
    for host in gpu_hosts:
        assert host in big["why_not"][host] or big["why_not"][host] == big["why_not"][gpu_hosts[0]]
    assert len({big["why_not"][h] for h in gpu_hosts}) in (1, len(gpu_hosts))


def test_provider_names_with_format_characters_are_written_as_given():
    # A host's own names go into a sentence by formatting: '%', '%s' and braces in a name stay as they are.
    snapshot = generated_fleet(random.Random(8), 16, 1)
    for record in snapshot["resource_providers"]:
        record["name"] = record["name"].replace("_gpu", "_%s{0}%gpu%")
    _fast_fit, fast = reports(snapshot, True)
    _plain_fit, plain = reports(snapshot, False)
    assert fast == plain
    big = next(r for r in json.loads(fast) if r["name"] == "f04")  # four H100s on three-GPU hosts
    assert "host004_%s{0}%gpu%0" in big["why_not"]["host004"], big["why_not"]["host004"]


# Flavors that fit everywhere, nowhere, on some hosts, with an unknown name (Placement's 400) and with a
# required or forbidden trait: Nova's queries answered per shape must give the whole fleet's
# answer, for limits below, at and above the number of candidates.
MORE_SPECS = [
    {"trait:COMPUTE_NODE": "required"},
    {"trait:CUSTOM_NO_SUCH_TRAIT": "required", "pci_passthrough:alias": "h100:1"},
    {"resources:CUSTOM_NO_SUCH_CLASS": "1"},
    {"hw:cpu_policy": "dedicated", "trait:CUSTOM_TYPO": "forbidden"},
    {"aggregate_instance_extra_specs:x": "y", "pci_passthrough:alias": "vf:1"},
]


def all_flavors() -> list[dict]:
    found = flavors()
    for i, specs in enumerate(SPECS + MORE_SPECS):
        for size, (v, r, d) in enumerate([(1, 512, 1), (999, 10**7, 10**5)]):
            found.append({"name": f"g{i:02d}_{size}", "vcpus": v, "ram": r, "disk": d, "extra_specs": specs})
    return found


def answered(snapshot: dict, roots_by_shape: bool, **options) -> tuple[FlavorFit, str]:
    fit = FlavorFit(
        snapshot,
        FitOptions.checked(pci_aliases=ALIASES, pci_in_placement=True, **options),
        roots_by_shape=roots_by_shape,
    )
    return fit, json.dumps([fit.check(f) for f in all_flavors()])  # key order included


@pytest.mark.parametrize("limit", [1, 2, 5, 11, 12, 13, 40, 1000])
@pytest.mark.parametrize(("seed", "hosts", "patterns"), [(11, 24, 2), (12, 24, 0), (13, 48, 1), (14, 9, 3)])
def test_queries_per_shape_answer_as_the_whole_fleet(monkeypatch, seed, hosts, patterns, limit):
    snapshot = generated_fleet(random.Random(seed), hosts, patterns)
    whole_fleet = []
    real = flavor_fit_module.answer

    def counting(fleet, request, most=None, roots_only=False):
        if roots_only:
            whole_fleet.append(request)
        return real(fleet, request, most, roots_only)

    monkeypatch.setattr(flavor_fit_module, "answer", counting)
    shortcut, fast = answered(snapshot, True, max_placement_results=limit)
    asked_with = len(whole_fleet)
    plain_fit, plain = answered(snapshot, False, max_placement_results=limit)
    asked_without = len(whole_fleet) - asked_with
    assert fast == plain
    assert shortcut.roots_by_shape and not plain_fit.roots_by_shape
    # The shortcut is taken: some queries are answered without asking the whole fleet.
    assert asked_with < asked_without
    got = json.loads(fast)
    outcomes = {r["outcome"] for r in got}
    assert {"fits", "no_host", "rejected_by_placement"} <= outcomes
    if limit >= hosts:
        # The smallest general flavor fits every enabled host, and is answered per shape.
        small = next(r for r in got if r["name"] == "g00_0")
        assert small["hosts"] and len(small["hosts"]) == sum(1 for n in range(hosts) if n % 7 != 6)


def test_queries_per_shape_keep_the_whole_fleet_with_sharing():
    snapshot = generated_fleet(random.Random(15), 16, 2, sharing=True)
    fit, fast = answered(snapshot, True, max_placement_results=3)
    _plain_fit, plain = answered(snapshot, False, max_placement_results=3)
    assert not fit.roots_by_shape
    assert fast == plain


@pytest.mark.parametrize(
    "query",
    [
        # No one tree has both devices, so no tree alone reaches the third group's unknown trait; the
        # whole fleet does, and answers 400.
        "resources1=CUSTOM_NVIDIA_H100:1&resources2=CUSTOM_PCI_15B3_101E:1&resources3=VCPU:1"
        "&required3=CUSTOM_NOPE&group_policy=none&limit=1000",
        "resources1=CUSTOM_NVIDIA_H100:1&resources2=CUSTOM_PCI_15B3_101E:1&group_policy=none&limit=1000",
        "resources=VCPU:1&resources1=CUSTOM_NVIDIA_H100:1&required1=CUSTOM_GPU_NVLINK&limit=1000",
        "resources=VCPU:1&required=!COMPUTE_STATUS_DISABLED&root_required=COMPUTE_NODE&limit=1000",
        "resources=VCPU:1&in_tree={host}&limit=1000",
        "resources=VCPU:1&root_required=CUSTOM_NOT_THERE&limit=1000",
    ],
)
def test_query_roots_per_shape_are_the_whole_fleets(query):
    snapshot = generated_fleet(random.Random(16), 24, 1)
    fit = FlavorFit(snapshot, FitOptions.checked())
    assert fit.roots_by_shape
    request = Request.parse(query.format(host=snapshot["resource_providers"][0]["uuid"]))
    try:
        expected = set(flavor_fit_module.answer(fit.fleet, request, roots_only=True)["roots"])
    except RequestError as exc:
        with pytest.raises(RequestError) as raised:
            fit._roots(request)
        assert str(raised.value) == str(exc)
    else:
        assert set(fit._roots(request)) == expected
