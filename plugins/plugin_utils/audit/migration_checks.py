# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's area ``migration``: each instance holding a GPU or PCI device that cannot live-migrate off its
host (``migration_blocked``, with Nova's reason and what to change) or that could but has no other host with
room now (``migration_no_target``). Read from the snapshot's ``allocations``; without them the area is silent.

``migration_blocked`` is a warning when the instance's devices are of a live-migratable kind (a vGPU, a PCI
device tagged ``live_migratable``) and a setting or a known version stands in the way; it is info when the
device itself is not live-migratable (plain passthrough, a Cyborg accelerator), the usual state of a GPU
cloud, or when only what is not known (a version, the aliases, an mdev type) stands in the way."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.plugin_utils.audit.findings import finding
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor import parse_aliases
from ansible_collections.accel.openstack.plugins.plugin_utils.migration import Migration, MigrationInputError, shown

# blockers that say the device itself is not live-migratable (then the finding is info)
DEVICE_KIND = ("device_not_live_migratable", "accelerator")
# blockers that are a definite, fixable setting or version (a warning unless the device kind blocks anyway)
FIXABLE = ("post_copy_permitted", "alias_not_live_migratable", "version_too_old")


def _aliases_read(cloud) -> bool:
    """Whether the config the audit takes the aliases from (nova-api's, else a compute host's) was read: then
    its aliases, none included, are the cloud's. Aliases Nova refuses count as unknown here (the area nova
    reports them)."""
    return any(services.get("api") or services.get("compute") for services in cloud.deployed.values())


def check_migration(cloud) -> list[dict]:
    if not cloud.fleet.get("allocations"):
        return []
    try:
        model = Migration(
            cloud.fleet,
            hosts=cloud.hosts,
            deployed_config=cloud.deployed,
            hypervisor_hostnames=cloud.nodenames,
            servers=cloud.instances,
            pci_aliases=cloud.aliases if _aliases_read(cloud) and parse_aliases(cloud.aliases)[1] is None else None,
        )
    except MigrationInputError:
        return []  # allocations Placement would not hold (the lookup says what is wrong); nothing to judge
    found = []
    for instance in model.instances():
        who = f"instance {instance['uuid']} on {shown(instance['host'])}"
        if instance["blockers"]:
            codes = {b["code"] for b in instance["blockers"]}
            warn = bool(codes & set(FIXABLE)) and not codes & set(DEVICE_KIND)
            found.append(
                finding(
                    instance["host"],
                    "migration_blocked",
                    f"{who} cannot live-migrate: " + "; ".join(b["detail"] for b in instance["blockers"]),
                    "; ".join(dict.fromkeys(b["fix"] for b in instance["blockers"])),
                    severity="warning" if warn else "info",
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
