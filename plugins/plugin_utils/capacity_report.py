# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One self-contained HTML page for the validate and capacity stages: tables and inline SVG, no script.

``capacity_html(fleet, flavors=None, plan=None, title=...)`` renders, with Jinja2 (autoescaped):

- the flavor table of a flavor_fit report (outcome, hosts after Nova's filters, instances, reason);
- the plan's table (placed, unplaced, reason) and its headroom, when a capacity_plan plan is given;
- per host, one bar per accelerator class (every class but VCPU, PCPU, MEMORY_MB and DISK_GB): used,
  free and stranded devices. Without a plan the figures are the fleet's (capacity and usage of the
  snapshot); with one, what the plan leaves (``left``) and strands (``stranded``).

The page loads nothing (no script, no stylesheet or image from elsewhere), so it opens from a CI artefact.
"""

from __future__ import annotations

from collections.abc import Mapping

from jinja2 import Environment

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of
from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import capacity_table
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_fit import GENERAL_CLASSES
from ansible_collections.accel.openstack.plugins.plugin_utils.fleet import Fleet, FleetError

BAR_WIDTH = 360
# At most this many bars (host and class) are drawn (the tables are complete; a page for 10,000 hosts
# stays readable).
MAX_BARS = 500

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{ title }}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; background: #fff; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #eee; }
td.n { text-align: right; }
.fits { color: #176117; } .fail { color: #a11; }
.legend span { display: inline-block; margin-right: 1.2em; }
.sw { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em; vertical-align: middle; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
{% if flavors %}
<h2>Flavors</h2>
<table id="flavors">
<tr><th>flavor</th><th>outcome</th><th>hosts after filters</th><th>instances</th><th>why not</th></tr>
{% for row in flavors %}
<tr><td>{{ row.name }}</td><td class="{{ 'fits' if row.placeable else 'fail' }}">{{ row.outcome }}</td>
<td class="n">{{ row.hosts }}</td><td class="n">{{ row.instances }}</td><td>{{ row.why }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% if plan %}
<h2>The demand placed together ({{ plan.weigher }}, {{ plan.order | join(', ') }})</h2>
<table id="plan">
<tr><th>flavor</th><th>placed</th><th>unplaced</th><th>why not</th></tr>
{% for row in plan.rows %}
<tr><td>{{ row.name }}</td><td class="n">{{ row.placed }}</td><td class="n">{{ row.unplaced }}</td>
<td>{{ row.why }}</td></tr>
{% endfor %}
</table>
<p id="headroom">{{ plan.headroom }}</p>
{% for line in plan.failures %}<p class="failure">{{ line }}</p>
{% endfor %}
{% if plan.what_if %}
<h2>What if: the demand with other hardware</h2>
<table id="what_if">
<tr><th>flavor</th><th>plan</th>{% for option in plan.what_if.options %}<th>{{ option }}</th>{% endfor %}</tr>
{% for row in plan.what_if.rows %}
<tr><td>{{ row.name }}</td><td>{{ row.plan }}</td>{% for cell in row.cells %}<td>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}
</table>
{% endif %}
{% endif %}
<h2>Accelerators per host</h2>
<p class="legend"><span><span class="sw" style="background:#4a78b5"></span>used</span>
<span><span class="sw" style="background:#9fd39f"></span>free</span>
<span><span class="sw" style="background:#e08a3c"></span>stranded (free, but no flavor of the demand fits)</span></p>
{% if not bars %}<p>No host has accelerators.</p>{% endif %}
<svg xmlns="http://www.w3.org/2000/svg" id="bars" width="{{ width + 640 }}" height="{{ bars | length * 22 + 10 }}"
 role="img" aria-label="used, free and stranded accelerators per host">
{% for bar in bars %}
<g transform="translate(0,{{ loop.index0 * 22 + 5 }})">
<text x="0" y="14" font-size="12">{{ bar.host }} {{ bar.resource_class }}</text>
<rect class="used" x="300" y="2" width="{{ bar.used_w }}" height="16" fill="#4a78b5">
<title>used {{ bar.used }}</title></rect>
<rect class="free" x="{{ 300 + bar.used_w }}" y="2" width="{{ bar.free_w }}" height="16" fill="#9fd39f">
<title>free {{ bar.free }}</title></rect>
<rect class="stranded" x="{{ 300 + bar.used_w + bar.free_w }}" y="2" width="{{ bar.stranded_w }}" height="16"
 fill="#e08a3c"><title>stranded {{ bar.stranded }}</title></rect>
<text x="{{ 310 + width }}" y="14" font-size="12">{{ bar.used }} used, {{ bar.free }} free,
 {{ bar.stranded }} stranded of {{ bar.capacity }}</text>
</g>
{% endfor %}
</svg>
{% if hidden %}<p>{{ hidden }} more bar(s) (host and accelerator class) are not drawn.</p>{% endif %}
</body>
</html>
"""


class ReportInputError(AccelError):
    """Input the HTML report cannot use; the message names it."""


def _why(reason) -> str:
    if not isinstance(reason, Mapping):
        return ""
    words = f"{reason.get('code')}: {reason.get('detail')}"
    if reason.get("did_you_mean"):
        words += f" (did you mean {' or '.join(map(str, reason['did_you_mean']))}?)"
    return words


def _flavor_rows(flavors) -> list[dict]:
    rows = []
    for index, report in enumerate(flavors or ()):
        if not isinstance(report, Mapping) or "max_instances" not in report or "after_filters" not in report:
            raise ReportInputError(f"capacity_html: flavors[{index}] is not a flavor_fit report")
        kept = list(report["after_filters"].get("hosts") or ())
        rows.append(
            {
                "name": report.get("name"),
                "outcome": report.get("outcome"),
                "placeable": report.get("outcome") == "fits" and bool(kept),
                "hosts": len(kept),
                "instances": sum(int(report["max_instances"].get(h) or 0) for h in kept),
                "why": _why(report.get("reason")),
            }
        )
    return rows


def _plan_view(plan: Mapping) -> dict:
    if not all(key in plan for key in ("placed", "unplaced", "left", "stranded", "headroom")):
        raise ReportInputError("capacity_html: plan is not what accel.openstack.capacity_plan returns")
    reasons = plan.get("reasons") or {}
    rows = [
        {"name": name, "placed": n, "unplaced": plan["unplaced"].get(name, 0), "why": _why(reasons.get(name))}
        for name, n in plan["placed"].items()
    ]
    headroom = plan["headroom"]
    if headroom.get("failures"):
        lost = ", ".join(f"{k}: {v}" for k, v in (headroom.get("lost") or {}).items())
        words = f"Losing {headroom['failures']} host(s) ({', '.join(headroom.get('hosts_lost') or ())}): " + (
            "every instance fits elsewhere." if headroom.get("survives") else f"instances lost ({lost})."
        )
    else:
        words = "No headroom check asked (failures: 0)."
    failures = []
    if plan.get("failure") or plan.get("worst_case"):
        table = capacity_table(plan)
        failures = [line.strip() for line in table if line.startswith(("losing ", "worst case ", "  "))]
    return {
        "rows": rows,
        "headroom": words,
        "weigher": plan.get("weigher"),
        "order": plan.get("order") or [],
        "failures": failures,
        "what_if": _what_if_view(plan),
    }


def _what_if_view(plan: Mapping) -> dict | None:
    """The what-if options side by side: per flavor the instances placed, with how many more than the plan,
    then the devices each option leaves stranded."""
    options = plan.get("what_if")
    if not options:
        return None
    rows = []
    for name, n in plan["placed"].items():
        cells = []
        for option in options:
            placed = (option.get("placed") or {}).get(name, 0)
            added = (option.get("added") or {}).get(name, 0)
            cells.append(f"{placed} ({added:+d})")
        rows.append({"name": name, "plan": str(n), "cells": cells})
    stranded = []
    for option in options:
        parts = [f"{count} {rc}" for rc, count in (option.get("stranded") or {}).items()]
        stranded.append(", ".join(parts) or "none")
    rows.append({"name": "stranded devices", "plan": "", "cells": stranded})
    headers = [
        f"{o.get('name')} ({o.get('hosts_added')} host(s){', alone' if o.get('alone') else ''})" for o in options
    ]
    return {"options": headers, "rows": rows}


def _bars(fleet: Fleet, plan: Mapping | None) -> tuple[list[dict], int]:
    bars = []
    left = (plan or {}).get("left") or {}
    stranded = (plan or {}).get("stranded") or {}
    for root in fleet.roots:
        for rc, entries in sorted(fleet.tree_classes.get(root.uuid, {}).items()):
            if rc in GENERAL_CLASSES:
                continue
            capacity = sum(inv.capacity for _p, inv in entries)
            if plan is not None and rc in (left.get(root.name) or {}):
                free = int(left[root.name][rc])
            else:
                free = sum(inv.free for _p, inv in entries)
            lost = int(((stranded.get(root.name) or {}).get(rc) or {}).get("free", 0))
            bars.append(
                {
                    "host": root.name,
                    "resource_class": rc,
                    "capacity": capacity,
                    "used": max(capacity - free, 0),
                    "free": free - lost,
                    "stranded": lost,
                }
            )
    hidden = max(len(bars) - MAX_BARS, 0)
    bars = bars[:MAX_BARS]
    for entry in bars:
        scale = BAR_WIDTH / max(entry["capacity"], 1)
        entry["used_w"] = round(entry["used"] * scale, 1)
        entry["free_w"] = round(entry["free"] * scale, 1)
        entry["stranded_w"] = round(entry["stranded"] * scale, 1)
    return bars, hidden


def capacity_html(fleet, flavors=None, plan=None, title: str = "accel.openstack capacity") -> str:
    """The page (see the module docstring)."""
    try:
        index = Fleet.from_snapshot(fleet)
    except (FleetError, TypeError, KeyError, AttributeError) as exc:
        raise ReportInputError(f"capacity_html: fleet is not a fleet snapshot ({exc})") from exc
    if plan is not None and not isinstance(plan, Mapping):
        raise ReportInputError(f"capacity_html: plan must be a dict, got {kind_of(plan)}")
    if flavors is not None and (isinstance(flavors, Mapping | str) or not isinstance(flavors, list | tuple)):
        if isinstance(flavors, Mapping) and isinstance(flavors.get("flavors"), list):
            flavors = flavors["flavors"]  # validate_flavors' result
        else:
            raise ReportInputError("capacity_html: flavors must be a flavor_fit report (a list)")
    bars, hidden = _bars(index, plan)
    template = Environment(autoescape=True, keep_trailing_newline=True).from_string(_PAGE)
    return template.render(
        title=str(title),
        flavors=_flavor_rows(flavors),
        plan=_plan_view(plan) if plan is not None else None,
        bars=bars,
        hidden=hidden,
        width=BAR_WIDTH,
    )
