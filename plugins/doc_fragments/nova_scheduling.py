# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    """What the lookups that place flavors as Nova does are told about the fleet and Nova's settings."""

    DOCUMENTATION = r"""
options:
  fleet:
    description:
      - The fleet snapshot, as M(accel.openstack.placement_info) returns it in
        RV(accel.openstack.placement_info#module:fleet) or P(accel.openstack.nova_fleet#filter) predicts it.
        Root provider records may carry C(disabled), C(numa_cells) and C(pci_pools) for the Nova filters.
    required: true
    type: dict
  pci_aliases:
    description: The C([pci] alias) entries, each a dict or the JSON string nova.conf holds.
    type: list
    elements: raw
    default: []
  pci_in_placement:
    description: C([filter_scheduler] pci_in_placement).
    type: bool
    default: false
  device_profiles:
    description: "Cyborg device profiles, C({name: [group dicts]})."
    type: dict
  image_properties:
    description: Properties of the image booted (C(trait:*), C(hw_*)).
    type: dict
  boot_from_volume:
    description: The servers boot from volumes (no DISK_GB for the root disk).
    type: bool
    default: false
  max_placement_results:
    description: C([scheduler] max_placement_results), the C(limit) Nova sends.
    type: int
    default: 1000
  aggregates_metadata:
    description: Host aggregates as C([{name, hosts, metadata}]); when given, AggregateInstanceExtraSpecsFilter
      is modelled.
    type: list
    elements: dict
  enabled_filters:
    description: The modelled Nova filters to apply after Placement, in order.
    type: list
    elements: str
    default: [ComputeFilter, PciPassthroughFilter, NUMATopologyFilter, AggregateInstanceExtraSpecsFilter]
"""
