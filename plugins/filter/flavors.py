# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over flavors: what Nova 34 asks Placement for a flavor."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.plugin_utils import inputs
from ansible_collections.accel.openstack.plugins.plugin_utils.arguments import check, filter_errors

# What the filters need is imported when one is called: Ansible loads every filter file of the collection
# to find a filter by name (docs/decisions.md, "Filter files import when called").


@filter_errors
def nova_request(
    flavor,
    pci_aliases=None,
    pci_in_placement=False,
    device_profiles=None,
    image_properties=None,
    boot_from_volume=False,
    max_placement_results=1000,
    details=False,
):
    """``flavor | accel.openstack.nova_request(...)``: the query strings Nova sends for the flavor."""
    from ansible_collections.accel.openstack.plugins.plugin_utils.flavor import FlavorError, translate

    name = "nova_request"
    flavor = check(name, "flavor", flavor, "mapping")
    image_properties = check(name, "image_properties", image_properties, "mapping", optional=True)
    try:
        flavor = inputs.flavor(flavor, 0, image_properties)
    except inputs.FlavorInputError as exc:
        raise AnsibleFilterError(f"{name}: {exc.msg}") from None
    pci_in_placement = check(name, "pci_in_placement", pci_in_placement, "boolean")
    boot_from_volume = check(name, "boot_from_volume", boot_from_volume, "boolean")
    details = check(name, "details", details, "boolean")
    device_profiles = check(name, "device_profiles", device_profiles, "mapping", optional=True)
    image_properties = check(name, "image_properties", image_properties, "mapping", optional=True)
    max_placement_results = check(name, "max_placement_results", max_placement_results, "integer", 1, optional=True)
    try:
        request = translate(
            flavor,
            pci_aliases=pci_aliases or (),
            pci_in_placement=pci_in_placement,
            device_profiles=device_profiles,
            image_properties=image_properties,
            boot_from_volume=boot_from_volume,
            max_placement_results=max_placement_results,
        )
        if details:
            return request.as_dict()
        request.raise_for_refusal()
    except FlavorError as exc:
        nova = exc.extra.get("message")
        said = f" (Nova says: {nova})" if nova else ""
        raise AnsibleFilterError(f"nova_request: {exc.msg}{said}") from None
    return list(request.queries)


class FilterModule:
    """Nova's flavor translation."""

    def filters(self):
        return {"nova_request": nova_request}
