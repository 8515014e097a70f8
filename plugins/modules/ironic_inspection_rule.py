#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: ironic_inspection_rule
short_description: Create, update or delete one of Ironic's inspection rules
description:
  - Makes one inspection rule of Ironic's built-in inspection (API microversion 1.96 or later) exist
    with the given conditions and actions, or removes it.
  - The rule is found by O(uuid), or by the uuid derived from O(name) when O(uuid) is not given, so the
    same task finds its own rule on every run.
  - The rule is validated before any call (operators and actions Ironic 39 knows, priority 0 to 9999,
    at most 100 conditions and 100 actions); a bad rule fails the task and changes nothing.
  - A changed rule is updated in place (JSON patch); a change of O(sensitive) deletes and creates it.
  - With O(prefix) instead of O(name) (and O(state=absent)), it deletes every rule this module made under a name
    that starts with O(prefix), except those O(keep) names, so that a set of rules owned by one prefix loses the
    rules no longer declared. Ironic keeps no rule name, so a rule counts as made under a name when its description
    holds that name as a word (the default description is the name) and its uuid is the one derived from it.
    Rules made by hand, or with O(uuid), are never deleted this way.
  - The P(accel.openstack.baremetal#role) role builds these rules from the device policy's C(mode=baremetal)
    entries.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  name:
    description:
      - Name of the rule (1-200 letters, digits, C(_), C(.), C(:) or C(-)); its uuid is derived from it.
      - Required unless O(prefix) is given.
    type: str
  prefix:
    description:
      - Delete the rules made under names that start with this prefix (at least 4 characters), except those in
        O(keep). Needs O(state=absent); excludes O(name) and O(uuid).
    type: str
  keep:
    description: With O(prefix), the names of the rules to keep (those still declared); none when not given.
    type: list
    elements: str
  uuid:
    description: The rule's uuid, when it is not to be derived from O(name) (a rule made by hand).
    type: str
  description:
    description: Free text kept with the rule (at most 255 characters); defaults to O(name).
    type: str
  priority:
    description: Rules run in order of priority, highest first (0 to 9999).
    type: int
    default: 0
  phase:
    description: The inspection phase the rule runs in.
    type: str
    choices: [main]
    default: main
  sensitive:
    description: Whether Ironic hides the rule's conditions and actions in its answers and logs.
    type: bool
    default: false
  conditions:
    description:
      - Conditions, each a mapping with C(op) (an operator such as V(contains) or V(eq), V(!) in front
        inverts it), C(args), and optionally C(multiple) and C(loop).
      - Values in C(args.value) can read the node (C({node.driver})), its inventory (C({inventory[cpu][count]}))
        and the plugin data (C({plugin_data[pci_devices]})).
    type: list
    elements: dict
    default: []
  actions:
    description:
      - Actions, each a mapping with C(op) (such as V(set-attribute) or V(add-trait)) and C(args).
      - Required with O(state=present).
    type: list
    elements: dict
  state:
    description: V(present) creates or updates the rule; V(absent) deletes it (or, with O(prefix), the rules not kept).
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - accel.openstack.openstack
attributes:
  check_mode:
    support: full
    description: Validates, reads the rule (or the rules) and reports what would change; writes nothing.
  diff_mode:
    support: full
    description: The rule before and after; with O(prefix), the rules under it by name, before and after.
notes:
  - Talks to Ironic's v1 API (C(/v1/inspection_rules)) with microversion 1.96.
  - A standalone Ironic with C(auth_strategy = noauth) is reached with O(cloud) set to a dict holding
    C(auth_type) V(none) and C(baremetal_endpoint_override) (the Ironic URL).
"""

EXAMPLES = r"""
- name: Nodes with eight H100 and NVSwitch bridges become GPU_H100X8
  accel.openstack.ironic_inspection_rule:
    cloud: mycloud
    name: accel-baremetal-hgx-h100x8
    priority: 50
    conditions:
      - op: contains
        args:
          value: "{plugin_data[pci_devices]}"
          regex: "(?s)(?:\\{(?=[^{}]*'vendor_id': '(?:0x)?10de')(?=[^{}]*'product_id': '(?:0x)?2330')[^{}]*\\}.*?){8}"
    actions:
      - op: set-attribute
        args: {path: resource_class, value: GPU_H100X8}
      - op: add-trait
        args: {name: CUSTOM_GPU_H100}

- name: Remove it
  accel.openstack.ironic_inspection_rule:
    cloud: mycloud
    name: accel-baremetal-hgx-h100x8
    state: absent

- name: Remove every accel-baremetal- rule but these two
  accel.openstack.ironic_inspection_rule:
    cloud: mycloud
    prefix: accel-baremetal-
    keep: [accel-baremetal-hgx-h100x8, "accel-baremetal-hgx-h100x8:reset"]
    state: absent
"""

RETURN = r"""
rule:
  description: The rule as declared, with its uuid (null when absent).
  returned: success, without O(prefix)
  type: dict
  sample:
    uuid: 0b0bb0a6-4d1f-5c83-9c5e-8a3e8f1c2d10
    description: accel-baremetal-hgx-h100x8
    priority: 50
    phase: main
    sensitive: false
    conditions: []
    actions: [{op: add-trait, args: {name: CUSTOM_GPU_H100}}]
actions:
  description: What was (or would be) done, in order (V(create), V(update), V(delete)).
  returned: success
  type: list
  elements: str
  sample: [create]
removed:
  description: With O(prefix), the rules deleted (or that would be), by name and uuid.
  returned: success, with O(prefix)
  type: list
  elements: dict
  sample: [{name: accel-baremetal-h100x2, uuid: 6f1c1a6e-7a0e-5e0b-8d6f-2c1b8a0e9f31}]
kept:
  description: With O(prefix), the names of the rules under it that stay.
  returned: success, with O(prefix)
  type: list
  elements: str
  sample: [accel-baremetal-hgx-h100x8]
"""

from ansible_collections.accel.openstack.plugins.module_utils._ironic.client import IronicClient
from ansible_collections.accel.openstack.plugins.module_utils._ironic.inspection_rules import (
    RuleError,
    converge_rule,
    declared_rule,
    prune_rules,
    rule_secrets,
)
from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import OpenStackModule


class IronicInspectionRuleModule(OpenStackModule):
    argument_spec = {
        "name": {"type": "str"},
        "prefix": {"type": "str"},
        "keep": {"type": "list", "elements": "str"},
        "uuid": {"type": "str"},
        "description": {"type": "str"},
        "priority": {"type": "int", "default": 0},
        "phase": {"type": "str", "choices": ["main"], "default": "main"},
        "sensitive": {"type": "bool", "default": False},
        "conditions": {"type": "list", "elements": "dict", "default": []},
        "actions": {"type": "list", "elements": "dict"},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
    }
    module_kwargs = {
        "required_one_of": [("name", "prefix")],
        "mutually_exclusive": [("name", "prefix"), ("uuid", "prefix")],
        "required_by": {"keep": "prefix"},
    }

    def run(self) -> dict:
        p = self.params
        if p["prefix"] is not None:
            if p["state"] != "absent":
                raise RuleError(
                    f"prefix {p['prefix']} deletes the rules made under it that keep does not name; give state: "
                    "absent (to create or update a rule, give its name instead of prefix)"
                )
            client = IronicClient(self.connection.baremetal, mask=self.mask)
            result = prune_rules(client, p["prefix"], p["keep"] or [], self.check_mode)
            result["api_calls"] = dict(client.calls)
            return result
        if p["state"] == "present" and p["actions"] is None:
            raise RuleError(
                f"inspection rule {p['name']}: state is present but actions is missing; give at least one action, "
                "e.g. {op: add-trait, args: {name: CUSTOM_X}}, or state: absent"
            )
        self.redactor.add(*rule_secrets(p["conditions"], p["actions"], p["sensitive"]))
        rule = declared_rule(
            p["name"],
            p["conditions"],
            p["actions"],
            p["description"],
            p["priority"],
            p["phase"],
            p["sensitive"],
            p["uuid"],
        )
        client = IronicClient(self.connection.baremetal, mask=self.mask)
        result = converge_rule(client, rule, p["state"], self.check_mode)
        result["api_calls"] = dict(client.calls)
        return result


def main() -> None:
    IronicInspectionRuleModule()()


if __name__ == "__main__":
    main()
