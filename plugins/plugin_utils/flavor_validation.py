# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 5 for flavors: prove a flavor catalog against the fleet, with catalog findings and one table.

``validate_flavors(snapshot, entries, **options)`` runs ``flavor_fit`` on every entry (a flavor with
openstack.cloud.compute_flavor's keys, plus optional ``min_hosts`` (default 1), ``expect``
(``placeable`` | ``unplaceable``), ``image_properties`` and ``boot_from_volume`` for that flavor) and
returns ``{"flavors": [report + ok, min_hosts, expect], "findings": [...], "ok": bool}``. A flavor is
ok when, after Nova's modelled filters, it fits on at least ``min_hosts`` hosts (or on none, with
``expect: unplaceable``). Findings (they do not fail the run):

- ``general_on_gpu_host``: a flavor that asks no accelerator can land on a host that has accelerators,
  taking the room GPU flavors need; the fix is a forbidden trait on general flavors (e.g.
  ``trait:CUSTOM_GPU_HOST=forbidden`` with that trait on the GPU hosts' compute nodes) or an isolating
  aggregate;
- ``gpu_image_properties``: a flavor with accelerators whose image lacks ``hw_machine_type=q35`` or
  ``hw_firmware_type=uefi`` (large PCI BARs need both);
- ``scheduler_crash``: a ``dedicated`` flavor whose query Placement rejects (typically a misspelled
  ``CUSTOM_`` trait) makes Nova 34's scheduler fail with a TypeError instead of NoValidHost;
- bare-metal flavors (see :func:`baremetal_findings`): ``baremetal_class_name`` (the node class written
  without ``CUSTOM_``, in the wrong case or as Ironic spells it), ``baremetal_not_zeroed`` (``VCPU``,
  ``MEMORY_MB`` or ``DISK_GB`` asked of a node that reports none), ``baremetal_units`` (more than the one
  unit a node has).

``flavor_table(result)`` gives the lines a person reads: flavor | fits on | instances | why not / did
you mean, then the findings.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from shlex import quote

from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of, shown
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import normalize
from ansible_collections.accel.openstack.plugins.plugin_utils import inputs
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import (
    GENERAL_CLASSES,
    FitOptionError,
    FitOptions,
    FlavorFit,
    checked_fit,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.request import Request
from ansible_collections.accel.openstack.plugins.plugin_utils.solver.generation import (
    PlacementConfig,
    duration_words,
    generation,
)

ENTRY_KEYS = ("min_hosts", "expect", "image_properties", "boot_from_volume")
GPU_IMAGE_PROPERTIES = {"hw_machine_type": "q35", "hw_firmware_type": "uefi"}
_RESOURCE_KEY = re.compile(r"^resources([A-Za-z0-9_-]*):(.+)\Z")


def _entry(index: int, entry) -> tuple[dict, int, str, dict]:
    if not isinstance(entry, Mapping):
        raise FitOptionError(f"flavors[{index}] must be a dict with openstack.cloud.compute_flavor's keys")
    name = entry.get("name") or f"flavors[{index}]"
    min_hosts = entry.get("min_hosts", 1)
    if isinstance(min_hosts, bool) or not isinstance(min_hosts, int) or min_hosts < 0:
        raise FitOptionError(f"flavor {name}: min_hosts must be a non-negative integer, got {min_hosts!r}")
    expect = entry.get("expect", "placeable")
    if expect not in ("placeable", "unplaceable"):
        raise FitOptionError(f"flavor {name}: expect must be 'placeable' (default) or 'unplaceable'")
    overrides = {k: entry[k] for k in ("image_properties", "boot_from_volume") if entry.get(k) is not None}
    flavor = {k: v for k, v in entry.items() if k not in ENTRY_KEYS}
    return flavor, min_hosts, expect, overrides


def _device_classes(fleet) -> set[str]:
    return {rc for rc in fleet.by_class if rc not in GENERAL_CLASSES}


def _accelerator_hosts(fit: FlavorFit) -> set[str]:
    """Hosts with a device a flavor may ask for: an accelerator class in Placement, or a PCI pool that is not
    Neutron's (a pool tagged with a physical_network serves ports; a network host is no accelerator host)."""
    devices = _device_classes(fit.fleet)
    found = set()
    for root in fit.fleet.roots:
        record = fit.records.get(root.name) or {}
        pools = [p for p in record.get("pci_pools") or [] if isinstance(p, dict) and not p.get("physical_network")]
        if pools or any(rc in devices for p in fit.fleet.trees[root.uuid] for rc in p.inventories):
            found.add(root.name)
    return found


def _asks_accelerators(report: dict, fit: FlavorFit, flavor: Mapping) -> bool:
    specs = flavor.get("extra_specs") or {}
    if any(k in specs for k in ("pci_passthrough:alias", "accel:device_profile")):
        return True
    devices = _device_classes(fit.fleet) | {"VGPU", "PGPU"}
    return any(rc in query and rc not in GENERAL_CLASSES for query in report.get("queries") or [] for rc in devices)


def baremetal_classes(fleet) -> set[str]:
    """Custom classes only bare-metal nodes report: every provider with the class is a root without
    children whose inventory of it is one unit (Nova's Ironic driver: total 1, max_unit 1)."""
    parents = {p.parent for p in fleet.providers.values() if p.parent}
    found = set()
    for rc in fleet.by_class:
        if not rc.startswith("CUSTOM_"):
            continue
        holders = [p for p in fleet.providers.values() if rc in p.inventories]
        if holders and all(
            p.parent is None
            and p.uuid not in parents
            and p.inventories[rc].total == 1
            and p.inventories[rc].max_unit == 1
            for p in holders
        ):
            found.add(rc)
    return found


def baremetal_findings(name: str, flavor: Mapping, classes: set[str]) -> list[dict]:
    """The classic mistakes of a bare-metal flavor against the fleet's bare-metal classes."""
    if not classes:
        return []
    specs = flavor.get("extra_specs") or {}
    if not isinstance(specs, Mapping):
        return []
    findings = []
    asked = {}
    for key, value in specs.items():
        match = _RESOURCE_KEY.match(str(key))
        if match:
            asked[match.group(2)] = (key, value, match.group(1))
    for rc, (key, value, suffix) in sorted(asked.items()):
        if rc in classes or rc in GENERAL_CLASSES:
            continue
        meant = normalize(rc)
        if meant in classes:
            findings.append(
                {
                    "kind": "baremetal_class_name",
                    "flavor": name,
                    "message": f"{name} asks {key}, but Nova reports the bare-metal nodes' class as {meant} "
                    "(CUSTOM_, then the Ironic resource class upper-cased, other characters as _)",
                    "fix": f"openstack flavor unset --property {quote(key)} {quote(name)}; openstack flavor set "
                    f"--property {quote(f'resources{suffix}:{meant}={value}')} {quote(name)}",
                }
            )
    for rc, (key, value, _suffix) in sorted(asked.items()):
        if rc not in classes:
            continue
        try:
            amount = int(value)
        except (TypeError, ValueError):
            continue
        if amount > 1:
            findings.append(
                {
                    "kind": "baremetal_units",
                    "flavor": name,
                    "message": f"{name} asks {key}={value}, but a bare-metal node is one unit of {rc}: no node fits",
                    "fix": f"openstack flavor set --property {quote(f'{key}=1')} {quote(name)}",
                }
            )
        sizes = {"VCPU": flavor.get("vcpus"), "MEMORY_MB": flavor.get("ram"), "DISK_GB": flavor.get("disk")}
        unzeroed = [
            std for std, size in sizes.items() if str(specs.get(f"resources:{std}", "")).strip() != "0" and size
        ]
        if unzeroed:
            wanted = " ".join(f"--property resources:{std}=0" for std in unzeroed)
            findings.append(
                {
                    "kind": "baremetal_not_zeroed",
                    "flavor": name,
                    "message": f"{name} asks {rc} but also {', '.join(unzeroed)} from its sizes, which bare-metal "
                    "nodes do not report: no node fits",
                    "fix": f"openstack flavor set {wanted} {quote(name)}",
                }
            )
    return findings


def _asks_baremetal(flavor: Mapping, classes: set[str]) -> bool:
    specs = flavor.get("extra_specs") or {}
    if not classes or not isinstance(specs, Mapping):
        return False
    return any((m := _RESOURCE_KEY.match(str(key))) and m.group(2) in classes for key in specs)


def _at_defaults(fit: FlavorFit, report: dict) -> dict:
    """What Placement at its defaults would do with the flavor's queries: the slowest, predicted."""
    works = [generation(fit.fleet, Request.parse(query), PlacementConfig()) for query in report["queries"]]
    slowest = max(works, key=lambda work: work["seconds"])
    return {"seconds": slowest["seconds"], "overload": any(work["overload"] for work in works)}


def _placement_cell(report: dict) -> str:
    """Placement's predicted time for the flavor at the settings (and at its defaults when they differ)."""
    works = report.get("placement") or []
    if not works:
        return "-"
    slowest = max(work["seconds"] for work in works)
    cell = ("OVERLOAD " if any(work["overload"] for work in works) else "") + duration_words(slowest)
    defaults = report.get("placement_at_defaults")
    if defaults is not None:
        cell += f" (defaults: {'OVERLOAD ' if defaults['overload'] else ''}{duration_words(defaults['seconds'])})"
    return cell


def placement_findings(name: str, report: dict, config) -> list[dict]:
    """What Placement's own settings do to a flavor: it does not answer in time (``placement_overload``), or a
    depth-first max_allocation_candidates gives Nova candidates from fewer hosts than fit
    (``placement_narrow``)."""
    reason = report.get("reason") or {}
    if reason.get("code") == "placement_overload":
        detail = reason["detail"]
        message, _sep, fix = detail.partition(" Fix: ")
        return [{"kind": "placement_overload", "flavor": name, "message": message, "fix": fix or detail}]
    fitting = sorted(host for host, count in (report.get("max_instances") or {}).items() if count)
    for work in report.get("placement") or ():
        if work.get("truncated") and not config.breadth_first and len(work["roots"]) < len(fitting):
            return [
                {
                    "kind": "placement_narrow",
                    "flavor": name,
                    "message": (
                        f"Placement stops at max_allocation_candidates={config.max_allocation_candidates} "
                        f"(depth-first): Nova is offered candidates from {len(work['roots'])} of the "
                        f"{len(fitting)} hosts that fit {name}, and fails once its filters or claims reject those"
                    ),
                    "fix": (
                        "set [placement]allocation_candidates_generation_strategy=breadth-first in placement.conf "
                        "(accel_placement_config), so that every host that fits gets candidates"
                    ),
                }
            ]
    return []


def validate_flavors(snapshot: Mapping, entries, **options) -> dict:
    try:
        options = inputs.plain(options, "options")
        entries = inputs.plain(entries, "flavors")
        snapshot = inputs.fleet_snapshot(snapshot)
    except inputs.InputError as exc:
        raise FitOptionError(exc.msg) from None
    base = FitOptions.checked(**options)
    if not isinstance(entries, list | tuple):
        raise FitOptionError("flavors must be a list of flavor dicts")
    if not isinstance(snapshot, Mapping):
        raise FitOptionError("fleet must be a fleet snapshot (what accel.openstack.placement_info returns as 'fleet')")
    fit = FlavorFit(snapshot, base)
    accelerator_hosts = _accelerator_hosts(fit)
    nodes = baremetal_classes(fit.fleet)
    reports, findings = [], []
    for index, entry in enumerate(entries):
        flavor, min_hosts, expect, overrides = _entry(index, entry)
        fit.options = dataclasses.replace(base, **overrides) if overrides else base
        report = checked_fit(fit, flavor, index)
        kept = report["after_filters"]["hosts"]
        report.update(min_hosts=min_hosts, expect=expect)
        report["ok"] = not kept if expect == "unplaceable" else len(kept) >= min_hosts
        reports.append(report)
        name = report["name"]
        findings += baremetal_findings(name, flavor, nodes)
        findings += placement_findings(name, report, fit.options.placement_config)
        if fit.options.placement_config != PlacementConfig() and report["placement"]:
            report["placement_at_defaults"] = _at_defaults(fit, report)
        gpu = _asks_accelerators(report, fit, flavor)
        # A bare-metal flavor boots a whole node: the VM image properties do not apply.
        whole_node = _asks_baremetal(flavor, nodes)
        if not gpu and report["outcome"] == "fits":
            landing = sorted(set(kept) & accelerator_hosts)
            if landing:
                findings.append(
                    {
                        "kind": "general_on_gpu_host",
                        "flavor": name,
                        "hosts": landing,
                        "message": (
                            f"{name} asks no accelerator but can land on {len(landing)} accelerator host(s) "
                            f"({', '.join(landing[:5])}{f' and {len(landing) - 5} more' if len(landing) > 5 else ''}) "
                            "and take the room "
                            "GPU flavors need"
                        ),
                        "fix": (
                            "put a trait such as CUSTOM_GPU_HOST on the accelerator hosts' compute nodes and "
                            "trait:CUSTOM_GPU_HOST=forbidden on general flavors, or isolate the accelerator hosts "
                            "in an aggregate (AggregateInstanceExtraSpecsFilter or Placement aggregate isolation)"
                        ),
                    }
                )
        if gpu and not whole_node and report["outcome"] != "invalid_flavor":
            image = fit.options.image_properties or {}
            lacking = {k: v for k, v in GPU_IMAGE_PROPERTIES.items() if str(image.get(k, "")).lower() != v}
            if lacking:
                wanted = " ".join(f"--property {k}={v}" for k, v in lacking.items())
                findings.append(
                    {
                        "kind": "gpu_image_properties",
                        "flavor": name,
                        "message": f"{name} has accelerators but its image lacks "
                        + ", ".join(f"{k}={v}" for k, v in lacking.items()),
                        "fix": f"openstack image set {wanted} IMAGE (GPUs with large BARs need q35 and UEFI)",
                    }
                )
        if report["outcome"] == "scheduler_error":
            findings.append(
                {
                    "kind": "scheduler_crash",
                    "flavor": name,
                    "message": f"{name}: {report['message']}",
                    "fix": "correct the trait name (see did you mean); a dedicated flavor whose query Placement "
                    "rejects makes Nova's scheduler fail with a TypeError instead of NoValidHost",
                }
            )
    return {"flavors": reports, "findings": findings, "ok": all(r["ok"] for r in reports)}


def _instances(report: dict) -> str:
    counts = {h: n for h, n in report["max_instances"].items() if h in report["after_filters"]["hosts"]}
    return str(sum(counts.values()))


def _why(report: dict) -> str:
    """Why the row is what it is: Placement's or Nova's reason, a filter's, or the declaration it misses."""
    kept = report["after_filters"]["hosts"]
    if report.get("expect") == "unplaceable" and kept:
        return f"fits on {', '.join(sorted(kept))} although declared expect: unplaceable"
    words = _reason(report)
    if not report.get("ok") and report.get("expect") != "unplaceable" and kept:
        short = f"fits on {len(kept)} host(s), min_hosts is {report.get('min_hosts', 1)}"
        return f"{short}; {words}" if words else short
    return words


def _reason(report: dict) -> str:
    reason = report.get("reason")
    removed = report["after_filters"]["removed"]
    if reason:
        words = f"{reason['code']}: {reason['detail']}"
        if reason.get("did_you_mean") and "did you mean" not in words.lower():
            words += f" (did you mean {' or '.join(reason['did_you_mean'])}?)"
        return words
    if removed:
        host, why = sorted(removed.items())[0]
        more = f" (+{len(removed) - 1} more)" if len(removed) > 1 else ""
        return f"{host}: {why}{more}"
    return ""


def _table_input_problem(result) -> str | None:
    """Why ``result`` is not validate_flavors' result as flavor_table reads it; None when it is."""
    if not isinstance(result, Mapping):
        return f"result is {kind_of(result)}; give validate_flavors' result (a mapping with flavors and findings)"
    flavors, findings = result.get("flavors") or [], result.get("findings") or []
    if not isinstance(flavors, list) or not isinstance(findings, list):
        return f"flavors is {kind_of(flavors)} and findings {kind_of(findings)}; validate_flavors gives two lists"
    for index, report in enumerate(flavors):
        after = report.get("after_filters") if isinstance(report, Mapping) else None
        if not isinstance(after, Mapping) or not isinstance(after.get("hosts"), list) or "name" not in report:
            return f"flavors[{index}] is not a flavor report (a mapping with name and after_filters.hosts)"
    for index, finding in enumerate(findings):
        if not isinstance(finding, Mapping) or not all(
            isinstance(finding.get(k), str) for k in ("kind", "message", "fix")
        ):
            return f"findings[{index}] is not a finding (a mapping with kind, message and fix texts)"
    return None


def flavor_table(result: Mapping) -> list[str]:
    """The validation as table lines, then one line per finding; a row that fails always says why, whole."""
    problem = _table_input_problem(result)
    if problem:
        raise FitOptionError(f"flavor_table: {problem}")
    rows = [("", "flavor", "fits on", "instances", "Placement", "why not / did you mean")]
    for report in result.get("flavors") or []:
        kept = report["after_filters"]["hosts"]
        expected = " (expected)" if report.get("expect") == "unplaceable" else ""
        rows.append(
            (
                "ok" if report.get("ok") else "FAIL",
                str(report["name"]),
                f"{len(kept)} host(s){expected}",
                _instances(report),
                _placement_cell(report),
                _why(report),
            )
        )
    fixed = len(rows[0]) - 1
    widths = [max(len(row[i]) for row in rows) for i in range(fixed)]
    lines = [" | ".join(cell.ljust(widths[i]) if i < fixed else cell for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths) + "-+-" + "-" * 22)
    for finding in result.get("findings") or []:
        lines.append(f"finding {finding['kind']}: {finding['message']}; fix: {finding['fix']}")
    return lines


def compute_flavor_keys(flavor: Mapping) -> dict:
    """A flavor as openstacksdk / compute_flavor_info returns it, reduced to compute_flavor's keys."""
    if not isinstance(flavor, Mapping):
        raise FitOptionError(f"a cloud flavor must be a dict, got {kind_of(flavor)}")
    specs = flavor.get("extra_specs") or {}
    if not isinstance(specs, Mapping):
        raise FitOptionError(
            f"flavor {shown(flavor.get('name'), 40)}: extra_specs is {kind_of(specs)}; a cloud flavor's extra specs "
            "are a mapping of key to value"
        )
    swap = flavor.get("swap")
    return {
        "name": flavor.get("name"),
        "vcpus": flavor.get("vcpus"),
        "ram": flavor.get("ram"),
        "disk": flavor.get("disk"),
        "ephemeral": flavor.get("ephemeral") or flavor.get("OS-FLV-EXT-DATA:ephemeral") or 0,
        "swap": 0 if swap in (None, "") else swap,
        "extra_specs": dict(specs),
    }
