# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The three-way chain behind a flavor's ``accel:device_profile``: Cyborg -> Placement -> the profile.

A server with a device profile lands only when three things agree, and when they do not, Nova says
NoValidHost and nothing more. :func:`walk_chain` checks them in the order a person would:

1. ``cyborg``: Cyborg's agent reported an enabled device and deployables with a resource provider (the
   deployable's ``rc`` and ``trait*`` attributes are what it registers);
2. ``placement``: those providers exist in Placement, carry ``OWNER_CYBORG``, and hold inventory;
3. ``profile``: some group of the profile asks exactly the resource class and traits one of those
   providers has (a profile asking ``CUSTOM_GPU_T4`` where Cyborg registered ``CUSTOM_NVIDIA_T4`` breaks
   here, with the nearest name).

The first link that breaks is named, with what is wrong and the fix; later links are not judged.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.device_profiles import group_needs
from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import did_you_mean

OWNER_CYBORG = "OWNER_CYBORG"
LINKS = ("cyborg", "placement", "profile")


def _link(name: str, ok: bool, detail: str, fix: str | None = None) -> dict:
    return {"link": name, "ok": ok, "detail": detail, "fix": fix}


def walk_chain(profile_name: str, profiles: list, devices: list, deployables: list, fleet: dict) -> dict:
    """Walk the chain for one device profile; ``broken`` is the first link that fails (None when whole)."""
    links: list[dict] = []
    profile = next((p for p in profiles if isinstance(p, dict) and p.get("name") == profile_name), None)
    groups = profile.get("groups") if isinstance(profile, dict) else None

    enabled = [d for d in devices if isinstance(d, dict) and d.get("status", "enabled") == "enabled"]
    placed = [d for d in deployables if isinstance(d, dict) and d.get("rp_uuid")]
    if not enabled or not placed:
        what = "no enabled device" if not enabled else "no deployable with a resource provider"
        links.append(
            _link(
                "cyborg",
                False,
                f"Cyborg knows {what} ({len(enabled)} enabled device(s), {len(placed)} deployable(s) with a provider)",
                "check that cyborg-agent runs on the accelerator hosts with the right driver enabled "
                "([agent] enabled_drivers) and that the devices are enabled (openstack accelerator device list)",
            )
        )
        return _result(profile_name, links)
    links.append(_link("cyborg", True, f"{len(enabled)} enabled device(s), {len(placed)} deployable(s)"))

    providers = {p["uuid"]: p for p in fleet.get("resource_providers", []) if isinstance(p, dict) and "uuid" in p}
    good, problems = [], []
    for deployable in placed:
        provider = providers.get(deployable["rp_uuid"])
        name = deployable.get("name") or deployable.get("uuid")
        if provider is None:
            problems.append(f"deployable {name}: provider {deployable['rp_uuid']} is not in Placement")
        elif OWNER_CYBORG not in (provider.get("traits") or []):
            problems.append(f"deployable {name}: provider {provider.get('name')} lacks {OWNER_CYBORG}")
        elif not provider.get("inventories"):
            problems.append(f"deployable {name}: provider {provider.get('name')} has no inventory")
        else:
            good.append(provider)
    if not good:
        links.append(
            _link(
                "placement",
                False,
                "; ".join(problems),
                "Cyborg's conductor registers its providers in Placement: check its [placement] credentials "
                "and its log, then restart cyborg-agent so the devices are reported again",
            )
        )
        return _result(profile_name, links)
    links.append(_link("placement", True, f"{len(good)} Cyborg provider(s) with {OWNER_CYBORG} and inventory"))

    if not isinstance(groups, list) or not groups:
        links.append(
            _link(
                "profile",
                False,
                f"device profile {profile_name} does not exist in Cyborg",
                "create it (accel.openstack.cyborg_device_profile) or correct accel:device_profile in the flavor",
            )
        )
        return _result(profile_name, links)
    classes = {rc for p in good for rc in p["inventories"]}
    traits = {t for p in good for t in p.get("traits") or []}
    missing = []
    for index, group in enumerate(groups):
        resources, required, forbidden = group_needs(group if isinstance(group, dict) else {})
        fits = any(
            all(rc in p["inventories"] for rc in resources)
            and required <= set(p.get("traits") or [])
            and not forbidden & set(p.get("traits") or [])
            for p in good
        )
        if fits:
            continue
        for rc in sorted(set(resources) - classes):
            missing.append(f"groups[{index}] asks resource class {rc}{did_you_mean(rc, classes)}")
        for trait in sorted(required - traits):
            missing.append(f"groups[{index}] asks trait {trait}{did_you_mean(trait, traits)}")
        if not (set(resources) - classes or required - traits):
            missing.append(f"groups[{index}]: no single Cyborg provider has all it asks")
    if missing:
        links.append(
            _link(
                "profile",
                False,
                "; ".join(missing) + " (names on Cyborg's providers: " + ", ".join(sorted(classes | traits)) + ")",
                "recreate the profile with the names Cyborg registered (accel.openstack.cyborg_device_profile)",
            )
        )
    else:
        links.append(_link("profile", True, f"every group of {profile_name} matches a Cyborg provider"))
    return _result(profile_name, links)


def _result(profile_name: str, links: list[dict]) -> dict:
    broken = next((link for link in links if not link["ok"]), None)
    return {
        "device_profile": profile_name,
        "ok": broken is None,
        "broken": broken["link"] if broken else None,
        "message": f"{profile_name}: the {broken['link']} link breaks: {broken['detail']}" if broken else None,
        "fix": broken["fix"] if broken else None,
        "links": links,
    }


def chain_findings(flavors: list, cyborg: dict, fleet: dict) -> list[dict]:
    """One finding per flavor whose ``accel:device_profile`` chain breaks (``cyborg``: profiles, devices,
    deployables as cyborg_arq_info returns them)."""
    findings = []
    for flavor in flavors or []:
        specs = (flavor or {}).get("extra_specs") or {} if isinstance(flavor, dict) else {}
        name = specs.get("accel:device_profile") if isinstance(specs, dict) else None
        if not isinstance(name, str) or not name:
            continue
        walked = walk_chain(
            name,
            cyborg.get("device_profiles") or [],
            cyborg.get("devices") or [],
            cyborg.get("deployables") or [],
            fleet,
        )
        if walked["ok"]:
            continue
        findings.append(
            {
                "kind": "device_profile_chain",
                "flavor": flavor.get("name"),
                "broken": walked["broken"],
                "message": f"{flavor.get('name')}: {walked['message']}",
                "fix": walked["fix"],
                "links": walked["links"],
            }
        )
    return findings
