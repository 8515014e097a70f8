# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a flavor fits: Nova's translation, Placement's answer from the fleet, and Nova's filters after it.

``flavor_fit(flavors, snapshot, **options)`` returns one report per flavor, in order, with the keys the
``accel.openstack.flavor_fit`` lookup returns: ``name``, ``outcome``, ``status``, ``message``,
``queries``, ``hosts``, ``max_instances``, ``fleet_max_instances``, ``why_not``, ``reason`` and
``after_filters``. A flavor that is bad or fits nowhere is reported, never raised; only bad options
(a fleet that is not a snapshot, a negative ``count_limit``, ...) raise :class:`FitOptionError`.

How each part is computed:

- ``queries``, refusals and the merge of answers come from the flavor translation (``flavor.py``);
  each query is answered by the solver from the fleet, as Placement 1.39 would (200 or 400).
- ``hosts``: the roots of the merged candidates, with Nova's ``limit`` (``max_placement_results``).
- ``max_instances``: per root, copies placed one after another on that host, each taking the first
  candidate there (the queries in Nova's order, candidates in the solver's stable order), counted on the
  host's own tree without ``limit``, capped at ``count_limit``. Usage only grows while copies are
  placed, so the first candidate that still fits is always the next one of the original list, and a
  candidate is repeated as often as capacity allows before moving on. Hosts whose trees differ only in
  usage and sizes (no sharing provider) are counted and explained together, from one template tree and
  a usage and sizes row per host (``host_trees.Structure``), with no search per host.
- ``why_not``: per root that is not in ``hosts``, the first constraint that fails there (the solver's
  explanation on that tree), or the ``limit`` that cut Placement's answer before the host.
- ``reason``: ``null`` when it fits, else a code (see ``REASON_CODES``) found by relaxing the request
  one constraint at a time, with ``detail`` and ``did_you_mean``.
- ``after_filters``: ``hosts`` after Nova's filters modelled in ``nova_filters.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of
from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import suggest
from ansible_collections.accel.openstack.plugins.plugin_utils import flavor as nova_flavor
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs, nova_filters
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, FleetError, gc_paused
from ansible_collections.accel.openstack.plugins.plugin_utils.host_trees import (
    Alone,
    Structure,
    answer,
    check_group_names,
    copy_provider,
    max_free,
    totals,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.budget import Budget, TooCombinatorial
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.checks import check_traits
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.fast import asks
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import (
    DEFAULT_TIMEOUT,
    PlacementConfig,
    PlacementConfigError,
    check_timeout,
    duration_words,
    fix_words,
    generation,
)

REASON_CODES = (
    "unknown_trait",
    "unknown_resource_class",
    "group_policy_missing",
    "no_inventory",
    "missing_trait",
    "forbidden_trait",
    "hosts_disabled",
    "too_big",
    "in_use",
    "too_many_devices",
    "invalid_flavor",
    "scheduler_error",
    "placement_overload",
)
GENERAL_CLASSES = frozenset({"VCPU", "PCPU", "MEMORY_MB", "DISK_GB"})
_LIMIT_NAME = "max_placement_results"


class FitOptionError(AccelError):
    """A lookup option that is not usable; the message names the option and the fix."""


@dataclasses.dataclass
class FitOptions:
    pci_aliases: list = dataclasses.field(default_factory=list)
    pci_in_placement: bool = False
    device_profiles: dict | None = None
    image_properties: dict | None = None
    boot_from_volume: bool = False
    count_limit: int = 64
    aggregates_metadata: list | None = None
    enabled_filters: tuple = nova_filters.MODELLED_FILTERS
    max_placement_results: int = 1000
    placement_config: PlacementConfig = dataclasses.field(default_factory=PlacementConfig)
    placement_timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def checked(cls, **options) -> FitOptions:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise FitOptionError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        values = {k: v for k, v in options.items() if v is not None}
        try:
            if "placement_config" in values:
                values["placement_config"] = PlacementConfig.checked(values["placement_config"])
            if "placement_timeout" in values:
                values["placement_timeout"] = check_timeout(values["placement_timeout"])
        except PlacementConfigError as exc:
            raise FitOptionError(str(exc)) from None
        for name in ("pci_in_placement", "boot_from_volume"):
            if name in values and not isinstance(values[name], bool):
                raise FitOptionError(f"{name} must be true or false, got {values[name]!r}")
        for name in ("count_limit", "max_placement_results"):
            if name in values and (
                isinstance(values[name], bool) or not isinstance(values[name], int) or values[name] < 1
            ):
                raise FitOptionError(f"{name} must be a positive integer, got {values[name]!r}")
        for name, kind, words in (
            ("pci_aliases", list | tuple, "a list of [pci] alias entries (dicts or JSON strings)"),
            ("device_profiles", Mapping, "a dict of Cyborg device profiles {name: [group dicts]}"),
            ("image_properties", Mapping, "a dict of image properties"),
            ("aggregates_metadata", list | tuple, "a list of {name, hosts, metadata} host aggregates"),
            ("enabled_filters", list | tuple, "a list of Nova filter names"),
        ):
            if name in values and not isinstance(values[name], kind):
                raise FitOptionError(f"{name} must be {words}, got {kind_of(values[name])}")
        unknown_filters = sorted(set(values.get("enabled_filters", ())) - set(nova_filters.MODELLED_FILTERS))
        if unknown_filters:
            raise FitOptionError(
                f"enabled_filters: {', '.join(unknown_filters)} not modelled; "
                f"choose from {', '.join(nova_filters.MODELLED_FILTERS)}"
            )
        if "aggregates_metadata" in values:
            try:
                nova_filters.aggregate_metadata_by_host(values["aggregates_metadata"])
            except ValueError as exc:
                raise FitOptionError(str(exc)) from exc
        if "pci_aliases" in values:
            values["pci_aliases"] = list(values["pci_aliases"])
        if "enabled_filters" in values:
            values["enabled_filters"] = tuple(values["enabled_filters"])
        return cls(**values)


class FlavorFit:
    """A fleet indexed once, then asked about any number of flavors."""

    def __init__(self, snapshot: Mapping, options: FitOptions, share_shapes: bool = True, roots_by_shape: bool = True):
        try:
            self.fleet = Fleet.from_snapshot(snapshot)
        except FleetError as exc:
            raise FitOptionError(f"fleet: {exc}") from exc
        self.options = options
        self.records = {}
        for record in snapshot["resource_providers"]:
            if record.get("parent_provider_uuid") is None:
                self.records[record.get("name") or record["uuid"]] = record
        fleet = self.fleet
        self.root_names = {p.uuid: p.name for p in fleet.roots}
        self.names = [p.name for p in fleet.roots]
        # Hosts whose trees differ only in usage and sizes share one structure: one template tree, searched
        # once per flavor, and a usage and sizes row per host (``host_trees.Structure``). A tree that shares providers
        # with others (or every tree, without ``share_shapes``) is asked on its own (``Alone``).
        self.share_shapes = share_shapes
        self.shape_of: list[int] = []
        self.units: list[Structure | Alone] = []
        self.representative: list[str] = []
        index_of: dict[tuple, int] = {}
        members: dict[int, tuple[list[int], list[tuple], list[tuple]]] = {}  # per structure: rows, usage, sizes
        known_sizes: dict[tuple, tuple] = {}  # equal sizes rows are one tuple
        for row, root in enumerate(fleet.roots):
            key, used, sizes = self._key(root.uuid) if share_shapes else (None, None, None)
            if key is None:
                index = len(self.units)
                self.units.append(Alone(fleet, root.uuid, row))
                self.representative.append(root.uuid)
            else:
                index = index_of.get(key)
                if index is None:
                    index = index_of[key] = len(self.units)
                    self.units.append(None)
                    self.representative.append(root.uuid)
                    members[index] = ([], [], [])
                found = members[index]
                found[0].append(row)
                found[1].append(used)
                found[2].append(known_sizes.setdefault(sizes, sizes))
            self.shape_of.append(index)
        for index, (found_rows, found_usage, found_sizes) in members.items():
            self.units[index] = Structure(fleet, self.representative[index], found_rows, found_usage, found_sizes)
        # Whether "does any host give a candidate" may be asked of each structure instead of the whole
        # fleet: true when no provider shares via an aggregate (every candidate then lies in one tree).
        self.by_shape = share_shapes and not fleet.sharing
        # Whether Nova's queries may be answered per structure when the whole answer fits in ``limit``
        # (see ``_roots_by_shape``).
        self.roots_by_shape = roots_by_shape and self.by_shape
        self._empty: Fleet | None = None
        self._max_free: dict[int, dict[str, int]] = {}
        self._positions: list[list[int]] | None = None

    # -- trees -------------------------------------------------------------------------------------
    def _key(self, root: str) -> tuple[tuple | None, tuple | None, tuple | None]:
        """The structure of a root's tree (all but usage and sizes), its usage row and its sizes row
        (``(total, reserved, allocation_ratio, max_unit)`` per inventory); Nones for a tree that shares
        providers with others. A ``max_unit`` no smaller than the capacity never decides anything (an
        amount that fits the capacity fits it), so it stays out of the structure; a smaller one is in it."""
        fleet = self.fleet
        tree = fleet.trees[root]
        if root in fleet.shared_with or any(p.uuid in fleet.sharing for p in tree):
            return None, None, None
        position = {p.uuid: i for i, p in enumerate(tree)}
        key = []
        used = []
        sizes = []
        for p in tree:
            inventories = sorted(p.inventories.items())
            key.append(
                (
                    position.get(p.parent),
                    tuple(
                        (rc, i.min_unit, i.step_size, None if i.max_unit >= i.capacity else i.max_unit)
                        for rc, i in inventories
                    ),
                    p.traits,
                    p.aggregates,
                )
            )
            for _rc, i in inventories:
                used.append(i.used)
                sizes.append((i.total, i.reserved, i.allocation_ratio, i.max_unit))
        return tuple(key), tuple(used), tuple(sizes)

    def _empty_fleet(self) -> Fleet:
        if self._empty is None:
            providers = [copy_provider(p, p.name) for p in self.fleet.order]
            for provider in providers:
                for inv in provider.inventories.values():
                    inv.used = 0
            self._empty = Fleet(providers, self.fleet.traits, self.fleet.resource_classes)
        return self._empty

    def _most(self, fleet: Fleet) -> dict[str, int]:
        found = self._max_free.get(id(fleet))
        if found is None:
            if fleet is self.fleet and self.by_shape:
                # Every tree is a structure's host: the most each has free is in its usage rows.
                found = {}
                for unit in self.units:
                    for rc, free in unit.most_free().items():
                        if free > found.get(rc, -1):
                            found[rc] = free
            else:
                found = max_free(fleet)
            self._max_free[id(fleet)] = found
        return found

    # -- Nova's queries ---------------------------------------------------------------------------
    def _roots(self, request: Request) -> list[str]:
        """The roots of the whole fleet's answer to one query (raises RequestError for Placement's 400)."""
        most = self._most(self.fleet)
        if self.roots_by_shape:
            roots = self._roots_by_shape(request, most)
            if roots is not None:
                return roots
        return answer(self.fleet, request, most, roots_only=True)["roots"]

    def _roots_by_shape(self, request: Request, most: dict[str, int]) -> list[str] | None:
        """The whole fleet's roots from one answer per tree shape, or None where that is not exact.

        With no sharing provider every candidate lies in one tree, and a tree's candidates are the same
        alone as in the fleet (its names checked against the fleet's). When the hosts' candidates add up
        to no more than ``limit``, Placement's answer is all of them: its roots are the hosts whose shape
        has one, in any order (only the set is used). None (ask the whole fleet) when a name is unknown
        (the 400 and its wording are the whole fleet's), with ``in_tree`` (it names one host), when no
        tree can hold the totals (the whole fleet answers that without a search), when the candidates
        of a request with suffixed groups exceed ``limit`` (which come first follows the group with the
        fewest hosts), or when the trees' searches together could exceed the whole search's step budget
        (it would refuse). With the unsuffixed group alone, the roots come in fleet order, each with all
        its candidates, so the answer under ``limit`` is the first hosts that have one, until ``limit``
        candidates are counted."""
        fleet = self.fleet
        if any(g.in_tree is not None for g in request.groups.values()):
            return None
        if not all(amount <= most.get(rc, 0) for rc, amount in totals(request).items()):
            return None
        try:
            check_traits(fleet, sorted(request.root_required | request.root_forbidden))
            for group in request.groups.values():
                check_group_names(fleet, group)
        except RequestError:
            return None
        per_root = [0] * len(self.shape_of)
        candidates = steps = 0
        for unit in self.units:
            found = unit.candidate_counts(request)
            if found is None:
                return None
            counts, spent = found
            steps += spent * len(unit.rows)
            for row, count in zip(unit.rows, counts):  # noqa: B905
                candidates += count
                per_root[row] = count
        if steps > Budget().steps:
            return None
        limit = request.limit
        if limit is None or candidates <= limit:
            return [root.uuid for root, count in zip(fleet.roots, per_root) if count]  # noqa: B905
        if limit < 1:
            return None
        walk = self._anchor_order(request, per_root)
        if walk is None:
            return None
        roots = []
        for row in walk:
            roots.append(fleet.roots[row].uuid)
            limit -= per_root[row]
            if limit <= 0:
                break
        return roots

    def _anchor_order(self, request: Request, per_root: list[int]) -> list[int] | None:
        """The hosts with candidates in the order the solver gives their candidates (all of a host's
        together), or None where a host's candidates need a group the order does not see.

        With the unsuffixed group alone, fleet order. With suffixed groups, the group with the fewest
        hosts that can serve it alone (the first such in the request) leads, and hosts come in the fleet
        order of their first provider that serves it."""
        suffixed = [group for suffix, group in request.groups.items() if suffix]
        if not suffixed:
            return [row for row, count in enumerate(per_root) if count]
        firsts: dict[tuple, list[int | None]] = {}
        served: dict[tuple, int] = {}
        for group in suffixed:
            key = asks(group)
            if key in firsts:
                continue
            found: list[int | None] = [None] * len(per_root)
            for unit in self.units:
                for row, first in zip(unit.rows, unit.first_providers(request, group)):  # noqa: B905
                    found[row] = first
            firsts[key] = found
            served[key] = len(found) - found.count(None)
        lead = firsts[asks(min(suffixed, key=lambda group: served[asks(group)]))]
        if self._positions is None:
            # Per root, the fleet positions of its tree's providers (in tree order).
            position, trees = self.fleet.position, self.fleet.trees
            self._positions = [[position[p.uuid] for p in trees[root.uuid]] for root in self.fleet.roots]
        positions = self._positions
        order = []
        for row, count in enumerate(per_root):
            if count:
                first = lead[row]
                if first is None:
                    return None
                order.append((positions[row][first], row))
        order.sort()
        return [row for _position, row in order]

    # -- one flavor --------------------------------------------------------------------------------
    def check(self, flavor) -> dict:
        for unit in self.units:
            unit.forget()
        name = flavor.get("name") if isinstance(flavor, Mapping) else None
        report = {
            "name": name if isinstance(name, str) else str(name) if name is not None else None,
            "outcome": None,
            "status": None,
            "message": "",
            "queries": [],
            "hosts": [],
            "max_instances": None,  # every host, 0 unless counted (set once, where the report is settled)
            "fleet_max_instances": 0,
            "why_not": {},
            "reason": None,
            "after_filters": {"hosts": [], "removed": {}},
            "placement": [],
        }
        opts = self.options
        try:
            req = nova_flavor.translate(
                flavor,
                pci_aliases=opts.pci_aliases,
                pci_in_placement=opts.pci_in_placement,
                device_profiles=opts.device_profiles,
                image_properties=opts.image_properties,
                boot_from_volume=opts.boot_from_volume,
                max_placement_results=opts.max_placement_results,
            )
        except AccelError as exc:
            return self._refused(report, str(exc), getattr(exc, "extra", {}).get("did_you_mean") or [])
        report["name"] = req.flavor
        report["queries"] = list(req.queries)
        if req.refusal:
            return self._refused(report, req.refusal.get("message", ""), req.refusal.get("did_you_mean") or [])
        requests: list[Request | None] = []
        answers: list[tuple[int, dict | str]] = []
        works: list[dict] = []
        for query in req.queries:
            try:
                request = Request.parse(query)
                # Only the roots are needed: they stand in for the candidates, which merge_answers only
                # concatenates (in Nova's order) and tests for emptiness.
                roots = self._roots(request)
                work = self._placement_work(request)
                if work["truncated"] and work["roots_determined"] and work["candidates"] <= (request.limit or 0):
                    # Generation stopped at max_allocation_candidates: Placement returns what it collected.
                    roots = list(work["roots"])
                works.append(work)
                answers.append((200, {"allocation_requests": roots}))
                requests.append(request)
            except RequestError as exc:
                answers.append((400, str(exc)))
                requests.append(None)
        report["placement"] = [self._named(work) for work in works]
        merged = nova_flavor.merge_answers(req, answers)
        report.update(outcome=merged["outcome"], status=merged.get("status"), message=merged.get("message") or "")
        valid = [r for r in requests if r is not None]
        if merged["outcome"] == "rejected_by_placement":
            error = next((a for s, a in answers if s == 400), merged.get("message") or "")
            report["reason"] = self._rejected(str(error))
            report["max_instances"] = dict.fromkeys(self.names, 0)
            report["why_not"] = {n: f"Placement answers 400: {error}" for n in self.names}
            return report
        if merged["outcome"] == "scheduler_error":
            report["reason"] = {"code": "scheduler_error", "detail": report["message"], "did_you_mean": []}
            report["max_instances"] = dict.fromkeys(self.names, 0)
            report["why_not"] = {n: report["message"] for n in self.names}
            return report
        root_names = self.root_names
        overload = next((work for work in works if work["overload"]), None)
        if overload is not None:
            self._count_and_explain(report, valid, set())
            return self._overloaded(report, overload)
        hosts = sorted({root_names[root] for root in merged.get("candidates") or [] if root in root_names})
        report["hosts"] = hosts
        cut = next((work for work in works if work["truncated"]), None)
        self._count_and_explain(report, valid, set(hosts), cut)
        if not hosts:
            report["reason"] = self._no_host_reason(valid)
        report["after_filters"] = nova_filters.run_filters(
            self.records,
            hosts,
            req,
            flavor,
            pci_in_placement=opts.pci_in_placement,
            aggregates_metadata=opts.aggregates_metadata,
            enabled_filters=opts.enabled_filters,
        )
        return report

    def _placement_work(self, request: Request) -> dict:
        """What Placement at the cloud's settings does with one of Nova's queries (``generation``)."""
        return generation(self.fleet, request, self.options.placement_config, self.options.placement_timeout)

    def _named(self, work: dict) -> dict:
        """The work with its roots by name, as the rest of the report names hosts."""
        found = dict(work)
        found["roots"] = [self.root_names.get(root, root) for root in work["roots"]]
        found["per_root"] = {self.root_names.get(root, root): n for root, n in work["per_root"].items()}
        return found

    def _overloaded(self, report: dict, work: dict) -> dict:
        """Placement does not answer one of Nova's queries within the timeout: NoValidHost on any fleet."""
        config = self.options.placement_config
        detail = (
            f"Placement at {config.words()} needs about {duration_words(work['seconds'])} for Nova's query "
            f"({work['examined']:,} {'prefixes' if config.optimize_for_wide_provider_trees else 'combinations'} "
            f"walked, {work['candidates']:,} candidates, {work['collisions']:,} equality checks), more than the "
            f"{work['timeout']:,.0f} s Nova's call waits (placement_timeout): the boot ends in NoValidHost "
            f"although {report['fleet_max_instances']} instance(s) fit. Fix: {fix_words(config)}"
        )
        report.update(outcome="no_host", status=None, message=detail, hosts=[])
        report["reason"] = {"code": "placement_overload", "detail": detail, "did_you_mean": []}
        report["why_not"] = {name: detail for name in self.names}
        return report

    def _refused(self, report: dict, message: str, did_you_mean: list) -> dict:
        report.update(outcome="invalid_flavor", status=None, message=message)
        report["reason"] = {"code": "invalid_flavor", "detail": message, "did_you_mean": list(did_you_mean)}
        report["max_instances"] = dict.fromkeys(self.names, 0)
        report["why_not"] = {n: f"Nova refuses the flavor: {message}" for n in self.names}
        return report

    def _count_and_explain(
        self, report: dict, requests: list[Request], hosts: set[str], cut: dict | None = None
    ) -> None:
        cap = self.options.count_limit
        names = self.names
        counts = [0] * len(names)
        if requests:
            for unit in self.units:
                for row, count in zip(unit.rows, unit.counts(requests, cap)):  # noqa: B905
                    counts[row] = count
        report["max_instances"] = dict(zip(names, counts))  # noqa: B905
        limited = (
            f"candidates exist on this host, but Placement's answer stops at limit="
            f"{self.options.max_placement_results} ({_LIMIT_NAME}) before it"
        )
        if cut is not None:
            config = self.options.placement_config
            limited = (
                f"candidates exist on this host, but Placement stops generating at max_allocation_candidates="
                f"{config.max_allocation_candidates} ({config.allocation_candidates_generation_strategy}) before "
                "it reaches this host"
                + (
                    "; with allocation_candidates_generation_strategy=breadth-first every host that fits gets "
                    "candidates"
                    if not config.breadth_first
                    else ""
                )
            )
        sentences: list[str | None] = [None] * len(names)
        for unit in self.units:
            rows = unit.rows
            empty = [index for index, row in enumerate(rows) if not counts[row]]
            if not empty:
                continue
            if not requests:
                for index in empty:
                    sentences[rows[index]] = "Nova asks Placement nothing it can answer"
                continue
            for index, sentence in unit.reasons(requests[0], empty).items():
                sentences[rows[index]] = sentence
        if hosts:
            why_not = {
                name: limited if sentence is None else sentence
                for name, sentence in zip(names, sentences)  # noqa: B905
                if name not in hosts
            }
        elif None in sentences:
            why_not = dict(zip(names, [limited if sentence is None else sentence for sentence in sentences]))  # noqa: B905
        else:
            why_not = dict(zip(names, sentences))  # noqa: B905
        report["why_not"] = why_not
        report["fleet_max_instances"] = sum(counts)

    # -- reasons -----------------------------------------------------------------------------------
    def _rejected(self, message: str) -> dict:
        fleet = self.fleet
        if "No such trait" in message:
            name = message.split("No such trait(s):", 1)[-1].strip().split(".")[0].split(",")[0].strip()
            return {"code": "unknown_trait", "detail": message, "did_you_mean": suggest(name, fleet.by_trait)}
        if "No such resource class" in message:
            name = message.split("No such resource class", 1)[-1].strip().split(".")[0].strip()
            return {
                "code": "unknown_resource_class",
                "detail": message,
                "did_you_mean": suggest(name, fleet.by_class),
            }
        if "group_policy" in message:
            return {"code": "group_policy_missing", "detail": message, "did_you_mean": ["group_policy=none"]}
        return {"code": "invalid_flavor", "detail": message, "did_you_mean": []}

    def _fits(self, fleet: Fleet, request: Request) -> bool:
        try:
            found = answer(fleet, dataclasses.replace(request, limit=1), self._most(fleet))
        except RequestError:
            return False
        return bool(found["allocation_requests"])

    def _fits_somewhere(self, request: Request, empty: bool = False) -> bool:
        """Whether any host gives the request a candidate (with no usage at all when ``empty``).

        Without sharing providers a candidate lies in one tree, so each structure is asked (its names
        known as the fleet's, so a 400 there is one on the fleet); else the whole fleet is."""
        if not self.by_shape or any(g.in_tree is not None for g in request.groups.values()):
            return self._fits(self._empty_fleet() if empty else self.fleet, request)
        return any(unit.any_fits(request, empty) for unit in self.units)

    def _no_host_reason(self, requests: list[Request]) -> dict:
        fleet = self.fleet
        if not requests:
            return {"code": "too_big", "detail": "no query Nova sends is answered", "did_you_mean": []}
        request = requests[0]
        missing = [
            (group, rc)
            for other in requests
            for group in other.groups.values()
            for rc in group.resources
            if rc not in fleet.by_class
        ]
        if missing and all(
            any(rc not in fleet.by_class for g in r.groups.values() for rc in g.resources) for r in requests
        ):
            group, rc = missing[0]
            return {
                "code": "no_inventory",
                "detail": f"{group.label} asks {rc}, which no provider in the fleet has",
                "did_you_mean": suggest(rc, fleet.by_class),
            }
        for group in request.groups.values():
            for any_of in group.required:
                if not any(t in fleet.by_trait for t in any_of):
                    names = " or ".join(sorted(any_of))
                    return {
                        "code": "missing_trait",
                        "detail": f"{group.label} requires trait {names}, which no provider has",
                        "did_you_mean": suggest(sorted(any_of)[0], fleet.by_trait),
                    }
        missing_root = sorted(t for t in request.root_required if t not in fleet.by_trait)
        if missing_root:
            return {
                "code": "missing_trait",
                "detail": f"root_required needs {', '.join(missing_root)}, which no root provider has",
                "did_you_mean": suggest(missing_root[0], fleet.by_trait),
            }
        disabled = nova_filters.DISABLED_TRAIT
        if disabled in request.root_forbidden and any(
            self._fits_somewhere(dataclasses.replace(r, root_forbidden=r.root_forbidden - {disabled})) for r in requests
        ):
            count = len(fleet.by_trait.get(disabled, ()))
            return {
                "code": "hosts_disabled",
                "detail": (
                    f"it fits only on hosts whose compute service is disabled ({count} host(s) carry {disabled})"
                ),
                "did_you_mean": [],
            }
        # The traits are relaxed in every query Nova sends together (a dedicated flavor's PCPU query and its
        # VCPU fallback): a trait missing behind the fallback is a missing trait, not usage.
        forbidden = sorted(
            set(request.root_forbidden - {disabled}).union(*(g.forbidden for g in request.groups.values()))
        )
        if forbidden and any(self._fits_somewhere(_unforbidden(r)) for r in requests):
            return {
                "code": "forbidden_trait",
                "detail": f"every host with room carries a forbidden trait ({', '.join(forbidden)})",
                "did_you_mean": [],
            }
        required = sorted(set(request.root_required).union(*(t for g in request.groups.values() for t in g.required)))
        if required and any(self._fits_somewhere(_unrequired(r)) for r in requests):
            return {
                "code": "missing_trait",
                "detail": f"no host with room has the required trait(s) where they are needed ({', '.join(required)})",
                "did_you_mean": [],
            }
        if any(self._fits_somewhere(r, empty=True) for r in requests):
            return {
                "code": "in_use",
                "detail": "it fits an empty host, but not the usage the fleet reports today",
                "did_you_mean": [],
            }
        if self._fits_somewhere(_one_device(request), empty=True):
            most = self._most(self._empty_fleet())
            over = [
                f"{amount} {rc} asked, {most.get(rc, 0)} on the largest host"
                for rc, amount in sorted(totals(request).items())
                if rc not in GENERAL_CLASSES and amount > most.get(rc, 0)
            ]
            words = f" ({'; '.join(over)})" if over else ""
            return {
                "code": "too_many_devices",
                "detail": f"it asks more devices than any host has{words}; one device of each kind fits",
                "did_you_mean": [],
            }
        return {
            "code": "too_big",
            "detail": "it is larger than any host, even an empty one",
            "did_you_mean": [],
        }


def _unforbidden(request: Request) -> Request:
    """The request without any forbidden trait (that only disabled hosts would fit was ruled out before)."""
    return dataclasses.replace(
        request,
        root_forbidden=frozenset(),
        groups={s: dataclasses.replace(g, forbidden=frozenset()) for s, g in request.groups.items()},
    )


def _unrequired(request: Request) -> Request:
    """The request without its required traits."""
    return dataclasses.replace(
        request,
        root_required=frozenset(),
        groups={s: dataclasses.replace(g, required=[]) for s, g in request.groups.items()},
    )


def _one_device(request: Request) -> Request:
    """The request with one device: the first device group kept with amount 1, other device groups dropped."""
    groups, kept = {}, False
    for suffix, group in request.groups.items():
        devices = {rc: n for rc, n in group.resources.items() if rc not in GENERAL_CLASSES}
        if not devices:
            groups[suffix] = group
            continue
        if kept and suffix:
            continue
        resources = {rc: (1 if rc in devices else n) for rc, n in group.resources.items()}
        groups[suffix] = dataclasses.replace(group, resources=resources)
        kept = kept or bool(suffix)
    return dataclasses.replace(
        request, groups=groups, same_subtrees=[s for s in request.same_subtrees if s <= set(groups)]
    )


# What a flavor's evaluation may raise beyond the collection's own errors, reported for that flavor alone.
_EVALUATION_ERRORS = (TypeError, ValueError, LookupError, AttributeError, ArithmeticError, RecursionError)


def checked_fit(fit: FlavorFit, flavor, index: int) -> dict:
    """``fit.check`` on a flavor that passed the input layer (``inputs.flavor``); a refusal of that layer,
    a search over its budget or an unexpected error is that flavor's report, never the whole lookup's."""
    try:
        flavor = inputs.flavor(flavor, index, fit.options.image_properties)
    except inputs.FlavorInputError as exc:
        report = _input_report(fit, exc.name, index)
        if exc.code == "too_big":
            report.update(outcome="no_host", message=exc.msg)
            report["reason"] = {"code": "too_big", "detail": exc.msg, "did_you_mean": []}
            report["why_not"] = {n: exc.msg for n in report["max_instances"]}
            return report
        return fit._refused(report, exc.msg, [])
    try:
        return fit.check(flavor)
    except TooCombinatorial as exc:
        detail = f"flavor {flavor.get('name')!r}: {exc}"
    except _EVALUATION_ERRORS as exc:
        detail = (
            f"flavor {flavor.get('name')!r} could not be evaluated ({type(exc).__name__}: {str(exc)[:200]}); "
            "this is a limit of the collection's model, not Nova's answer"
        )
    report = _input_report(fit, flavor.get("name"), index)
    report.update(outcome="scheduler_error", message=detail)
    report["reason"] = {"code": "scheduler_error", "detail": detail, "did_you_mean": []}
    report["why_not"] = {n: detail for n in report["max_instances"]}
    return report


def _input_report(fit: FlavorFit, name, index: int) -> dict:
    return {
        "name": name if isinstance(name, str) else f"flavors[{index}]",
        "outcome": None,
        "status": None,
        "message": "",
        "queries": [],
        "hosts": [],
        "max_instances": dict.fromkeys(fit.names, 0),
        "fleet_max_instances": 0,
        "why_not": {},
        "reason": None,
        "after_filters": {"hosts": [], "removed": {}},
        "placement": [],
    }


def flavor_fit(flavors, snapshot: Mapping, **options) -> list[dict]:
    """One report per flavor (see the module docstring); raises FitOptionError only for bad options.

    Options, the fleet and each flavor pass the input layer (``inputs.py``) first."""
    try:
        options = inputs.plain(options, "options")
        snapshot = inputs.fleet_snapshot(snapshot)
    except inputs.InputError as exc:
        raise FitOptionError(exc.msg) from None
    checked = FitOptions.checked(**options)
    if not isinstance(flavors, list | tuple):
        flavors = [flavors]
    if not isinstance(snapshot, Mapping):
        raise FitOptionError("fleet must be a fleet snapshot (what accel.openstack.placement_info returns as 'fleet')")
    with gc_paused():
        fit = FlavorFit(snapshot, checked)
        return [checked_fit(fit, flavor, index) for index, flavor in enumerate(flavors)]
