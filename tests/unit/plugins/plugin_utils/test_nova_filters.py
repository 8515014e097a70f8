"""Nova's host filters after Placement, each model against the behaviour Nova 34's filter has."""

from types import SimpleNamespace

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import nova_filters as nf

H100_POOL = {"vendor_id": "10de", "product_id": "2330", "device_type": "type-PCI", "count": 2}
H100_REQ = {
    "alias": "h100",
    "count": 1,
    "numa_policy": "legacy",
    "specs": [{"vendor_id": "10de", "product_id": "2330"}],
}


def req(numa=None, pci=()):
    return SimpleNamespace(numa=numa or {}, pci_requests=list(pci))


def run(records, request, flavor=None, **kw):
    flavor = flavor or {"name": "f", "vcpus": 4, "ram": 4096, "extra_specs": {}}
    kw.setdefault("pci_in_placement", False)
    return nf.run_filters(records, sorted(records), request, flavor, **kw)


@pytest.mark.parametrize(
    ("value", "wanted", "matches"),
    [
        ("ssd", "ssd", True),
        ("ssd", "hdd", False),
        ("4", "= 2", True),  # '=' is 'at least'
        ("1", "= 2", False),
        ("2", "== 2.0", True),
        ("a100,h100", "<in> h100", True),
        ("a100 h100", "<all-in> a100 h100", True),
        ("a100", "<all-in> a100 h100", False),
        ("gold", "<or> silver <or> gold", True),
        ("bronze", "<or> silver <or> gold", False),
        ("abc", "s< abd", True),
        ("x", "== notanumber", False),
    ],
)
def test_aggregate_operators_follow_nova(value, wanted, matches):
    assert nf.spec_matches(value, wanted) is matches


def test_aggregate_filter_needs_every_unscoped_or_scoped_key_and_skips_other_scopes():
    aggregates = [{"name": "gpu", "hosts": ["h1"], "metadata": {"gpu": "true"}}]
    flavor = {
        "name": "f",
        "extra_specs": {"aggregate_instance_extra_specs:gpu": "true", "resources:VGPU": "1", "hw:cpu_policy": "shared"},
    }
    out = run({"h1": {}, "h2": {}}, req(), flavor, aggregates_metadata=aggregates)
    assert out["hosts"] == ["h1"]
    assert "not in any aggregate" in out["removed"]["h2"]
    unscoped = {"name": "f", "extra_specs": {"gpu": "false"}}
    out = run({"h1": {}}, req(), unscoped, aggregates_metadata=aggregates)
    assert out["hosts"] == [] and "matches none" in out["removed"]["h1"]


def test_aggregate_filter_is_not_modelled_without_metadata():
    flavor = {"name": "f", "extra_specs": {"gpu": "true"}}
    assert run({"h1": {}}, req(), flavor)["hosts"] == ["h1"]


def test_compute_filter_removes_disabled_hosts_by_trait_or_flag():
    records = {"a": {"traits": ["COMPUTE_STATUS_DISABLED"]}, "b": {"disabled": True}, "c": {"traits": []}}
    out = run(records, req())
    assert out["hosts"] == ["c"] and set(out["removed"]) == {"a", "b"}
    assert out["removed"]["a"].startswith("ComputeFilter")


def test_pci_filter_counts_pools_when_pci_is_not_in_placement():
    records = {"two": {"pci_pools": [H100_POOL]}, "none": {"pci_pools": []}, "unknown": {}}
    out = run(records, req(pci=[dict(H100_REQ, count=2)]))
    assert out["hosts"] == ["two"]
    assert "needs 2 device(s)" in out["removed"]["none"]
    assert "no pci_pools" in out["removed"]["unknown"]
    out = run(records, req(pci=[dict(H100_REQ, count=3)]))
    assert out["hosts"] == []


def test_pci_requests_consume_pools_one_after_another():
    records = {"h": {"pci_pools": [H100_POOL]}}
    assert run(records, req(pci=[H100_REQ, H100_REQ]))["hosts"] == ["h"]
    assert run(records, req(pci=[H100_REQ, H100_REQ, H100_REQ]))["hosts"] == []


def test_pci_filter_trusts_placement_when_pools_are_unknown():
    assert run({"h": {}}, req(pci=[H100_REQ]), pci_in_placement=True)["hosts"] == ["h"]


def test_pinned_flavor_is_removed_from_a_host_without_dedicated_cpus():
    numa = {"cpu_policy": "dedicated", "dedicated_cpus": [0, 1, 2, 3]}
    records = {
        "vcpu-only": {"inventories": {"VCPU": {"total": 64}}},
        "pcpu": {"inventories": {"PCPU": {"total": 16}}},
    }
    out = run(records, req(numa))
    assert out["hosts"] == ["pcpu"]
    assert "no dedicated CPUs" in out["removed"]["vcpu-only"]


def test_pinned_instance_must_fit_one_numa_cell():
    numa = {"cpu_policy": "dedicated", "dedicated_cpus": list(range(12))}
    cells = [{"id": 0, "pcpus": 8, "memory_mb": 65536}, {"id": 1, "pcpus": 8, "memory_mb": 65536}]
    out = run({"h": {"numa_cells": cells}}, req(numa), {"name": "f", "vcpus": 12, "ram": 4096})
    assert out["hosts"] == [] and "NUMATopologyFilter" in out["removed"]["h"]
    # the reason names every guest node and every host cell in words, never as Python tuples
    assert out["removed"]["h"] == (
        "NUMATopologyFilter: no 1 host NUMA cell(s) hold the guest's nodes (node 0: 12 pinned CPU(s), 0 shared "
        "CPU(s), 4096 MB), one or more fit none of them (cells: cell 0: 8 dedicated CPU(s), 0 shared CPU(s), "
        "65536 MB; cell 1: 8 dedicated CPU(s), 0 shared CPU(s), 65536 MB)"
    )
    two_nodes = dict(numa, numa_nodes=2)
    assert run({"h": {"numa_cells": cells}}, req(two_nodes), {"name": "f", "vcpus": 12, "ram": 4096})["hosts"] == ["h"]


@pytest.mark.parametrize(
    ("policy", "device_node", "fits"),
    [
        ("required", 1, False),
        ("required", 0, True),
        ("legacy", None, True),
        ("legacy", 1, False),
        ("preferred", 1, True),
    ],
)
def test_pci_numa_affinity_policy(policy, device_node, fits):
    numa = {"cpu_policy": "dedicated", "dedicated_cpus": [0, 1, 2, 3], "pci_numa_affinity_policy": policy}
    # Only cell 0 has room for the pinned CPUs; the device sits on device_node.
    cells = [{"id": 0, "pcpus": 8, "memory_mb": 65536}, {"id": 1, "pcpus": 2, "memory_mb": 65536}]
    pools = [dict(H100_POOL, count=1, numa_node=device_node)]
    record = {"numa_cells": cells, "pci_pools": pools}
    out = run({"h": record}, req(numa, [H100_REQ]), pci_in_placement=True)
    assert (out["hosts"] == ["h"]) is fits


def test_alias_numa_policy_applies_when_the_flavor_sets_none():
    numa = {"cpu_policy": "dedicated", "dedicated_cpus": [0]}
    cells = [{"id": 0, "pcpus": 8, "memory_mb": 65536}]
    record = {"numa_cells": cells, "pci_pools": [dict(H100_POOL, count=1, numa_node=1)]}
    strict = dict(H100_REQ, numa_policy="required")
    assert run({"h": record}, req(numa, [strict]), pci_in_placement=True)["hosts"] == []
    assert run({"h": record}, req(numa, [dict(H100_REQ, numa_policy="preferred")]), pci_in_placement=True)["hosts"] == [
        "h"
    ]


def test_unknown_aggregate_metadata_shape_is_refused():
    with pytest.raises(ValueError, match="aggregates_metadata\\[0\\]"):
        nf.aggregate_metadata_by_host([{"name": "x", "hosts": "h1"}])
