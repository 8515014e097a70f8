# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's area ``migration``: each instance holding a GPU or PCI device that cannot live-migrate off its
host (``migration_blocked``, with Nova's reason and what to change) or that could but has no other host with
room now (``migration_no_target``). Read from the snapshot's ``allocations``; without them the area is silent."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding
from ansible_collections.accel.openstack.plugins.plugin_utils.migration import Migration, shown


def check_migration(cloud) -> list[dict]:
    if not cloud.fleet.get("allocations"):
        return []
    model = Migration(
        cloud.fleet,
        hosts=cloud.hosts,
        deployed_config=cloud.deployed,
        hypervisor_hostnames=cloud.nodenames,
        servers=None,
        pci_aliases=cloud.aliases if cloud.aliases else None,
    )
    found = []
    for instance in model.instances():
        who = f"instance {instance['uuid']} on {shown(instance['host'])}"
        if instance["blockers"]:
            found.append(
                finding(
                    instance["host"],
                    "migration_blocked",
                    f"{who} cannot live-migrate: " + "; ".join(b["detail"] for b in instance["blockers"]),
                    "; ".join(dict.fromkeys(b["fix"] for b in instance["blockers"])),
                )
            )
            continue
        answer = model.targets(instance)
        if not answer["targets"]:
            others = "; ".join(
                f"{shown(h)}: {w}" for h, w in sorted(answer["why_not"].items()) if h != instance["host"]
            )
            found.append(
                finding(
                    instance["host"],
                    "migration_no_target",
                    f"{who} has no other host to live-migrate to now: {others or 'there is no other host'}",
                    "free or add a host with the same device (and mdev type) before draining this one",
                )
            )
    return found
