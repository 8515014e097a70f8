"""The collection's one CPU set parser reads every text as Nova's own parse_cpu_spec does (the oracle runs
Nova 34's code in the nova venv), and refuses numbers past its bound before expanding a range."""

from __future__ import annotations

import random

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._inputs import (
    CpuSetSyntaxError,
    InputError,
    parse_cpu_set,
)
from tests.support.nova_venv import ask

TARGETED = [
    "0-3,^2,8",
    "^4-5",
    "0-7,^4-5",
    " 1 , 2 ,,3",
    "+3",
    "1_0",
    "0-1_0",
    "5-2",
    "-5",
    "^-3",
    "^",
    "a",
    "1-",
    "-",
    "1--2",
    "^ 3",
    "3 - 4",
    "0x3",
    "",
    ",",
    "^0",
    "0,^0",
    "٣",
    "1.5",
]


def _generated(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    atoms = ["0", "1", "2", "7", "15", " 3", "4 ", "+2", "1_2", "x", "", "^", "-", "^1", "2-5", "5-2", "^0-3", " "]
    return [
        ",".join(rng.choice(atoms) + rng.choice(["", "-", "-9", ",", "^"]) for _rule in range(rng.randint(1, 4)))
        for _case in range(count)
    ]


CASES = TARGETED + _generated(400, 7)


def _ours(text: str) -> dict:
    try:
        return {"cpus": sorted(parse_cpu_set(text))}
    except CpuSetSyntaxError as exc:
        return {"refused": exc.msg}


def test_every_text_is_read_as_nova_reads_it():
    theirs = ask("tests/support/nova_cpu_set_oracle.py", CASES, 120, "Nova's parse_cpu_spec")
    differ = [(text, _ours(text), nova) for text, nova in zip(CASES, theirs, strict=True) if _ours(text) != nova]
    assert not differ, differ[:10]
    # The cases reach both answers, and each of Nova's three refusals.
    refusals = {answer.get("refused", "").split(" ")[1] for answer in theirs if "refused" in answer}
    assert {"range", "exclusion", "inclusion"} <= refusals
    assert sum("cpus" in answer for answer in theirs) > 50


@pytest.mark.parametrize("text", ["0-1_000_000_000", "0-999999999", "٩٩٩٩٩٩٩", "^0-99999999", "1" * 5000])
def test_a_number_past_the_bound_is_refused_before_a_range_is_expanded(text):
    with pytest.raises(InputError) as caught:
        parse_cpu_set(text, largest=1023)
    assert not isinstance(caught.value, CpuSetSyntaxError)
    assert "1,023" in caught.value.msg or "characters long" in caught.value.msg
