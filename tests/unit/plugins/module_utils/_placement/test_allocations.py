"""read_allocations: who holds what, read only where a provider is in use; a malformed answer is named."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._placement.allocations import read_allocations
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import PlacementError

ROOT = "11111111-1111-4111-8111-111111111111"
GPU = "22222222-2222-4222-8222-222222222222"
IDLE = "33333333-3333-4333-8333-333333333333"
VM = "44444444-4444-4444-8444-444444444444"
FLEET = {
    "resource_providers": [
        {"uuid": ROOT, "usages": {"VCPU": 4}},
        {"uuid": GPU, "usages": {"CUSTOM_T4": 1}},
        {"uuid": IDLE, "usages": {"CUSTOM_T4": 0}},
    ]
}


class Answers:
    """Placement's answers by path (what the tests feed in); records each path asked."""

    def __init__(self, answers):
        self.answers, self.asked = answers, []

    def request(self, method, path):
        self.asked.append((method, path))
        return 200, self.answers[path]


def test_consumers_are_assembled_across_providers_and_idle_providers_are_not_read():
    client = Answers({
        f"/resource_providers/{ROOT}/allocations": {"allocations": {VM: {"resources": {"VCPU": 4}}}},
        f"/resource_providers/{GPU}/allocations": {"allocations": {VM: {"resources": {"CUSTOM_T4": 1}}}},
    })  # fmt: skip
    assert read_allocations(client, FLEET) == {
        VM: {"allocations": {ROOT: {"resources": {"VCPU": 4}}, GPU: {"resources": {"CUSTOM_T4": 1}}}}
    }
    assert [path for _m, path in client.asked] == [
        f"/resource_providers/{ROOT}/allocations",
        f"/resource_providers/{GPU}/allocations",
    ]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, "without an allocations object"),
        ({"allocations": {"not; a uuid": {"resources": {"VCPU": 1}}}}, "'not; a uuid' is not a UUID"),
        ({"allocations": {VM: {"resources": {"VCPU": "4"}}}}, "no resources as whole numbers"),
    ],
)
def test_a_malformed_answer_is_refused_with_what_is_wrong(body, words):
    client = Answers({f"/resource_providers/{ROOT}/allocations": body})
    with pytest.raises(PlacementError, match=words.replace("(", r"\(")):
        read_allocations(client, {"resource_providers": FLEET["resource_providers"][:1]})
