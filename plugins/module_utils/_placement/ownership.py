# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who owns what in Placement: the rule ``placement_provider`` enforces unless it simulates nova-compute.

nova-compute owns every provider of a compute-node tree: the root (named after the hypervisor
hostname, trait ``COMPUTE_NODE``), its PCI children (``<host>_<ADDRESS>``, trait
``COMPUTE_MANAGED_PCI_DEVICE``) and vGPU children (``<host>_pci_0000_84_00_0``), each with
``OWNER_NOVA``; their names, parents and inventories are Nova's. Nova 34 keeps traits it does not
manage on the root (``ResourceTracker._get_traits`` starts from the traits read from Placement) and on
vGPU children (the libvirt driver only adds ``OWNER_NOVA`` there), but replaces the traits of its PCI
children with the ``[pci] device_spec`` tags at every periodic update
(``pci_placement_translator``: ``update_traits``).

So on a provider of a Nova tree the collection may only add custom traits (not on PCI children) and
aggregates; it never creates a provider in a Nova tree or a root that looks like a compute node, and
never renames, re-parents, deletes or rewrites the inventories of a Nova provider.
"""

from __future__ import annotations

import dataclasses

TRAIT_COMPUTE_NODE = "COMPUTE_NODE"
TRAIT_OWNER_NOVA = "OWNER_NOVA"
TRAIT_MANAGED_PCI = "COMPUTE_MANAGED_PCI_DEVICE"
TRAIT_SHARING = "MISC_SHARES_VIA_AGGREGATE"
# The classes nova-compute reports on its compute node (the virt driver's update_provider_tree).
COMPUTE_CLASSES = ("VCPU", "PCPU", "MEMORY_MB", "DISK_GB")
# GET /resource_providers with this filter lists every provider that marks a Nova tree.
NOVA_MARKERS = f"in:{TRAIT_COMPUTE_NODE},{TRAIT_OWNER_NOVA}"
HOW_TO_SIMULATE = (
    "nova-compute owns it; the collection adds only custom traits and aggregates there "
    "(simulate_compute: true is for a Placement where no nova-compute runs, as in the demo and tests)"
)


@dataclasses.dataclass
class NovaTrees:
    """The providers that mark nova-compute's trees, from one filtered provider list."""

    marked: set[str]
    roots: set[str]

    @classmethod
    def from_records(cls, records: list[dict]) -> NovaTrees:
        marked = {r["uuid"] for r in records}
        roots = {r.get("root_provider_uuid") or r["uuid"] for r in records}
        return cls(marked, roots)

    def owns(self, uuid: str, root_uuid: str | None) -> bool:
        return uuid in self.marked or uuid in self.roots or (root_uuid is not None and root_uuid in self.roots)


def creation_refusal(label: str, parent: str | None, inventories: dict | None, traits: list[str] | None) -> str | None:
    """Why creating this provider would play nova-compute, or None. ``parent``: a Nova parent's name."""
    if parent is not None:
        return f"provider {label}: creating it under {parent}, a provider of a nova-compute tree, refused; " + (
            HOW_TO_SIMULATE
        )
    traits = set(traits or [])
    classes = sorted(set(inventories or {}) & set(COMPUTE_CLASSES))
    if TRAIT_SHARING in traits:  # a sharing provider (e.g. shared DISK_GB) is nobody's compute node
        classes = []
    if TRAIT_COMPUTE_NODE in traits or classes:
        what = f"inventories {', '.join(classes)}" if classes else f"trait {TRAIT_COMPUTE_NODE}"
        return (
            f"provider {label}: creating a compute node root ({what}) refused: nova-compute creates its "
            "own root provider, and one created before it makes nova-compute fail with a duplicate name "
            "(HTTP 409); " + HOW_TO_SIMULATE
        )
    return None


def write_refusals(
    label: str,
    *,
    renamed: bool = False,
    reparented: bool = False,
    inventories: list[str] | None = None,
    traits: tuple[list[str], list[str]] | None = None,
    aggregates: tuple[list[str], list[str]] | None = None,
    deleting: bool = False,
) -> list[str]:
    """The writes to a Nova provider that ownership forbids.

    ``inventories``: the classes whose records would change; ``traits`` and ``aggregates``: (current,
    target) pairs.
    """
    out = []
    if deleting:
        out.append(f"provider {label}: deleting it refused; {HOW_TO_SIMULATE}")
    if renamed or reparented:
        what = " and ".join(w for w, flag in (("renaming", renamed), ("re-parenting", reparented)) if flag)
        out.append(f"provider {label}: {what} it refused; {HOW_TO_SIMULATE}")
    if inventories:
        out.append(
            f"provider {label}: writing inventories {', '.join(inventories)} refused (nova-compute reports "
            f"them at every periodic update); {HOW_TO_SIMULATE}"
        )
    if traits is not None:
        current, target = set(traits[0]), set(traits[1])
        removed, added = sorted(current - target), sorted(target - current)
        standard = [t for t in added if not t.startswith("CUSTOM_")]
        if removed:
            out.append(f"provider {label}: removing traits {', '.join(removed)} refused; {HOW_TO_SIMULATE}")
        if standard:
            out.append(
                f"provider {label}: adding standard traits {', '.join(standard)} refused (Nova manages them); "
                "give custom traits (CUSTOM_...)"
            )
        if added and TRAIT_MANAGED_PCI in current:
            out.append(
                f"provider {label}: adding traits {', '.join(added)} to a PCI provider refused: nova-compute "
                "replaces its traits with the [pci] device_spec tags at every update; put them in the device "
                "policy's traits (rendered into device_spec) instead"
            )
    if aggregates is not None:
        removed = sorted(set(aggregates[0]) - set(aggregates[1]))
        if removed:
            out.append(f"provider {label}: removing aggregates {', '.join(removed)} refused; {HOW_TO_SIMULATE}")
    return out


# -- a real cloud's run of the placement stage -----------------------------------------------------
MAX_PROVIDERS = 100_000


class OwnershipError(ValueError):
    """The predicted providers or the names found cannot be split; the message names the fix."""


def _root_of(name: str, parents: dict[str, str | None]) -> str:
    seen = set()
    while parents.get(name) and name not in seen:
        seen.add(name)
        name = parents[name]
    return name


def split_ownership(providers: list, found: list, root_traits: list | None = None) -> dict:
    """What the placement stage does with the predicted ``providers`` on a real cloud.

    ``providers``: the predicted providers of every compute host (``nova_providers``' shape);
    ``found``: the names Placement holds; ``root_traits``: custom traits the collection adds to every
    compute node root. Returns ``expected`` (every predicted name), ``missing`` (those Placement does
    not hold yet), ``missing_by_host`` (root name -> its missing names), ``resource_classes`` and
    ``traits`` (the custom names the predicted fleet uses, to create), and ``declarations``: for each
    found provider except PCI providers (whose traits Nova replaces), the custom traits the collection
    adds in merge mode (the predicted custom traits, plus ``root_traits`` on roots).
    """
    if not isinstance(providers, list) or len(providers) > MAX_PROVIDERS:
        raise OwnershipError(f"providers must be a list of at most {MAX_PROVIDERS} predicted providers")
    if not isinstance(found, list) or not all(isinstance(n, str) for n in found):
        raise OwnershipError("found must be a list of provider names (as placement_info returns them)")
    root_traits = list(root_traits or [])
    bad = [t for t in root_traits if not isinstance(t, str) or not t.startswith("CUSTOM_") or _bad_custom(t)]
    if bad:
        raise OwnershipError(
            f"root traits {bad!r} are not custom trait names; the collection adds only CUSTOM_[A-Z0-9_]+ "
            "traits to compute nodes (Nova manages the standard ones)"
        )
    parents: dict[str, str | None] = {}
    for index, provider in enumerate(providers):
        if not isinstance(provider, dict) or not isinstance(provider.get("name"), str) or not provider["name"]:
            raise OwnershipError(f"providers[{index}] needs a name (the shape nova_providers predicts)")
        parent = provider.get("parent_name", provider.get("parent"))
        if parent is not None and not isinstance(parent, str):
            raise OwnershipError(f"providers[{index}] ({provider['name']}): parent_name must be a name or null")
        parents[provider["name"]] = parent
    found_set = set(found)
    expected = list(dict.fromkeys(p["name"] for p in providers))
    missing = [name for name in expected if name not in found_set]
    by_host: dict[str, list[str]] = {}
    for name in missing:
        by_host.setdefault(_root_of(name, parents), []).append(name)
    classes, traits, declarations = set(), set(root_traits), []
    for provider in providers:
        names = [t for t in provider.get("traits") or [] if isinstance(t, str)]
        classes |= {rc for rc in provider.get("inventories") or {} if isinstance(rc, str) and rc.startswith("CUSTOM_")}
        custom = {t for t in names if t.startswith("CUSTOM_")}
        traits |= custom
        if provider["name"] not in found_set or TRAIT_MANAGED_PCI in names:
            continue
        if parents[provider["name"]] is None:
            custom |= set(root_traits)
        if custom:
            declarations.append({"name": provider["name"], "traits": sorted(custom), "traits_mode": "merge"})
    return {
        "expected": expected,
        "missing": missing,
        "missing_by_host": by_host,
        "resource_classes": sorted(classes),
        "traits": sorted(traits),
        "declarations": declarations,
    }


def _bad_custom(name: str) -> bool:
    return (
        not name[len("CUSTOM_") :] or any(not (c.isupper() or c.isdigit() or c == "_") for c in name) or len(name) > 255
    )
