# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Converge Placement resource providers to a declaration, in few calls and without fighting Nova.

``ProviderSpec`` is one declared provider (identity, parent, inventories, traits, aggregates, each set
with its ``mode``). ``converge()`` plans every provider first (reads only), refuses the whole run when a
declaration cannot be applied (inventory below usage, deleting a provider with allocations or
children), then writes what differs, retrying a provider whose generation moved under it. Unless
``simulate_compute``, a write that would play nova-compute is refused in the same planning step
(``ownership.py``: one filtered provider list tells which providers belong to Nova's trees).

Reading strategy: a few declarations look each provider up by name or uuid; many declarations
(``BULK_THRESHOLD`` or more) read the provider list once and check traits and aggregates with one
filtered list per distinct declared set, so an unchanged provider costs one inventory read.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._names.custom import is_standard_form
from ansible_collections.accel.openstack.plugins.module_utils._names.inventory import (
    INVENTORY_DEFAULTS,
    INVENTORY_FIELDS,
    capacity,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.uuids import is_uuid_like
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import (
    PlacementClient,
    PlacementConflict,
    PlacementError,
)
from ansible_collections.accel.openstack.plugins.module_utils._placement.names import (
    PlacementNameError,
    is_custom,
    name_problem,
)
from ansible_collections.accel.openstack.plugins.module_utils._placement.ownership import (
    NOVA_MARKERS,
    NovaTrees,
    creation_refusal,
    write_refusals,
)

MODES = ("merge", "replace")
BULK_THRESHOLD = 10
MAX_RETRIES = 5


class PlacementRefusal(PlacementError):
    """The declaration cannot be applied as it stands; nothing was changed."""


# -- the declaration ------------------------------------------------------------------------------
@dataclasses.dataclass
class ProviderSpec:
    name: str | None = None
    uuid: str | None = None
    parent: str | None = None
    inventories: dict[str, dict] | None = None
    inventories_mode: str = "merge"
    traits: list[str] | None = None
    traits_mode: str = "merge"
    aggregates: list[str] | None = None
    aggregates_mode: str = "merge"
    state: str = "present"

    @property
    def label(self) -> str:
        return self.name or self.uuid or "?"

    @classmethod
    def from_dict(cls, entry: dict, where: str = "provider") -> ProviderSpec:
        """Build and validate one declaration; raise ValueError naming the entry and the fix."""
        if "parent_name" in entry:  # the shape nova_providers predicts
            entry = dict(entry)
            parent_name = entry.pop("parent_name")
            if entry.get("parent") is None:
                entry["parent"] = parent_name
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ValueError(f"{where}: unknown keys {unknown}; allowed keys are {sorted(known)}")
        spec = cls(**{k: v for k, v in entry.items() if v is not None})
        spec.validate(where)
        return spec

    def validate(self, where: str = "provider") -> None:
        where = f"{where} {self.label!r}" if self.name or self.uuid else where
        if not self.name and not self.uuid:
            raise ValueError(f"{where}: give a name or a uuid")
        if self.uuid and not is_uuid_like(self.uuid):
            raise ValueError(f"{where}: uuid {self.uuid!r} is not a UUID")
        for key in ("name", "uuid", "parent"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{where}: {key} is {type(value).__name__} {value!r}; give a string")
        if self.name is not None and not (0 < len(self.name) <= 200):
            raise ValueError(f"{where}: name must have 1 to 200 characters")
        if self.state not in ("present", "absent"):
            raise ValueError(f"{where}: state must be present or absent, not {self.state!r}")
        for key in ("inventories_mode", "traits_mode", "aggregates_mode"):
            if getattr(self, key) not in MODES:
                raise ValueError(f"{where}: {key} must be merge or replace, not {getattr(self, key)!r}")
        if self.inventories is not None:
            if not isinstance(self.inventories, dict):
                raise ValueError(f"{where}: inventories must be a dict of resource class -> {{total: N, ...}}")
            self.inventories = {rc: _inventory(rc, inv, where) for rc, inv in self.inventories.items()}
        if self.traits is not None:
            self.traits = sorted(set(_names(self.traits, "trait", where)))
        if self.aggregates is not None:
            bad = [a for a in self.aggregates if not is_uuid_like(str(a))]
            if bad:
                raise ValueError(f"{where}: aggregates must be UUIDs (Placement aggregates); not {bad}")
            self.aggregates = sorted({str(a).lower() for a in self.aggregates})


def _names(names: Any, kind: str, where: str) -> list[str]:
    if not isinstance(names, list):
        raise ValueError(f"{where}: {kind}s must be a list of names")
    for name in names:
        problem = (
            name_problem(name, kind)
            if isinstance(name, str) and is_custom(name.upper())
            else (None if isinstance(name, str) and is_standard_form(name) else f"{kind} {name!r} is invalid")
        )
        if problem:
            raise PlacementNameError(f"{where}: {problem}")
    return names


def _inventory(rc: str, inv: Any, where: str) -> dict:
    _names([rc], "resource class", where)
    if isinstance(inv, int) and not isinstance(inv, bool):
        inv = {"total": inv}
    if not isinstance(inv, dict) or "total" not in inv:
        raise ValueError(f"{where}: inventory {rc} needs at least total, e.g. {{total: 4}}")
    unknown = sorted(set(inv) - set(INVENTORY_FIELDS))
    if unknown:
        raise ValueError(f"{where}: inventory {rc} has unknown fields {unknown}; allowed: {list(INVENTORY_FIELDS)}")
    out: dict[str, Any] = {}
    for field, value in inv.items():
        number = _number(value, whole=field != "allocation_ratio")
        if number is None:
            kind = "a finite number" if field == "allocation_ratio" else "a whole number"
            raise ValueError(
                f"{where}: inventory {rc} {field}={value!r} is not a number as Placement takes it: give {kind}"
            )
        out[field] = number
    if out["total"] < 1:
        raise ValueError(f"{where}: inventory {rc} total must be at least 1 (remove the class instead)")
    low = {f: out[f] for f in ("min_unit", "max_unit", "step_size") if f in out and out[f] < 1}
    if low:
        raise ValueError(f"{where}: inventory {rc} {low} must be at least 1")
    if out.get("reserved", 0) < 0 or out.get("allocation_ratio", 1.0) <= 0:
        raise ValueError(f"{where}: inventory {rc} reserved must be >= 0 and allocation_ratio > 0")
    return out


def _number(value: Any, whole: bool) -> int | float | None:
    """``value`` as a whole (or finite) number, or None: no booleans, NaN, infinities or truncation."""
    if isinstance(value, str):
        try:
            value = float(value.strip()) if not whole or "." in value or "e" in value.lower() else int(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if whole:
        return int(value) if int(value) == value else None
    return float(value)


# -- pure comparisons -----------------------------------------------------------------------------
def full_inventory(declared: dict, current: dict | None, mode: str) -> dict:
    """The complete record Placement will hold for one class. Merge keeps unspecified fields as they are."""
    if current and mode == "merge":
        out = dict(current)
        if "max_unit" not in declared and current.get("max_unit") == current.get("total"):
            out["max_unit"] = declared["total"]
    else:
        out = dict(INVENTORY_DEFAULTS, max_unit=declared["total"])
    out.update(declared)
    return {f: out[f] for f in INVENTORY_FIELDS}


def _same_inventory(a: dict, b: dict) -> bool:
    return all(
        abs(float(a[f]) - float(b[f])) < 1e-6 if f == "allocation_ratio" else int(a[f]) == int(b[f])
        for f in INVENTORY_FIELDS
    )


def target_inventories(current: dict, declared: dict, mode: str) -> dict:
    target = {} if mode == "replace" else {rc: dict(inv) for rc, inv in current.items()}
    for rc, inv in declared.items():
        target[rc] = full_inventory(inv, current.get(rc), mode)
    return target


def inventories_differ(current: dict, target: dict) -> bool:
    if set(current) != set(target):
        return True
    return any(not _same_inventory(current[rc], target[rc]) for rc in target)


def target_set(current: list[str], declared: list[str], mode: str) -> list[str]:
    return sorted(set(declared) if mode == "replace" else set(current) | set(declared))


def usage_refusals(label: str, target: dict, usages: dict[str, int]) -> list[str]:
    """Messages for every class whose new inventory would hold less than what is allocated."""
    out = []
    for rc, used in sorted(usages.items()):
        if not used:
            continue
        if rc not in target:
            out.append(f"provider {label}: removing {rc} refused, {used} in use by allocations")
        elif capacity(target[rc]) < used:
            inv = target[rc]
            needed = inv["reserved"] + math.ceil(used / inv["allocation_ratio"])
            out.append(
                f"provider {label}: {rc} capacity would be {capacity(inv)} "
                f"((total {inv['total']} - reserved {inv['reserved']}) x allocation_ratio "
                f"{inv['allocation_ratio']}) but {used} is in use; keep total at least {needed} "
                "or move the allocations first"
            )
    return out


# -- state of one provider during a run -----------------------------------------------------------
@dataclasses.dataclass
class Known:
    """What this run knows of a provider; None means 'not read'."""

    uuid: str
    name: str
    parent_uuid: str | None
    generation: int
    inventories: dict | None = None
    traits: list[str] | None = None
    aggregates: list[str] | None = None
    traits_satisfied: bool = False
    aggregates_satisfied: bool = False
    root_uuid: str | None = None

    @classmethod
    def from_record(cls, record: dict) -> Known:
        return cls(
            uuid=record["uuid"],
            name=record["name"],
            parent_uuid=record.get("parent_provider_uuid"),
            generation=record["generation"],
            root_uuid=record.get("root_provider_uuid") or record["uuid"],
        )

    def view(self) -> dict:
        out: dict[str, Any] = {"uuid": self.uuid, "name": self.name, "parent_provider_uuid": self.parent_uuid}
        if self.inventories is not None:
            out["inventories"] = self.inventories
        if self.traits is not None:
            out["traits"] = self.traits
        if self.aggregates is not None:
            out["aggregates"] = self.aggregates
        return out


@dataclasses.dataclass
class Outcome:
    spec: ProviderSpec
    before: dict | None = None
    after: dict | None = None
    actions: list[str] = dataclasses.field(default_factory=list)
    uuid: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.actions)

    def result(self) -> dict:
        return {
            "name": self.spec.name or (self.after or self.before or {}).get("name"),
            "uuid": self.uuid,
            "state": self.spec.state,
            "changed": self.changed,
            "actions": self.actions,
        }


class Converger:
    """One run over a list of declarations; ``run()`` returns the outcomes in declaration order."""

    def __init__(
        self,
        client: PlacementClient,
        specs: list[ProviderSpec],
        check_mode: bool = False,
        max_retries: int = MAX_RETRIES,
        bulk: bool | None = None,
        simulate_compute: bool = False,
    ):
        self.client = client
        self.specs = specs
        self.check_mode = check_mode
        self.max_retries = max_retries
        self.simulate_compute = simulate_compute
        self._nova_trees: NovaTrees | None = None
        self.bulk = len(specs) >= BULK_THRESHOLD if bulk is None else bulk
        self.by_name: dict[str, Known] = {}
        self.by_uuid: dict[str, Known] = {}
        self.all_records: list[dict] | None = None
        self.outcomes = [Outcome(spec) for spec in specs]
        self._known_classes: set[str] | None = None
        self._known_traits: set[str] = set()
        names = [s.name for s in specs if s.name]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"providers {dupes} are declared more than once; declare each provider once")

    # -- reading ---------------------------------------------------------------------------
    def _remember(self, record: dict) -> Known:
        known = Known.from_record(record)
        self.by_name[known.name] = known
        self.by_uuid[known.uuid] = known
        return known

    def _forget(self, known: Known) -> None:
        self.by_name.pop(known.name, None)
        self.by_uuid.pop(known.uuid, None)

    def locate(self, spec: ProviderSpec, fresh: bool = False) -> Known | None:
        if not fresh:
            if spec.uuid and spec.uuid in self.by_uuid:
                return self.by_uuid[spec.uuid]
            if not spec.uuid and spec.name in self.by_name:
                return self.by_name[spec.name]
            if self.all_records is not None:
                return None
        records = self.client.providers(uuid=spec.uuid) if spec.uuid else self.client.providers(name=spec.name)
        return self._remember(records[0]) if records else None

    def locate_parent(self, ref: str) -> Known | None:
        if ref in self.by_uuid:
            return self.by_uuid[ref]
        if ref in self.by_name:
            return self.by_name[ref]
        if self.all_records is not None:
            return None
        records = self.client.providers(uuid=ref) if is_uuid_like(ref) else self.client.providers(name=ref)
        return self._remember(records[0]) if records else None

    def read_bulk(self) -> None:
        """One list of every provider, then one filtered list per distinct declared trait/aggregate set."""
        self.all_records = self.client.providers()
        for record in self.all_records:
            self._remember(record)
        present = [s for s in self.specs if s.state == "present"]
        groups: dict[tuple, list[ProviderSpec]] = {}
        for spec in present:
            if spec.traits is not None and spec.traits_mode == "merge" and spec.traits:
                groups.setdefault(("traits", tuple(spec.traits)), []).append(spec)
            if spec.aggregates is not None and spec.aggregates_mode == "merge" and spec.aggregates:
                groups.setdefault(("aggregates", tuple(spec.aggregates)), []).append(spec)
        associated = None
        if any(s.traits is not None and s.traits_mode == "replace" for s in present):
            associated = set(self.client.traits(associated=True))
            for spec in present:
                if spec.traits is not None and spec.traits_mode == "replace":
                    groups.setdefault(("exact-traits", tuple(spec.traits)), []).append(spec)
        for (kind, values), members in groups.items():
            if not any(self._lookup(s) for s in members):
                continue
            if kind == "aggregates":
                matching = self.client.providers(member_of=list(values))
            else:
                required = list(values)
                if kind == "exact-traits":
                    required += ["!" + t for t in sorted(associated - set(values))]
                matching = self.client.providers(required=",".join(required)) if required else self.all_records
            uuids = {r["uuid"] for r in matching}
            for spec in members:
                known = self._lookup(spec)
                if known and known.uuid in uuids:
                    if kind == "aggregates":
                        known.aggregates_satisfied = True
                    else:
                        known.traits_satisfied = True

    def _lookup(self, spec: ProviderSpec) -> Known | None:
        return self.by_uuid.get(spec.uuid) if spec.uuid else self.by_name.get(spec.name)

    def read_details(self, spec: ProviderSpec, known: Known) -> None:
        """Read what the declaration manages and the bulk read could not settle."""
        if spec.inventories is not None and known.inventories is None:
            known.generation, known.inventories = self.client.inventories(known.uuid)
        wants_traits = spec.traits or spec.traits_mode == "replace"
        if spec.traits is not None and known.traits is None and not known.traits_satisfied and wants_traits:
            known.generation, known.traits = self.client.provider_traits(known.uuid)
        wants_aggregates = spec.aggregates or spec.aggregates_mode == "replace"
        if (
            spec.aggregates is not None
            and known.aggregates is None
            and not known.aggregates_satisfied
            and wants_aggregates
        ):
            known.generation, known.aggregates = self.client.aggregates(known.uuid)

    # -- planning --------------------------------------------------------------------------
    def plan_present(self, spec: ProviderSpec, known: Known | None, refusals: list[str]) -> None:
        if known is None:
            refusals.extend(self.creation_refusals(spec))
            return
        self.read_details(spec, known)
        ownership = self.ownership_refusals(spec, known)
        if ownership:
            refusals.extend(ownership)
            return
        if spec.inventories is not None:
            target = target_inventories(known.inventories, spec.inventories, spec.inventories_mode)
            if inventories_differ(known.inventories, target) and self._lowers(known.inventories, target):
                refusals.extend(usage_refusals(known.name, target, self.client.usages(known.uuid)))

    # -- ownership (see ownership.py) ------------------------------------------------------
    def in_nova_tree(self, known: Known) -> bool:
        """Whether ``known`` belongs to a nova-compute tree (one filtered provider list per run)."""
        if self._nova_trees is None:
            self._nova_trees = NovaTrees.from_records(self.client.providers(required=NOVA_MARKERS))
        return self._nova_trees.owns(known.uuid, known.root_uuid)

    def creation_refusals(self, spec: ProviderSpec) -> list[str]:
        if self.simulate_compute:
            return []
        parent = self.locate_parent(spec.parent) if spec.parent else None
        nova_parent = parent.name if parent is not None and self.in_nova_tree(parent) else None
        refusal = creation_refusal(spec.label, nova_parent, spec.inventories, spec.traits)
        return [refusal] if refusal else []

    def ownership_refusals(self, spec: ProviderSpec, known: Known) -> list[str]:
        """The writes ``spec`` would make to a provider of a nova-compute tree (none when simulating)."""
        if self.simulate_compute or not self.in_nova_tree(known):
            return []
        renamed = bool(spec.name and spec.uuid and spec.name != known.name)
        reparented = False
        if spec.parent:
            parent = self.locate_parent(spec.parent)
            reparented = parent is None or parent.uuid != known.parent_uuid
        changed_classes = None
        if spec.inventories is not None and known.inventories is not None:
            target = target_inventories(known.inventories, spec.inventories, spec.inventories_mode)
            changed_classes = sorted(
                rc
                for rc in set(known.inventories) | set(target)
                if rc not in known.inventories
                or rc not in target
                or not _same_inventory(known.inventories[rc], target[rc])
            )
        pairs: dict[str, tuple[list[str], list[str]] | None] = {}
        for kind in ("traits", "aggregates"):
            declared, current = getattr(spec, kind), getattr(known, kind)
            if declared is None or current is None or getattr(known, f"{kind}_satisfied"):
                pairs[kind] = None
            else:
                pairs[kind] = (current, target_set(current, declared, getattr(spec, f"{kind}_mode")))
        return write_refusals(
            known.name,
            renamed=renamed,
            reparented=reparented,
            inventories=changed_classes,
            traits=pairs["traits"],
            aggregates=pairs["aggregates"],
        )

    @staticmethod
    def _lowers(current: dict, target: dict) -> bool:
        return any(rc not in target or capacity(target[rc]) < capacity(inv) for rc, inv in current.items())

    def plan_absent(self, spec: ProviderSpec, known: Known | None, refusals: list[str]) -> None:
        if known is None:
            return
        if not self.simulate_compute and self.in_nova_tree(known):
            refusals.extend(write_refusals(known.name, deleting=True))
            return
        deleting = {self._lookup(s).uuid for s in self.specs if s.state == "absent" and self._lookup(s)}
        if self.all_records is not None:
            children = [k for k in self.by_uuid.values() if k.parent_uuid == known.uuid]
        else:
            children = [Known.from_record(r) for r in self.client.providers(in_tree=known.uuid)]
            children = [k for k in children if k.parent_uuid == known.uuid]
        kept = sorted(k.name for k in children if k.uuid not in deleting)
        if kept:
            refusals.append(
                f"provider {known.name}: cannot delete, it has child providers {kept}; declare them absent too"
            )
        used = {rc: n for rc, n in self.client.usages(known.uuid).items() if n}
        if used:
            refusals.append(
                f"provider {known.name}: cannot delete, it has allocations ({used}); "
                "delete or migrate the consumers (servers) first"
            )

    # -- writing ---------------------------------------------------------------------------
    def _ensure_names(self, spec: ProviderSpec, kind: str) -> None:
        """Create the custom resource classes or traits a declaration uses (after Placement said 400)."""
        if kind == "inventories" and spec.inventories:
            if self._known_classes is None:
                self._known_classes = set(self.client.resource_classes())
            for rc in sorted(spec.inventories):
                if is_custom(rc) and rc not in self._known_classes:
                    self.client.ensure_resource_class(rc)
                    self._known_classes.add(rc)
        if kind == "traits" and spec.traits:
            wanted = [t for t in spec.traits if is_custom(t) and t not in self._known_traits]
            existing = set(self.client.traits(names=wanted)) if wanted else set()
            for trait in wanted:
                if trait not in existing:
                    self.client.ensure_trait(trait)
                self._known_traits.add(trait)

    def _put(self, spec: ProviderSpec, kind: str, call, *args):
        try:
            return call(*args)
        except PlacementConflict:
            raise
        except PlacementError as exc:
            if exc.status != 400:
                raise
            if kind == "aggregates":
                raise
            self._ensure_names(spec, kind)
            return call(*args)

    def apply_present(self, outcome: Outcome) -> None:
        spec = outcome.spec
        for attempt in range(self.max_retries + 1):
            known = self._lookup(spec) if attempt == 0 else self.locate(spec, fresh=True)
            try:
                self._apply_present_once(outcome, known)
                return
            except PlacementConflict as exc:
                if attempt == self.max_retries:
                    raise PlacementError(
                        f"provider {spec.label}: still conflicting after {self.max_retries} fresh reads "
                        f"({exc}); another writer keeps changing it, run again once it settles"
                    ) from exc
                if known is not None:
                    self._forget(known)
                time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))

    def _apply_present_once(self, outcome: Outcome, known: Known | None) -> None:
        spec = outcome.spec
        parent_uuid = None
        if spec.parent:
            parent = self.locate_parent(spec.parent)
            if parent is None:
                raise PlacementRefusal(
                    f"provider {spec.label}: parent {spec.parent!r} does not exist; declare it before its children"
                )
            parent_uuid = parent.uuid
        if known is None:
            refusals = self.creation_refusals(spec)
            if refusals:
                raise PlacementRefusal("; ".join(refusals))
            outcome.before = None
            if self.check_mode:
                known = Known(spec.uuid or f"(new uuid for {spec.label})", spec.name or spec.uuid, parent_uuid, 0)
            else:
                known = self._remember(self.client.create_provider(spec.name or spec.uuid, spec.uuid, parent_uuid))
            self._did(outcome, "create")
            known.inventories, known.traits, known.aggregates = {}, [], []
            self.by_name[known.name] = self.by_uuid[known.uuid] = known
        else:
            self.read_details(spec, known)
            refusals = self.ownership_refusals(spec, known)
            if refusals:  # a retry read a provider nova-compute has taken over meanwhile
                raise PlacementRefusal("; ".join(refusals))
            if outcome.before is None:
                outcome.before = known.view()
            wanted_name = spec.name or known.name
            wanted_parent = parent_uuid if spec.parent else known.parent_uuid
            if (wanted_name, wanted_parent) != (known.name, known.parent_uuid):
                if not self.check_mode:
                    updated = self.client.update_provider(known.uuid, wanted_name, wanted_parent)
                    known.generation = updated["generation"]
                self._did(outcome, "update provider")
                known.name, known.parent_uuid = wanted_name, wanted_parent
        outcome.uuid = known.uuid
        if spec.inventories is not None:
            target = target_inventories(known.inventories, spec.inventories, spec.inventories_mode)
            if inventories_differ(known.inventories, target):
                if "create" not in outcome.actions:
                    usage = (
                        usage_refusals(known.name, target, self.client.usages(known.uuid))
                        if (self._lowers(known.inventories, target))
                        else []
                    )
                    if usage:
                        raise PlacementRefusal("; ".join(usage))
                if not self.check_mode:
                    known.generation = self._put(
                        spec, "inventories", self.client.put_inventories, known.uuid, known.generation, target
                    )
                known.inventories = target
                self._did(outcome, "set inventories")
        for kind in ("traits", "aggregates"):
            declared = getattr(spec, kind)
            if declared is None or getattr(known, f"{kind}_satisfied"):
                continue
            current = getattr(known, kind)
            if current is None:
                continue  # merge of an empty declaration: nothing to read, nothing to do
            target = target_set(current, declared, getattr(spec, f"{kind}_mode"))
            if target != sorted(current):
                if not self.check_mode:
                    put = self.client.put_provider_traits if kind == "traits" else self.client.put_aggregates
                    known.generation = self._put(spec, kind, put, known.uuid, known.generation, target)
                setattr(known, kind, target)
                self._did(outcome, f"set {kind}")
        outcome.after = known.view()

    @staticmethod
    def _did(outcome: Outcome, action: str) -> None:
        if action not in outcome.actions:
            outcome.actions.append(action)

    def apply_absent(self, outcome: Outcome) -> None:
        known = self._lookup(outcome.spec)
        if known is None:
            return
        outcome.before, outcome.after, outcome.uuid = known.view(), None, known.uuid
        outcome.actions.append("delete")
        if not self.check_mode:
            try:
                self.client.delete_provider(known.uuid)
            except PlacementConflict as exc:
                raise PlacementRefusal(f"provider {known.name}: Placement refused the delete: {exc}") from exc
        self._forget(known)

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> list[Outcome]:
        if self.bulk:
            self.read_bulk()
        refusals: list[str] = []
        located = [self.locate(spec) for spec in self.specs]
        for spec, known in zip(self.specs, located, strict=True):
            if spec.state == "present":
                self.plan_present(spec, known, refusals)
            else:
                self.plan_absent(spec, known, refusals)
        if refusals:
            raise PlacementRefusal("nothing was changed: " + "; ".join(refusals))
        for outcome in self._ordered("present"):
            self.apply_present(outcome)
        for outcome in reversed(self._ordered("absent")):
            self.apply_absent(outcome)
        return self.outcomes

    def _ordered(self, state: str) -> list[Outcome]:
        """Outcomes of one state with parents before their children (declaration order otherwise)."""
        chosen = [o for o in self.outcomes if o.spec.state == state]
        declared = {o.spec.name: o for o in chosen if o.spec.name}
        declared.update({o.spec.uuid: o for o in chosen if o.spec.uuid})
        ordered: list[Outcome] = []
        seen: set[int] = set()

        def visit(outcome: Outcome, depth: int = 0) -> None:
            if id(outcome) in seen or depth > len(chosen):
                return
            parent = declared.get(outcome.spec.parent) if outcome.spec.parent else None
            if parent is not None:
                visit(parent, depth + 1)
            seen.add(id(outcome))
            ordered.append(outcome)

        for outcome in chosen:
            visit(outcome)
        if state == "absent":
            # Children must go first: order by depth in the live tree, deepest last in this list.
            ordered.sort(key=self._depth)
        return ordered

    def _depth(self, outcome: Outcome) -> int:
        known, depth = self._lookup(outcome.spec), 0
        while known is not None and known.parent_uuid and depth < 64:
            known, depth = self.by_uuid.get(known.parent_uuid), depth + 1
        return depth


def converge(
    client: PlacementClient,
    specs: list[ProviderSpec],
    check_mode: bool = False,
    max_retries: int = MAX_RETRIES,
    bulk: bool | None = None,
    simulate_compute: bool = False,
) -> dict:
    """Converge ``specs``; return the module result (changed, providers, diff).

    Unless ``simulate_compute``, writes that would play nova-compute (see ownership.py) are refused
    before anything changes.
    """
    outcomes = Converger(client, specs, check_mode, max_retries, bulk, simulate_compute).run()
    return {
        "changed": any(o.changed for o in outcomes),
        "providers": [o.result() for o in outcomes],
        "diff": {
            "before": {o.spec.label: o.before for o in outcomes if o.changed},
            "after": {o.spec.label: o.after for o in outcomes if o.changed},
        },
    }
