"""The expanded size of a YAML document, counted on its node graph without expanding it."""

import time

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.plugin_utils.yaml_bounds import (
    MAX_BYTES,
    DocumentTooBig,
    check_document,
)


def expanded(value) -> int:
    """What a loader that copies every alias holds (the reference the count must equal)."""
    if isinstance(value, dict):
        return 1 + sum(expanded(k) + expanded(v) for k, v in value.items())
    if isinstance(value, list):
        return 1 + sum(expanded(v) for v in value)
    return 1


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n",
        "a: [1, 2, {b: c}]\nd: {e: [f, g]}\n",
        "x: &x {a: 1, b: [2, 3]}\ny: *x\nz: [*x, *x]\n",
        "x: &x [1, 2]\ny: &y [*x, *x, *x]\nz: [*y, *y]\n",
        "base: &b {a: 1}\nmerged: {<<: *b, c: 2}\n",
        "- 1\n- [2, 3]\n",
    ],
)
def test_the_count_equals_the_expanded_document(text):
    # merge keys count their alias once more than the merged mapping holds: never less than the expansion
    assert check_document(text, "f") >= expanded(yaml.safe_load(text))
    if "<<" not in text:
        assert check_document(text, "f") == expanded(yaml.safe_load(text))


def test_several_documents_add_up():
    assert check_document("a: 1\n---\n[1, 2]\n", "f") == 3 + 3


def test_an_alias_bomb_is_refused_in_milliseconds():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    started = time.monotonic()
    with pytest.raises(DocumentTooBig, match=r"^globals\.yml: its aliases expand to more than 2,000,000 values"):
        check_document("\n".join(lines) + "\n", "globals.yml")
    assert time.monotonic() - started < 5


def test_the_bound_is_inclusive():
    text = "a: [" + ", ".join(["1"] * 98) + "]\n"  # mapping, key, list and 98 items
    assert check_document(text, "f", limit=101) == 101
    with pytest.raises(DocumentTooBig, match="more than 100 values"):
        check_document(text, "f", limit=100)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a: &a [*a]\n", "an alias refers to a node that holds it"),
        ("a: [1\n", "is not YAML at line 2, column 1"),
        ("a: *missing\n", "is not YAML"),
        (7, "is not text"),
        ("a: " + "x" * (MAX_BYTES + 1), "is larger than 8 MiB"),
    ],
)
def test_what_cannot_be_counted_is_refused_by_name(text, words):
    with pytest.raises(DocumentTooBig, match=r"^f\.yml: ") as raised:
        check_document(text, "f.yml")
    assert words in raised.value.msg
