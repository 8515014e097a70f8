# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cyborg device profiles: validated as Cyborg validates them, checked against a fleet snapshot.

A device profile is a name and a list of groups; each group maps ``resources:<RC>`` to an amount,
``trait:<TRAIT>`` to ``required`` / ``forbidden`` and ``accel:<key>`` to Cyborg's own attributes.
Nova turns each group into one numbered request group, so every group must fit on one provider.
``fleet_problems()`` finds the classic NoValidHost before any server is booted: a profile asking for a
trait or resource class that no provider of the fleet has, with the nearest names it does have.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.client import CyborgClient, CyborgError
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import is_custom
from ansible_collections.accel.openstack.plugins.module_utils._names.inventory import capacity
from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import did_you_mean

_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")

PROFILE_NAME_RE = re.compile(r"^[a-zA-Z0-9-_]+\Z")
GROUP_KEY_RE = re.compile(r"^(resources:|trait:|accel:)")
TRAIT_VALUES = ("required", "forbidden")
# The non-custom resource classes Cyborg's API accepts in a profile.
CYBORG_STANDARD_CLASSES = ("FPGA", "GPU", "VGPU", "PGPU")


def validate_profile(name: Any, groups: Any) -> tuple[list[dict], list[str]]:
    """Normalise ``groups`` (spaces around names stripped, as Cyborg does) and list what Cyborg refuses."""
    errors: list[str] = []
    if not name:
        errors.append("name is empty; give the device profile a name")
    elif not isinstance(name, str) or not PROFILE_NAME_RE.match(name):
        errors.append(f"name {name!r} must match ^[a-zA-Z0-9-_]+$ (letters, digits, '-' and '_')")
    if not groups or not isinstance(groups, list):
        errors.append("groups is empty; give at least one group such as {'resources:PGPU': '1'}")
        return [], errors
    normalised = []
    for index, group in enumerate(groups):
        where = f"groups[{index}]"
        if not isinstance(group, dict) or not group:
            errors.append(f"{where} must be a non-empty mapping of 'resources:<RC>'/'trait:<TRAIT>'/'accel:<key>'")
            continue
        out: dict[str, str] = {}
        for key, value in group.items():
            key = str(key)
            if not GROUP_KEY_RE.match(key):
                errors.append(f"{where}: key {key!r} must start with resources:, trait: or accel:")
                continue
            prefix, _sep, rest = key.partition(":")
            rest = rest.strip(" ")
            if prefix == "trait":
                if not is_custom(rest):
                    errors.append(f"{where}: trait {rest!r} must be a custom trait (CUSTOM_...); Cyborg refuses others")
                if value not in TRAIT_VALUES:
                    errors.append(f"{where}: trait:{rest} is {value!r}; it must be 'required' or 'forbidden'")
            elif prefix == "resources":
                if rest not in CYBORG_STANDARD_CLASSES and not is_custom(rest):
                    errors.append(
                        f"{where}: resource class {rest!r} is not one Cyborg accepts "
                        f"({', '.join(CYBORG_STANDARD_CLASSES)} or CUSTOM_...)"
                    )
                try:
                    int(value)
                except (TypeError, ValueError):
                    errors.append(f"{where}: resources:{rest} amount {value!r} is not an integer")
            out[f"{prefix}:{rest}"] = str(value)
        normalised.append(out)
    return normalised, errors


def group_needs(group: dict) -> tuple[dict[str, int], set[str], set[str]]:
    resources = {k.split(":", 1)[1]: int(v) for k, v in group.items() if k.startswith("resources:")}
    required = {k.split(":", 1)[1] for k, v in group.items() if k.startswith("trait:") and v == "required"}
    forbidden = {k.split(":", 1)[1] for k, v in group.items() if k.startswith("trait:") and v == "forbidden"}
    return resources, required, forbidden


def fleet_problems(groups: list[dict], fleet: dict) -> list[str]:
    """Why each group of the profile would find no provider in ``fleet`` (a fleet snapshot)."""
    providers = fleet.get("resource_providers", []) if isinstance(fleet, dict) else []
    classes = {rc for p in providers for rc in p.get("inventories", {})}
    traits = {t for p in providers for t in p.get("traits", [])}
    problems = []
    for index, group in enumerate(groups):
        resources, required, forbidden = group_needs(group)
        missing = False
        for rc in sorted(resources):
            if rc not in classes:
                missing = True
                problems.append(
                    f"groups[{index}]: no provider of the fleet has resource class {rc}{did_you_mean(rc, classes)}"
                )
        for trait in sorted(required):
            if trait not in traits:
                missing = True
                problems.append(
                    f"groups[{index}]: no provider of the fleet has trait {trait}{did_you_mean(trait, traits)}"
                )
        if missing:
            continue
        fits = [
            p
            for p in providers
            if all(rc in p.get("inventories", {}) and _free(p, rc) >= amount for rc, amount in resources.items())
            and required <= set(p.get("traits", []))
            and not forbidden & set(p.get("traits", []))
        ]
        if not fits:
            problems.append(
                f"groups[{index}]: every name exists, but no single provider has "
                f"{', '.join(f'{rc}:{n}' for rc, n in sorted(resources.items())) or 'no resources'}"
                f"{' with ' + ', '.join(sorted(required)) if required else ''}"
                f"{' without ' + ', '.join(sorted(forbidden)) if forbidden else ''} (free capacity counted); "
                "a group must fit on one provider"
            )
    return problems


def _free(provider: dict, rc: str) -> int:
    inv = provider["inventories"][rc]
    return min(capacity(inv) - provider.get("usages", {}).get(rc, 0), inv.get("max_unit", inv["total"]))


def converge_profile(
    client: CyborgClient,
    name: str,
    groups: list | None,
    description: str | None,
    state: str,
    check_mode: bool,
    fleet: dict | None = None,
) -> dict:
    """Create, replace (Cyborg cannot update a profile) or delete one device profile."""
    warnings: list[str] = []
    if state == "present":
        groups, errors = validate_profile(name, groups)
        if errors:
            raise CyborgError(f"device profile {name}: " + "; ".join(errors))
        if fleet is not None:
            problems = fleet_problems(groups, fleet)
            if problems:
                raise CyborgError(
                    f"device profile {name} would end in NoValidHost: "
                    + "; ".join(problems)
                    + "; fix the profile or register the providers (accel.openstack.placement_provider)"
                )
    existing = client.find(name)
    if existing is not None and (not isinstance(existing, dict) or not isinstance(existing.get("groups"), list)):
        shape = "no groups" if isinstance(existing, dict) and "groups" not in existing else "groups that are not a list"
        raise CyborgError(
            f"Cyborg answered device profile {name} with {shape if isinstance(existing, dict) else 'no mapping'}; "
            "a device profile always has a list of groups: check the Cyborg API (openstack accelerator device "
            "profile show) and its database before changing the profile"
        )
    if existing is not None and not _UUID.fullmatch(str(existing.get("uuid") or "")):
        raise CyborgError(
            f"Cyborg answered device profile {name} without a UUID; it cannot be replaced safely: check the Cyborg API"
        )
    before = (
        {"name": name, "groups": existing["groups"], "description": existing.get("description")} if existing else None
    )
    after = None
    if state == "present":
        after = {"name": name, "groups": groups, "description": description}
        if before is not None and description is None:
            after["description"] = before["description"]
    changed = before != after
    actions = []
    if changed:
        if existing is not None:
            actions.append("delete")
            if state == "present":
                warnings.append(f"Cyborg cannot update device profile {name}; it is deleted and created again")
        if state == "present":
            actions.append("create")
        if not check_mode:
            if existing is not None:
                client.delete(existing["uuid"])
            if state == "present":
                client.create(name, groups, description)
    return {
        "changed": changed,
        "actions": actions,
        "device_profile": after,
        "diff": {"before": before or {}, "after": after or {}},
        "warnings": warnings,
    }
