"""Seeded random fleets and allocation-candidate queries, for differential tests and benchmarks.

``random_fleet(rng)`` builds a snapshot (the fleet format of DESIGN.md) with trees up to depth 3, sharing
providers, traits, aggregates, odd inventories (reserved, ratios, min/max units, step sizes) and usages
made of real allocations: ``fleet["consumers"]`` lists them so a loader can create the same usages in
Placement. ``random_query(rng, fleet)`` draws a query that exercises one or more features of
``GET /allocation_candidates`` at 1.39. ``scale_fleet(n)`` builds a realistic fleet of n compute nodes
(about 2.5 providers each) for benchmarks. ``baremetal_nodes(rng, n)`` builds Ironic nodes as Nova
reports them (one unit of a custom class per root; some in maintenance, some deployed).
"""

from __future__ import annotations

import random
import uuid

STANDARD_TRAITS = ["HW_CPU_X86_AVX2", "HW_CPU_X86_AVX512F", "COMPUTE_STATUS_DISABLED", "HW_GPU_API_VULKAN"]
CUSTOM_TRAITS = ["CUSTOM_NVIDIA_T4", "CUSTOM_NVIDIA_A100", "CUSTOM_PHYSNET_A", "CUSTOM_GOLD", "CUSTOM_RACK_1"]
CUSTOM_CLASSES = ["CUSTOM_PCI_10DE_2331", "CUSTOM_FPGA_X"]
CHILD_CLASSES = ["VGPU", "PGPU", "SRIOV_NET_VF", "CUSTOM_PCI_10DE_2331", "CUSTOM_FPGA_X", "VCPU"]
SHARED_CLASSES = ["DISK_GB", "IPV4_ADDRESS"]
SUFFIXES = ["1", "2", "_NIC", "_ACCEL", "3"]
MISSING_UUID = "99999999-9999-4999-8999-999999999999"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _inventory(rng: random.Random, low: int, high: int) -> dict:
    total = rng.randint(low, high)
    step = rng.choice([1, 1, 1, 2])
    return {
        "total": total,
        "reserved": rng.choice([0, 0, 0, 1]),
        "min_unit": rng.choice([1, 1, 1, 2]),
        "max_unit": rng.choice([total, total, max(1, total // 2), 3]),
        "step_size": step,
        "allocation_ratio": rng.choice([1.0, 1.0, 1.0, 1.5, 2.0, 0.5]),
    }


def _provider(rng, name, parent, root, inventories, traits, aggregates) -> dict:
    return {
        "uuid": _uuid(rng),
        "name": name,
        "parent_provider_uuid": parent,
        "root_provider_uuid": root,
        "inventories": inventories,
        "usages": {},
        "traits": sorted(set(traits)),
        "aggregates": sorted(set(aggregates)),
    }


def random_fleet(rng: random.Random, roots: tuple[int, int] = (2, 6)) -> dict:
    aggregates = [_uuid(rng) for _n in range(3)]
    providers: list[dict] = []
    for n in range(rng.randint(*roots)):
        root = _provider(
            rng,
            f"cn{n}",
            None,
            None,
            {"VCPU": _inventory(rng, 2, 8), "MEMORY_MB": _inventory(rng, 512, 2048)},
            rng.sample(STANDARD_TRAITS + CUSTOM_TRAITS, rng.randint(0, 3)),
            rng.sample(aggregates, rng.randint(0, 2)),
        )
        if rng.random() < 0.3:
            root["inventories"]["DISK_GB"] = _inventory(rng, 10, 100)
        root["root_provider_uuid"] = root["uuid"]
        providers.append(root)
        frontier = [root]
        for depth in range(1, 3):
            next_frontier = []
            for parent in frontier:
                for c in range(rng.choice([0, 1, 1, 2, 3])):
                    inventories = {}
                    if rng.random() < 0.8:
                        inventories[rng.choice(CHILD_CLASSES)] = _inventory(rng, 1, 6)
                    if rng.random() < 0.2:
                        inventories[rng.choice(CHILD_CLASSES)] = _inventory(rng, 1, 6)
                    child = _provider(
                        rng,
                        f"{parent['name']}_{depth}{c}",
                        parent["uuid"],
                        root["uuid"],
                        inventories,
                        rng.sample(STANDARD_TRAITS + CUSTOM_TRAITS, rng.randint(0, 2)),
                        rng.sample(aggregates, 1) if rng.random() < 0.15 else [],
                    )
                    providers.append(child)
                    next_frontier.append(child)
            frontier = next_frontier
    for n in range(rng.choice([0, 1, 1, 2])):
        shared = _provider(
            rng,
            f"share{n}",
            None,
            None,
            {rc: _inventory(rng, 20, 200) for rc in rng.sample(SHARED_CLASSES, rng.randint(1, 2))},
            ["MISC_SHARES_VIA_AGGREGATE"] + rng.sample(CUSTOM_TRAITS, rng.randint(0, 1)),
            rng.sample(aggregates, rng.randint(0, 2)),
        )
        shared["root_provider_uuid"] = shared["uuid"]
        providers.append(shared)
    fleet = {"resource_providers": providers, "consumers": []}
    _add_usages(rng, fleet)
    return fleet


def _add_usages(rng: random.Random, fleet: dict) -> None:
    """Real allocations: each amount valid for min_unit/max_unit/step_size, each sum within capacity."""
    chunks: list[tuple[str, str, int]] = []
    for provider in fleet["resource_providers"]:
        for rc, inv in provider["inventories"].items():
            capacity = int((inv["total"] - inv["reserved"]) * inv["allocation_ratio"])
            used = 0
            for _chunk in range(rng.choice([0, 0, 1, 2, 3])):
                amounts = [
                    a
                    for a in range(inv["min_unit"], min(inv["max_unit"], capacity - used) + 1)
                    if a % inv["step_size"] == 0
                ]
                if not amounts:
                    break
                amount = rng.choice(amounts)
                used += amount
                chunks.append((provider["uuid"], rc, amount))
            if used:
                provider["usages"][rc] = used
    consumers: list[dict] = []
    for provider_uuid, rc, amount in chunks:
        # A consumer holds at most one amount per (provider, class): put the chunk in the first consumer
        # that has none there yet.
        for consumer in consumers:
            resources = consumer["allocations"].setdefault(provider_uuid, {"resources": {}})["resources"]
            if rc not in resources:
                resources[rc] = amount
                break
        else:
            consumers.append({"uuid": _uuid(rng), "allocations": {provider_uuid: {"resources": {rc: amount}}}})
    fleet["consumers"] = consumers


def _traits_clause(rng, fleet_traits: list[str]) -> str:
    pool = fleet_traits or STANDARD_TRAITS
    kind = rng.random()
    if kind < 0.4:
        return ",".join(rng.sample(pool, min(len(pool), rng.randint(1, 2))))
    if kind < 0.6:
        return "!" + rng.choice(pool)
    if kind < 0.8:
        return "in:" + ",".join(rng.sample(pool, min(len(pool), 2)))
    return f"{rng.choice(pool)},!{rng.choice(STANDARD_TRAITS)}"


def _member_of_clause(rng, aggregates: list[str]) -> str:
    if not aggregates:
        return MISSING_UUID
    kind = rng.random()
    if kind < 0.35:
        return rng.choice(aggregates)
    if kind < 0.6:
        return "in:" + ",".join(rng.sample(aggregates, min(2, len(aggregates))))
    if kind < 0.8:
        return "!" + rng.choice(aggregates)
    if kind < 0.9:
        return "!in:" + ",".join(rng.sample(aggregates, min(2, len(aggregates))))
    return MISSING_UUID


def _resources(rng, classes: list[str], count: int) -> str:
    chosen = rng.sample(classes, min(count, len(classes)))
    return ",".join(f"{rc}:{rng.choice([1, 1, 1, 2, 2, 3, 4, 6])}" for rc in chosen)


def random_query(rng: random.Random, fleet: dict) -> list[tuple[str, str]]:
    """A query as (name, value) pairs (repeated names allowed), valid for Placement's parser."""
    providers = fleet["resource_providers"]
    traits = sorted({t for p in providers for t in p["traits"]})
    aggregates = sorted({a for p in providers for a in p["aggregates"]})
    root_classes = sorted({rc for p in providers if p["parent_provider_uuid"] is None for rc in p["inventories"]})
    classes = sorted({rc for p in providers for rc in p["inventories"]})
    items: list[tuple[str, str]] = []
    if rng.random() < 0.85:
        items.append(("resources", _resources(rng, root_classes if rng.random() < 0.5 else classes, rng.randint(1, 3))))
        if rng.random() < 0.35:
            items.append(("required", _traits_clause(rng, traits)))
            if rng.random() < 0.2:
                items.append(("required", _traits_clause(rng, traits)))
        if rng.random() < 0.25:
            items.append(("member_of", _member_of_clause(rng, aggregates)))
            if rng.random() < 0.3:
                items.append(("member_of", _member_of_clause(rng, aggregates)))
        if rng.random() < 0.1:
            items.append(("in_tree", rng.choice([p["uuid"] for p in providers] + [MISSING_UUID])))
    suffixes = rng.sample(SUFFIXES, rng.choice([0, 0, 1, 1, 2, 2, 3]))
    if not items and not suffixes:
        suffixes = [rng.choice(SUFFIXES)]
    resourceless = []
    for suffix in suffixes:
        if len(suffixes) > 1 and rng.random() < 0.15:
            resourceless.append(suffix)
            items.append((f"required{suffix}", ",".join(rng.sample(traits or STANDARD_TRAITS, 1))))
            continue
        items.append((f"resources{suffix}", _resources(rng, classes, rng.choice([1, 1, 1, 2]))))
        if rng.random() < 0.3:
            items.append((f"required{suffix}", _traits_clause(rng, traits)))
        if rng.random() < 0.15:
            items.append((f"member_of{suffix}", _member_of_clause(rng, aggregates)))
        if rng.random() < 0.1:
            items.append((f"in_tree{suffix}", rng.choice([p["uuid"] for p in providers])))
    granular = list(suffixes)
    if len(granular) > 1 or rng.random() < 0.2:
        items.append(("group_policy", rng.choice(["none", "isolate"])))
    if resourceless or (len(suffixes) > 1 and rng.random() < 0.3):
        members = set(resourceless) | set(rng.sample(suffixes, 2))
        items.append(("same_subtree", ",".join(sorted(members))))
    if rng.random() < 0.15:
        root_traits = sorted({t for p in providers if p["parent_provider_uuid"] is None for t in p["traits"]})
        pool = root_traits or STANDARD_TRAITS
        items.append(("root_required", rng.choice([rng.choice(pool), "!" + rng.choice(pool)])))
    if rng.random() < 0.1:
        items.append(("limit", str(rng.randint(1, 5))))
    return items


def scale_fleet(nodes: int, seed: int = 1) -> dict:
    """A realistic fleet: compute nodes with CPU and memory, about half with one or two GPU children,
    some with a NIC child, plus shared storage; about 2.5 providers per node."""
    rng = random.Random(seed)
    aggregates = [_uuid(rng) for _n in range(20)]
    providers = []
    for n in range(nodes):
        aggregate = aggregates[n % len(aggregates)]
        root = _provider(
            rng,
            f"compute{n:05d}",
            None,
            None,
            {
                "VCPU": {"total": 64, "allocation_ratio": 4.0, "max_unit": 256},
                "MEMORY_MB": {"total": 262144, "reserved": 4096, "max_unit": 262144},
            },
            ["HW_CPU_X86_AVX2"] + (["HW_CPU_X86_AVX512F"] if n % 3 == 0 else []),
            [aggregate],
        )
        root["root_provider_uuid"] = root["uuid"]
        root["usages"] = {"VCPU": rng.randint(0, 200), "MEMORY_MB": rng.randint(0, 200000)}
        providers.append(root)
        gpus = 2 if n % 4 == 0 else (1 if n % 4 == 1 else 0)
        for g in range(gpus):
            model = "CUSTOM_NVIDIA_A100" if n % 8 < 2 else "CUSTOM_NVIDIA_T4"
            child = _provider(
                rng,
                f"compute{n:05d}_pci_0000_{0x41 + g:02x}_00_0",
                root["uuid"],
                root["uuid"],
                {"VGPU": {"total": 8, "max_unit": 8}},
                [model],
                [],
            )
            child["usages"] = {"VGPU": rng.randint(0, 8)}
            providers.append(child)
        if n % 2 == 0:
            nic = _provider(
                rng,
                f"compute{n:05d}_nic",
                root["uuid"],
                root["uuid"],
                {"SRIOV_NET_VF": {"total": 16, "max_unit": 16}},
                ["CUSTOM_PHYSNET_A"],
                [],
            )
            nic["usages"] = {"SRIOV_NET_VF": rng.randint(0, 16)}
            providers.append(nic)
    for s, aggregate in enumerate(aggregates):
        shared = _provider(
            rng,
            f"storage{s}",
            None,
            None,
            {"DISK_GB": {"total": 100000, "max_unit": 10000}},
            ["MISC_SHARES_VIA_AGGREGATE"],
            [aggregate],
        )
        shared["root_provider_uuid"] = shared["uuid"]
        shared["usages"] = {"DISK_GB": rng.randint(0, 10000)}
        providers.append(shared)
    return {"resource_providers": providers}


BAREMETAL_CLASSES = ("CUSTOM_GPU_H100X8", "CUSTOM_GPU_A100X4", "CUSTOM_GPU_L40SX2")
BAREMETAL_TRAITS = ("CUSTOM_GPU_NVLINK", "CUSTOM_GPU_NVSWITCH", "CUSTOM_GPU_COUNT_8", "CUSTOM_GPU_COUNT_4")


def baremetal_nodes(rng: random.Random, count: int, classes: tuple[str, ...] = BAREMETAL_CLASSES) -> list[dict]:
    """Ironic nodes as Nova's Ironic driver reports them: a root provider named by the node's UUID with one
    unit of its custom class (min_unit = max_unit = total = 1) and no VCPU, MEMORY_MB or DISK_GB, the node's
    traits plus the ones nova-compute adds (OWNER_NOVA). A node in maintenance (or not available) has its
    unit reserved; a deployed node holds its instance's allocation (usage 1)."""
    nodes = []
    for _n in range(count):
        node_uuid = _uuid(rng)
        state = rng.choice(["available", "available", "available", "maintenance", "deployed"])
        rc = rng.choice(classes)
        node = _provider(
            rng,
            node_uuid,
            None,
            None,
            {rc: {"total": 1, "reserved": int(state == "maintenance"), "min_unit": 1, "max_unit": 1,
                  "step_size": 1, "allocation_ratio": 1.0}},
            ["OWNER_NOVA"] + rng.sample(list(BAREMETAL_TRAITS), rng.randint(0, 2)),
            [],
        )  # fmt: skip
        node["uuid"] = node["root_provider_uuid"] = node_uuid
        if state == "deployed":
            node["usages"] = {rc: 1}
        node["ironic_state"] = state
        nodes.append(node)
    return nodes
