# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova's ``[libvirt]`` options for one compute host: the operator's ``accel_nova_libvirt``, checked against
Nova 34's own option definitions (:mod:`.libvirt_options`), and the collection's one default.

:func:`libvirt_section` is pure: the operator's dict (option name -> value) and whether the host offers a
vGPU type -> the ``[libvirt]`` keys to write, the errors (each naming the host, the option and the fix) and
the warnings.

- A name must be one of Nova 34's ``[libvirt]`` options; a deprecated name is refused with its new name.
- A value must be what oslo.config reads as the option's type (``bool``, ``int`` with its bounds and
  choices, a string with its choices, a list of strings, an IP address or host name) and must be written so
  that oslo.config reads it back as given: no control character, no ``$`` (oslo.config reads ``$name`` as
  a reference to another option), no quote or space at either end (oslo.config drops them), no ``{{``,
  ``{%`` or ``{#`` (Kolla-Ansible renders its override files as Jinja templates), no comma inside a list
  item (the list is written comma-separated).
- ``REFUSED`` options are never written: the libvirt connection nova-compute uses and the Ceph credentials
  belong to the deployment (Kolla-Ansible's template sets them), and the collection prints the rendered
  config.
- A value of null writes nothing for the option (not even the collection's default).
- On a host whose rendered config enables an mdev type (a vGPU host), ``live_migration_permit_post_copy``
  is written false unless the operator gives it: Nova's vGPU documentation requires it for live
  migration; an operator's true is written with a warning.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import did_you_mean
from ansible_collections.accel.openstack.plugins.module_utils._names.text import control_character
from ansible_collections.accel.openstack.plugins.module_utils._nova.libvirt_options import NOVA_VERSION, OPTIONS

SECTION = "libvirt"
POST_COPY = "live_migration_permit_post_copy"
# option -> why the collection never writes it
REFUSED = {
    "connection_uri": "it chooses the libvirt daemon nova-compute talks to, which the deployment owns "
    "(Kolla-Ansible points it at its nova_libvirt container); a wrong value stops nova-compute",
    "live_migration_uri": "it is deprecated for removal in Nova and carries the migration target's URI; set "
    "live_migration_scheme and live_migration_inbound_addr instead",
    "rbd_user": "it is a Ceph credential (the cephx user), which the deployment owns (Kolla-Ansible sets it from "
    "its Ceph configuration); the collection writes no credential",
    "rbd_secret_uuid": "it names the libvirt secret holding the Ceph key, which the deployment owns (Kolla-Ansible "
    "sets it from its Ceph configuration); the collection writes no credential",
}
# oslo.config's spellings of a boolean (types.Boolean), case-insensitive
BOOLEAN_WORDS = {
    "true": True,
    "yes": True,
    "on": True,
    "1": True,
    "false": False,
    "no": False,
    "off": False,
    "0": False,
}
MAX_VALUE = 1024
MAX_ITEMS = 256
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
# oslo.config's HostDomain: each label 1 to 63 letters, digits, '-' or '_', not starting or ending with '-'
_LABEL = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")
_TEMPLATE = ("{{", "{%", "{#")
KIND_WORDS = {
    "bool": "true or false",
    "int": "a whole number",
    "str": "a string",
    "list": "a list of strings",
    "host": "an IP address or a host name",
}


def _shown(value: object) -> str:
    """A value as the message shows it: JSON, or its kind and length when it is too long to show."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 120 else f"a {type(value).__name__} of {len(text)} characters"


def _text_problem(text: str) -> str | None:
    """Why ``text`` cannot be written as (part of) a value that oslo.config reads back as given."""
    if len(text) > MAX_VALUE:
        return f"is {len(text)} characters long; at most {MAX_VALUE}"
    char = control_character(text)
    if char:
        return f"contains the control character {char}; a value must stay on one line"
    if "$" in text:
        return "contains '$', which oslo.config reads as a reference to another option; give the value itself"
    if any(mark in text for mark in _TEMPLATE):
        return "contains a Jinja marker ({{, {% or {#), which Kolla-Ansible would render; give the value itself"
    if text != text.strip():
        return "starts or ends with a space, which oslo.config drops"
    if text[:1] in ("'", '"') or text[-1:] in ("'", '"'):
        return "starts or ends with a quote, which oslo.config may drop; give the value without quotes"
    return None


def host_problem(text: str) -> str | None:
    """Why ``text`` is not what oslo.config's HostDomain takes (an IP address or a host domain name)."""
    try:
        if "%" not in text:
            ipaddress.ip_address(text)
            return None
    except ValueError:
        pass
    if text.endswith("."):
        return "ends with '.', which oslo.config drops; give the host name without it"
    labels = text.split(".")
    if not text or len(text) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return "is not an IP address or a host name (labels of letters, digits, '-' and '_', at most 63 each)"
    if not re.search("[A-Za-z-]", labels[-1]):
        return "is not an IP address, and as a host name its last label has no letter"
    return None


def _boolean(value: object) -> tuple[str | None, str | None]:
    if isinstance(value, bool):
        return ("true" if value else "false"), None
    if isinstance(value, str) and value.strip().lower() in BOOLEAN_WORDS:
        return ("true" if BOOLEAN_WORDS[value.strip().lower()] else "false"), None
    return None, "must be true or false"


def _integer(value: object, spec: tuple) -> tuple[str | None, str | None]:
    _kind, choices, minimum, maximum = spec[:4]
    if isinstance(value, bool):
        return None, "must be a whole number, not true or false"
    if isinstance(value, str) and not value.strip():
        return None, "is empty, which oslo.config reads as no value, not Nova's default; give null to write nothing"
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        value = int(value.strip())
    if not isinstance(value, int):
        return None, "must be a whole number"
    if not -(2**63) <= value < 2**63:
        return None, "is outside the 64-bit range every whole-number option of Nova fits in"
    if choices and value not in choices:
        return None, f"must be one of {', '.join(str(c) for c in choices)}"
    if minimum is not None and value < minimum:
        return None, f"must be at least {minimum}"
    if maximum is not None and value > maximum:
        return None, f"must be at most {maximum}"
    return str(value), None


def _string(value: object, spec: tuple) -> tuple[str | None, str | None]:
    kind, choices = spec[:2]
    if not isinstance(value, str):
        return None, f"must be {KIND_WORDS[kind]}"
    problem = _text_problem(value) if value else None
    if problem:
        return None, problem
    if choices and value not in choices:
        return None, f"must be one of {', '.join(choices)} (exactly so written)"
    if kind == "host":
        problem = host_problem(value)
        if problem:
            return None, problem
    return value, None


def _list(value: object) -> tuple[str | None, str | None]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or isinstance(value, Mapping):
        return None, "must be a list of strings (or one comma-separated string)"
    if len(items) > MAX_ITEMS:
        return None, f"has {len(items)} items; at most {MAX_ITEMS}"
    if isinstance(value, str):
        items = [item.strip() for item in items] if value.strip() else []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, str) or not item:
            return None, f"item {number} is {_shown(item)}; every item must be a non-empty string"
        if "," in item:
            why = "contains a comma, which would split it in two; give each item on its own"
            return None, f"item {number} ({_shown(item)}) {why}"
        problem = _text_problem(item)
        if problem:
            return None, f"item {number} {problem}"
    return ",".join(items), None


def written_value(name: str, value: object) -> tuple[str | None, str | None]:
    """``(text, None)``: how ``value`` of the option ``name`` is written; ``(None, why)`` when refused."""
    spec = OPTIONS[name]
    kind = spec[0]
    if kind == "bool":
        return _boolean(value)
    if kind == "int":
        return _integer(value, spec)
    if kind == "list":
        return _list(value)
    return _string(value, spec)


def libvirt_section(host: str, raw: object, vgpu: bool) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """``({key: [value]}, errors, warnings)`` for the host's ``[libvirt]`` section (keys in name order)."""
    where = f"{host}: accel_nova_libvirt"
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        fix = "give a dict of Nova [libvirt] option names and values, e.g. {live_migration_permit_post_copy: false}"
        return {}, [f"{where} is {type(raw).__name__}; {fix}"], []
    errors: list[str] = []
    warnings: list[str] = []
    section: dict[str, list[str]] = {}
    renamed = {old: name for name, spec in OPTIONS.items() for old in spec[5]}
    for name in sorted(raw, key=str):
        value = raw[name]
        if not isinstance(name, str):
            errors.append(f"{where}: option name {_shown(name)} is not a string; give Nova's [libvirt] option name")
            continue
        shown_name = name if re.fullmatch(r"[A-Za-z0-9_-]{1,80}", name) else _shown(name)
        if name in REFUSED:
            errors.append(
                f"{where}.{name} is not written by this collection: {REFUSED[name]}; remove it from accel_nova_libvirt"
            )
            continue
        if name in renamed:
            new = renamed[name]
            errors.append(f"{where}.{name} is a deprecated name; Nova {NOVA_VERSION} reads it as {new}: use {new}")
            continue
        if name not in OPTIONS:
            errors.append(
                f"{where}.{shown_name} is not a [libvirt] option of Nova {NOVA_VERSION}: use an option name from "
                f"Nova's configuration reference ([libvirt] group), or remove it{did_you_mean(name, OPTIONS)}"
            )
            continue
        if value is None:
            continue  # null: the collection writes nothing for it
        text, problem = written_value(name, value)
        if problem:
            kind, choices = OPTIONS[name][:2]
            wanted = f"one of {', '.join(str(c) for c in choices)}" if choices else KIND_WORDS[kind]
            errors.append(f"{where}.{name} = {_shown(value)} {problem}; give {wanted} as Nova {NOVA_VERSION} reads it")
            continue
        if OPTIONS[name][4]:
            warnings.append(
                f"{where}.{name} is deprecated for removal in Nova {NOVA_VERSION}: it is written, but a later Nova "
                "refuses or ignores it; see Nova's configuration reference for what replaces it"
            )
        section[name] = [text]
    if vgpu and POST_COPY not in raw:
        section[POST_COPY] = ["false"]
        section = dict(sorted(section.items()))
    elif vgpu and section.get(POST_COPY) == ["true"]:
        warnings.append(
            f"{where}.{POST_COPY} is true on a host that offers vGPUs: Nova's vGPU documentation requires it false "
            "for live migration, so the migration check reports its vGPU instances as post_copy_permitted; set it "
            "false (or remove it: the collection then writes false)"
        )
    return section, errors, warnings
