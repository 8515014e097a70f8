"""Nova's weighing as the capacity plan models it, against Nova 34's own weight handler (the nova venv).

Every expected weight comes from ``nova.weights.BaseWeightHandler.get_weighed_objects`` run on
``HostState``s with the same figures (``tests/support/nova_weigher_oracle.py``), never from this file.
"""

import dataclasses
import random

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.weighers import (
    MODELLED,
    MULTIPLIERS,
    WEIGHERS,
    HostFigures,
    WeigherOptionError,
    Weighing,
    aggregate_multipliers,
    multipliers,
    raw_values,
)
from tests.support.nova_venv import ask

ORACLE = "tests/support/nova_weigher_oracle.py"
RAM_ONLY = ["nova.scheduler.weights.ram.RAMWeigher"]
FREE_RAM_CASES = [
    [1000, 500, 0],
    [100, -50, -900],  # over-committed hosts weigh as hosts with no free RAM
    [-100, -50, -900],  # every host over-committed: all weigh 0, the order decides
    [0, 0],
    [7],  # one host is not weighed
    [-5, 3],
    [65024, 65024, 31744, -2048, 130560],
]


def _only_ram(multiplier: float) -> Weighing:
    factors = dict.fromkeys(MULTIPLIERS, 0.0)
    factors["ram_weight_multiplier"] = multiplier
    return Weighing(factors)


def _figures(free_ram: int, **fields) -> HostFigures:
    base = dict(
        free_ram_mb=free_ram,
        vcpus_total=0,
        vcpus_used=0,
        cpu_allocation_ratio=1.0,
        free_disk_mb=0,
        pci_free=0,
        num_io_ops=0,
        num_instances=0,
        failed_builds=0,
        hypervisor_version=0,
    )
    base.update(fields)
    return HostFigures(**base)


def _host_state(name: str, figures: HostFigures) -> dict:
    """The figures as the HostState fields Nova's weighers read."""
    return dict(dataclasses.asdict(figures), host=name)


def _ram_cases():
    cases = [(values, multiplier) for multiplier in (1.0, -1.0, 2.5) for values in FREE_RAM_CASES]
    asked = [
        {
            "weigh": [_host_state(f"h{i}", _figures(free)) for i, free in enumerate(values)],
            "weight_classes": RAM_ONLY,
            "multipliers": {"ram_weight_multiplier": multiplier},
        }
        for values, multiplier in cases
    ]
    return cases, asked


def test_ram_weights_are_the_ones_novas_weight_handler_computes(novas):
    cases, _asked = _ram_cases()
    for (values, multiplier), nova in zip(cases, novas["ram"], strict=True):
        weighing = _only_ram(multiplier)
        rows = [raw_values(_figures(v)) for v in values]
        assert weighing.weights(rows) == nova["weights"], (values, multiplier)
        names = [f"h{i}" for i in range(len(values))]
        assert list(weighing.ranked(names, rows)) == nova["order"], (values, multiplier)


def _random_host(rng: random.Random) -> HostFigures:
    return _figures(
        rng.choice([-4096, 0, 2048, 16384, 65536, 131072]),
        vcpus_total=rng.choice([0, 16, 32, 64]),
        vcpus_used=rng.choice([0, 4, 40, 200]),
        cpu_allocation_ratio=rng.choice([1.0, 4.0, 16.0]),
        free_disk_mb=rng.choice([-1024, 0, 102400, 1024000]),
        pci_free=rng.choice([0, 0, 1, 2, 8, 150]),
        num_io_ops=rng.choice([0, 1, 3, 9]),
        num_instances=rng.choice([0, 2, 7]),
        failed_builds=rng.choice([0, 0, 0, 1, 3]),
        hypervisor_version=rng.choice([0, 8000000, 9002000, 9002000]),
    )


def _random_multipliers(rng: random.Random) -> dict:
    found = {name: rng.choice([default, 0.0, -1.0, 2.0, -0.5]) for name, default in MULTIPLIERS.items()}
    found["pci_weight_multiplier"] = abs(found["pci_weight_multiplier"])  # Nova's minimum is 0
    return found


def _default_cases():
    rng = random.Random(34)
    cases = []
    for number in range(60):
        hosts = [_random_host(rng) for _index in range(rng.randint(1, 7))]
        if number % 3 == 0:
            hosts.append(hosts[0])  # equal hosts: a tie
        factors = MULTIPLIERS if number < 10 else _random_multipliers(rng)
        cases.append((hosts, dict(factors)))
    asked = [
        {"weigh": [_host_state(f"h{i}", h) for i, h in enumerate(hosts)], "multipliers": factors}
        for hosts, factors in cases
    ]
    return cases, asked


def test_every_default_weigher_weighs_as_novas_own_with_random_figures_and_multipliers(novas):
    cases, _asked = _default_cases()
    ties = 0
    for (hosts, factors), nova in zip(cases, novas["defaults"], strict=True):
        weighing = Weighing(factors)
        rows = [raw_values(h) for h in hosts]
        # Nova adds the weighers up in the order it loads them, as the plan does: the same floats.
        assert weighing.weights(rows) == nova["weights"], (hosts, factors)
        names = [f"h{i}" for i in range(len(hosts))]
        assert list(weighing.ranked(names, rows)) == nova["order"], (hosts, factors)
        ties += len(set(nova["weights"])) < len(hosts)
    assert ties > 10  # the cases did exercise equal weights


def _aggregate_cases():
    rng = random.Random(7)
    keys = list(MULTIPLIERS)
    cases = []
    for _number in range(40):
        hosts = [_random_host(rng) for _index in range(rng.randint(2, 6))]
        aggregates = [
            [
                {key: rng.choice(["2.0", "-1", "0", "0.5", "abc", "3"]) for key in rng.sample(keys, rng.randint(0, 3))}
                for _aggregate in range(rng.randint(0, 2))
            ]
            for _host in hosts
        ]
        cases.append((hosts, aggregates, _random_multipliers(rng)))
    asked = [
        {
            "weigh": [
                dict(_host_state(f"h{i}", h), aggregates=a) for i, (h, a) in enumerate(zip(hosts, aggs, strict=True))
            ],
            "multipliers": factors,
        }
        for hosts, aggs, factors in cases
    ]
    return cases, asked


def test_multipliers_from_the_hosts_aggregates_weigh_as_nova_reads_them(novas):
    cases, _asked = _aggregate_cases()
    overridden = 0
    for (hosts, aggs, factors), nova in zip(cases, novas["aggregates"], strict=True):
        names = [f"h{i}" for i in range(len(hosts))]
        metadata = {}
        for name, host_aggregates in zip(names, aggs, strict=True):
            for one in host_aggregates:
                for key, value in one.items():
                    metadata.setdefault(name, {}).setdefault(key, set()).add(value)
        per_host = aggregate_multipliers(metadata)
        overridden += bool(per_host)
        weighing = Weighing(factors, per_host=per_host)
        rows = [raw_values(h) for h in hosts]
        assert weighing.weights(rows, names) == nova["weights"], (hosts, aggs, factors)
        assert list(weighing.ranked(names, rows)) == nova["order"]
    assert overridden > 20


PCI_HOSTS = [_figures(65536, pci_free=8), _figures(65536), _figures(65536, pci_free=2)]


def _pci_cases():
    return PCI_HOSTS, [{"weigh": [_host_state(f"h{i}", h) for i, h in enumerate(PCI_HOSTS)], "multipliers": {}}]


@pytest.fixture(scope="module")
def novas() -> dict[str, list]:
    """Nova's answers for every case of this file, from one process in the nova venv."""
    groups = {"ram": _ram_cases, "defaults": _default_cases, "aggregates": _aggregate_cases, "pci": _pci_cases}
    asked = {name: build()[1] for name, build in groups.items()}
    answers = ask(ORACLE, [case for cases in asked.values() for case in cases], 120, "Nova's weight handler")
    found, start = {}, 0
    for name, cases in asked.items():
        found[name] = answers[start : start + len(cases)]
        start += len(cases)
    return found


def test_pci_weigher_keeps_hosts_without_devices_first_and_stacks_on_the_fewest_free(novas):
    hosts = PCI_HOSTS
    (nova,) = novas["pci"]
    weighing = Weighing(MULTIPLIERS)
    assert (
        list(weighing.ranked(["h0", "h1", "h2"], [raw_values(h) for h in hosts])) == nova["order"] == ["h1", "h2", "h0"]
    )


def test_the_plan_models_novas_default_weighers_with_novas_default_multipliers():
    names = [w.name for w in WEIGHERS]
    assert names == sorted(set(names), key=names.index) and len(names) == 13
    assert [w.name for w in MODELLED] == [
        "NumInstancesWeigher",
        "CPUWeigher",
        "BuildFailureWeigher",
        "RAMWeigher",
        "DiskWeigher",
        "PCIWeigher",
        "IoOpsWeigher",
        "HypervisorVersionWeigher",
    ]
    assert multipliers("spread", {}) == MULTIPLIERS
    packed = multipliers("pack", {"cpu_weight_multiplier": 3.0, "disk_weight_multiplier": None})
    assert packed["ram_weight_multiplier"] == -1.0 and packed["cpu_weight_multiplier"] == 3.0
    assert packed["disk_weight_multiplier"] == -1.0 and packed["io_ops_weight_multiplier"] == 0.0


def test_host_subset_size_draws_among_the_best_hosts_and_says_so():
    rows = [raw_values(_figures(free)) for free in (100, 400, 300, 200)]
    names = ["a", "b", "c", "d"]
    one = Weighing(MULTIPLIERS)
    assert list(one.ranked(names, rows)) == ["b", "c", "d", "a"] and not one.drew
    seen = set()
    for seed in range(40):
        weighing = Weighing(MULTIPLIERS, host_subset_size=2, seed=seed)
        order = list(weighing.ranked(names, rows))
        assert weighing.drew
        seen.add(order[0])
        assert order[1:] == [n for n in ["b", "c", "d", "a"] if n != order[0]]
    assert seen == {"b", "c"}


@pytest.mark.parametrize(
    ("preset", "given", "size", "message"),
    [
        ("cpu", {}, 1, "weigher must be one of spread, pack, got 'cpu'"),
        ("spread", {"ram_weight_multiplier": "1"}, 1, "ram_weight_multiplier must be a finite number"),
        ("spread", {"ram_weight_multiplier": float("nan")}, 1, "ram_weight_multiplier must be a finite number"),
        ("spread", {"ram_weight_multiplier": True}, 1, "ram_weight_multiplier must be a finite number"),
        ("spread", {"ram_weight_multiplier": 1e300}, 1, "ram_weight_multiplier must be between -1,000,000,000,000 and"),
        ("spread", {"pci_weight_multiplier": -1.0}, 1, "pci_weight_multiplier must be at least 0.0 (Nova refuses"),
        ("spread", {"metrics_weight_multiplier": 1.0}, 1, "unknown multiplier option(s) metrics_weight_multiplier"),
        ("spread", {}, 0, "host_subset_size must be a whole number from 1 to 100000"),
        ("spread", {}, "2", "host_subset_size must be a whole number from 1 to 100000"),
    ],
)
def test_bad_weigher_options_are_refused_with_the_fix(preset, given, size, message):
    with pytest.raises(WeigherOptionError) as caught:
        Weighing(multipliers(preset, given), size)
    assert message in str(caught.value)
