"""Hosts whose trees differ only in usage are answered from one template: the answers must be, host by
host and to the unit, what a search on each host's own tree gives.

The fleets are generated: trees with nested providers, float allocation ratios, reserved units, units
and steps, traits, usage on every inventory (some over capacity), listed in shuffled order. The queries
are generated too: unsuffixed and suffixed groups, group_policy, required and forbidden traits,
root_required, same_subtree, several queries in a row (a dedicated flavor's two). For every host the
structure's copies, candidates and reasons are compared with ``Tree``'s on that host's own tree, which
places copies one at a time from the solver's candidates."""

import dataclasses
import random

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils import host_trees
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import FitOptions, FlavorFit
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet
from ansible_collections.accel.openstack.plugins.plugin_utils.host_trees import Structure, Tree, answer
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import TooCombinatorial, allocation_candidates

TRAITS = ["CUSTOM_A", "CUSTOM_B", "CUSTOM_C"]


def _inv(rng: random.Random, total: int, ratio: float = 1.0) -> dict:
    step = rng.choice([1, 1, 1, 2])
    return {
        "total": total,
        "reserved": rng.choice([0, 0, 1]) if total > 1 else 0,
        "min_unit": 1,
        "max_unit": rng.choice([total, max(1, total // 2)]),
        "step_size": step,
        "allocation_ratio": ratio,
    }


def structure_records(rng: random.Random) -> list[tuple]:
    """One tree's shape: (index of parent or None, inventories, traits)."""
    nodes = [(None, {"VCPU": _inv(rng, rng.choice([8, 16]), rng.choice([1.0, 1.5, 4.0, 0.9])),
                     "MEMORY_MB": _inv(rng, 64, rng.choice([1.0, 1.25]))},
              ["COMPUTE_NODE"] + rng.sample(TRAITS, rng.randint(0, 1)))]  # fmt: skip
    parents = [0]
    if rng.random() < 0.5:
        nodes.append((0, {}, ["CUSTOM_NUMA"]))  # a provider with no inventory, parent of devices
        parents.append(1)
    for _device in range(rng.randint(1, 6)):
        kind = rng.choice(["CUSTOM_GPU", "CUSTOM_GPU", "CUSTOM_GPU", "CUSTOM_VGPU"])
        total = 1 if kind == "CUSTOM_GPU" else rng.choice([2, 4])
        nodes.append((rng.choice(parents), {kind: _inv(rng, total)}, rng.sample(TRAITS, rng.randint(0, 2))))
    return nodes


def resized(rng: random.Random, rc: str, inv: dict) -> dict:
    """A host's own sizes of a kind's inventory, as hosts of one model differ: a few MB more or less
    MEMORY_MB (max_unit following the total, as Nova reports it), another reserved, another CPU ratio."""
    inv = dict(inv)
    if rc == "MEMORY_MB" and rng.random() < 0.5:
        grown = inv["total"] + rng.randint(1, 3)
        inv["max_unit"] = grown if inv["max_unit"] == inv["total"] else inv["max_unit"]
        inv["total"] = grown
    if rc == "MEMORY_MB" and rng.random() < 0.2:
        inv["reserved"] = rng.randint(0, 2)
    if rc == "VCPU" and rng.random() < 0.3:
        inv["allocation_ratio"] = rng.choice([1.0, 1.5, 4.0, 0.9])
    return inv


def generated_fleet(rng: random.Random, shapes: int, hosts: int, sizes: bool = False) -> dict:
    """Hosts of ``shapes`` kinds; each tree keeps its own order, but the trees are interleaved at random (as
    Placement lists providers in the order they were made, several hosts at a time). With ``sizes``, each
    host's inventories differ a little from its kind's (``resized``)."""
    kinds = [structure_records(rng) for _shape in range(shapes)]
    trees = []
    for n in range(hosts):
        nodes = kinds[n % shapes]
        uuids, tree = [], []
        for index, (parent, inventories, traits) in enumerate(nodes):
            uuid = f"{n:04d}{index:04d}-0000-4000-8000-{rng.getrandbits(48):012x}"
            uuids.append(uuid)
            usages = {}
            if sizes:
                inventories = {rc: resized(rng, rc, inv) for rc, inv in inventories.items()}
            for rc, inv in inventories.items():
                capacity = int((inv["total"] - inv["reserved"]) * inv["allocation_ratio"])
                usages[rc] = rng.choice(
                    [0, 0, 0, rng.randint(0, capacity // 2), rng.randint(0, capacity), capacity + 1]
                )
            tree.append({"uuid": uuid, "name": f"h{n:03d}_{index}", "inventories": inventories,
                         "parent_provider_uuid": None if parent is None else uuids[parent],
                         "traits": traits, "aggregates": [], "usages": usages})  # fmt: skip
        trees.append(tree)
    providers = []
    while trees:
        tree = rng.choice(trees)
        providers.append(tree.pop(0))
        if not tree:
            trees.remove(tree)
    return {"resource_providers": providers}


def generated_query(rng: random.Random) -> str:
    parts = [f"resources=VCPU:{rng.randint(1, 6)},MEMORY_MB:{rng.choice([1, 8, 30])}"]
    if rng.random() < 0.3:
        parts.append(f"required={rng.choice(TRAITS + ['!' + t for t in TRAITS])}")
    suffixes = []
    if rng.random() < 0.4:
        # n devices of one alias, as Nova asks them: n equal single-unit groups.
        trait = rng.choice(["", "", f"&required{{s}}={rng.choice(TRAITS)}"])
        for n in range(rng.randint(2, 4)):
            suffix = f"_pci0-{n}"
            suffixes.append(suffix)
            parts.append(f"resources{suffix}=CUSTOM_GPU:1" + trait.format(s=suffix))
        parts.append(f"group_policy={rng.choice(['none', 'isolate'])}")
        return "&".join(parts)
    for n in range(rng.choice([0, 1, 1, 2, 3])):
        suffix = str(n + 1)
        suffixes.append(suffix)
        parts.append(f"resources{suffix}={rng.choice(['CUSTOM_GPU', 'CUSTOM_VGPU'])}:{rng.choice([1, 1, 2])}")
        if rng.random() < 0.3:
            parts.append(f"required{suffix}={rng.choice(TRAITS + ['!' + t for t in TRAITS])}")
    if len(suffixes) > 1:
        parts.append(f"group_policy={rng.choice(['none', 'isolate'])}")
    if suffixes and rng.random() < 0.2:
        parts.append(f"same_subtree={','.join(suffixes)}")
    if rng.random() < 0.2:
        parts.append("root_required=" + rng.choice(["COMPUTE_NODE", "!CUSTOM_A", "CUSTOM_B"]))
    return "&".join(parts)


def requests(rng: random.Random, fleet: Fleet) -> list[Request]:
    """One or two queries the whole fleet answers (a 400 there never reaches the counting)."""
    found = []
    while len(found) < rng.choice([1, 1, 2]):
        try:
            request = Request.parse(generated_query(rng))
            answer(fleet, request, roots_only=True)
        except (RequestError, TooCombinatorial):
            continue
        found.append(request)
    return found


def structures(snapshot: dict) -> tuple[Fleet, list[Structure]]:
    fit = FlavorFit(snapshot, FitOptions.checked())
    assert all(isinstance(unit, Structure) for unit in fit.units)
    assert len(fit.units) < len(fit.fleet.roots)
    return fit.fleet, fit.units


@pytest.mark.parametrize("sizes", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_a_structure_answers_every_host_as_its_own_tree(seed, sizes):
    rng = random.Random(seed)
    fleet, units = structures(generated_fleet(rng, shapes=3, hosts=24, sizes=sizes))
    if sizes:
        assert any(not unit.uniform for unit in units)
    alone = {root.uuid: Tree(fleet, root.uuid, templated=False) for root in fleet.roots}
    compared = {"counts": 0, "reasons": 0, "positive": 0}
    for _round in range(25):
        asked = requests(rng, fleet)
        cap = rng.choice([1, 3, 64])
        for unit in units:
            unit.forget()
            hosts = [fleet.roots[row].uuid for row in unit.rows]
            expected = [alone[host].count(asked, cap) for host in hosts]
            assert unit.counts(asked, cap) == expected, [str(r) for r in asked]
            compared["counts"] += len(hosts)
            compared["positive"] += sum(1 for n in expected if n)
            # Candidates of one query, host by host (None where a search is refused).
            got = unit.candidate_counts(asked[0])
            per_host = []
            for host in hosts:
                try:
                    unlimited = dataclasses.replace(asked[0], limit=None)
                    per_host.append(allocation_candidates(alone[host].fleet, unlimited, roots_only=True)["candidates"])
                except (RequestError, TooCombinatorial):
                    per_host = None
                    break
            if got is not None and per_host is not None:
                assert got[0] == per_host
            # Why a host without a candidate has none, in its own names.
            empty = [index for index, n in enumerate(expected) if not n]
            reasons = unit.reasons(asked[0], empty)
            assert reasons == {index: alone[hosts[index]].reason(asked[0]) for index in empty}
            compared["reasons"] += len(empty)
            # Whether some host (or an empty one) gives a candidate.
            assert unit.any_fits(asked[0], empty=False) == any(Tree.count(alone[h], [asked[0]], 1) for h in hosts)
            assert unit.any_fits(asked[0], empty=True) == any(
                Tree.count(alone[h].empty(), [asked[0]], 1) for h in hosts
            )
    # The generated cases reach both answers: hosts that take copies and hosts explained.
    assert compared["positive"] > 20 and compared["reasons"] > 20, compared


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("limit", [1, 4, 1000])
def test_flavor_reports_from_structures_equal_host_by_host(seed, limit):
    rng = random.Random(100 + seed)
    snapshot = generated_fleet(rng, shapes=2, hosts=30, sizes=seed % 2 == 1)
    aliases = [{"name": "gpu", "resource_class": "CUSTOM_GPU", "vendor_id": "10de", "product_id": "1111"}]
    flavors = []
    for n in range(14):
        specs = rng.choice([{}, {"hw:cpu_policy": "dedicated"}, {"pci_passthrough:alias": f"gpu:{rng.randint(1, 3)}"},
                            {"resources:CUSTOM_VGPU": str(rng.randint(1, 3))}, {"trait:CUSTOM_B": "required"},
                            {"trait:CUSTOM_A": "forbidden", "pci_passthrough:alias": "gpu:1"}])  # fmt: skip
        flavors.append({"name": f"f{n}", "vcpus": rng.randint(1, 8), "ram": rng.choice([1, 16, 40]), "disk": 0,
                        "extra_specs": specs})  # fmt: skip
    options = FitOptions.checked(pci_aliases=aliases, pci_in_placement=True, max_placement_results=limit)
    shared = FlavorFit(snapshot, options)
    plain = FlavorFit(snapshot, options, share_shapes=False)
    assert len(shared.units) <= 8  # two kinds (a max_unit below the capacity can split a kind)
    assert [shared.check(f) for f in flavors] == [plain.check(f) for f in flavors]


def test_the_closed_forms_are_taken_and_equal_placing_one_copy_at_a_time(monkeypatch):
    """The generated cases above reach both closed forms (one provider per copy; n single-unit devices per
    copy): here each is also checked against the placement it replaces, on the same template and usage."""
    taken = {1: 0, 2: 0}
    real = Structure._closed_form

    def checked(self, rest, copies):
        found = real(self, rest, copies)
        if found is not None:
            taken[min(len(rest[0]), 2)] += 1
            own = sorted({k for takes in rest for k, _a in takes})
            for row, value in zip(self.usage, found):  # noqa: B905
                used = {k: row[k] for k in own}
                placed = host_trees._placed(rest, self.capacity, used, 1 << 40) if copies else None
                expected = placed if copies else host_trees._fitting(rest, self.capacity, used)
                assert value == expected
        return found

    monkeypatch.setattr(Structure, "_closed_form", checked)
    for seed in range(12):
        rng = random.Random(seed)
        fleet, units = structures(generated_fleet(rng, shapes=3, hosts=24, sizes=seed % 2 == 1))
        for _round in range(25):
            asked = requests(rng, fleet)
            for unit in units:
                unit.forget()
                unit.counts(asked, 64)
                unit.candidate_counts(asked[0])
    assert taken[1] > 50 and taken[2] > 20, taken


@pytest.mark.parametrize("seed", range(8))
def test_query_roots_from_structures_are_the_whole_fleets_at_any_limit(seed):
    """Nova's queries answered from the structures (over ``limit`` too, in the solver's anchor order) give
    the roots a search of the whole fleet gives, for generated queries and limits on interleaved fleets."""
    rng = random.Random(200 + seed)
    snapshot = generated_fleet(rng, shapes=3, hosts=30, sizes=seed % 2 == 1)
    fit = FlavorFit(snapshot, FitOptions.checked())
    assert fit.roots_by_shape
    over_limit = 0
    for _round in range(80):
        try:
            request = Request.parse(f"{generated_query(rng)}&limit={rng.choice([1, 2, 3, 5, 8, 13, 40])}")
        except RequestError:
            continue
        try:
            expected = answer(fit.fleet, request, roots_only=True)
        except (RequestError, TooCombinatorial) as exc:
            with pytest.raises(type(exc)):
                fit._roots(request)
            continue
        for unit in fit.units:
            unit.forget()
        assert set(fit._roots(request)) == set(expected["roots"]), str(request)
        over_limit += expected["candidates"] == request.limit
    assert over_limit > 8, over_limit
