"""Hostile input for the Ironic and Cyborg side: policy values that would turn into Ironic's template
syntax or regular expressions, wrong types at the filters, and API answers shaped to break a report."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.accel.openstack.plugins.filter import baremetal, cyborg
from ansible_collections.accel.openstack.plugins.module_utils._cyborg.arqs import arq_report
from ansible_collections.accel.openstack.plugins.module_utils._cyborg.client import CyborgClient, CyborgError
from ansible_collections.accel.openstack.plugins.module_utils._ironic.client import IronicClient, IronicError
from ansible_collections.accel.openstack.plugins.module_utils._ironic.inspection_rules import declared_rule, prune_rules
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError, parse_policy

ENTRY = {"name": "hgx", "vendor_id": "10de", "product_id": "2330", "mode": "baremetal", "count": 8,
         "resource_class": "GPU_H100X8"}  # fmt: skip


@pytest.mark.parametrize(
    ("key", "value"),
    [
        # Ironic formats a set-attribute value: this would copy the BMC password into the node's class.
        ("resource_class", "{node.driver_info[ipmi_password]}"),
        ("resource_class", "x" * 81),
        ("resource_class", "a\nb"),
        ("fallback_resource_class", "{node.driver_info[ipmi_password]}"),
        ("fallback_resource_class", ["GPU_DEGRADED"]),
        ("model", "H100{inventory}"),
        ("model", "(.*)"),
        ("vendor_id", "10de')|(.*"),
        ("product_id", ".*"),
        ("count", 10**9),
        ("count", "8"),
        ("traits", ["CUSTOM_{node.uuid}"]),
        ("interconnect", {"nvswitch": True}),
    ],
)
def test_policy_values_never_reach_ironic_as_templates_or_patterns(key, value):
    with pytest.raises(PolicyError):
        parse_policy([dict(ENTRY, **{key: value})])


@pytest.mark.parametrize(
    ("function", "args", "fragment"),
    [
        (baremetal.baremetal_inspection_rules, ("policy",), "_input is a string"),
        (baremetal.baremetal_inspection_rules, ([ENTRY], "high"), "priority is a string"),
        (baremetal.baremetal_inspection_rules, ([ENTRY], 10000), "give 0 to 9998"),
        (baremetal.baremetal_inspection_rules, ([ENTRY], 9999), "priority is 9999; give 0 to 9998"),
        (baremetal.baremetal_inspection_rules, ([ENTRY], -1), "priority is -1"),
        (baremetal.baremetal_node_classes, ({"hgx": ENTRY},), "_input is a mapping"),
        (baremetal.baremetal_node_classes, ([dict(ENTRY, count=0)],), "count 0"),
        (cyborg.device_profile_chain, ("flavors", {}, {}), "_input is a string"),
        (cyborg.device_profile_chain, ([], [], {}), "cyborg is a list"),
        (cyborg.device_profile_chain, ([], {}, "fleet"), "fleet is a string"),
        (cyborg.cyborg_arq_findings, (["report"],), "_input is a list"),
    ],
)
def test_filters_refuse_wrong_types_naming_the_argument(function, args, fragment):
    with pytest.raises(AnsibleFilterError) as caught:
        function(*args)
    assert fragment in str(caught.value) and "Traceback" not in str(caught.value)


class Answer:
    def __init__(self, status: int, body: bytes):
        self.status_code, self.content, self.text, self.reason = status, body, body.decode(errors="replace"), "x"

    def json(self):
        import json

        return json.loads(self.content)


class Pages:
    """An Ironic that answers every listing with ``body`` and says another page follows (it never ends)."""

    def __init__(self, body: dict):
        import json

        self.answer = Answer(200, json.dumps(dict(body, next="http://ironic/v1/inspection_rules?marker=x")).encode())

    def get(self, *_args, **_kwargs):
        return self.answer


class Service:
    """An API that answers with a fixed (hostile) body: what the client makes of the answer is the subject."""

    def __init__(self, status: int, body: bytes):
        self.answer = Answer(status, body)

    def get(self, *_args, **_kwargs):
        return self.answer


@pytest.mark.parametrize(
    "body",
    [b"<html>proxy error</html>", b'{"inspection_rules": "all"}', b'{"inspection_rules": [1, 2]}', b"[]", b"null"],
)
def test_ironic_answers_of_the_wrong_shape_are_errors_not_tracebacks(body):
    client = IronicClient(Service(200, body))
    try:
        rules = client.list_rules()
    except IronicError as exc:
        assert "inspection_rules" in str(exc)
    else:
        assert rules == []


def test_a_listing_that_claims_rules_deletes_only_rules_whose_uuid_is_their_name():
    made = declared_rule("accel-baremetal-hgx", [], [{"op": "add-trait", "args": {"name": "CUSTOM_X"}}])
    listing = [
        made,
        # descriptions that name a collection rule, on rules whose uuid is not derived from that name
        {"uuid": "3f8e1b1c-0000-4000-8000-000000000000", "description": "accel-baremetal-hgx: by hand"},
        {"uuid": made["uuid"].upper(), "description": made["description"]},
        {"uuid": made["uuid"], "description": {"text": "accel-baremetal-hgx"}},
        {"uuid": ["x"], "description": "accel-baremetal-hgx"},
        "accel-baremetal-hgx",
    ]
    client = IronicClient(Pages({"inspection_rules": listing}))
    result = prune_rules(client, "accel-baremetal-", [], check_mode=True)
    assert result["removed"] == [{"name": "accel-baremetal-hgx", "uuid": made["uuid"]}] and result["kept"] == []
    # A listing that says another page follows and sends the same page again is an error, not a loop.
    with pytest.raises(IronicError, match="same page again"):
        prune_rules(IronicClient(Pages({"inspection_rules": [made]})), "accel-baremetal-", [], check_mode=True)


@pytest.mark.parametrize("body", [b"<html>", b'{"arqs": {"a": 1}}', b'{"arqs": null}', b"[1]"])
def test_cyborg_answers_of_the_wrong_shape_are_errors_not_tracebacks(body):
    with pytest.raises(CyborgError):
        CyborgClient(Service(200, body)).arqs()


def test_an_arq_answer_cannot_smuggle_a_command_or_grow_the_report():
    evil = {"uuid": "$(reboot)", "state": "Bound", "instance_uuid": "gone;" * 500, "project_id": {"x": 1},
            "created_at": "9" * 10000, "device_profile_group_id": "0; drop"}  # fmt: skip
    (row,) = arq_report([evil] * 1, [], "1h")["arqs"]
    assert row["classification"] == "orphaned" and row["command"] is None
    assert len(row["instance_uuid"]) <= 255 and row["created_at"] is None and row["device_profile_group_id"] is None
