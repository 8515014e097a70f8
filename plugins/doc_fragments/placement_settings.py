# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    """Placement's own settings that decide what it answers, and how long Nova waits for the answer."""

    DOCUMENTATION = r"""
options:
  placement_config:
    description:
      - The settings of the Placement the cloud runs, with the option names of placement.conf,
        C(max_allocation_candidates) (C([placement]), default -1, no bound),
        C(allocation_candidates_generation_strategy) (C([placement]), C(depth-first) or C(breadth-first), default
        C(depth-first)) and
        C(optimize_for_wide_provider_trees) (C([workarounds]), default false).
      - With a bound, generation stops after that many candidates, and they come from the roots Placement visits
        first (C(depth-first)) or from every root in turn (C(breadth-first)); the answer has as many candidates,
        from the same roots. With C(optimize_for_wide_provider_trees), Placement no longer checks the usage of
        a provider that several groups take from, and so returns candidates a claim refuses.
      - Placement's visiting order follows its internal provider ids; the collection takes them to be in the
        order the snapshot lists the providers (parents first), the order in which they were created.
      - The audit reads these settings from the deployed placement.conf; see the C(placement) section of the
        collection's docs/placement.md.
    type: dict
    default: {}
"""

    TIMEOUT = r"""
options:
  placement_timeout:
    description:
      - Seconds Nova's call to Placement may take before the cloud gives up on it (Kolla-Ansible's HAProxy
        C(haproxy_server_timeout) is one minute). A query Placement at O(placement_config) is predicted to need
        longer for is reported with reason code C(placement_overload).
    type: float
    default: 60
"""
