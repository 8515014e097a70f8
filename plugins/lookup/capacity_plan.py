# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: capacity_plan
author: accel.openstack contributors (@accel-openstack)
version_added: 1.0.0
short_description: How much of a flavor mix fits together, placed one instance at a time as Nova would
description:
  - Places a demand (a list of flavors with counts) on a fleet snapshot one instance at a time, each as
    nova-scheduler places one server. Nova's queries for the flavor are answered from the fleet with
    its usage so far (Placement 1.39 semantics, Nova's C(limit)), merged as Nova merges them, filtered
    by the Nova filters the collection models, and one host is chosen by Nova's weighers (those of Nova's
    default C(weight_classes) whose values differ between hosts for new servers, namely RAM, CPU, disk, PCI,
    I/O operations, instances, build failures and hypervisor version), with Nova's normalisation and
    C(host_subset_size); the first candidate on that host is allocated before the next instance.
  - Returns one dict (the lookup's one element) with what was placed and not, where, what each host has
    left, which devices are stranded and whether the demand survives losing hosts.
  - The exact rule, with Nova's tie-breaking, is in the collection's docs/capacity.md.
options:
  _terms:
    description: The demand, entries C({flavor, count}); C(flavor) as for P(accel.openstack.flavor_fit#lookup)
      (C(name), C(vcpus), C(ram), C(disk), C(ephemeral), C(swap), C(extra_specs)); a list given as one term
      is read as the demand.
    required: true
    type: list
    elements: dict
  order:
    description: V(as_given) places the entries in the demand's order; V(largest_first) places the flavors
      asking most devices first (then most CPUs, RAM, disk; equal sizes keep the demand's order).
    type: str
    choices: [as_given, largest_first]
    default: as_given
  weigher:
    description:
      - Sets multipliers at once; a multiplier option given as well wins, and a multiplier in the metadata of a host's
        aggregates (O(aggregates_metadata), key named as the option) wins for that host, as in Nova.
      - V(spread) keeps Nova's default multipliers (RAM, CPU and disk 1.0, the host with the most free first).
      - V(pack) sets O(ram_weight_multiplier), O(cpu_weight_multiplier) and O(disk_weight_multiplier) to -1.0
        (the host with the least free first) and O(io_ops_weight_multiplier) to 0.0 (the I/O operations of the
        instances being built would spread them).
    type: str
    choices: [spread, pack]
    default: spread
  ram_weight_multiplier:
    description: Nova's C([filter_scheduler] ram_weight_multiplier) (RAMWeigher, free RAM); default 1.0, or as O(weigher) sets.
    type: float
  cpu_weight_multiplier:
    description: Nova's C(cpu_weight_multiplier) (CPUWeigher, free VCPUs times the allocation ratio); default 1.0, or as O(weigher) sets.
    type: float
  disk_weight_multiplier:
    description: Nova's C(disk_weight_multiplier) (DiskWeigher, free disk); default 1.0, or as O(weigher) sets.
    type: float
  io_ops_weight_multiplier:
    description: Nova's C(io_ops_weight_multiplier) (IoOpsWeigher, the host's I/O operations, the host record's
      C(num_io_ops), growing by one for each instance placed there when O(arrival=burst)); default -1.0 (the fewest
      first), or as O(weigher) sets.
    type: float
  pci_weight_multiplier:
    description: Nova's C(pci_weight_multiplier) (PCIWeigher, free PCI devices; at least 0); default 1.0 (hosts with the
      fewest free devices first, which keeps instances without devices off hosts with devices).
    type: float
  num_instances_weight_multiplier:
    description: Nova's C(num_instances_weight_multiplier) (NumInstancesWeigher, instances on the host); default 0.0 (off).
    type: float
  build_failure_weight_multiplier:
    description: Nova's C(build_failure_weight_multiplier) (BuildFailureWeigher, the host record's C(failed_builds));
      default 1000000.0.
    type: float
  hypervisor_version_weight_multiplier:
    description: Nova's C(hypervisor_version_weight_multiplier) (HypervisorVersionWeigher, the host record's
      C(hypervisor_version)); default 1.0 (the newest first).
    type: float
  host_subset_size:
    description: Nova's C([filter_scheduler] host_subset_size). With more than 1, Nova picks at random among that many
      best hosts; the plan draws with a generator seeded by O(seed) and RV(_raw[].drawn) counts the instances whose
      host was drawn among several.
    type: int
    default: 1
  arrival:
    description:
      - V(settled) schedules each instance after the builds before it are over, as servers created one after
        another; V(burst) while they all still build, as in one multi-create request (each adds an I/O operation
        to its host for IoOpsWeigher, as Nova's scheduler counts it until the compute node reports again).
      - Instances placed count for NumInstancesWeigher either way.
    type: str
    choices: [settled, burst]
    default: settled
  seed:
    description: The seed of the plan's draws when O(host_subset_size) is more than 1 (the same seed, the same plan).
    type: int
    default: 0
  failures:
    description: Hosts to lose for RV(_raw[].headroom), the hosts carrying the most instances of the demand (a greedy
      choice, not the worst case; see O(worst_case)); their instances of the demand are placed again on the rest of
      the fleet.
    type: int
    default: 0
  fail_hosts:
    description:
      - Hosts (names as in the snapshot) lost at once for RV(_raw[].failure). Their instances are placed again, in
        the plan's order, on the other hosts as the plan left them, by the same rule; the instances the snapshot
        already held there (its C(allocations), as P(accel.openstack.placement_info#module) returns them with
        C(allocations=true)) are placed again too. A name the fleet does not have is refused, listing the fleet's.
      - For an inventory group, pass the group's hosts (C(groups['rack1'])); the capacity role does.
    type: list
    elements: str
  fail_domain:
    description: An aggregate lost at once for RV(_raw[].failure), by its name in O(aggregates_metadata) or its UUID in
      the snapshot's C(aggregates). Not with O(fail_hosts).
    type: str
  worst_case:
    description: "C({hosts: K}): every combination of K hosts is lost in turn (their instances placed again as for
      O(fail_hosts)); RV(_raw[].worst_case) gives the one that loses the most instances. At most 5,000 combinations:
      more is refused with the count."
    type: dict
  what_if:
    description:
      - "Hypothetical hosts, each option C({name, model, count, mode, ...}): C(model) a GPU of the device catalog
        (V(H200), V(L40S), ...); C(count) hosts (1 to 10,000) named C(<name>-0001) on; C(mode) V(passthrough),
        V(vgpu) (C(type), a time-sliced vGPU type such as V(NVIDIA L40S-4Q)), V(mig) (C(layout), one MIG profile
        of the GPU such as V(3g.71gb), as many per GPU as it holds, each a MIG-backed vGPU) or V(sriov) (C(vfs) VFs
        per GPU passed through); C(gpus) per host (default 8); C(shape) a simulated hardware profile of the
        collection for the CPUs, memory and NUMA nodes (default V(hgx-h100)); C(alone) true plans on the new hosts
        only. The providers are those nova-compute would report (the collection's fleet prediction)."
      - Each option places the whole demand again; RV(_raw[].what_if) compares it with the plan. At most 20 options.
    type: list
    elements: dict
extends_documentation_fragment:
  - accel.openstack.nova_scheduling
  - accel.openstack.placement_settings
  - accel.openstack.placement_settings.timeout
"""

EXAMPLES = r"""
- name: How much of the mix fits together, and do we survive losing two hosts?
  ansible.builtin.debug:
    msg: "{{ query('accel.openstack.capacity_plan',
                   [{'flavor': h100_flavor, 'count': 40}, {'flavor': small_flavor, 'count': 200}],
                   fleet=fleet, pci_aliases=aliases, pci_in_placement=true, failures=2)[0] }}"
"""

RETURN = r"""
_raw:
  description: One plan.
  type: list
  elements: dict
  contains:
    placed:
      description: "Per flavor, the instances placed (C({flavor: n}))."
      type: dict
    unplaced:
      description: "Per flavor, the instances Nova would find no valid host for."
      type: dict
    reasons:
      description: "Per flavor with unplaced instances, C({code, detail}): the flavor_fit reason code when no
        instance of it fits; V(in_use) when some were placed, the detail saying whether the fleet takes no
        more of the flavor even alone or the demand's other instances took the room (with what the fleet
        takes of it alone)."
      type: dict
    hosts:
      description: "Per host with instances of the demand, C({flavor: n})."
      type: dict
    left:
      description: "Per host, C({resource class: free}) after the demand (summed over the host's providers)."
      type: dict
    stranded:
      description: "Per host and device class, C({free, short, flavors}): devices free while no flavor of the
        demand that asks the class can be placed there; C(short) names the classes the host has too little
        of for those flavors (the resource that ran out)."
      type: dict
    headroom:
      description: "C({failures, survives, lost, hosts_lost}): the O(failures) hosts carrying most instances of
        the demand are lost and their instances placed again; C(lost) counts per flavor those that no longer fit."
      type: dict
    failure:
      description: "With O(fail_hosts) or O(fail_domain), C({hosts, domain, moved, lost, survives, still_placed}):
        C(moved) counts per flavor the instances on the lost hosts placed again (those the snapshot held are named
        C(existing RC=n,...) after what they hold); C(lost) gives per flavor C({count, code, detail}) for those
        that no longer fit (C(code) V(no_host_with_device), V(survivors_full), V(numa_cells_full),
        V(compute_refused) or V(no_valid_host)); C(still_placed) is the demand's placed count less what is lost.
        Null without those options."
      type: dict
    worst_case:
      description: "With O(worst_case), C({hosts, combinations, survived, worst}): the combinations tried, how many
        lose nothing, and the worst one as RV(_raw[].failure) gives it (the first in the snapshot's order among
        equal losses). Null without the option."
      type: dict
    what_if:
      description: "With O(what_if), per option C({name, alone, hosts_added, placed, unplaced, added, on_new_hosts,
        stranded, reasons}): the demand placed on the fleet with the option's hosts (or on them alone); C(added) per
        flavor the instances placed more than the plan places (negative alone, where the fleet placed more);
        C(on_new_hosts) those that landed on the new hosts; C(stranded) the devices left stranded, per class. Null
        without the option."
      type: list
      elements: dict
    order:
      description: The flavors in the order they were placed.
      type: list
      elements: str
    weigher:
      description: The O(weigher) value used.
      type: str
    weighers:
      description: "Every modelled multiplier as used (Nova's default, the O(weigher) preset's or the option's),
        C(host_subset_size) and C(arrival)."
      type: dict
    drawn:
      description: "Per flavor, instances whose host was drawn at random among more than one of the
        O(host_subset_size) best (0 with O(host_subset_size) 1). Where any is not 0, RV(_raw[].hosts),
        RV(_raw[].left), RV(_raw[].stranded) and RV(_raw[].headroom) are one of the outcomes Nova may reach, and
        the counts of flavors that ran short may differ too."
      type: dict
    refused:
      description: "Per flavor whose builds nova-compute refuses, C({attempts, detail}): without NUMATopologyFilter
        in O(enabled_filters) the scheduler may send an instance to a host that cannot pin it (a pinned flavor
        offered a host without dedicated CPUs, or with them all in use, through the VCPU fallback query; a NUMA
        topology the host's cells do not hold); the compute's claim refuses it and Nova builds on the next of the
        3 hosts it chose (C([scheduler] max_attempts)). C(attempts) counts the refused builds, C(detail) says why
        the first was refused. An instance all three refuse is unplaced with reason C(compute_refused)."
      type: dict
"""

from collections.abc import Mapping

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.accel.openstack.plugins.plugin_utils.capacity import CapacityOptionError, capacity_plan
from ansible_collections.accel.openstack.plugins.plugin_utils.weighers import MULTIPLIERS

_OPTIONS = (
    "order",
    "weigher",
    *MULTIPLIERS,
    "host_subset_size",
    "seed",
    "arrival",
    "failures",
    "fail_hosts",
    "fail_domain",
    "worst_case",
    "what_if",
    "pci_aliases",
    "pci_in_placement",
    "device_profiles",
    "image_properties",
    "boot_from_volume",
    "max_placement_results",
    "aggregates_metadata",
    "enabled_filters",
    "placement_config",
    "placement_timeout",
)


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        options = {name: self.get_option(name) for name in _OPTIONS}
        demand = []
        for term in terms:
            demand.extend(term if isinstance(term, list | tuple) and not isinstance(term, Mapping) else [term])
        try:
            return [capacity_plan(demand, self.get_option("fleet"), **options)]
        except CapacityOptionError as exc:
            raise AnsibleLookupError(str(exc)) from exc
