# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova 34's host weighers, as nova-scheduler runs them with its default ``weight_classes``.

``[filter_scheduler] weight_classes`` defaults to ``nova.scheduler.weights.all_weighers``: every weigher
Nova ships. ``WEIGHERS`` lists them in the order Nova 34 loads them, with the multiplier option each reads
and its default. For each host list Nova's weight handler asks every weigher for a raw value per host,
raises a value below the weigher's ``minval`` to it, normalises the list to [0, 1] (``minval`` or the
list's minimum to 0, the list's maximum to 1; all 0 when they are equal), multiplies by the weigher's
multiplier and adds the products up per host; one host alone is not weighed. The hosts are then sorted by
weight, descending, with a stable sort.

The capacity plan models the weighers whose raw values differ between hosts while a demand of new servers
is placed (``modelled``): the others give every host the same value for such a demand, so they change no
weight (docs/capacity.md says why for each). ``Weighing`` holds the multipliers and ranks hosts from
their raw values (``raw_values``).
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterator, Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import shown

# PCIWeigher's MAX_DEVS: a host's raw value is MAX_PCI_DEVICES - min(free PCI devices, MAX_PCI_DEVICES - 1).
MAX_PCI_DEVICES = 100
# The largest host_subset_size accepted (Nova has no bound; more hosts than a fleet has changes nothing).
MAX_HOST_SUBSET_SIZE = 100_000


class WeigherOptionError(AccelError):
    """A multiplier or host_subset_size that is not usable; the message names it and the fix."""


@dataclasses.dataclass(frozen=True)
class Weigher:
    name: str  # Nova's class
    option: str  # the [filter_scheduler] option of its multiplier
    default: float
    minval: int | None
    modelled: bool
    sign: float = 1.0  # BuildFailureWeigher negates its multiplier


# Nova 34's all_weighers, in the order it loads them (the order its weights are added up in).
WEIGHERS = (
    Weigher("CrossCellWeigher", "cross_cell_move_weight_multiplier", 1000000.0, None, False),
    Weigher("NumInstancesWeigher", "num_instances_weight_multiplier", 0.0, None, True),
    Weigher("MetricsWeigher", "metrics.weight_multiplier", 1.0, None, False),
    Weigher("CPUWeigher", "cpu_weight_multiplier", 1.0, 0, True),
    Weigher("BuildFailureWeigher", "build_failure_weight_multiplier", 1000000.0, None, True, -1.0),
    Weigher("ServerGroupSoftAffinityWeigher", "soft_affinity_weight_multiplier", 1.0, None, False),
    Weigher("ServerGroupSoftAntiAffinityWeigher", "soft_anti_affinity_weight_multiplier", 1.0, None, False),
    Weigher("RAMWeigher", "ram_weight_multiplier", 1.0, 0, True),
    Weigher("DiskWeigher", "disk_weight_multiplier", 1.0, 0, True),
    Weigher("PCIWeigher", "pci_weight_multiplier", 1.0, None, True),
    Weigher("ImagePropertiesWeigher", "image_props_weight_multiplier", 0.0, None, False),
    Weigher("IoOpsWeigher", "io_ops_weight_multiplier", -1.0, 0, True),
    Weigher("HypervisorVersionWeigher", "hypervisor_version_weight_multiplier", 1.0, None, True),
)
MODELLED = tuple(w for w in WEIGHERS if w.modelled)
# The multiplier options the plan takes, with Nova's defaults.
MULTIPLIERS = {w.option: w.default for w in MODELLED}
# The ``weigher`` option's values: multipliers they set (the others keep Nova's defaults).
PRESETS = {
    "spread": {},
    "pack": {
        "ram_weight_multiplier": -1.0,
        "cpu_weight_multiplier": -1.0,
        "disk_weight_multiplier": -1.0,
        "io_ops_weight_multiplier": 0.0,
    },
}
# Host record keys (the compute node's figures a Placement snapshot lacks) and what they start at.
HOST_FIGURES = ("num_instances", "num_io_ops", "failed_builds", "hypervisor_version")


@dataclasses.dataclass(frozen=True)
class HostFigures:
    """What the modelled weighers read of one host (Nova's ``HostState`` fields)."""

    free_ram_mb: int
    vcpus_total: int
    vcpus_used: int
    cpu_allocation_ratio: float
    free_disk_mb: int
    pci_free: int
    num_io_ops: int
    num_instances: int
    failed_builds: int
    hypervisor_version: int


def raw_values(host: HostFigures) -> tuple:
    """The raw value of each modelled weigher for the host, in ``MODELLED`` order (what ``_weigh_object``
    returns in Nova)."""
    return (
        host.num_instances,
        host.vcpus_total * host.cpu_allocation_ratio - host.vcpus_used,
        host.failed_builds,
        host.free_ram_mb,
        host.free_disk_mb,
        MAX_PCI_DEVICES - min(host.pci_free, MAX_PCI_DEVICES - 1),
        host.num_io_ops,
        host.hypervisor_version,
    )


# Nova's own lower bounds (its option definitions): a value below is refused when Nova starts.
_MINIMUMS = {"pci_weight_multiplier": 0.0}


# The largest multiplier taken (Nova's largest default is 1000000.0): products of normalised weights stay
# finite when they are added up, so weights never become NaN.
MAX_MULTIPLIER = 1e12


def _multiplier(name: str, value) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or isinstance(value, float)
        and not math.isfinite(value)
    ):
        raise WeigherOptionError(
            f"{name} must be a finite number (Nova's [filter_scheduler] {name}), got {shown(value)}"
        )
    if abs(value) > MAX_MULTIPLIER:
        raise WeigherOptionError(
            f"{name} must be between -{MAX_MULTIPLIER:,.0f} and {MAX_MULTIPLIER:,.0f}, got {shown(value)}; a larger "
            "multiplier decides alone, as 1000000.0 already does"
        )
    if name in _MINIMUMS and value < _MINIMUMS[name]:
        raise WeigherOptionError(
            f"{name} must be at least {_MINIMUMS[name]} (Nova refuses a smaller [filter_scheduler] {name}), "
            f"got {shown(value)}"
        )
    return float(value)


def multipliers(preset: str, given: Mapping) -> dict[str, float]:
    """Every modelled multiplier: Nova's default, the preset's value, then the one given (None: not given)."""
    if preset not in PRESETS:
        raise WeigherOptionError(f"weigher must be one of {', '.join(PRESETS)}, got {shown(preset)}")
    found = dict(MULTIPLIERS)
    found.update(PRESETS[preset])
    unknown = sorted(set(given) - set(MULTIPLIERS))
    if unknown:
        raise WeigherOptionError(
            f"unknown multiplier option(s) {', '.join(map(str, unknown))}; the plan models {', '.join(MULTIPLIERS)}"
        )
    for name, value in given.items():
        if value is not None:
            found[name] = _multiplier(name, value)
    return found


def aggregate_multipliers(metadata_by_host: Mapping[str, Mapping[str, set]]) -> dict[str, dict[str, float]]:
    """Per host, the multipliers its aggregates' metadata set, as Nova's ``get_weight_multiplier`` reads them:
    the smallest value of the option's key over the host's aggregates; values that are not all numbers
    leave the option's value (Nova logs a warning and does the same)."""
    found: dict[str, dict[str, float]] = {}
    for host, keys in metadata_by_host.items():
        for option in MULTIPLIERS:
            values = keys.get(option)
            if not values:
                continue
            try:
                value = min(float(text) for text in values)
            except ValueError:
                continue
            if not math.isfinite(value) or abs(value) > MAX_MULTIPLIER:
                raise WeigherOptionError(
                    f"aggregates_metadata: {option} of host {host} must be a finite number between "
                    f"-{MAX_MULTIPLIER:,.0f} and {MAX_MULTIPLIER:,.0f}, got {shown(min(values))}"
                )
            found.setdefault(host, {})[option] = value
    return found


class Weighing:
    """Nova's weighing of hosts with the given multipliers and ``host_subset_size``.

    ``ranked(names, rows)`` yields the host names in the order Nova tries them: with ``host_subset_size``
    1 the best host (the first of the highest weight), then the rest by descending weight (a stable sort);
    with N > 1 a host drawn from the N best (a pseudo-random generator seeded with ``seed``, so one plan is
    repeatable), then the others in the sorted order, as ``SchedulerManager._get_sorted_hosts`` does."""

    def __init__(
        self,
        factors: Mapping[str, float],
        host_subset_size: int = 1,
        seed: int = 0,
        per_host: Mapping[str, Mapping[str, float]] | None = None,
    ):
        if (
            isinstance(host_subset_size, bool)
            or not isinstance(host_subset_size, int)
            or not (1 <= host_subset_size <= MAX_HOST_SUBSET_SIZE)
        ):
            raise WeigherOptionError(
                f"host_subset_size must be a whole number from 1 to {MAX_HOST_SUBSET_SIZE} (Nova's "
                f"[filter_scheduler] host_subset_size, 1 by default), got {shown(host_subset_size)}"
            )
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise WeigherOptionError(f"seed must be a whole number, got {shown(seed)}")
        self.factors = dict(factors)
        self.host_subset_size = host_subset_size
        self.random = random.Random(seed)
        # Per host, the multipliers its aggregates set (``aggregate_multipliers``).
        self.per_host = {host: dict(found) for host, found in (per_host or {}).items() if found}
        overridden = {option for found in self.per_host.values() for option in found}
        # (column, effective multiplier, minval, option when some host's aggregates set it) of each weigher
        # whose product can differ from 0.
        self.active = [
            (
                index,
                weigher.sign * self.factors[weigher.option],
                weigher.minval,
                weigher.option if weigher.option in overridden else None,
            )
            for index, weigher in enumerate(MODELLED)
            if self.factors[weigher.option] != 0.0 or weigher.option in overridden
        ]
        self.drew = False  # whether the last ranking drew among more than one host

    def weights(self, rows: list[tuple], names: list[str] | None = None) -> list[float]:
        """Nova's weight of each host (rows of ``raw_values``, in the hosts' order; ``names`` for the
        multipliers of the hosts' aggregates)."""
        count = len(rows)
        total = [0.0] * count
        if count <= 1:
            return total
        columns = list(zip(*rows, strict=True))
        for index, factor, minval, option in self.active:
            column = columns[index]
            if minval is None:
                low = float(min(column))
            else:
                column = [value if value > minval else minval for value in column]
                low = float(minval)
            high = float(max(column))
            if high == low:
                continue  # Nova's normalize gives 0 to every host: no weight changes
            span = high - low
            if option is not None and names is not None:
                sign = MODELLED[index].sign
                factors = [
                    sign * self.per_host[name][option] if option in self.per_host.get(name, ()) else factor
                    for name in names
                ]
                total = [
                    weight + each * ((value - low) / span)
                    for weight, each, value in zip(total, factors, column, strict=True)
                ]
                continue
            total = [weight + factor * ((value - low) / span) for weight, value in zip(total, column, strict=True)]
        return total

    def drop_constant(self, columns: Mapping[str, set]) -> None:
        """Leave out the weighers whose raw value is one and the same on every host of the fleet (given per
        multiplier option as the set of values): Nova normalises them to 0 on any list of hosts."""
        options = [weigher.option for weigher in MODELLED]
        self.active = [entry for entry in self.active if len(columns.get(options[entry[0]], (0, 1))) > 1]

    def ranked(self, names: list[str], rows: list[tuple]) -> Iterator[str]:
        """The hosts in the order Nova tries them (see the class). The first is found without sorting when
        ``host_subset_size`` is 1; the rest are sorted only when asked for."""
        self.drew = False
        if not names:
            return
        weights = self.weights(rows, names)
        size = self.host_subset_size
        if size == 1 or len(names) == 1:
            best = max(range(len(names)), key=weights.__getitem__)
            yield names[best]
            rest = sorted((i for i in range(len(names)) if i != best), key=weights.__getitem__, reverse=True)
            for index in rest:
                yield names[index]
            return
        order = sorted(range(len(names)), key=weights.__getitem__, reverse=True)
        subset = order[:size]
        self.drew = True
        chosen = subset[self.random.randrange(len(subset))]
        yield names[chosen]
        for index in order:
            if index != chosen:
                yield names[index]
