# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Flavor findings: the catalog against the cloud's Placement and the aliases nova-api reads.

Each flavor goes through the validate stage's own check (``validate_flavors``: Nova's translation,
Placement's answer from the snapshot, Nova's filters after Placement).
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_validation import validate_flavors


def _sold_out(name: str, report: dict, cloud) -> dict:
    """A flavor that fits an empty host but not today's usage: capacity, not a defect."""
    blocking = []
    for root in sorted(report.get("why_not") or {}):
        record = cloud.roots.get(root) or {}
        used = {rc: n for rc, n in (record.get("usages") or {}).items() if n}
        for child in cloud.children.get(record.get("uuid"), []):
            for rc, n in (child.get("usages") or {}).items():
                if n:
                    used[rc] = used.get(rc, 0) + n
        if used:
            blocking.append(f"{root} uses " + ", ".join(f"{rc} {n}" for rc, n in sorted(used.items())))
    shown = "; ".join(blocking[:4]) + (f"; and {len(blocking) - 4} more host(s)" if len(blocking) > 4 else "")
    return finding(
        None,
        "flavor_sold_out",
        f"flavor {name} is sold out today: it fits an empty host, but not the usage the fleet reports"
        + (f" ({shown})" if shown else ""),
        "nothing is wrong with the flavor; free or add capacity (playbooks/capacity.yml plans it) if it must be "
        "bookable now",
    )


def check_flavors(cloud) -> list[dict]:
    if not cloud.flavors:
        return []
    result = validate_flavors(
        cloud.flavor_fleet(),
        list(cloud.flavors),
        pci_aliases=list(cloud.aliases),
        pci_in_placement=cloud.pci_in_placement,
        **cloud.flavor_options,
    )
    found: list[dict] = []
    for report in result["flavors"]:
        name = report["name"]
        reason = report.get("reason") or {}
        detail = reason.get("detail") or report.get("message") or ""
        hint = ""
        if reason.get("did_you_mean") and "did you mean" not in detail.lower():
            hint = f" (did you mean {', '.join(reason['did_you_mean'][:3])}?)"
        if report["outcome"] in ("invalid_flavor", "scheduler_error"):
            found.append(
                finding(
                    None,
                    "flavor_invalid",
                    f"flavor {name}: Nova refuses it: {report.get('message') or detail}{hint}",
                    f"correct the flavor's extra specs (openstack flavor set {name} --property ...), or retire it",
                )
            )
        elif reason.get("code") == "placement_overload":
            continue  # reported once, as Placement's (below)
        elif reason.get("code") == "in_use":
            found.append(_sold_out(name, report, cloud))
        elif report["outcome"] != "fits" or not report["after_filters"]["hosts"]:
            removed = report["after_filters"].get("removed") or {}
            why = detail or "; ".join(f"{h}: {r}" for h, r in list(removed.items())[:3])
            found.append(
                finding(
                    None,
                    "flavor_unplaceable",
                    f"flavor {name} fits no host today ({report['outcome']}): {why}{hint}",
                    "see playbooks/validate.yml's table for each host's reason; fix the flavor, the aliases or the "
                    "hosts it asks for",
                )
            )
    for item in result["findings"]:
        if item["kind"] == "general_on_gpu_host":
            found.append(finding(None, "gpu_host_unreserved", item["message"], item["fix"]))
        elif item["kind"] in ("placement_overload", "placement_narrow"):
            found.append(finding(None, item["kind"], f"flavor {item['flavor']}: {item['message']}", item["fix"]))
    return found
