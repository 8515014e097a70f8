"""Parsing GET /allocation_candidates queries the way Placement 1.39 does."""

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.request import (
    Request,
    RequestError,
    is_uuid_like,
)

AGG = "a0000000-0000-4000-8000-00000000000a"


def test_string_and_dict_forms_parse_to_the_same_request():
    text = Request.parse(f"resources=VCPU:2,MEMORY_MB:512&required=A,!B&required=in:C,D&member_of=in:{AGG}")
    mapping = Request.parse(
        {"resources": "VCPU:2,MEMORY_MB:512", "required": ["A,!B", "in:C,D"], "member_of": f"in:{AGG}"}
    )
    assert text == mapping
    group = text.groups[""]
    assert group.resources == {"VCPU": 2, "MEMORY_MB": 512}
    assert group.required == [frozenset({"A"}), frozenset({"C", "D"})]
    assert group.forbidden == frozenset({"B"})
    assert group.member_of == [frozenset({AGG})]
    assert not group.use_same_provider


def test_suffixes_follow_the_order_of_first_appearance_and_are_single_provider_groups():
    request = Request.parse("resources_NIC=SRIOV_NET_VF:1&resources=VCPU:1&resources1=VGPU:1&group_policy=none")
    assert list(request.groups) == ["_NIC", "", "1"]
    assert request.groups["_NIC"].use_same_provider and request.groups["1"].use_same_provider


def test_request_wide_parameters():
    request = Request.parse(
        "resources=VCPU:1&required_A=X&resources_B=VGPU:1&same_subtree=_A,_B&root_required=R,!S"
        "&limit=3&group_policy=isolate"
    )
    assert request.limit == 3 and request.group_policy == "isolate"
    assert request.root_required == {"R"} and request.root_forbidden == {"S"}
    assert request.same_subtrees == [frozenset({"_A", "_B"})]
    assert request.groups["_A"].resources == {}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "There must be at least one resources or resources[$S] parameter."),
        ("resources=VCPU:1&foo=1", "'foo' does not match any of the regexes"),
        ("resources=VCPU:0", "Requested resource VCPU requires amount >= 1. Got: 0."),
        ("resources=VCPU:x", "Requested resource VCPU expected positive integer amount. Got: x."),
        ("resources=VCPU", "Badly formed resources parameter."),
        ("resources=VCPU:1&limit=0", "'0' does not match '^[1-9][0-9]*$'"),
        ("resources=VCPU:1&group_policy=all", "'all' is not one of ['none', 'isolate']"),
        ("resources=VCPU:1&required=A,!A", "Conflicting required and forbidden traits"),
        ("resources=VCPU:1&required=in:!A", "does not support forbidden traits"),
        ("resources=VCPU:1&member_of=x", "Expected 'member_of' parameter to contain valid UUID(s). Got: x"),
        (f"resources=VCPU:1&member_of={AGG},{AGG}", "must be prefixed with the 'in:' or '!in:' keyword"),
        ("resources=VCPU:1&in_tree=x", "Expected 'in_tree' parameter to be a format of uuid. Got: x"),
        ("resources1=VCPU:1&resources2=VCPU:1", 'The "group_policy" parameter is required'),
        ("resources=VCPU:1&required1=A", "bad group(s) - ['1']."),
        ("resources=VCPU:1&same_subtree=1", "Real suffixes should be specified in `same_subtree`: ['1']"),
        ("resources=VCPU:1&same_subtree=,1", "Empty string (unsuffixed group) can not be specified"),
        ("resources=VCPU:1&root_required=A&root_required=B", "'root_required' may be specified only once."),
        ("resources=VCPU:1&root_required=in:A", "only supported since microversion 1.39"),
    ],
)
def test_bad_queries_raise_placements_message(query, message):
    with pytest.raises(RequestError) as caught:
        Request.parse(query)
    assert message in caught.value.placement_message


def test_uuid_like_accepts_what_placement_accepts():
    assert is_uuid_like(AGG) and is_uuid_like(AGG.upper()) and is_uuid_like(AGG.replace("-", ""))
    assert not is_uuid_like("abc") and not is_uuid_like(AGG + "0")
