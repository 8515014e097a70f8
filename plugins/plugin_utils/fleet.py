"""The fleet snapshot, indexed for the solver.

A snapshot is ``{"resource_providers": [{"uuid", "name", "parent_provider_uuid", "root_provider_uuid",
"inventories": {RC: {...}}, "usages": {RC: int}, "traits": [...], "aggregates": [...]}]}`` (the format
``placement_info`` returns). ``root_provider_uuid`` and ``usages`` may be omitted. Two optional keys
name what Placement knows without any provider using it: ``traits`` and ``resource_classes`` (lists of
custom names); standard names are always known.

``Fleet.from_snapshot()`` checks the snapshot once and builds the indexes every query uses: providers
by uuid, trees, providers (with their inventory) by resource class, trait and aggregate, sharing
providers and the roots they share with, and one ready provider summary per provider and per tree.
Summaries are built once and shared by every answer: callers must not modify them.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of
from ansible_collections.accel.openstack.plugins.module_utils._names.inventory import (
    INVENTORY_DEFAULTS,
    INVENTORY_FIELDS,
    MAX_INT,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.standard import (
    STANDARD_RESOURCE_CLASSES,
    STANDARD_TRAITS,
)

SHARING_TRAIT = "MISC_SHARES_VIA_AGGREGATE"
# A snapshot's inventory that leaves max_unit out means what Placement means: no limit of its own.
_INVENTORY_DEFAULTS = {**INVENTORY_DEFAULTS, "max_unit": MAX_INT}


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused (and restored) while many acyclic objects are built: it would
    only rescan them, again and again, at a fleet's size (about half the time of reading a snapshot)."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


class FleetError(AccelError, ValueError):
    """A snapshot that does not describe a valid set of provider trees."""


class Inventory:
    """One resource class on one provider, with its usage."""

    __slots__ = (*INVENTORY_FIELDS, "used", "limit")

    def __init__(self, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used):
        self.total = total
        self.reserved = reserved
        self.min_unit = min_unit
        self.max_unit = max_unit
        self.step_size = step_size
        self.allocation_ratio = allocation_ratio
        self.used = used
        # Placement compares in floating point: used + amount <= (total - reserved) * ratio.
        self.limit = (total - reserved) * allocation_ratio

    @property
    def capacity(self) -> int:
        return int(self.limit)

    @property
    def free(self) -> int:
        return max(self.capacity - self.used, 0)

    def fits(self, amount: int) -> bool:
        """Whether one request of ``amount`` may be allocated: free within the limit, the units and the step."""
        return (
            self.used + amount <= self.limit
            and self.min_unit <= amount <= self.max_unit
            and amount % self.step_size == 0
        )

    def holds(self, total: int) -> bool:
        """Whether the groups of one candidate, taking ``total`` together, still fit within the limit and max_unit."""
        return self.used + total <= self.capacity and total <= self.max_unit


@dataclass(eq=False)
class Provider:
    uuid: str
    name: str
    parent: str | None
    root: str
    inventories: dict[str, Inventory]
    traits: frozenset[str]
    aggregates: frozenset[str]
    depth: int = 0

    def __hash__(self) -> int:
        return hash(self.uuid)


# Placement's own lower bounds for each inventory field (its JSON schema): a snapshot that breaks them
# was not read from Placement.
_MINIMUMS = {"total": 1, "reserved": 0, "min_unit": 1, "max_unit": 1, "step_size": 1, "usage": 0}
# Placement's inventory fields are 32-bit integers (its API schema's maximum); a usage sums allocations.
_MAXIMUM = dict.fromkeys(("total", "reserved", "min_unit", "max_unit", "step_size"), 0x7FFFFFFF)
_LARGEST = (1 << 63) - 1


def _int(value, what: str, minimum: int | None = None) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not math.isfinite(value))
        or int(value) != value
    ):
        raise FleetError(f"{what} must be an integer, got {kind_of(value)} {value!r}")
    if minimum is not None and value < minimum:
        raise FleetError(f"{what} is {_number(value)}; Placement takes {minimum} or more")
    maximum = _MAXIMUM.get(what.rsplit(": ", 1)[-1], _LARGEST)
    if value > maximum:
        raise FleetError(f"{what} is {_number(value)}; Placement takes at most {maximum:,}")
    return int(value)


def _number(value) -> str:
    """A number for a message; one too large to print is described by its size."""
    number = int(value)
    if number.bit_length() <= 64:
        return str(number)
    return f"a number of about {int(number.bit_length() * 0.30103) + 1:,} digits"


def _names(value, what: str) -> frozenset:
    """A list of names (traits, aggregates); a string would be split into its characters, so it is refused."""
    if value is None:
        return frozenset()
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, list | tuple | set | frozenset):
        raise FleetError(f"{what} must be a list of names, got {kind_of(value)} {str(value)[:60]!r}")
    bad = [v for v in value if not isinstance(v, str) or not v]
    if bad:
        raise FleetError(f"{what} must hold names (strings), got {bad[0]!r}")
    return frozenset(value)


def _known_names(value, owner: str, field: str, checked: dict) -> frozenset:
    """``_names``, remembered for lists already read (only names pass, so an equal list is a list of the
    same names); equal lists share one frozenset."""
    if isinstance(value, list):
        try:
            key = tuple(value)
            found = checked.get(key)
        except TypeError:  # an element that cannot be a key is no name: let _names say so
            key, found = None, None
        if found is None:
            found = _names(value, f"provider {owner}: {field}")
            if key is not None:
                checked[key] = found
        return found
    return _names(value, f"provider {owner}: {field}")


def _inventory_fields(record: Mapping, where: str) -> tuple:
    if not isinstance(record, Mapping) or "total" not in record:
        raise FleetError(f"{where}: an inventory needs at least 'total' (and may give {sorted(_INVENTORY_DEFAULTS)})")
    values = {**_INVENTORY_DEFAULTS, **{k: v for k, v in record.items() if v is not None}}
    ratio = values["allocation_ratio"]
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not math.isfinite(ratio) or ratio <= 0:
        raise FleetError(f"{where}: allocation_ratio must be a positive number, got {ratio!r}")
    return (
        _int(values["total"], f"{where}: total", _MINIMUMS["total"]),
        _int(values["reserved"], f"{where}: reserved", _MINIMUMS["reserved"]),
        _int(values["min_unit"], f"{where}: min_unit", _MINIMUMS["min_unit"]),
        _int(values["max_unit"], f"{where}: max_unit", _MINIMUMS["max_unit"]),
        _int(values["step_size"], f"{where}: step_size", _MINIMUMS["step_size"]),
        float(ratio),
    )


def _inventory(record: Mapping, used, owner: str, rc: str, checked: dict) -> Inventory:
    """One inventory record (with its usage) checked and read. ``checked`` remembers the fields of records
    already read, keyed by their items and the types of their values (so ``True`` is never taken for
    ``1``): a fleet of many equal hosts checks each distinct inventory once, and each usage on its own."""
    try:
        key = (tuple(record.items()), tuple(map(type, record.values())))
        fields = checked.get(key)
    except (AttributeError, TypeError):  # not a mapping, or a value that cannot be a key: read it plainly
        key, fields = None, None
    if fields is None:
        fields = _inventory_fields(record, f"provider {owner} inventory {rc}")
        if key is not None:
            checked[key] = fields
    used = used or 0
    if not isinstance(used, int) or isinstance(used, bool) or used < 0 or used > _LARGEST:
        used = _int(used, f"provider {owner} inventory {rc}: usage", _MINIMUMS["usage"])
    return Inventory(*fields, used)


class Fleet:
    """Providers and the indexes the solver queries."""

    def __init__(self, providers: list[Provider], extra_traits=(), extra_resource_classes=()):
        self.providers: dict[str, Provider] = {p.uuid: p for p in providers}
        self.order = providers
        self.trees: dict[str, list[Provider]] = {}
        self.by_class: dict[str, list[Provider]] = {}
        self.by_trait: dict[str, set[str]] = {}
        self.by_aggregate: dict[str, set[str]] = {}
        # Per tree: (provider, inventory) of each class its providers have.
        self.tree_classes: dict[str, dict[str, list[tuple[Provider, Inventory]]]] = {}
        trees, by_class, by_trait, by_aggregate = self.trees, self.by_class, self.by_trait, self.by_aggregate
        tree_classes = self.tree_classes
        for provider in providers:
            root = provider.root
            tree = trees.get(root)
            if tree is None:
                tree = trees[root] = []
                classes = tree_classes[root] = {}
            else:
                classes = tree_classes[root]
            tree.append(provider)
            for resource_class, inv in provider.inventories.items():
                found = by_class.get(resource_class)
                if found is None:
                    by_class[resource_class] = [provider]
                else:
                    found.append(provider)
                entries = classes.get(resource_class)
                if entries is None:
                    classes[resource_class] = [(provider, inv)]
                else:
                    entries.append((provider, inv))
            for trait in provider.traits:
                members = by_trait.get(trait)
                if members is None:
                    by_trait[trait] = {provider.uuid}
                else:
                    members.add(provider.uuid)
            for aggregate in provider.aggregates:
                by_aggregate.setdefault(aggregate, set()).add(provider.uuid)
        self.roots = [p for p in providers if p.parent is None]
        self.root_uuids = frozenset(p.uuid for p in self.roots)
        self.has_trees = any(p.parent is not None for p in providers)
        self.sharing: frozenset[str] = frozenset(self.by_trait.get(SHARING_TRAIT, ()))
        self.traits = STANDARD_TRAITS | set(self.by_trait) | set(extra_traits)
        self.resource_classes = STANDARD_RESOURCE_CLASSES | set(self.by_class) | set(extra_resource_classes)
        self._anchors: dict[str, frozenset[str]] = {}
        self._summaries: dict[str, dict] = {}
        self._tree_summaries: dict[str, dict[str, dict]] = {}
        self._all_summaries: dict[str, dict] | None = None
        # For the solver's hot loops: (provider, inventory) per class in fleet order, the fleet position
        # of every provider, and the anchors of every sharing provider, computed once per snapshot.
        self.inventories_of: dict[str, list[tuple[Provider, Inventory]]] = {
            rc: [(p, p.inventories[rc]) for p in found] for rc, found in self.by_class.items()
        }
        self.position: dict[str, int] = {p.uuid: index for index, p in enumerate(providers)}
        # Per root: the sharing providers of other trees that share an aggregate with it (fleet order).
        self.sharing_inventories_of: dict[str, list[tuple[Provider, Inventory]]] = {
            rc: kept
            for rc, found in self.inventories_of.items()
            if (kept := [e for e in found if e[0].uuid in self.sharing])
        }
        self.sharing_roots = frozenset(self.providers[uuid].root for uuid in self.sharing)
        self.shared_with: dict[str, list[Provider]] = {}
        if self.sharing:
            for provider in providers:
                if provider.uuid in self.sharing:
                    for anchor in self.sharing_anchors(provider.uuid):
                        if anchor != provider.root:
                            self.shared_with.setdefault(anchor, []).append(provider)

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def from_snapshot(cls, snapshot: Mapping | Fleet) -> Fleet:
        if isinstance(snapshot, Fleet):
            return snapshot
        with gc_paused():
            return cls._read(snapshot)

    @classmethod
    def _read(cls, snapshot: Mapping) -> Fleet:
        if not isinstance(snapshot, Mapping) or not isinstance(snapshot.get("resource_providers"), list):
            raise FleetError(
                "a fleet snapshot is a dict with a 'resource_providers' list (what placement_info returns as 'fleet')"
            )
        records = snapshot["resource_providers"]
        seen: dict[str, Mapping] = {}
        for index, record in enumerate(records):
            uuid = record.get("uuid") if isinstance(record, (dict, Mapping)) else None
            if not isinstance(uuid, str):
                raise FleetError(f"resource_providers[{index}] has no 'uuid'; every provider needs its uuid")
            if uuid in seen:
                raise FleetError(f"provider {uuid} appears twice in resource_providers")
            seen[uuid] = record
        parents = {}
        for uuid, record in seen.items():
            parent = record.get("parent_provider_uuid")
            if parent is not None and parent not in seen:
                raise FleetError(
                    f"provider {uuid} names parent {parent}, which is not in the snapshot; include the whole tree"
                )
            parents[uuid] = parent
        roots, depths = {}, {}
        for uuid, parent in parents.items():
            if parent is None:
                roots[uuid], depths[uuid] = uuid, 0
                continue
            if parent in roots:  # listed after its parent, as snapshots usually are
                roots[uuid], depths[uuid] = roots[parent], depths[parent] + 1
                continue
            chain = [uuid]
            while parents[chain[-1]] is not None and chain[-1] not in roots:
                chain.append(parents[chain[-1]])
                if len(chain) > len(seen):
                    raise FleetError(f"provider {uuid} is in a parent cycle; parents must form trees")
            top = roots.get(chain[-1], chain[-1])
            base = depths.get(chain[-1], 0)
            for distance, member in enumerate(reversed(chain)):
                roots.setdefault(member, top)
                depths.setdefault(member, base + distance)
        providers = []
        checked: dict = {}
        names: dict = {}
        empty: dict = {}
        for uuid, record in seen.items():
            given_root = record.get("root_provider_uuid")
            root = roots[uuid]
            if given_root is not None and given_root != root:
                raise FleetError(
                    f"provider {uuid} gives root_provider_uuid {given_root} but its parents lead to {root}"
                )
            name = record.get("name") or uuid
            usages = record.get("usages") or empty
            records_of = record.get("inventories") or empty
            for field, value in (("inventories", records_of), ("usages", usages)):
                if not isinstance(value, (dict, Mapping)):
                    raise FleetError(f"provider {name}: {field} must be a mapping of resource class to values")
            inventories = {rc: _inventory(inv, usages.get(rc), name, rc, checked) for rc, inv in records_of.items()}
            providers.append(
                Provider(
                    uuid,
                    name,
                    parents[uuid],
                    root,
                    inventories,
                    _known_names(record.get("traits"), name, "traits", names),
                    _known_names(record.get("aggregates"), name, "aggregates", names),
                    depths[uuid],
                )
            )
        return cls(
            providers,
            _names(snapshot.get("traits"), "fleet traits"),
            _names(snapshot.get("resource_classes"), "fleet resource_classes"),
        )

    # -- queries -------------------------------------------------------------------------------
    def members_of(self, aggregates) -> set[str]:
        """Providers in any of the aggregates."""
        found: set[str] = set()
        for aggregate in aggregates:
            found |= self.by_aggregate.get(aggregate, set())
        return found

    def with_trait(self, traits) -> set[str]:
        """Providers having any of the traits."""
        found: set[str] = set()
        for trait in traits:
            found |= self.by_trait.get(trait, set())
        return found

    def sharing_anchors(self, uuid: str) -> frozenset[str]:
        """Roots of every provider that shares an aggregate with this (sharing) provider."""
        anchors = self._anchors.get(uuid)
        if anchors is None:
            peers = self.members_of(self.providers[uuid].aggregates)
            anchors = frozenset(self.providers[peer].root for peer in peers)
            self._anchors[uuid] = anchors
        return anchors

    def ancestors(self, uuid: str) -> set[str]:
        """The provider and all providers above it."""
        found = set()
        current: str | None = uuid
        while current is not None:
            found.add(current)
            current = self.providers[current].parent
        return found

    def tree_summaries(self, root: str) -> dict[str, dict]:
        """The provider_summaries entries of every provider of one tree (built once, shared)."""
        found = self._tree_summaries.get(root)
        if found is None:
            found = {p.uuid: self.summary(p.uuid) for p in self.trees[root]}
            self._tree_summaries[root] = found
        return found

    def summaries_of(self, roots) -> dict[str, dict]:
        """provider_summaries for the trees of ``roots``; one C-level copy when that is every tree."""
        if len(roots) == len(self.roots):
            if self._all_summaries is None:
                self._all_summaries = {}
                for root in self.roots:
                    self._all_summaries.update(self.tree_summaries(root.uuid))
            return dict(self._all_summaries)
        summaries: dict[str, dict] = {}
        for root in roots:
            summaries.update(self.tree_summaries(root))
        return summaries

    def summary(self, uuid: str) -> dict:
        """The provider_summaries entry Placement 1.39 gives for this provider."""
        summary = self._summaries.get(uuid)
        if summary is None:
            provider = self.providers[uuid]
            summary = {
                "resources": {
                    rc: {"capacity": inv.capacity, "used": inv.used} for rc, inv in provider.inventories.items()
                },
                "traits": sorted(provider.traits),
                "parent_provider_uuid": provider.parent,
                "root_provider_uuid": provider.root,
            }
            self._summaries[uuid] = summary
        return summary
