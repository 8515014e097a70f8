# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One Ironic inspection rule, declared and converged: validated before any call, compared field by field.

A rule is identified by ``uuid``; without one, the uuid is derived from the rule's ``name``
(:func:`rule_uuid`), so the same declaration finds its own rule on every run. The comparison of the
declared rule with Ironic's produces ``changed``, the ``diff`` and the calls, which cannot disagree.
Ironic keeps conditions and actions as given, so they are compared as given.

Ironic keeps no rule name. A set of rules declared under one name prefix is owned as a whole:
:func:`prune_rules` deletes the rules of that prefix that are no longer declared, each recognised by the
name its description carries and its uuid derived from that name (:func:`owned_name`).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._ironic.client import IronicClient
from ansible_collections.accel.openstack.plugins.module_utils._openstack.redaction import secret_leaves

# uuid5 namespace of the collection's inspection rules (a fixed, arbitrary UUID).
RULE_NAMESPACE = uuid.UUID("5b0c3c52-8f3e-4d7a-9a38-4f1d2b7f0c11")
# Ironic 39's condition operators and actions (ironic/common/inspection_rules/operators.py, actions.py).
OPERATORS = ("eq", "lt", "gt", "is-empty", "in-net", "matches", "contains", "one-of", "is-none", "is-true", "is-false")
ACTIONS = (
    "fail",
    "log",
    "set-attribute",
    "extend-attribute",
    "del-attribute",
    "set-capability",
    "unset-capability",
    "add-trait",
    "remove-trait",
    "set-plugin-data",
    "extend-plugin-data",
    "unset-plugin-data",
    "set-port-attribute",
    "extend-port-attribute",
    "del-port-attribute",
    "api-call",
)
PHASES = ("main",)
MAX_PRIORITY = 9999
MAX_ITEMS = 100
MAX_RULE_BYTES = 65536
MAX_DESCRIPTION = 255
# A prefix shorter than this would own rules by accident.
MIN_PREFIX = 4
COMPARED = ("description", "priority", "phase", "sensitive", "conditions", "actions")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}\Z")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


class RuleError(AccelError):
    """The declared rule cannot be sent; ``errors`` holds one message per problem."""


def rule_uuid(name: str) -> str:
    """The uuid of the rule declared under ``name`` (the same on every run)."""
    return str(uuid.uuid5(RULE_NAMESPACE, name))


def _items(kind: str, value: Any, known: tuple[str, ...], invertible: bool, errors: list[str]) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        errors.append(f"{kind} must be a list of at most {MAX_ITEMS} {{op, args}} mappings")
        return []
    out = []
    for index, item in enumerate(value):
        where = f"{kind}[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("op"), str):
            errors.append(f"{where} must be a mapping with op (a string) and args, e.g. {{op: log, args: {{msg: hi}}}}")
            continue
        op = item["op"]
        bare = op[1:] if invertible and op.startswith("!") else op
        if bare not in known:
            errors.append(f"{where}: op {op!r} is not one Ironic knows; use one of {', '.join(known)}")
        if not isinstance(item.get("args"), dict | list):
            errors.append(f"{where} ({op}): args must be a mapping (or a list), e.g. {{name: CUSTOM_X}}")
        out.append(dict(item))
    return out


# Arguments of an action that name where a value goes, not the value: never masked.
NOT_SECRET_ARGS = ("path", "op")


def rule_secrets(conditions: Any, actions: Any, sensitive: Any) -> list[str]:
    """The texts of a rule no message may print: every value under a secret key (``password``, ``token`` ...),
    and for a sensitive rule every text value of its actions' arguments (an IPMI password it sets)."""
    found = [text for _path, text in secret_leaves({"conditions": conditions, "actions": actions}, "rule")]
    if sensitive is True and isinstance(actions, list):
        for action in actions:
            args = action.get("args") if isinstance(action, dict) else None
            if isinstance(args, dict):
                found += [text for key, value in args.items() if key not in NOT_SECRET_ARGS for text in _texts(value)]
            elif isinstance(args, list):  # positional: the first names the path, the rest are values
                found += [text for value in args[1:] for text in _texts(value)]
    return found


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []


def declared_rule(
    name: Any,
    conditions: Any = None,
    actions: Any = None,
    description: Any = None,
    priority: Any = 0,
    phase: Any = "main",
    sensitive: Any = False,
    rule_id: Any = None,
) -> dict:
    """The rule as Ironic will hold it (``uuid`` included); raise :class:`RuleError` for bad input."""
    errors: list[str] = []
    if not isinstance(name, str) or not NAME.match(name):
        errors.append(f"name {name!r} must be 1-200 letters, digits, '_', '.', ':' or '-', e.g. 'gpu-h100x8'")
    if rule_id is not None and (not isinstance(rule_id, str) or not UUID.match(rule_id)):
        errors.append(f"uuid {rule_id!r} is not a lower-case UUID; leave it out to derive one from name")
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= MAX_PRIORITY:
        errors.append(f"priority {priority!r} must be a whole number from 0 to {MAX_PRIORITY} (Ironic's range)")
    if phase not in PHASES:
        errors.append(f"phase {phase!r} must be one of {', '.join(PHASES)}")
    if description is not None and (not isinstance(description, str) or len(description) > MAX_DESCRIPTION):
        errors.append(f"description must be a string of at most {MAX_DESCRIPTION} characters")
    if not isinstance(sensitive, bool):
        errors.append(f"sensitive {sensitive!r} must be true or false")
    rule = {
        "description": description if description is not None else (name if isinstance(name, str) else None),
        "priority": priority,
        "phase": phase,
        "sensitive": sensitive,
        # Ironic 39 answers 500 to a rule without conditions (and saves it): always send the list.
        "conditions": _items("conditions", conditions, OPERATORS, True, errors),
        "actions": _items("actions", actions, ACTIONS, False, errors),
    }
    if actions is not None and not rule["actions"] and not errors:
        errors.append(
            "actions is empty; a rule needs at least one action, e.g. {op: add-trait, args: {name: CUSTOM_X}}"
        )
    if len(json.dumps(rule, default=str)) > MAX_RULE_BYTES:
        errors.append(f"the rule is larger than {MAX_RULE_BYTES} bytes; split it")
    if errors:
        raise RuleError(f"inspection rule {name}: " + "; ".join(errors), errors=errors)
    rule["uuid"] = rule_id or rule_uuid(name)
    return rule


def _compared(rule: dict | None) -> dict:
    if not rule:
        return {}
    return {key: rule.get(key) for key in COMPARED} | {"uuid": rule.get("uuid")}


def converge_rule(client: IronicClient, rule: dict, state: str, check_mode: bool) -> dict:
    """Make the rule ``rule["uuid"]`` exist as declared (``present``) or not at all (``absent``)."""
    current = client.get_rule(rule["uuid"])
    before = _compared(current)
    after = _compared(rule) if state == "present" else {}
    actions: list[str] = []
    if state == "absent":
        if current is not None:
            actions.append("delete")
    elif current is None:
        actions.append("create")
    else:
        changes = {k: v for k, v in after.items() if k != "uuid" and before.get(k) != v}
        if "sensitive" in changes:
            # A sensitive rule's conditions and actions read back masked: replace it whole.
            actions += ["delete", "create"]
        elif changes:
            actions.append("update")
    if not check_mode:
        for action in actions:
            if action == "delete":
                client.delete_rule(rule["uuid"])
            elif action == "create":
                client.create_rule(rule)
            else:
                client.update_rule(rule["uuid"], {k: v for k, v in after.items() if k != "uuid" and before.get(k) != v})
    return {
        "changed": bool(actions),
        "actions": actions,
        "rule": after or None,
        "diff": {"before": before, "after": after},
    }


def owned_name(rule: dict, prefix: str) -> str | None:
    """The name under ``prefix`` that ``rule`` was declared with, or None when it is not such a rule.

    Ironic keeps no rule name, so the name is read back from the description and proven by the uuid:
    a word of the description (a trailing ``:`` dropped), or ``prefix`` followed by that word, is the
    rule's name when it starts with ``prefix`` and derives the rule's uuid (:func:`rule_uuid`). A rule
    made by hand, or with a given ``uuid``, is never taken for one.
    """
    uuid_text, description = rule.get("uuid"), rule.get("description")
    if not isinstance(uuid_text, str) or not isinstance(description, str):
        return None
    for word in description[:MAX_DESCRIPTION].split():
        word = word.rstrip(":")
        for name in (word, prefix + word):
            if name.startswith(prefix) and NAME.match(name) and rule_uuid(name) == uuid_text:
                return name
    return None


def prune_rules(client: IronicClient, prefix: str, keep: list[str], check_mode: bool) -> dict:
    """Delete every rule declared under a name starting with ``prefix`` that ``keep`` does not name."""
    problems = []
    if not isinstance(prefix, str) or not NAME.match(prefix) or len(prefix) < MIN_PREFIX:
        problems.append(
            f"prefix {prefix!r} must be {MIN_PREFIX} to 200 letters, digits, '_', '.', ':' or '-', "
            "e.g. 'accel-baremetal-'"
        )
    bad = [name for name in keep if not isinstance(name, str) or not NAME.match(name)]
    if bad:
        problems.append(f"keep holds {len(bad)} value(s) that are not rule names, the first {bad[0]!r}")
    if problems:
        raise RuleError("inspection rules: " + "; ".join(problems), errors=problems)
    owned = {}
    for rule in client.list_rules():
        name = owned_name(rule, prefix)
        if name is not None:
            owned[name] = rule
    removed = sorted(name for name in owned if name not in set(keep))
    if not check_mode:
        for name in removed:
            client.delete_rule(owned[name]["uuid"])
    return {
        "changed": bool(removed),
        "actions": ["delete"] * len(removed),
        "removed": [{"name": name, "uuid": owned[name]["uuid"]} for name in removed],
        "kept": sorted(name for name in owned if name not in removed),
        "diff": {
            "before": {name: _compared(owned[name]) for name in sorted(owned)},
            "after": {name: _compared(owned[name]) for name in sorted(owned) if name not in removed},
        },
    }
