"""Controller inputs: one number must not set unbounded work, one bad record must not hide the others,
and every refusal is a sentence naming the flavor, record or option (never Python's own words)."""

from __future__ import annotations

import json
import time

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._names.custom import custom_name_problem
from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import suggest
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import (
    PlacementAnswerError,
    PlacementClient,
    fleet_snapshot,
)
from ansible_collections.accel.openstack.plugins.plugin_utils import flavor_fit as flavor_fit_module
from ansible_collections.accel.openstack.plugins.plugin_utils import nova_filters
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor import translate
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import FitOptionError, flavor_fit
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import FleetPredictionError, nova_fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import TooCombinatorial

PYTHON_WORDS = ("Exceeds the limit", "Traceback", "object has no attribute", "invalid literal", "not subscriptable")
ROOT = "00000000-0000-0000-0000-000000000001"
GPU = "00000000-0000-0000-0000-000000000002"
ALIASES = [{"name": "a1", "vendor_id": "10de", "product_id": "2331", "device_type": "type-PCI"}]


def _fleet(**root_keys) -> dict:
    root = {
        "uuid": ROOT,
        "name": "c1",
        "traits": ["OWNER_NOVA"],
        "inventories": {
            "VCPU": {"total": 64},
            "PCPU": {"total": 32},
            "MEMORY_MB": {"total": 65536},
            "DISK_GB": {"total": 1000},
        },
        "numa_cells": [
            {"id": 0, "pcpus": 16, "vcpus": 32, "memory_mb": 32768},
            {"id": 1, "pcpus": 16, "vcpus": 32, "memory_mb": 32768},
        ],
    }
    root.update(root_keys)
    gpu = {
        "uuid": GPU,
        "name": "c1_0000:41:00.0",
        "parent_provider_uuid": ROOT,
        "traits": ["OWNER_NOVA"],
        "inventories": {"CUSTOM_PCI_10DE_2331": {"total": 2}},
    }
    return {"resource_providers": [root, gpu]}


def _flavor(name="f", vcpus=2, ram=1024, **specs) -> dict:
    return {"name": name, "vcpus": vcpus, "ram": ram, "disk": 1, "extra_specs": specs}


def _sentence(text: str) -> None:
    assert text and not any(words in text for words in PYTHON_WORDS), text


# -- one number, unbounded work ----------------------------------------------------------------------
UNBOUNDED = [
    ("dedicated 10^9 vCPUs", _flavor(vcpus=10**9, **{"hw:cpu_policy": "dedicated"}), True, "too_big", "pins"),
    ("alias count 10^8", _flavor(**{"pci_passthrough:alias": "a1:100000000"}), True, "too_big", "PCI devices"),
    ("alias count of 40 digits", _flavor(**{"pci_passthrough:alias": "a1:" + "9" * 40}), False, "too_big", "PCI"),
    ("hw:numa_nodes 10^9", _flavor(vcpus=10**9, **{"hw:numa_nodes": str(10**9)}), False, "too_big", "NUMA"),
    ("mixed mask to 10^9", _flavor(**{"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "0-1000000000"}), False,
     "invalid_flavor", "hw:cpu_dedicated_mask"),
    ("numa_cpus to 10^8", _flavor(vcpus=4, **{"hw:numa_nodes": "2", "hw:numa_cpus.0": "0-100000000",
                                              "hw:numa_cpus.1": "2-3", "hw:numa_mem.0": "512",
                                              "hw:numa_mem.1": "512"}), False, "invalid_flavor", "hw:numa_cpus.0"),
    ("vcpus of 5,000 digits", _flavor(vcpus=10**5000 - 1), False, "invalid_flavor", "5,001 digits"),
    ("vcpus text of 5,000 digits", _flavor(vcpus="9" * 5000), False, "invalid_flavor", "5,000 digits"),
    ("ram 2^31", _flavor(ram=2**31), False, "invalid_flavor", "2,147,483,647"),
    ("trait name of 200,000 characters", _flavor(**{"trait:CUSTOM_" + "A" * 200_000: "required"}), False,
     "invalid_flavor", "200,013 characters"),
    ("extra spec value of 100,000 characters", _flavor(**{"hw:cpu_policy": "x" * 100_000}), False,
     "invalid_flavor", "100,000 characters"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("flavor", "pci_in_placement", "code", "named"),
    [case[1:] for case in UNBOUNDED],
    ids=[case[0] for case in UNBOUNDED],
)
def test_one_number_cannot_set_unbounded_work(flavor, pci_in_placement, code, named):
    started = time.monotonic()
    reports = flavor_fit([flavor, _flavor("small")], _fleet(), pci_aliases=ALIASES, pci_in_placement=pci_in_placement)
    assert time.monotonic() - started < 5
    report = reports[0]
    assert report["reason"]["code"] == code, report
    assert named in report["message"], report["message"]
    _sentence(report["message"])
    assert report["outcome"] in ("invalid_flavor", "no_host") and not report["hosts"]
    # The bad flavor hides nothing: the next one is judged as usual.
    assert reports[1]["outcome"] == "fits" and reports[1]["hosts"] == ["c1"]


@pytest.mark.parametrize(
    "error",
    [ValueError("x"), KeyError("y"), RecursionError("z")],
    ids=["ValueError", "KeyError", "RecursionError"],
)
def test_an_error_while_judging_one_flavor_is_that_flavors_report(monkeypatch, error):
    """Whatever the evaluation of one flavor raises (a search over its budget, or an error that is not the
    collection's own), the other flavors are still judged."""
    real = flavor_fit_module.nova_flavor.translate

    def translate_or_fail(flavor, **options):
        if flavor["name"] == "breaks":
            raise error
        return real(flavor, **options)

    monkeypatch.setattr(flavor_fit_module.nova_flavor, "translate", translate_or_fail)
    reports = flavor_fit([_flavor("breaks"), _flavor("small")], _fleet())
    assert reports[0]["outcome"] == "scheduler_error" and reports[0]["name"] == "breaks", reports[0]
    assert reports[0]["reason"]["code"] == "scheduler_error"
    assert type(error).__name__ in reports[0]["message"]
    assert reports[1]["outcome"] == "fits"


@pytest.mark.parametrize(
    ("image", "named"),
    [({"hw_cpu_policy": "dedicated"}, "hw_cpu_policy"), ({"hw_numa_nodes": str(10**9)}, "hw_numa_nodes")],
)
def test_image_properties_set_the_same_bounds_as_extra_specs(image, named):
    started = time.monotonic()
    reports = flavor_fit([_flavor(vcpus=10**9, ram=10**9), _flavor("small")], _fleet(), image_properties=image)
    assert time.monotonic() - started < 5
    assert reports[0]["reason"]["code"] == "too_big" and named in reports[0]["message"], reports[0]


def test_twelve_isolated_groups_over_eleven_devices_are_that_flavors_report():
    providers = [
        {
            "uuid": ROOT,
            "name": "c1",
            "traits": ["OWNER_NOVA"],
            "inventories": {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}, "DISK_GB": {"total": 100}},
        }
    ]
    providers += [
        {
            "uuid": f"00000000-0000-0000-0000-{index + 100:012d}",
            "name": f"gpu{index}",
            "parent_provider_uuid": ROOT,
            "inventories": {"VGPU": {"total": 2}},
        }
        for index in range(11)
    ]
    # 22 VGPU in all, but isolate needs 12 providers: only a search over 11^12 choices rules it out.
    specs = {f"resources{index}:VGPU": "1" for index in range(12)}
    specs["group_policy"] = "isolate"
    flavors = [
        {"name": "isolated", "vcpus": 1, "ram": 1, "disk": 1, "extra_specs": specs},
        {"name": "small", "vcpus": 1, "ram": 1, "disk": 1},
    ]
    started = time.monotonic()
    reports = flavor_fit(flavors, {"resource_providers": providers})
    assert time.monotonic() - started < 30
    assert reports[0]["outcome"] == "scheduler_error", reports[0]
    assert "too combinatorial" in reports[0]["message"] and "1,000,000 steps" in reports[0]["message"]
    assert reports[1]["outcome"] == "fits"


def test_a_search_over_its_budget_is_that_flavors_report(monkeypatch):
    real = flavor_fit_module.FlavorFit._roots
    calls = []

    def first_search_over_budget(self, request):
        calls.append(request)
        if len(calls) == 1:
            raise TooCombinatorial("the query is too combinatorial for an exact answer: 12 groups ...")
        return real(self, request)

    monkeypatch.setattr(flavor_fit_module.FlavorFit, "_roots", first_search_over_budget)
    reports = flavor_fit([_flavor("big"), _flavor("small")], _fleet())
    assert reports[0]["outcome"] == "scheduler_error" and "too combinatorial" in reports[0]["message"]
    assert reports[1]["outcome"] == "fits"


@pytest.mark.parametrize("flavor", ["m1.small", 5, ["vcpus", 2], None], ids=["string", "int", "list", "null"])
def test_a_flavor_of_the_wrong_type_is_its_own_report(flavor):
    reports = flavor_fit([flavor, _flavor("small")], _fleet())
    assert reports[0]["outcome"] == "invalid_flavor" and "flavors[0]" in reports[0]["message"]
    _sentence(reports[0]["message"])
    assert reports[1]["outcome"] == "fits"


# -- the NUMA filter: no permutations, and no host with too few cells -------------------------------------
def _numa_host(cells: int, pcpus: int = 4, memory: int = 4096, pools=None) -> dict:
    record = {
        "numa_cells": [{"id": i, "pcpus": pcpus, "vcpus": 0, "memory_mb": memory} for i in range(cells)],
        "inventories": {"PCPU": {"total": pcpus * cells}},
        "traits": [],
    }
    if pools is not None:
        record["pci_pools"] = pools
    return record


def _numa_filter(record: dict, flavor: dict, aliases=None) -> dict:
    req = translate(flavor, pci_aliases=aliases or [], pci_in_placement=False)
    assert not req.refusal, req.refusal
    return nova_filters.run_filters(
        {"h": record}, ["h"], req, flavor, pci_in_placement=False, enabled_filters=("NUMATopologyFilter",)
    )


@pytest.mark.parametrize(("host_cells", "guest_nodes"), [(1, 2), (2, 4), (3, 8)])
def test_a_host_with_fewer_numa_cells_than_the_guest_has_nodes_is_removed(host_cells, guest_nodes):
    flavor = _flavor(vcpus=guest_nodes, ram=512 * guest_nodes, **{"hw:numa_nodes": str(guest_nodes)})
    flavor["extra_specs"]["hw:cpu_policy"] = "dedicated"
    result = _numa_filter(_numa_host(host_cells, pcpus=64, memory=65536), flavor)
    assert result["hosts"] == [] and f"{guest_nodes} NUMA node(s)" in result["removed"]["h"], result


@pytest.mark.parametrize(
    ("cells", "nodes", "pcpus", "kept"),
    [(14, 7, 4, True), (16, 8, 1, False), (24, 12, 2, True)],
    ids=["14-choose-7-fits", "16-cells-too-small", "24-choose-12-fits"],
)
def test_many_host_cells_are_matched_not_permuted(cells, nodes, pcpus, kept):
    flavor = _flavor(vcpus=2 * nodes, ram=512 * nodes, **{"hw:numa_nodes": str(nodes), "hw:cpu_policy": "dedicated"})
    started = time.monotonic()
    result = _numa_filter(_numa_host(cells, pcpus=pcpus), flavor)
    assert time.monotonic() - started < 5
    assert (result["hosts"] == ["h"]) is kept, result


def test_devices_on_many_cells_stay_within_the_budget_and_say_so_when_they_would_not():
    aliases = [json.dumps({"name": "a1", "vendor_id": "10de", "product_id": "2331"})]
    pools = [{"vendor_id": "10de", "product_id": "2331", "numa_node": i, "count": 1} for i in range(40)]
    flavor = _flavor(
        vcpus=20,
        ram=20 * 512,
        **{"hw:numa_nodes": "20", "hw:cpu_policy": "dedicated", "pci_passthrough:alias": "a1:21"},
    )
    flavor["extra_specs"]["hw:pci_numa_affinity_policy"] = "required"
    started = time.monotonic()
    result = _numa_filter(_numa_host(40, pcpus=1, pools=pools), flavor, aliases)
    assert time.monotonic() - started < 20
    assert result["hosts"] == []
    assert "NUMATopologyFilter" in result["removed"]["h"]


# -- disabled flags and fleet records --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("disabled", "kept"),
    [("false", True), ("no", True), ("0", True), (False, True), ("true", False), ("yes", False), (True, False)],
)
def test_disabled_reads_ansibles_boolean_words(disabled, kept):
    report = flavor_fit([_flavor()], _fleet(disabled=disabled), enabled_filters=["ComputeFilter"])[0]
    assert (report["after_filters"]["hosts"] == ["c1"]) is kept, report["after_filters"]


@pytest.mark.parametrize(
    ("root_keys", "named"),
    [
        ({"disabled": "maybe"}, "disabled"),
        ({"numa_cells": "0-3"}, "numa_cells"),
        ({"numa_cells": [{"id": 0, "pcpus": "many"}]}, "numa_cells[0].pcpus"),
        ({"numa_cells": [{"id": i} for i in range(2000)]}, "2,000 cells"),
        ({"numa_cells": [{"id": 0}, {"id": 0}]}, "appears twice"),
        ({"pci_pools": [{"vendor_id": "10de", "product_id": "2331", "count": 10**40}]}, "count"),
        ({"pci_pools": [{"vendor_id": "xyz", "product_id": "2331", "count": 1}]}, "vendor_id"),
        ({"pci_pools": "10de:2331"}, "pci_pools"),
        ({"inventories": {"VCPU": {"total": 10**40}}}, "Placement takes at most 2,147,483,647"),
        ({"inventories": {"VCPU": {"total": 8, "reserved": 2**31}}}, "reserved is 2147483648"),
        ({"inventories": {"VCPU": {"total": 1e300}}}, "a number of about 301 digits"),
    ],
)
def test_fleet_records_of_the_wrong_shape_are_refused_by_record_and_field(root_keys, named):
    with pytest.raises(FitOptionError) as caught:
        flavor_fit([_flavor()], _fleet(**root_keys))
    assert named in str(caught.value) and "c1" in str(caught.value), str(caught.value)
    _sentence(str(caught.value))


# -- names for the did-you-mean -------------------------------------------------------------------------
def test_a_200000_character_name_gets_no_suggestion_and_no_search():
    known = [f"CUSTOM_TRAIT_{i}" for i in range(2000)]
    started = time.monotonic()
    assert suggest("CUSTOM_" + "A" * 200_000, known) == []
    assert suggest("CUSTOM_TRAIT_1" + "9" * 300, known) == []
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("name", ["CUSTOM_", "custom_", "CUSTOM_-", "CUSTOM_ "])
def test_custom_alone_never_suggests_itself(name):
    assert suggest(name, ["CUSTOM_", "CUSTOM_GPU"]) in ([], ["CUSTOM_GPU"])
    problem = custom_name_problem(name)
    assert problem and "did you mean 'CUSTOM_'" not in problem, problem


# -- nova_fleet input: CPU sets and facts ----------------------------------------------------------------
FACTS = {
    "accel_pci_devices": [],
    "accel_numa_nodes": [{"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 8192}],
}


@pytest.mark.parametrize(
    ("facts", "options", "named"),
    [
        (FACTS, {"cpu_dedicated_set": "0-4294967295"}, "4294967295"),
        (FACTS, {"cpu_shared_set": "0-" + "9" * 3000}, "3,000 digits"),
        (FACTS, {"cpu_dedicated_set": "0-3," * 2000}, "4,096"),
        (FACTS, {"disabled": "perhaps"}, "disabled"),
        ({**FACTS, "accel_numa_nodes": [{"id": 0, "cpus": "0-3", "memory_mb": 1}]}, {}, "cpus is a string"),
        ({**FACTS, "accel_numa_nodes": [{"id": 0, "cpus": list(range(70_000))}]}, {}, "65,536 CPUs"),
        ({**FACTS, "accel_numa_nodes": [{"id": "x", "cpus": [0]}]}, {}, "accel_numa_nodes[0].id"),
        ({**FACTS, "accel_numa_nodes": [{"id": 0, "cpus": [0], "hugepages": {"2MB": {}}}]}, {}, "hugepages key '2MB'"),
        ({**FACTS, "accel_numa_nodes": [{"id": 0, "cpus": [0], "siblings": [[0, 9]]}]}, {}, "siblings[0] names CPU 9"),
        ({**FACTS, "accel_pci_devices": ["0000:41:00.0"]}, {}, "accel_pci_devices[0]"),
        ({**FACTS, "accel_pci_devices": [{"address": "0000:41:00.0", "numa_node": 10**30}]}, {}, "numa_node"),
    ],
)
def test_nova_fleet_input_is_checked_before_anything_is_expanded(facts, options, named):
    started = time.monotonic()
    with pytest.raises(FleetPredictionError) as caught:
        nova_fleet({"c1": facts}, [], **options)
    assert time.monotonic() - started < 2
    assert named in str(caught.value), str(caught.value)
    _sentence(str(caught.value))


# -- Placement answering with the wrong JSON types ---------------------------------------------------------
class _Answer:
    def __init__(self, body):
        self.status_code = 200
        self.content = json.dumps(body).encode()
        self.text = self.content.decode()
        self.reason = "OK"
        self._body = body

    def json(self):
        return self._body


class _Adapter:
    """What answers at the endpoint: fixed bodies by path."""

    def __init__(self, bodies: dict):
        self.bodies = bodies

    def get(self, path, **_kwargs):
        return _Answer(self.bodies[path.split("?")[0]])


def _bodies(**override) -> dict:
    bodies = {
        "/resource_providers": {"resource_providers": [{"uuid": ROOT, "name": "c1", "root_provider_uuid": ROOT}]},
        f"/resource_providers/{ROOT}/traits": {"resource_provider_generation": 1, "traits": ["OWNER_NOVA"]},
        f"/resource_providers/{ROOT}/inventories": {
            "resource_provider_generation": 1,
            "inventories": {
                "VCPU": {
                    "total": 8,
                    "reserved": 0,
                    "min_unit": 1,
                    "max_unit": 8,
                    "step_size": 1,
                    "allocation_ratio": 1.0,
                }
            },
        },
        f"/resource_providers/{ROOT}/usages": {"usages": {"VCPU": 0}},
        f"/resource_providers/{ROOT}/aggregates": {"resource_provider_generation": 1, "aggregates": []},
        "/resource_classes": {"resource_classes": [{"name": "VCPU"}, {"name": "CUSTOM_GPU"}]},
        "/traits": {"traits": ["CUSTOM_NVLINK"]},
    }
    bodies.update(override)
    return bodies


def test_a_placement_answer_of_the_right_types_gives_the_snapshot():
    snapshot = fleet_snapshot(PlacementClient(_Adapter(_bodies())))
    assert snapshot["resource_providers"][0]["inventories"]["VCPU"]["total"] == 8
    assert (snapshot["resource_classes"], snapshot["traits"]) == (["CUSTOM_GPU"], ["CUSTOM_NVLINK"])


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ({"/resource_providers": {"resource_providers": {"uuid": ROOT}}}, "resource_providers as a mapping"),
        ({"/resource_providers": {"resource_providers": [{"uuid": 5, "name": "c1"}]}}, "resource_providers[0].uuid"),
        ({"/resource_providers": ["x"]}, "the body as a list"),
        ({f"/resource_providers/{ROOT}/traits": {"resource_provider_generation": 1, "traits": "OWNER_NOVA"}},
         "traits as a string"),
        ({f"/resource_providers/{ROOT}/usages": {"usages": {"VCPU": "0"}}}, "usages.VCPU as a string"),
        ({f"/resource_providers/{ROOT}/inventories": {
            "resource_provider_generation": 1, "inventories": {"VCPU": {"total": "8"}}}},
         "inventories.VCPU.total as a string"),
        ({f"/resource_providers/{ROOT}/aggregates": {"resource_provider_generation": "1", "aggregates": []}},
         "resource_provider_generation as a string"),
    ],
)  # fmt: skip
def test_a_placement_answer_of_the_wrong_types_names_the_call_and_field(override, named):
    with pytest.raises(PlacementAnswerError) as caught:
        fleet_snapshot(PlacementClient(_Adapter(_bodies(**override))))
    message = str(caught.value)
    assert named in message and "GET /resource_providers" in message, message
    _sentence(message)


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ({"/traits": {"traits": "CUSTOM_NVLINK"}}, "GET /traits with traits as a string"),
        ({"/resource_classes": {"resource_classes": [{"name": 7}]}}, "GET /resource_classes with a name as an integer"),
        ({"/resource_classes": {"resource_classes": "CUSTOM_GPU"}}, "GET /resource_classes with resource_classes as"),
    ],
)
def test_a_wrong_type_in_the_custom_names_names_the_call_and_field(override, named):
    with pytest.raises(PlacementAnswerError) as caught:
        fleet_snapshot(PlacementClient(_Adapter(_bodies(**override))))
    message = str(caught.value)
    assert named in message, message
    _sentence(message)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("hw:pmem", "A" * 254 + "="),
        ("hw:cpu_dedicated_mask", "1-1," * 63 + "^"),
        ("hw:cpu_realtime_mask", "1-1," * 63 + "^"),
        ("hw:numa_cpus.0", "1-1," * 63 + "^"),
    ],
)
def test_a_value_that_backtracks_novas_pattern_is_refused_at_once(key, value):
    # Nova's own patterns take hours on these 255-character values (exponential backtracking)
    started = time.monotonic()
    request = translate(_flavor(**{key: value}))
    assert time.monotonic() - started < 1
    assert request.refusal and "is not of the format" in request.refusal["message"], request.refusal


def test_thirty_two_of_sixty_four_devices_is_bounded_not_listed_as_sets():
    from tests.support.wide_fleets import ALIASES, gpu_flavor, uniform

    started = time.monotonic()
    reports = flavor_fit([gpu_flavor(32), gpu_flavor(64)], uniform(1, 64), pci_aliases=ALIASES, pci_in_placement=True)
    assert time.monotonic() - started < 25
    # C(64, 32) device sets are not listed: the flavor is answered within the search budget or refused with
    # the numbers; the full node (one set) is counted exactly, and Placement at its defaults cannot answer it.
    assert reports[0]["outcome"] in ("fits", "scheduler_error")
    assert reports[1]["fleet_max_instances"] == 1
    assert reports[1]["reason"]["code"] == "placement_overload"
