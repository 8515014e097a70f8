# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 5: check declared requests (flavors, device profiles) against a fleet snapshot.

For each request: is it valid (Placement would not answer 400), on which root providers (hosts) it fits,
how many instances of it each of those hosts can take one after another, and, where it fits nowhere or on
too few hosts, why not, per host, with did-you-mean suggestions for unknown traits and resource classes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import InputError, kind_of, shown
from ansible_collections.accel.openstack.plugins.plugin_utils.explain import explain
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, FleetError
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request, RequestError
from ansible_collections.accel.openstack.plugins.plugin_utils.solver import allocation_candidates

SHARING_TRAIT = "MISC_SHARES_VIA_AGGREGATE"


class ValidationInputError(AccelError, ValueError):
    pass


def _check_entry(index: int, entry) -> tuple[str, object, int, bool]:
    if not isinstance(entry, Mapping):
        raise ValidationInputError(f"request {index}: give a dict with 'name' and 'query'")
    name = entry.get("name") or f"request {index}"
    if "query" not in entry:
        raise ValidationInputError(f"request {index} ({name}): 'query' is missing; give a Placement query string")
    min_hosts = entry.get("min_hosts", 1)
    if not isinstance(min_hosts, int) or min_hosts < 0:
        raise ValidationInputError(f"request {index} ({name}): min_hosts must be a non-negative integer")
    expect = entry.get("expect", "placeable")
    if expect not in ("placeable", "unplaceable"):
        raise ValidationInputError(f"request {index} ({name}): expect must be 'placeable' (default) or 'unplaceable'")
    return str(name), entry["query"], min_hosts, expect == "unplaceable"


def _tree_snapshot(snapshot: Mapping, root_uuid: str, roots: dict[str, str]) -> dict:
    """The providers of one tree plus every sharing provider, with usages as a mutable copy."""
    providers = []
    for record in snapshot["resource_providers"]:
        if roots[record["uuid"]] == root_uuid or SHARING_TRAIT in (record.get("traits") or []):
            providers.append(copy.deepcopy(dict(record)))
    return {"resource_providers": providers}


def instances_on(snapshot: Mapping, root_uuid: str, request: Request, roots: dict[str, str], limit: int) -> int:
    """How many copies of ``request`` fit on one tree, placing them one after another (first candidate)."""
    tree = _tree_snapshot(snapshot, root_uuid, roots)
    by_uuid = {p["uuid"]: p for p in tree["resource_providers"]}
    count = 0
    while count < limit:
        answer = allocation_candidates(Fleet.from_snapshot(tree), request)
        mine = [
            ar
            for ar in answer["allocation_requests"]
            if any(roots.get(uuid) == root_uuid for uuid in ar["allocations"])
        ]
        if not mine:
            break
        for uuid, allocation in mine[0]["allocations"].items():
            usages = by_uuid[uuid].setdefault("usages", {})
            for rc, amount in allocation["resources"].items():
                usages[rc] = usages.get(rc, 0) + amount
        count += 1
    return count


def validate_requests(snapshot: Mapping, requests, count_limit: int = 64) -> list[dict]:
    """One result per request: name, query, ok, error, hosts ({name: instances}), unknown, reasons."""
    try:
        fleet = Fleet.from_snapshot(snapshot)
    except FleetError as exc:
        raise ValidationInputError(f"fleet: {exc}") from exc
    if not isinstance(requests, list):
        raise ValidationInputError("requests must be a list of {name, query, min_hosts} dicts")
    roots = {uuid: provider.root for uuid, provider in fleet.providers.items()}
    names = {uuid: provider.name for uuid, provider in fleet.providers.items()}
    results = []
    for index, entry in enumerate(requests):
        name, query, min_hosts, unplaceable = _check_entry(index, entry)
        result = {
            "name": name,
            "query": query,
            "min_hosts": min_hosts,
            "expect": "unplaceable" if unplaceable else "placeable",
            "hosts": {},
            "unknown": [],
            "reasons": {},
        }
        try:
            request = Request.parse(query)
        except RequestError as exc:
            result.update(ok=unplaceable, error=f"Placement would answer 400: {exc}")
            results.append(result)
            continue
        report = explain(fleet, request, [p.uuid for p in fleet.roots])
        if report.get("error"):
            result.update(ok=unplaceable, error=f"Placement would answer 400: {report['error']}")
            result["unknown"] = report.get("unknown", [])
            results.append(result)
            continue
        for root in report["roots"]:
            if root["fits"]:
                result["hosts"][root["name"]] = instances_on(snapshot, root["uuid"], request, roots, count_limit)
            else:
                result["reasons"][root["name"] or names.get(root["uuid"])] = root["reason"]
        result["unknown"] = report.get("unknown", [])
        result["ok"] = not result["hosts"] if unplaceable else len(result["hosts"]) >= min_hosts
        result["error"] = None
        results.append(result)
    return results


def _checked_result(result, index: int) -> None:
    """One entry of validate_requests' result, by the shape the report reads, or InputError naming it."""
    where = f"validation_report: results[{index}]"
    if not isinstance(result, Mapping) or not isinstance(result.get("name"), str):
        raise InputError(f"{where} is {kind_of(result)}; give validate_requests' result (entries with name and hosts)")
    if result.get("error"):
        return
    hosts, reasons = result.get("hosts"), result.get("reasons", {})
    if not isinstance(hosts, Mapping) or not isinstance(reasons, Mapping):
        raise InputError(
            f"{where} ({result['name']}): hosts is {kind_of(hosts)} and reasons {kind_of(reasons)}; both are "
            "mappings in validate_requests' result"
        )
    for host, count in hosts.items():
        if isinstance(count, bool) or not isinstance(count, int):
            raise InputError(
                f"{where} ({result['name']}): hosts[{shown(host, 40)}] is {kind_of(count)} ({shown(count)}); "
                "give a whole number of instances"
            )
    unknown = result.get("unknown") or []
    if not isinstance(unknown, list) or not all(isinstance(item, Mapping) for item in unknown):
        raise InputError(f"{where} ({result['name']}): unknown is {kind_of(unknown)}; give a list of mappings")


def validation_report(results: list[dict], reasons_shown: int = 5) -> list[str]:
    lines = []
    for index, result in enumerate(results):
        _checked_result(result, index)
        expected = " (expected: unplaceable)" if result.get("expect") == "unplaceable" else ""
        if result.get("error"):
            verdict = "ok  " if result.get("ok") else "FAIL"
            lines.append(f"{verdict} {result['name']}{expected}: {result['error']}")
        else:
            hosts = result["hosts"]
            total = sum(hosts.values())
            verdict = "ok  " if result["ok"] else "FAIL"
            where = ", ".join(f"{h} x{n}" for h, n in sorted(hosts.items())) or "no host"
            lines.append(
                f"{verdict} {result['name']}{expected}: fits on {len(hosts)} host(s), {total} instance(s): {where}"
            )
            if not hosts or not result["ok"]:
                for host, reason in list(sorted(result["reasons"].items()))[:reasons_shown]:
                    lines.append(f"     {host}: {reason}")
        for unknown in result.get("unknown") or []:
            hint = ", ".join(unknown.get("did_you_mean") or []) or "no close name"
            lines.append(f"     unknown {unknown.get('kind')} {unknown.get('name')}: did you mean {hint}?")
    return lines
