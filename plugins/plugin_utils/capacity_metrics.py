# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A flavor_fit or capacity_plan report in the Prometheus text exposition format (version 0.0.4).

``capacity_metrics(report)`` takes what the ``flavor_fit`` lookup returns (a list of reports), what
``validate_flavors`` returns (its ``flavors``), or what the ``capacity_plan`` lookup returns (one plan),
and returns the exposition text: one ``# HELP`` and ``# TYPE`` per family, every family a gauge, every
name starting with ``accel_``. The families are listed in docs/capacity.md. Label values are escaped as
the format says (backslash, double quote, newline), so any flavor or host name is safe. Every series is
written once: a flavor named in two demand entries gives one series (two different values for one series
are refused), and every value is a whole number (NaN, a float or text is refused by its series).
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import MAX_INT, kind_of
from ansible_collections.accel.openstack.plugins.module_utils._inputs import shown as shown_value
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import GENERAL_CLASSES

PLAN_KEYS = ("placed", "unplaced", "hosts", "left", "stranded", "headroom")
FIT_KEYS = ("name", "outcome", "max_instances", "after_filters")
# Why a flavor that Placement returns hosts for is still not placeable: every host was removed by a
# modelled Nova filter (flavor_fit gives no reason code then).
FILTERED = "nova_filters"


class MetricsInputError(AccelError):
    """A report that is neither a flavor_fit nor a capacity_plan report."""


def _escape(value) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class _Families:
    def __init__(self):
        self.families: dict[str, tuple[str, list[str]]] = {}
        self.series: dict[str, int] = {}

    def add(self, name: str, value, **labels) -> None:
        """One sample; a series already written with the same value is written once (a flavor named in two
        demand entries is checked twice with one answer); with another value it is refused."""
        family = self.families[name]
        shown = ",".join(f'{key}="{_escape(labels[key])}"' for key in labels)
        series = f"{name}{{{shown}}}" if labels else name
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, int) or abs(value) > MAX_INT:
            raise MetricsInputError(
                f"capacity_metrics: {series} is {kind_of(value)} ({shown_value(value)}); the report holds a count "
                f"there: give a whole number from {-MAX_INT:,} to {MAX_INT:,}"
            )
        if series in self.series:
            if self.series[series] != value:
                raise MetricsInputError(
                    f"capacity_metrics: {series} has two values ({self.series[series]} and {value}); the report "
                    "names one flavor, host or class twice with different answers: give one report per flavor"
                )
            return
        self.series[series] = value
        family[1].append(f"{series} {value}")

    def declare(self, name: str, help_text: str) -> None:
        self.families.setdefault(name, (help_text, []))

    def text(self) -> str:
        lines = []
        for name, (help_text, samples) in self.families.items():
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} gauge")
            lines.extend(samples)
        return "\n".join(lines) + "\n"


def _fit_metrics(reports: list, out: _Families) -> None:
    out.declare("accel_flavor_capacity_instances", "Instances of the flavor that fit, each flavor alone.")
    out.declare("accel_flavor_placeable", "1 when the flavor fits at least one host after Nova's filters.")
    out.declare("accel_flavor_hosts", "Hosts the flavor fits after Nova's filters.")
    out.declare("accel_flavor_reason", "1 for the reason code of a flavor that fits nowhere.")
    for index, report in enumerate(reports):
        if not isinstance(report, Mapping) or any(key not in report for key in FIT_KEYS):
            raise MetricsInputError(
                f"capacity_metrics: report {index} is not a flavor_fit report (it needs {', '.join(FIT_KEYS)})"
            )
        name = report["name"]
        kept = list((report.get("after_filters") or {}).get("hosts") or ())
        counts = report.get("max_instances") or {}
        capacity = 0
        for host in kept:
            count = counts.get(host) or 0 if isinstance(counts, Mapping) else None
            if isinstance(count, bool) or not isinstance(count, int):
                raise MetricsInputError(
                    f"capacity_metrics: report {index} ({shown_value(name)}): max_instances of host "
                    f"{shown_value(host)} is {kind_of(count)} ({shown_value(count)}); give a whole number"
                )
            capacity += count
        placeable = report["outcome"] == "fits" and bool(kept)
        out.add("accel_flavor_capacity_instances", capacity, flavor=name)
        out.add("accel_flavor_placeable", placeable, flavor=name)
        out.add("accel_flavor_hosts", len(kept), flavor=name)
        reason = report.get("reason")
        code = reason.get("code") if isinstance(reason, Mapping) else None
        if code is None and not placeable:
            code = FILTERED
        if code is not None:
            out.add("accel_flavor_reason", 1, flavor=name, code=code)


def _plan_metrics(plan: Mapping, out: _Families) -> None:
    out.declare("accel_capacity_placed_instances", "Instances of the demand placed, per flavor.")
    out.declare("accel_capacity_unplaced_instances", "Instances of the demand with no valid host, per flavor.")
    out.declare("accel_capacity_reason", "1 for the reason code of a flavor with unplaced instances.")
    out.declare("accel_capacity_host_instances", "Instances of the demand placed on the host, per flavor.")
    out.declare("accel_capacity_free", "Free amount of the resource class on the host after the demand.")
    out.declare(
        "accel_capacity_stranded_devices",
        "Free devices of the class on the host that no flavor of the demand can use any more.",
    )
    out.declare("accel_capacity_headroom_failures", "Hosts lost in the headroom check.")
    out.declare("accel_capacity_headroom_survives", "1 when every lost instance of the demand fits elsewhere.")
    out.declare("accel_capacity_headroom_lost_instances", "Instances that no longer fit when the hosts are lost.")
    out.declare(
        "accel_capacity_refused_builds", "Builds nova-compute refuses on a host the scheduler chose, per flavor."
    )
    out.declare(
        "accel_capacity_drawn_instances",
        "Instances whose host Nova draws at random among the host_subset_size best, per flavor.",
    )
    for name, count in (plan.get("placed") or {}).items():
        out.add("accel_capacity_placed_instances", count, flavor=name)
    for name, count in (plan.get("unplaced") or {}).items():
        out.add("accel_capacity_unplaced_instances", count, flavor=name)
    for name, reason in (plan.get("reasons") or {}).items():
        out.add("accel_capacity_reason", 1, flavor=name, code=reason.get("code"))
    for host, flavors in (plan.get("hosts") or {}).items():
        for name, count in flavors.items():
            out.add("accel_capacity_host_instances", count, host=host, flavor=name)
    stranded = plan.get("stranded") or {}
    for host, classes in (plan.get("left") or {}).items():
        for rc, free in classes.items():
            out.add("accel_capacity_free", free, host=host, resource_class=rc)
        for rc in classes:
            if rc not in GENERAL_CLASSES:
                count = ((stranded.get(host) or {}).get(rc) or {}).get("free", 0)
                out.add("accel_capacity_stranded_devices", count, host=host, resource_class=rc)
    headroom = plan.get("headroom") or {}
    out.add("accel_capacity_headroom_failures", headroom.get("failures") or 0)
    out.add("accel_capacity_headroom_survives", bool(headroom.get("survives", True)))
    refused, drawn = plan.get("refused") or {}, plan.get("drawn") or {}
    for name in plan.get("placed") or {}:
        out.add("accel_capacity_headroom_lost_instances", (headroom.get("lost") or {}).get(name, 0), flavor=name)
        out.add("accel_capacity_refused_builds", (refused.get(name) or {}).get("attempts", 0), flavor=name)
        out.add("accel_capacity_drawn_instances", drawn.get(name, 0), flavor=name)
    _failure_metrics(plan, out)


def _failure_metrics(plan: Mapping, out: _Families) -> None:
    """The named failure, the worst case and the what-if options, when the plan has them."""
    placed = plan.get("placed") or {}
    for key, family, words in (
        ("failure", "accel_capacity_failure", "the named hosts or aggregate are lost"),
        ("worst_case", "accel_capacity_worst_case", "the worst combination of hosts is lost"),
    ):
        answer = plan.get(key)
        if not isinstance(answer, Mapping):
            continue
        failure = answer.get("worst") if key == "worst_case" else answer
        if not isinstance(failure, Mapping):
            continue
        out.declare(f"{family}_hosts", f"Hosts lost when {words}.")
        out.declare(f"{family}_survives", f"1 when every instance fits elsewhere when {words}.")
        out.declare(f"{family}_lost_instances", f"Instances of the demand that no longer fit when {words}, per flavor.")
        out.add(f"{family}_hosts", len(failure.get("hosts") or ()))
        out.add(f"{family}_survives", bool(failure.get("survives")))
        lost = failure.get("lost") or {}
        for name in placed:
            out.add(f"{family}_lost_instances", (lost.get(name) or {}).get("count", 0), flavor=name)
    options = plan.get("what_if")
    if options:
        out.declare(
            "accel_capacity_what_if_placed_instances", "Instances of the demand placed with the option's hosts."
        )
        out.declare("accel_capacity_what_if_stranded_devices", "Devices of the class stranded with the option's hosts.")
        for option in options:
            for name, count in (option.get("placed") or {}).items():
                out.add("accel_capacity_what_if_placed_instances", count, option=option.get("name"), flavor=name)
            for rc, count in (option.get("stranded") or {}).items():
                out.add("accel_capacity_what_if_stranded_devices", count, option=option.get("name"), resource_class=rc)


def capacity_metrics(report) -> str:
    """The report as Prometheus text exposition (see the module docstring)."""
    out = _Families()
    if isinstance(report, Mapping) and all(key in report for key in PLAN_KEYS):
        _plan_metrics(report, out)
    elif isinstance(report, Mapping) and isinstance(report.get("flavors"), list):
        _fit_metrics(report["flavors"], out)
    elif isinstance(report, list | tuple):
        if len(report) == 1 and isinstance(report[0], Mapping) and all(key in report[0] for key in PLAN_KEYS):
            _plan_metrics(report[0], out)  # the capacity_plan lookup's one-element list
        else:
            _fit_metrics(list(report), out)
    else:
        raise MetricsInputError(
            "capacity_metrics: give a flavor_fit report (a list), validate_flavors' result or a capacity_plan "
            f"plan (a dict with {', '.join(PLAN_KEYS)}), got {kind_of(report)}"
        )
    return out.text()
