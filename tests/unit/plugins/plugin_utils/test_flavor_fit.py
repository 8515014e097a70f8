"""flavor_fit: the report's keys, the reason codes, the counts per host and the bad-input rules."""

import copy

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import (
    REASON_CODES,
    FitOptionError,
    flavor_fit,
)

KEYS = {
    "name",
    "outcome",
    "status",
    "message",
    "queries",
    "hosts",
    "max_instances",
    "fleet_max_instances",
    "why_not",
    "reason",
    "after_filters",
    "placement",
}
ALIASES = [{"name": "h100", "vendor_id": "10de", "product_id": "2330", "resource_class": "CUSTOM_NVIDIA_H100"}]


def provider(uuid, name, parent=None, inventories=None, traits=(), usages=None, **extra):
    record = {
        "uuid": uuid,
        "name": name,
        "parent_provider_uuid": parent,
        "inventories": {rc: {"total": n} for rc, n in (inventories or {}).items()},
        "traits": list(traits),
        "aggregates": [],
        "usages": usages or {},
    }
    record.update(extra)
    return record


def gpu_host(n, gpus=2, used_gpus=0, traits=("OWNER_NOVA",), **extra):
    root = f"r{n}"
    return [
        provider(root, f"gpu{n}", None, {"VCPU": 32, "MEMORY_MB": 65536, "DISK_GB": 500}, traits, **extra),
        provider(
            f"g{n}",
            f"gpu{n}_0000:41:00.0",
            root,
            {"CUSTOM_NVIDIA_H100": gpus},
            ["OWNER_NOVA", "COMPUTE_MANAGED_PCI_DEVICE", "CUSTOM_GPU_NVLINK"],
            usages={"CUSTOM_NVIDIA_H100": used_gpus},
        ),
    ]


def cpu_host(n, vcpus=64, traits=("OWNER_NOVA",), usages=None, **extra):
    inventories = {"VCPU": vcpus, "MEMORY_MB": 131072, "DISK_GB": 500}
    return [provider(f"c{n}", f"cpu{n}", None, inventories, traits, usages=usages, **extra)]


FLEET = {"resource_providers": gpu_host(1) + gpu_host(2, used_gpus=1) + cpu_host(1) + cpu_host(2)}


def flavor(name, vcpus=4, ram=8192, disk=20, **specs):
    return {"name": name, "vcpus": vcpus, "ram": ram, "disk": disk, "extra_specs": specs}


def fit(flavors, fleet=None, **options):
    fleet = FLEET if fleet is None else fleet
    options.setdefault("pci_aliases", ALIASES)
    options.setdefault("pci_in_placement", True)
    return flavor_fit(flavors, fleet, **options)


def test_every_report_has_exactly_the_fixed_keys_even_for_bad_flavors():
    reports = fit([flavor("ok"), {"name": "broken", "vcpus": "x", "ram": 1, "disk": 1}, flavor("big", ram=10**9)])
    assert [r["name"] for r in reports] == ["ok", "broken", "big"]
    assert all(set(r) == KEYS for r in reports)
    assert all(r["reason"] is None or r["reason"]["code"] in REASON_CODES for r in reports)
    assert all(set(r["after_filters"]) == {"hosts", "removed"} for r in reports)


def test_general_flavor_fits_everywhere_with_counts_per_host():
    (report,) = fit([flavor("general")])
    assert report["outcome"] == "fits" and report["status"] == 200 and report["reason"] is None
    assert report["hosts"] == ["cpu1", "cpu2", "gpu1", "gpu2"]
    # VCPU ratio 1.0 here: 32 / 4 on the GPU hosts, 64 / 4 on the CPU hosts (capped at count_limit).
    assert report["max_instances"] == {"gpu1": 8, "gpu2": 8, "cpu1": 16, "cpu2": 16}
    assert report["fleet_max_instances"] == 48
    capped = fit([flavor("general")], count_limit=5)[0]
    assert set(capped["max_instances"].values()) == {5}


def test_gpu_flavor_counts_free_devices_and_explains_other_hosts():
    (report,) = fit([flavor("gpu", **{"pci_passthrough:alias": "h100:1"})])
    assert report["outcome"] == "fits"
    assert report["hosts"] == ["gpu1", "gpu2"]
    assert report["max_instances"] == {"gpu1": 2, "gpu2": 1, "cpu1": 0, "cpu2": 0}
    assert "CUSTOM_NVIDIA_H100" in report["why_not"]["cpu1"]
    assert set(report["why_not"]) == {"cpu1", "cpu2"}


def test_why_not_names_the_host_own_providers_when_trees_are_identical():
    fleet = {"resource_providers": gpu_host(1) + gpu_host(3)}
    (report,) = fit([flavor("huge", ram=100000)], fleet=fleet)
    assert report["outcome"] == "no_host"
    assert "65536 free over 1 provider(s) (gpu1)" in report["why_not"]["gpu1"]
    assert "65536 free over 1 provider(s) (gpu3)" in report["why_not"]["gpu3"]
    (vcpu,) = fit([flavor("nvlink", **{"trait:CUSTOM_GPU_NVLINK": "required"})], fleet=fleet)
    assert "gpu3" in vcpu["why_not"]["gpu3"] or "trait" in vcpu["why_not"]["gpu3"]
    assert "\x00" not in "".join(report["why_not"].values())


def test_typo_trait_is_rejected_by_placement_with_did_you_mean():
    (report,) = fit([flavor("typo", **{"trait:CUSTOM_GPU_NVLNK": "required"})])
    assert report["outcome"] == "rejected_by_placement" and report["status"] == 400
    assert report["reason"]["code"] == "unknown_trait"
    assert report["reason"]["did_you_mean"] == ["CUSTOM_GPU_NVLINK"]


def test_unknown_resource_class_code():
    (report,) = fit([flavor("rc", **{"resources:CUSTOM_NVIDIA_H10": "1"})])
    assert report["reason"]["code"] == "unknown_resource_class"
    assert "CUSTOM_NVIDIA_H100" in report["reason"]["did_you_mean"]


def test_known_class_without_inventory_is_no_inventory():
    (report,) = fit([flavor("vgpu", **{"resources:VGPU": "1"})])
    assert report["outcome"] == "no_host" and report["reason"]["code"] == "no_inventory"


def test_too_big_and_in_use_and_too_many_devices():
    reports = fit(
        [
            flavor("huge", ram=10**7),
            flavor("three", **{"pci_passthrough:alias": "h100:3"}),
        ]
    )
    assert [r["reason"]["code"] for r in reports] == ["too_big", "too_many_devices"]
    busy = {"resource_providers": cpu_host(1, usages={"VCPU": 60})}
    (report,) = fit([flavor("cpu8", vcpus=8)], fleet=busy)
    assert report["reason"]["code"] == "in_use"


def test_disabled_hosts_code_and_compute_filter():
    fleet = {"resource_providers": cpu_host(1, traits=("OWNER_NOVA", "COMPUTE_STATUS_DISABLED"))}
    (report,) = fit([flavor("general")], fleet=fleet)
    assert report["reason"]["code"] == "hosts_disabled"


def test_forbidden_and_missing_trait_codes():
    fleet = {"resource_providers": cpu_host(1, traits=("OWNER_NOVA", "CUSTOM_GPU_HOST")) + gpu_host(2)}
    (forbidden,) = fit([flavor("gen", vcpus=40, **{"trait:CUSTOM_GPU_HOST": "forbidden"})], fleet=fleet)
    assert forbidden["reason"]["code"] == "forbidden_trait"
    (missing,) = fit([flavor("nv", vcpus=40, **{"trait:CUSTOM_GPU_NVLINK": "required"})], fleet=fleet)
    assert missing["reason"]["code"] == "missing_trait"


def test_a_dedicated_flavors_two_queries_are_relaxed_together():
    # Room for the VCPU fallback query only on a host without the trait; the host with the trait is full.
    roomy = cpu_host(1, traits=("OWNER_NOVA",))
    roomy[0]["inventories"]["PCPU"] = {"total": 4}
    roomy[0]["usages"] = {"PCPU": 4}
    full = cpu_host(2, traits=("OWNER_NOVA", "CUSTOM_X"), usages={"VCPU": 64})
    full[0]["inventories"]["PCPU"] = {"total": 4}
    full[0]["usages"]["PCPU"] = 4
    pinned = flavor("pinned", vcpus=2, **{"hw:cpu_policy": "dedicated", "trait:CUSTOM_X": "required"})
    (report,) = fit([pinned], fleet={"resource_providers": roomy + full})
    assert report["outcome"] == "no_host" and len(report["queries"]) == 2
    assert report["reason"]["code"] == "missing_trait"  # not in_use: the fallback lacks the trait, not room


def test_invalid_flavor_reports_nova_refusal_and_others_still_reported():
    reports = fit(
        [
            flavor("alias", **{"pci_passthrough:alias": "h10:1"}),
            flavor("thread", **{"hw:cpu_thread_policy": "isolate"}),
            flavor("fine"),
        ]
    )
    assert [r["outcome"] for r in reports] == ["invalid_flavor", "invalid_flavor", "fits"]
    assert reports[0]["status"] is None and reports[0]["reason"]["did_you_mean"] == ["h100"]
    assert reports[1]["reason"]["code"] == "invalid_flavor"


def test_dedicated_flavor_with_typo_is_a_scheduler_error():
    (report,) = fit([flavor("pinned", **{"hw:cpu_policy": "dedicated", "trait:CUSTOM_GPU_NVLNK": "required"})])
    assert report["outcome"] == "scheduler_error"
    assert report["reason"]["code"] == "scheduler_error"


def test_dedicated_flavor_on_vcpu_only_hosts_is_filtered_by_numa_topology():
    (report,) = fit([flavor("pinned", **{"hw:cpu_policy": "dedicated"})])
    assert len(report["queries"]) == 2
    assert report["hosts"] == ["cpu1", "cpu2", "gpu1", "gpu2"]  # the VCPU fallback query finds them
    assert report["after_filters"]["hosts"] == []
    assert all("NUMATopologyFilter" in why for why in report["after_filters"]["removed"].values())


def test_limit_cuts_hosts_but_counts_cover_every_host():
    (report,) = fit([flavor("general")], max_placement_results=2)
    assert len(report["hosts"]) <= 2
    assert all(n > 0 for n in report["max_instances"].values())
    cut = set(report["max_instances"]) - set(report["hosts"])
    assert cut and all("limit=2" in report["why_not"][h] for h in cut)


def test_counting_leaves_the_snapshot_untouched():
    fleet = copy.deepcopy(FLEET)
    fit([flavor("gpu", **{"pci_passthrough:alias": "h100:1"}), flavor("general")], fleet=fleet)
    assert fleet == FLEET


def test_pci_not_in_placement_uses_device_pools():
    pools = [{"vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI", "numa_node": 0, "count": 1}]
    fleet = {"resource_providers": cpu_host(1, pci_pools=pools) + cpu_host(2)}
    (report,) = fit([flavor("gpu", **{"pci_passthrough:alias": "h100:1"})], fleet=fleet, pci_in_placement=False)
    assert report["hosts"] == ["cpu1", "cpu2"]
    assert report["after_filters"]["hosts"] == ["cpu1"]
    assert "PciPassthroughFilter" in report["after_filters"]["removed"]["cpu2"]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"count_limit": 0}, "count_limit"),
        ({"pci_in_placement": "yes"}, "pci_in_placement"),
        ({"device_profiles": []}, "device_profiles"),
        ({"enabled_filters": ["RamFilter"]}, "enabled_filters"),
        ({"aggregates_metadata": [{"hosts": "x"}]}, "aggregates_metadata"),
        ({"colour": 1}, "colour"),
    ],
)
def test_bad_options_raise_naming_the_option(options, named):
    with pytest.raises(FitOptionError, match=named):
        flavor_fit([flavor("f")], FLEET, **options)


def test_bad_fleet_raises_naming_the_fleet():
    with pytest.raises(FitOptionError, match="fleet"):
        flavor_fit([flavor("f")], {"resource_providers": [{"name": "no-uuid"}]})
