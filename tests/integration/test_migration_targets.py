"""Live-migration targets against the real Placement: a three-host GPU fleet with its instances' allocations
written into Placement; for each instance, the hosts the collection names as targets are exactly the other
hosts whose providers Placement's GET /allocation_candidates returns for the instance's own resources.

The report of this run is the sample docs/migration.md shows (``ACCEL_WRITE_DOCS=1`` writes it there).
"""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.plugin_utils.migration import migration_targets
from tests.support.migration_fleet import cloud, place, provider
from tests.support.placement_loader import load_fleet

pytestmark = pytest.mark.placement
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = re.compile(r"(<!-- migration sample: [^\n]*-->\n```yaml\n)(.*?)(```)", re.S)


def _inputs() -> dict:
    inputs = cloud()
    # gpu-03's passthrough GPU is not tagged live_migratable
    provider(inputs, "gpu-03_0000:41:00.0")["traits"] = ["COMPUTE_MANAGED_PCI_DEVICE"]
    place(inputs, "train-1", "gpu-01", "vgpu")
    place(inputs, "train-2", "gpu-01", "vgpu", ram=16384)
    place(inputs, "infer-1", "gpu-01", "pci")
    place(inputs, "notebook", "gpu-02", "vgpu")
    place(inputs, "infer-2", "gpu-03", "pci")
    # gpu-02's vGPU GPU has one unit left after the notebook: only one of gpu-01's vGPU instances fits there
    provider(inputs, "gpu-02_pci_0000_84_00_0")["inventories"]["VGPU"]["total"] = 2
    provider(inputs, "gpu-02_pci_0000_84_00_0")["inventories"]["VGPU"]["max_unit"] = 2
    # and gpu-03 runs an older QEMU than vGPU live migration needs
    inputs["hosts"]["gpu-03"]["accel_qemu_version"] = "8.0.4"
    return inputs


@pytest.fixture(scope="module")
def loaded(placement):
    inputs = _inputs()
    fleet = inputs["fleet"]
    consumers = [{"uuid": c, "allocations": a["allocations"]} for c, a in fleet["allocations"].items()]
    load_fleet(placement, {**fleet, "consumers": consumers})
    return placement, inputs


def _report(inputs: dict) -> dict:
    return migration_targets(
        inputs["fleet"],
        hosts=inputs["hosts"],
        deployed_config=inputs["deployed"],
        servers=inputs["servers"],
        pci_aliases=inputs["pci_aliases"],
    )


def test_placement_holds_the_allocations_the_report_reads(loaded):
    placement, inputs = loaded
    for consumer, record in inputs["fleet"]["allocations"].items():
        status, body = placement.request("GET", f"/allocations/{consumer}")
        assert status == 200
        theirs = {p: a["resources"] for p, a in body["allocations"].items()}
        assert theirs == {p: a["resources"] for p, a in record["allocations"].items()}
    for record in inputs["fleet"]["resource_providers"]:
        status, body = placement.request("GET", f"/resource_providers/{record['uuid']}/usages")
        assert status == 200
        assert {rc: n for rc, n in body["usages"].items() if n} == record["usages"]


def test_targets_are_the_other_hosts_placement_answers_for_the_instances_resources(loaded):
    placement, inputs = loaded
    names = {p["uuid"]: p for p in inputs["fleet"]["resource_providers"]}

    def root_name(uuid: str) -> str:
        record = names[uuid]
        return names[record["parent_provider_uuid"]]["name"] if record.get("parent_provider_uuid") else record["name"]

    report = _report(inputs)
    assert len(report["instances"]) == 5
    compared = 0
    for instance in report["instances"]:
        status, body = placement.request("GET", "/allocation_candidates?" + instance["query"])
        assert status == 200, body
        theirs = {root_name(p) for c in body["allocation_requests"] for p in c["allocations"]} - {instance["host"]}
        if instance["blockers"]:
            assert instance["targets"] == []
            continue
        # gpu-03's QEMU is too old for either kind: a per-host rule beyond Placement's answer
        assert sorted(instance["targets"]) == sorted(theirs - {"gpu-03"}), instance["name"]
        compared += bool(theirs)
    assert compared == 4
    by_name = {i["name"]: i for i in report["instances"]}
    assert by_name["infer-1"]["targets"] == ["gpu-02"]
    assert by_name["train-1"]["targets"] == ["gpu-02"]
    assert by_name["notebook"]["targets"] == ["gpu-01"]
    assert by_name["train-1"]["why_not"]["gpu-03"] == "qemu 8.0.4 on gpu-03 is older than 8.1.0"
    assert [b["code"] for b in by_name["infer-2"]["blockers"]] == ["device_not_live_migratable", "version_too_old"]


def test_the_drain_summary_counts_what_fits_one_after_another_and_is_the_docs_sample(loaded):
    _placement, inputs = loaded
    report = _report(inputs)
    drain = report["drain"]["gpu-01"]
    assert drain["moves"] == {"infer-1": "gpu-02", "train-1": "gpu-02"}
    assert list(drain["cannot_move"]) == ["train-2"]
    sample = {
        "drain": {host: entry["summary"] for host, entry in report["drain"].items()},
        "instances": [i for i in report["instances"] if i["name"] in ("train-2", "infer-2")],
    }
    rendered = yaml.safe_dump(sample, sort_keys=False, width=110)
    path = os.path.join(REPO, "docs", "migration.md")
    with open(path) as handle:
        text = handle.read()
    match = SAMPLE.search(text)
    assert match, "docs/migration.md has no migration sample block"
    if os.environ.get("ACCEL_WRITE_DOCS") == "1":
        with open(path, "w") as handle:
            handle.write(text[: match.start(2)] + rendered + text[match.end(2) :])
        return
    assert match.group(2) == rendered


def test_shared_storage_and_a_disabled_host_are_answered_as_placement_answers(placement):
    """Last in the module: a fresh database with a sharing DISK_GB provider and a disabled compute node."""
    placement.reset()
    inputs = cloud(("gpu-01", "gpu-02", "gpu-03"))
    storage = "5b0c7a54-8d1e-4f3a-9b2c-6d7e8f9a0b1c"
    aggregate = "0d9a2f6e-3c1b-4e5d-8a7f-9b0c1d2e3f40"
    inputs["fleet"]["resource_providers"].append(
        {
            "uuid": storage,
            "name": "ceph",
            "parent_provider_uuid": None,
            "inventories": {"DISK_GB": {"total": 10000, "reserved": 0, "min_unit": 1, "max_unit": 10000,
                                        "step_size": 1, "allocation_ratio": 1.0}},
            "usages": {},
            "traits": ["MISC_SHARES_VIA_AGGREGATE"],
            "aggregates": [aggregate],
        }
    )  # fmt: skip
    for name in ("gpu-01", "gpu-02", "gpu-03"):
        provider(inputs, name)["aggregates"] = [aggregate]
        provider(inputs, name)["inventories"].pop("DISK_GB")
    provider(inputs, "gpu-03")["traits"] = ["COMPUTE_STATUS_DISABLED"]
    consumer = place(inputs, "vm", "gpu-01", "pci")
    allocations = inputs["fleet"]["allocations"][consumer]["allocations"]
    root = provider(inputs, "gpu-01")
    allocations[root["uuid"]]["resources"].pop("DISK_GB")
    root["usages"].pop("DISK_GB")
    allocations[storage] = {"resources": {"DISK_GB": 20}}
    provider(inputs, "ceph")["usages"] = {"DISK_GB": 20}
    consumers = [{"uuid": c, "allocations": a["allocations"]} for c, a in inputs["fleet"]["allocations"].items()]
    load_fleet(placement, {**inputs["fleet"], "consumers": consumers})
    (entry,) = _report(inputs)["instances"]
    status, body = placement.request("GET", "/allocation_candidates?" + entry["query"])
    assert status == 200, body
    names = {p["uuid"]: p for p in inputs["fleet"]["resource_providers"]}
    hosts = {
        names[names[p]["parent_provider_uuid"]]["name"] if names[p].get("parent_provider_uuid") else names[p]["name"]
        for c in body["allocation_requests"]
        for p in c["allocations"]
        if p != storage
    }
    assert storage in {p for c in body["allocation_requests"] for p in c["allocations"]}
    assert hosts - {"gpu-01"} == {"gpu-02"} == set(entry["targets"])
    assert entry["why_not"] == {
        "gpu-01": "the source host",
        "gpu-03": "its compute service is disabled (COMPUTE_STATUS_DISABLED)",
    }
