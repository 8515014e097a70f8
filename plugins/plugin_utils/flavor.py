# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova 34's flavor translation: a flavor to the ``GET /allocation_candidates`` queries Nova sends.

Everything Nova does between ``openstack server create`` and Placement, as pure Python:

- the checks nova-api makes before it accepts a flavor (extra-spec validation at microversion 2.86+
  and the server-create CPU, NUMA, PCI alias and device-profile checks): a refusal with Nova's message;
- the request groups: ``resources[$S]:RC`` / ``trait[$S]:NAME`` extra specs, image ``trait:*``
  properties, CPU pinning (VCPU / PCPU, ``HW_CPU_HYPERTHREADING``), PCI alias groups when PCI devices
  are tracked in Placement, Cyborg device-profile groups, the flavor's VCPU / MEMORY_MB / DISK_GB;
- the request-wide parameters: ``limit``, ``group_policy`` and ``root_required``;
- the second, VCPU-based query Nova sends for every ``hw:cpu_policy=dedicated`` flavor, and how the
  scheduler merges both answers (``merge_answers``).

docs/flavors.md describes each rule. Query strings are written as Nova writes them (parameters
sorted), but readable: ``,``, ``:`` and ``!`` are not percent-encoded. Group suffixes Nova generates
from random request IDs (PCI alias groups) are replaced by stable ones (``_pci<N>_<I>``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import InputError, kind_of, parse_cpu_set
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import is_custom, is_custom_name, normalize
from ansible_collections.accel.openstack.plugins.module_utils._names.extra_specs import (
    VALIDATORS as EXTRA_SPEC_VALIDATORS,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.standard import (
    STANDARD_RESOURCE_CLASSES,
    STANDARD_TRAITS,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.suggest import suggest
from ansible_collections.accel.openstack.plugins.plugin_utils.extra_specs import fullmatch, nova_refusal
from ansible_collections.accel.openstack.plugins.plugin_utils.flavor_features import (
    FeatureRefusal,
    Features,
    check_features,
    check_locked_memory,
    features,
    late_traits,
)

MAX_PLACEMENT_RESULTS = 1000
# ResourceRequest.XS_KEYPAT: 'resources' or 'trait', an optional group suffix, ':', the name.
GROUP_KEY = re.compile(r"^(resources|trait)([a-zA-Z0-9_-]{1,64})?:(.*)\Z")
CPU_POLICIES = ("shared", "dedicated", "mixed")
CPU_THREAD_POLICIES = ("prefer", "isolate", "require")
PCI_NUMA_POLICIES = ("required", "legacy", "preferred", "socket")
PCI_DEVICE_TYPES = ("type-PCI", "type-PF", "type-VF")
HYPERTHREADING = "HW_CPU_HYPERTHREADING"
OWNER_NOVA = "OWNER_NOVA"
STATUS_DISABLED = "COMPUTE_STATUS_DISABLED"
ACCELERATORS = "COMPUTE_ACCELERATORS"
SOCKET_PCI_NUMA_AFFINITY = "COMPUTE_SOCKET_PCI_NUMA_AFFINITY"
_ALIAS_KEYS = {
    "name",
    "capability_type",
    "product_id",
    "vendor_id",
    "device_type",
    "numa_policy",
    "resource_class",
    "traits",
    "live_migratable",
}


class FlavorError(AccelError):
    """A flavor (or what it refers to) that cannot be translated; the message names the flavor and key."""


# -- the request model --------------------------------------------------------------------------
@dataclass
class Group:
    """One request group as Nova builds it: ``suffix`` None is the unsuffixed group."""

    suffix: str | None
    resources: dict[str, int] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    forbidden: set[str] = field(default_factory=set)
    origin: str = "flavor"  # flavor | image | pci | device_profile

    def empty(self) -> bool:
        return not (self.resources or self.required or self.forbidden)

    def params(self) -> list[tuple[str, str]]:
        suffix = self.suffix or ""
        out = [(f"resources{suffix}", ",".join(sorted(f"{rc}:{n}" for rc, n in self.resources.items())))]
        traits = sorted(self.required) + [f"!{t}" for t in sorted(self.forbidden)]
        if traits:
            out.append((f"required{suffix}", ",".join(traits)))
        return out


@dataclass
class _Build:
    """Nova's ResourceRequest while it is being built."""

    groups: dict[str | None, Group] = field(default_factory=dict)
    group_policy: str | None = None
    root_required: set[str] = field(default_factory=set)
    root_forbidden: set[str] = field(default_factory=set)
    limit: int | None = MAX_PLACEMENT_RESULTS
    flavor_groups: int = 0
    pinning: bool = False
    ignored: list[str] = field(default_factory=list)

    def group(self, suffix: str | None, origin: str = "flavor") -> Group:
        if suffix not in self.groups:
            self.groups[suffix] = Group(suffix, origin=origin)
        return self.groups[suffix]

    def add_resource(self, rc: str, amount: Any, suffix: str | None = None, where: str = "") -> None:
        group = self.group(suffix)
        _set_resource(group, rc, amount, self.ignored, where)

    def add_trait(self, name: str, value: Any, suffix: str | None = None, where: str = "") -> None:
        _set_trait(self.group(suffix), name, value, self.ignored, where)

    def merged(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for group in self.groups.values():
            for rc, amount in group.resources.items():
                out[rc] = out.get(rc, 0) + amount
        return out

    def suffixed(self) -> int:
        return sum(1 for suffix in self.groups if suffix is not None)

    def strip_zeros(self) -> None:
        for suffix in list(self.groups):
            group = self.groups[suffix]
            group.resources = {rc: n for rc, n in group.resources.items() if n != 0}
            if group.empty():
                del self.groups[suffix]

    def query(self) -> str:
        params: list[tuple[str, Any]] = []
        if self.limit is not None:
            params.append(("limit", self.limit))
        if self.group_policy is not None:
            params.append(("group_policy", self.group_policy))
        if self.root_required or self.root_forbidden:
            values = sorted(self.root_required) + [f"!{t}" for t in sorted(self.root_forbidden)]
            params.append(("root_required", ",".join(values)))
        for group in self.groups.values():
            params.extend(group.params())
        return urlencode(sorted(params, key=lambda p: (p[0], str(p[1]))), safe=",:!")


def _set_resource(group: Group, rc: str, amount: Any, ignored: list[str], where: str) -> None:
    # RequestGroup.add_resource: a class that is neither standard nor CUSTOM_ and an amount that is
    # not a non-negative integer are dropped (with a warning in Nova's log); a repeat replaces.
    if not (is_custom(rc) or rc in STANDARD_RESOURCE_CLASSES):
        ignored.append(f"{where or rc}: {rc!r} is not a standard or CUSTOM_ resource class; Nova drops it")
        return
    try:
        value = int(amount)
        if value < 0:
            raise ValueError
    except (TypeError, ValueError):
        ignored.append(f"{where or rc}: amount {amount!r} is not a non-negative integer; Nova drops it")
        return
    group.resources[rc] = value


def _set_trait(group: Group, name: str, value: Any, ignored: list[str], where: str) -> None:
    if value == "required":
        group.required.add(name)
    elif value == "forbidden":
        group.forbidden.add(name)
    else:
        ignored.append(f"{where or name}: {value!r} is neither 'required' nor 'forbidden'; Nova drops it")


@dataclass
class NovaRequest:
    """What Nova does with one flavor before and when it asks Placement."""

    flavor: str
    queries: list[str] = field(default_factory=list)
    refusal: dict | None = None
    pcpu_fallback: bool = False
    pci_requests: list[dict] = field(default_factory=list)
    numa: dict = field(default_factory=dict)
    # the request groups of each query, for explanations: [{"suffix", "resources", "required", ...}]
    groups: list[list[dict]] = field(default_factory=list)
    # extra specs Nova accepts but silently drops (a bad group_policy, a non-integer amount, ...)
    ignored: list[str] = field(default_factory=list)

    def raise_for_refusal(self) -> None:
        """Raise the refusal (if any) as a FlavorError."""
        if self.refusal:
            raise FlavorError(self.refusal["detail"], **self.refusal)

    def as_dict(self) -> dict:
        return {
            "flavor": self.flavor,
            "queries": list(self.queries),
            "refusal": self.refusal,
            "pcpu_fallback": self.pcpu_fallback,
            "pci_requests": self.pci_requests,
            "numa": self.numa,
            "ignored": list(self.ignored),
        }


class _Refused(AccelError):
    """Nova refuses the flavor: ``nova`` is Nova's message, ``detail`` ours (flavor, key, fix)."""

    def __init__(self, key: str, nova: str, detail: str, did_you_mean: list[str] | None = None):
        super().__init__(nova)
        self.key = key
        self.nova = nova
        self.detail = detail
        self.did_you_mean = did_you_mean or []


# -- the flavor itself -----------------------------------------------------------------------------
def _flavor_name(flavor: Any) -> str:
    if not isinstance(flavor, dict):
        raise FlavorError(f"a flavor must be a mapping with name, vcpus, ram and disk; got {flavor!r}")
    name = flavor.get("name")
    if not isinstance(name, str) or not name:
        raise FlavorError(f"flavor {flavor!r}: 'name' is missing; give the flavor's name")
    return name


def _size(flavor: dict, name: str, key: str, default: int | None = None) -> int:
    if key not in flavor or flavor[key] is None:
        if default is not None:
            return default
        raise FlavorError(f"flavor {name!r}: {key!r} is missing; give it as a whole number", flavor=name, key=key)
    value = flavor[key]
    if isinstance(value, bool):
        value = None
    elif isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        value = int(value)
    if not isinstance(value, int) or value < 0:
        raise FlavorError(
            f"flavor {name!r}: {key!r} is {flavor[key]!r}; give a whole number of "
            f"{'MB' if key in ('ram', 'swap') else 'GB' if key != 'vcpus' else 'vCPUs'} (0 or more)",
            flavor=name,
            key=key,
        )
    return value


def _extra_specs(flavor: dict, name: str) -> dict[str, str]:
    specs = flavor.get("extra_specs")
    if specs is None:
        specs = flavor.get("properties") or {}
    if not isinstance(specs, dict):
        raise FlavorError(
            f"flavor {name!r}: 'extra_specs' is {specs!r}; give a mapping of extra spec names to values",
            flavor=name,
            key="extra_specs",
        )
    out = {}
    for key, value in specs.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        out[str(key)] = value if isinstance(value, str) else str(value)
    return out


# -- aliases -----------------------------------------------------------------------------------
def parse_aliases(pci_aliases: Any) -> tuple[dict[str, tuple[str, list[dict]]], str | None]:
    """``[pci] alias`` entries as Nova's get_alias_from_config reads them: {name: (numa_policy, specs)}.

    Returns the aliases and, when Nova would refuse the configuration, Nova's reason.
    """
    aliases: dict[str, tuple[str, list[dict]]] = {}
    if isinstance(pci_aliases, dict | str):
        pci_aliases = [pci_aliases]
    for entry in pci_aliases or ():
        if isinstance(entry, str):
            try:
                spec = json.loads(entry)
            except ValueError as exc:
                return aliases, str(exc)
        else:
            spec = dict(entry) if isinstance(entry, dict) else entry
        problem = _alias_schema_problem(spec)
        if problem:
            return aliases, problem
        spec = dict(spec)
        name = spec.pop("name").strip()
        numa_policy = spec.pop("numa_policy", None) or "legacy"
        dev_type = spec.pop("device_type", None)
        if dev_type:
            spec["dev_type"] = dev_type
        live = spec.pop("live_migratable", None)
        if live is not None:
            flag = _strict_bool(live)
            if flag is None:
                return aliases, (
                    f"Unrecognized value '{live}', acceptable values are: '0', '1', 'f', 'false', 'n', "
                    "'no', 'off', 'on', 't', 'true', 'y', 'yes'"
                )
            spec["live_migratable"] = "true" if flag else "false"
        if name not in aliases:
            aliases[name] = (numa_policy, [spec])
            continue
        if aliases[name][0] != numa_policy:
            return aliases, f"NUMA policy mismatch for alias '{name}'"
        first = aliases[name][1][0]
        if "dev_type" not in first or "dev_type" not in spec:
            return aliases, "'dev_type'"  # Nova's KeyError text, caught and reported as the reason
        if first["dev_type"] != spec["dev_type"]:
            return aliases, f"Device type mismatch for alias '{name}'"
        aliases[name][1].append(spec)
    return aliases, None


def _strict_bool(value: Any) -> bool | None:
    text = str(value).strip().lower()
    if text in ("1", "t", "true", "on", "y", "yes"):
        return True
    if text in ("0", "f", "false", "off", "n", "no"):
        return False
    return None


def _alias_schema_problem(spec: Any) -> str | None:
    if not isinstance(spec, dict):
        return f"{spec!r} is not of type 'object'"
    extra = sorted(set(spec) - _ALIAS_KEYS)
    if extra:
        listed = ", ".join(repr(k) for k in extra)
        return f"Additional properties are not allowed ({listed} {'was' if len(extra) == 1 else 'were'} unexpected)"
    if "name" not in spec:
        return "'name' is a required property"
    for key in sorted(spec):
        value = spec[key]
        if not isinstance(value, str):
            return f"{value!r} is not of type 'string'"
    if not 1 <= len(spec["name"]) <= 256:
        return f"{spec['name']!r} is {'too short' if not spec['name'] else 'too long'}"
    for key in ("product_id", "vendor_id"):
        if key in spec and not re.search(r"^([0-9a-fA-F]{1,4})\Z", spec[key]):
            return f"{spec[key]!r} does not match '^([0-9a-fA-F]{{1,4}})$'"
    if "capability_type" in spec and spec["capability_type"] != "pci":
        return f"{spec['capability_type']!r} is not one of ['pci']"
    if "device_type" in spec and spec["device_type"] not in PCI_DEVICE_TYPES:
        return f"{spec['device_type']!r} is not one of {list(PCI_DEVICE_TYPES)!r}"
    if "numa_policy" in spec and spec["numa_policy"] not in PCI_NUMA_POLICIES:
        return f"{spec['numa_policy']!r} is not one of {list(PCI_NUMA_POLICIES)!r}"
    return None


def _check_aliases_for_placement(aliases: dict, pci_in_placement: bool) -> str | None:
    if pci_in_placement:
        multi = [name for name, (_policy, specs) in aliases.items() if len(specs) > 1]
        if multi:
            return (
                f"The PCI alias(es) {','.join(multi)} have multiple specs but [filter_scheduler]pci_in_placement "
                "is True. The PCI in Placement feature only supports one spec per alias. You can assign the "
                "same resource_class to multiple [pci]device_spec matchers to allow using different devices "
                "for the same alias."
            )
    missing = set()
    for name, (_policy, specs) in aliases.items():
        for spec in specs:
            ids = "vendor_id" in spec and "product_id" in spec
            if not ids and not (pci_in_placement and "resource_class" in spec):
                missing.add(name)
    if missing:
        tail = " or resource_class field set." if pci_in_placement else "."
        return f"The PCI alias(es) {','.join(sorted(missing))} does not have vendor_id and product_id fields set{tail}"
    return None


def _normalise_rc(name: str) -> str:
    # pci_placement_translator: upper-cased; kept when standard or already CUSTOM_, else normalised
    upper = name.upper()
    return upper if upper in STANDARD_RESOURCE_CLASSES or is_custom(upper) else normalize(upper, keep_custom_word=True)


def _normalise_traits(text: str) -> set[str]:
    # pci_placement_translator.get_traits: split on ',' without stripping; standard names kept as
    # given, others upper-cased and kept when CUSTOM_, else normalised
    if not text:
        return set()
    out = set()
    for name in text.split(","):
        if name in STANDARD_TRAITS:
            out.add(name)
            continue
        upper = name.upper()
        out.add(upper if is_custom(upper) else normalize(upper, keep_custom_word=True))
    return out


def pci_resource_class(spec: dict) -> str:
    """The resource class Nova asks for one alias spec (its resource_class, else CUSTOM_PCI_<V>_<P>)."""
    if spec.get("resource_class"):
        return _normalise_rc(spec["resource_class"])
    return f"CUSTOM_PCI_{spec.get('vendor_id')}_{spec.get('product_id')}".upper()


# -- Nova's refusals ----------------------------------------------------------------------------
def _refuse(name: str, key: str, nova: str, fix: str, did_you_mean: list[str] | None = None) -> _Refused:
    return _Refused(key, nova, f"flavor {name!r}: {key} {fix}", did_you_mean)


# The value rules of the extra specs nova-api (microversion 2.86+) validates that the translation
# reads: name -> (kind, allowed values in Nova's order | pattern | minimum).
_SPEC_RULES: dict[str, tuple[str, Any]] = {
    "hw:cpu_policy": ("enum", ("dedicated", "shared", "mixed")),
    "hw:cpu_thread_policy": ("enum", ("prefer", "isolate", "require")),
    "hw:emulator_threads_policy": ("enum", ("isolate", "share")),
    "hw:pci_numa_affinity_policy": ("enum", ("required", "preferred", "legacy", "socket")),
    "group_policy": ("enum", ("isolate", "none")),
    "hw:cpu_dedicated_mask": ("pattern", r"\^?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*"),
    "pci_passthrough:alias": ("pattern", r"[^:]+:\d+(?:\s*,\s*[^:]+:\d+)*"),
    "hw:numa_nodes": ("int", 1),
    "accel:device_profile": ("str", None),
}
_SPEC_FIXES = {
    "hw:cpu_dedicated_mask": "give guest CPU numbers such as '0-1' or '^0'",
    "pci_passthrough:alias": "give <alias>:<count>[,<alias>:<count>...], e.g. 'a100:1'",
    "hw:numa_nodes": "give a whole number of guest NUMA nodes (1 or more)",
}


def _validate_int(name: str, where: str, value: str, minimum: int | None, what: str) -> None:
    try:
        number = int(value)
    except ValueError:
        raise _refuse(
            name, where, f"Validation failed; '{value}' is not a valid integer value.", f"is {value!r}; {what}"
        ) from None
    if minimum is not None and number < minimum:
        raise _refuse(
            name,
            where,
            f"Validation failed; '{number}' is less than the min value of '{minimum}'.",
            f"is {value!r}; {what}",
        )


def _validate_spec(name: str, key: str, value: str) -> None:
    where = f"extra_specs {key!r}"
    rule = _SPEC_RULES.get(key)
    if rule is not None:
        kind, arg = rule
        if kind == "enum" and value not in arg:
            words = sorted(arg, key=lambda v: (v != "shared", v))  # shared first in our own sentence
            raise _refuse(
                name,
                where,
                f"Validation failed; '{value}' is not one of: {', '.join(arg)}.",
                f"is {value!r}; use {', '.join(words[:-1])} or {words[-1]}",
                suggest(value, list(arg)),
            )
        if kind == "pattern" and not fullmatch(arg, value):
            raise _refuse(
                name,
                where,
                f"Validation failed; '{value}' is not of the format '{arg}'.",
                f"is {value!r}; {_SPEC_FIXES[key]}",
            )
        if kind == "int":
            _validate_int(name, where, value, arg, _SPEC_FIXES[key])
        return
    match = GROUP_KEY.match(key)
    if not match:
        return
    prefix, _suffix, item = match.groups()
    custom = is_custom_name(item, check_length=False)
    if prefix == "resources" and (item in STANDARD_RESOURCE_CLASSES or custom):
        _validate_int(name, where, value, None, f"give a whole number of {item}")
        return
    if prefix == "trait" and (item in STANDARD_TRAITS or custom):
        if value not in ("required", "forbidden"):
            raise _refuse(
                name,
                where,
                f"Validation failed; '{value}' is not one of: required, forbidden.",
                f"is {value!r}; use required or forbidden",
                suggest(value, ["required", "forbidden"]),
            )
        return
    kind = "resource class" if prefix == "resources" else "trait"
    known = STANDARD_RESOURCE_CLASSES if prefix == "resources" else STANDARD_TRAITS
    raise _refuse(
        name,
        where,
        f"Validation failed; extra spec '{key}' does not appear to be a valid extra spec.",
        f"names {item!r}, which is neither a standard {kind} nor CUSTOM_ followed by A-Z, 0-9 and _",
        suggest(item, sorted(known)),
    )


def _validate_extra_specs(name: str, specs: dict[str, str]) -> None:
    """The checks nova-api (microversion 2.86+) makes when the extra specs are set, key by key: the keys
    the translation reads with their own fixes first, then every key against Nova's registry."""
    for key, value in specs.items():
        _validate_spec(name, key, value)
        refused = nova_refusal(key, value)
        if refused:
            namespace = key.split(":", 1)[0]
            known = sorted(n for n, *_rest in EXTRA_SPEC_VALIDATORS if n.startswith(namespace + ":"))
            raise _refuse(
                name,
                f"extra_specs {key!r}",
                refused,
                "is refused by Nova 34 when a flavor is created or its extra specs are set (microversion 2.86+); "
                "a flavor that already holds it still boots, but cannot be edited: remove or correct the key",
                suggest(key, known) if "does not appear" in refused else [],
            )


def _cpu_mask(name: str, text: str, vcpus: int, key: str = "extra_specs 'hw:cpu_dedicated_mask'") -> set[int]:
    """hardware.parse_cpu_spec for a vCPU mask such as 'hw:cpu_dedicated_mask' (a leading '^' excludes from
    all vCPUs)."""
    spec = f"0-{vcpus - 1},{text}" if text.strip().startswith("^") else text
    try:
        return parse_cpu_set(spec)
    except InputError as exc:
        raise _refuse(name, key, exc.msg, f"is {text!r}; give guest CPU numbers such as '0-1' or '^0'") from None


_REALTIME_MASK = "Use of realtime CPUs requires either one or more non-realtime CPU(s) or offloaded emulator threads."


def _realtime_cpus(name: str, vcpus: int, specs: dict, image: dict) -> set[int] | None:
    """hardware.get_realtime_cpu_constraint: the realtime vCPUs of a 'hw:cpu_realtime' flavor, or Nova's refusal."""
    if str(specs.get("hw:cpu_realtime", "")).strip().lower() not in ("1", "t", "true", "on", "y", "yes"):
        return None
    image_mask = image.get("hw_cpu_realtime_mask")
    mask = image_mask or specs.get("hw:cpu_realtime_mask")
    key = "image_properties 'hw_cpu_realtime_mask'" if image_mask else "extra_specs 'hw:cpu_realtime_mask'"
    cpus = set(range(vcpus))
    realtime = _cpu_mask(name, mask, vcpus, key) if mask else set(cpus)
    fix = "give hw:cpu_realtime_mask, e.g. '^0' (every vCPU but 0 is realtime), or hw:emulator_threads_policy"
    if not realtime or (realtime == cpus and not specs.get("hw:emulator_threads_policy")):
        raise _refuse(name, key if mask else "extra_specs 'hw:cpu_realtime'", _REALTIME_MASK, fix)
    if not realtime <= cpus:
        raise _refuse(
            name,
            key,
            "Realtime policy vCPU(s) mask is configured with RT vCPUs that are not a subset of the vCPUs in the "
            "flavor. See hw:cpu_realtime_mask or hw_cpu_realtime_mask",
            f"is {mask!r}; the flavor's vCPUs are 0-{vcpus - 1}",
        )
    return realtime


def _numa_nodes(name: str, vcpus: int, memory_mb: int, specs: dict, image: dict, policy: str | None) -> int | None:
    """hardware.numa_get_constraints' guest NUMA node count and its even split of CPUs and memory."""
    flavor_nodes = specs.get("hw:numa_nodes")
    image_nodes = image.get("hw_numa_nodes")
    if flavor_nodes and image_nodes:
        raise _refuse(
            name,
            "image_properties 'hw_numa_nodes'",
            "Image property 'hw_numa_nodes' is not permitted to override NUMA configuration set against the flavor",
            "may not be set when the flavor sets hw:numa_nodes; drop one of them",
        )
    text = flavor_nodes or image_nodes
    if not text:
        return None
    if not re.fullmatch(r"\s*[-+]?\d+\s*", text) or int(text) < 1:
        raise _refuse(
            name,
            "extra_specs 'hw:numa_nodes'" if flavor_nodes else "image_properties 'hw_numa_nodes'",
            f"The property 'numa_nodes' cannot be '{text}'. It must be a number greater than 0",
            f"is {text!r}; give a whole number of guest NUMA nodes (1 or more)",
        )
    nodes = int(text)
    if not any(k.startswith("hw:numa_cpus.") or k.startswith("hw:numa_mem.") for k in specs) and (
        vcpus % nodes or memory_mb % nodes
    ):
        raise _refuse(
            name,
            "extra_specs 'hw:numa_nodes'" if flavor_nodes else "image_properties 'hw_numa_nodes'",
            "Instance CPUs and/or memory cannot be evenly distributed across instance NUMA nodes. Explicit "
            "assignment of CPUs and memory to nodes is required",
            f"is {nodes}, which does not divide vcpus ({vcpus}) and ram ({memory_mb} MB) evenly",
        )
    return nodes


def _check_image_policy(name: str, key: str, what: str, value, allowed) -> None:
    """Nova's refusal of an image's CPU (thread) policy that is not one of ``allowed``."""
    if value and value not in allowed:
        raise _refuse(
            name,
            f"image_properties '{key}'",
            f"{what} requested from 'image properties' is invalid, given: '{value}', available: '{list(allowed)!s}'.",
            f"is {value!r}; use {', '.join(list(allowed)[:-1])} or {list(allowed)[-1]}",
        )


def _cpu_constraints(name: str, vcpus: int, memory_mb: int, specs: dict, image: dict) -> dict:
    """hardware.numa_get_constraints' CPU rules: the policies in force, or Nova's refusal (the realtime mask
    checked first, as nova-api checks it before the NUMA constraints)."""
    realtime = _realtime_cpus(name, vcpus, specs, image)
    flavor_policy = specs.get("hw:cpu_policy")
    image_policy = image.get("hw_cpu_policy")
    _check_image_policy(name, "hw_cpu_policy", "CPU policy", image_policy, CPU_POLICIES)
    if flavor_policy == "dedicated":
        policy = flavor_policy
    elif flavor_policy in ("mixed", "shared"):
        forbidden = ("dedicated",) if flavor_policy == "mixed" else ("mixed", "dedicated")
        if image_policy in forbidden:
            raise _refuse(
                name,
                "image_properties 'hw_cpu_policy'",
                "Image property 'hw_cpu_policy' is not permitted to override CPU pinning policy set against the flavor",
                f"is {image_policy!r} while the flavor says {flavor_policy!r}; drop one of them",
            )
        policy = flavor_policy
    else:
        policy = image_policy or None
    flavor_thread = specs.get("hw:cpu_thread_policy")
    image_thread = image.get("hw_cpu_thread_policy")
    _check_image_policy(name, "hw_cpu_thread_policy", "CPU thread policy", image_thread, CPU_THREAD_POLICIES)
    if flavor_thread in (None, "prefer"):
        thread = flavor_thread or image_thread
    elif image_thread and image_thread != flavor_thread:
        raise _refuse(
            name,
            "image_properties 'hw_cpu_thread_policy'",
            "Image property 'hw_cpu_thread_policy' is not permitted to override CPU thread pinning policy set "
            "against the flavor",
            f"is {image_thread!r} while the flavor says {flavor_thread!r}; drop one of them",
        )
    else:
        thread = flavor_thread
    # what the scheduler's pinning translation reads (before resources:PCPU or a trait override them)
    pinning_policy, pinning_thread = policy, thread
    dedicated_mask = None
    mask_text = specs.get("hw:cpu_dedicated_mask")
    if mask_text:
        dedicated_mask = _cpu_mask(name, mask_text, vcpus)
        cpus = set(range(vcpus))
        if not dedicated_mask or not (cpus - dedicated_mask):
            raise _refuse(
                name,
                "extra_specs 'hw:cpu_dedicated_mask'",
                "Mixed instance must have at least 1 pinned vCPU and 1 unpinned vCPU. See 'hw:cpu_dedicated_mask'.",
                f"is {mask_text!r}; a mixed flavor needs at least one dedicated and one shared vCPU",
            )
        if not dedicated_mask <= cpus:
            raise _refuse(
                name,
                "extra_specs 'hw:cpu_dedicated_mask'",
                "Mixed instance dedicated vCPU(s) mask is not a subset of vCPUs in the flavor. See "
                '"hw:cpu_dedicated_mask"',
                f"is {mask_text!r}; the flavor's vCPUs are 0-{vcpus - 1}",
            )
    emulator = specs.get("hw:emulator_threads_policy") or None
    requested_vcpu = requested_pcpu = 0
    for key, value in specs.items():
        for rc in ("VCPU", "PCPU"):
            if re.match(rf"resources([1-9][0-9]*)?:{rc}", key):
                try:
                    amount = int(value)
                except ValueError:
                    continue
                if rc == "VCPU":
                    requested_vcpu += amount
                else:
                    requested_pcpu += amount
    if policy and (requested_vcpu or requested_pcpu):
        raise _refuse(
            name,
            "extra_specs 'hw:cpu_policy'",
            "It is not possible to use the 'resources:VCPU' or 'resources:PCPU' extra specs in combination "
            "with the 'hw:cpu_policy' extra spec or 'hw_cpu_policy' image metadata property; use one or the other",
            "cannot be combined with resources:VCPU or resources:PCPU; use one or the other",
        )
    if requested_vcpu and requested_pcpu:
        raise _refuse(
            name,
            "extra_specs 'resources:PCPU'",
            "It is not possible to specify both 'resources:VCPU' and 'resources:PCPU' extra specs; use one or "
            "the other",
            "cannot be combined with resources:VCPU; use one or the other",
        )
    if requested_pcpu:
        if emulator == "isolate" and vcpus + 1 != requested_pcpu:
            raise _refuse(
                name,
                "extra_specs 'resources:PCPU'",
                "You have requested 'hw:emulator_threads_policy=isolate' but have not requested sufficient "
                "PCPUs to handle this policy; you must allocate exactly flavor.vcpus + 1 PCPUs.",
                f"is {requested_pcpu}; with hw:emulator_threads_policy=isolate give exactly {vcpus + 1}",
            )
        if emulator != "isolate" and vcpus != requested_pcpu:
            raise _refuse(
                name,
                "extra_specs 'resources:PCPU'",
                "There is a mismatch between the number of PCPUs requested via 'resourcesNN:PCPU' and the "
                "flavor); you must allocate exactly flavor.vcpus PCPUs",
                f"is {requested_pcpu}; give exactly the flavor's vcpus ({vcpus})",
            )
        policy = "dedicated"
    if requested_vcpu:
        policy = "shared"
    hyperthreading = None
    for key, value in specs.items():
        if re.match(rf"trait([1-9][0-9]*)?:{HYPERTHREADING}", key):
            hyperthreading = value
            break
    else:
        if image.get(f"trait:{HYPERTHREADING}") == "required":
            hyperthreading = "required"
    if thread and hyperthreading:
        raise _refuse(
            name,
            f"extra_specs 'trait:{HYPERTHREADING}'",
            "It is not possible to use the 'trait:HW_CPU_HYPERTHREADING' extra spec in combination with the "
            "'hw:cpu_thread_policy' extra spec or 'hw_cpu_thread_policy' image metadata property; use one or "
            "the other",
            "cannot be combined with hw:cpu_thread_policy; use one or the other",
        )
    if hyperthreading == "forbidden":
        thread = "isolate"
    elif hyperthreading == "required":
        thread = "require"
    if policy in ("shared", None):
        if thread:
            raise _refuse(
                name,
                "extra_specs 'hw:cpu_thread_policy'",
                "Cannot set cpu thread pinning policy in a non dedicated cpu pinning policy",
                f"({thread}) needs hw:cpu_policy=dedicated or mixed",
            )
        if emulator == "isolate":
            raise _refuse(
                name,
                "extra_specs 'hw:emulator_threads_policy'",
                "An isolated CPU emulator threads option requires a dedicated CPU policy option.",
                "(isolate) needs hw:cpu_policy=dedicated or mixed",
            )
        if dedicated_mask:
            raise _refuse(
                name,
                "extra_specs 'hw:cpu_dedicated_mask'",
                "Cannot specify 'hw:cpu_dedicated_mask' without the 'mixed' policy.",
                "needs hw:cpu_policy=mixed",
            )
        if realtime:
            raise _refuse(
                name,
                "extra_specs 'hw:cpu_realtime'",
                "Cannot set realtime policy in a non dedicated cpu pinning policy",
                "needs hw:cpu_policy=dedicated or mixed",
            )
    elif policy == "dedicated":
        if dedicated_mask:
            raise _refuse(
                name,
                "extra_specs 'hw:cpu_dedicated_mask'",
                "Cannot specify 'hw:cpu_dedicated_mask' without the 'mixed' policy.",
                "needs hw:cpu_policy=mixed, not dedicated",
            )
    elif bool(realtime) == bool(dedicated_mask):
        raise _refuse(
            name,
            "extra_specs 'hw:cpu_dedicated_mask'",
            "Dedicated CPU set can be specified from either 'hw:cpu_dedicated_mask' or 'hw:cpu_realtime_mask' "
            "when using 'mixed' CPU policy. 'hw:cpu_dedicated_mask' and 'hw:cpu_realtime_mask' can not be "
            "specified at the same time, or be specified with none of them.",
            "is missing or doubled: a mixed flavor lists its dedicated vCPUs in exactly one of hw:cpu_dedicated_mask "
            "and hw:cpu_realtime_mask, e.g. '^0' (all but vCPU 0)",
        )
    nodes = _numa_nodes(name, vcpus, memory_mb, specs, image, policy)
    return {
        "numa_nodes": nodes,
        "cpu_policy": policy,
        "cpu_thread_policy": thread,
        "pinning_policy": pinning_policy,
        "pinning_thread_policy": pinning_thread,
        "emulator_threads_policy": emulator,
        "dedicated_cpus": sorted(dedicated_mask or (range(vcpus) if policy == "dedicated" else realtime or ())),
    }


_PAGE_BYTES = re.compile(r"([-+]?[0-9]*\.?[0-9]+)([KMGTPEZYRQ]i?)?(b|bit|B)")


def _mem_page_size(name: str, specs: dict, image: dict) -> str | int | float | None:
    """hardware._get_numa_pagesize_constraint: the page size asked (``small``, ``large``, ``any`` or a size
    in KiB) from ``hw:mem_page_size``, which the image's ``hw_mem_page_size`` may narrow only when the
    flavor says ``large`` or ``any``; or Nova's refusal."""
    flavor_request = specs.get("hw:mem_page_size")
    image_request = image.get("hw_mem_page_size")

    def parsed(request, key: str):
        text = str(request)
        if text in ("any", "large", "small"):
            return text
        if text.isdigit():
            return int(text)
        match = _PAGE_BYTES.fullmatch(text)
        if not match:
            raise _refuse(
                name,
                key,
                f"Invalid memory page size '{text}'",
                f"is {text!r}; give small, large, any, a size in KiB such as 2048, or a size with a unit such as "
                "2MB or 1GiB",
            )
        unit = match.group(2) or ""
        size = float(match.group(1)) / (8 if match.group(3) != "B" else 1)
        size *= 1024 ** ("KMGTPEZYRQ".index(unit[0]) + 1 if unit else 0)
        kib = math.ceil(size) / 1024  # whole bytes, rounded up, as Nova counts them
        return int(kib) if kib == int(kib) else kib

    if not flavor_request and image_request:
        raise _refuse(
            name,
            "image_properties 'hw_mem_page_size'",
            f"Page size {image_request} forbidden against '<empty>'",
            f"is {str(image_request)!r} while the flavor sets no hw:mem_page_size; set hw:mem_page_size=large or any "
            "on the flavor, or drop the image property",
        )
    if not flavor_request:
        return None
    size = parsed(flavor_request, "extra_specs 'hw:mem_page_size'")
    if image_request and size in ("any", "large"):
        return parsed(image_request, "image_properties 'hw_mem_page_size'")
    if image_request:
        raise _refuse(
            name,
            "image_properties 'hw_mem_page_size'",
            f"Page size {image_request} forbidden against '{flavor_request}'",
            f"is {str(image_request)!r} while the flavor says {str(flavor_request)!r}; only a flavor with "
            "hw:mem_page_size=large or any lets the image choose",
        )
    return size


def _pci_numa_policy(name: str, specs: dict, image: dict) -> str | None:
    flavor_policy = specs.get("hw:pci_numa_affinity_policy")
    image_policy = image.get("hw_pci_numa_affinity_policy")
    if flavor_policy and image_policy and flavor_policy != image_policy:
        raise _refuse(
            name,
            "image_properties 'hw_pci_numa_affinity_policy'",
            "Image property 'hw_pci_numa_affinity_policy' is not permitted to override the "
            "'hw:pci_numa_affinity_policy' flavor extra spec.",
            f"is {image_policy!r} while the flavor says {flavor_policy!r}; drop one of them",
        )
    policy = flavor_policy or image_policy or None
    if policy and policy not in PCI_NUMA_POLICIES:
        raise _refuse(
            name,
            "image_properties 'hw_pci_numa_affinity_policy'",
            f"Invalid PCI NUMA affinity configured: {policy}",
            f"is {policy!r}; use required, legacy, preferred or socket",
        )
    return policy


def _pci_requests(
    name: str, specs: dict, aliases: dict, alias_problem: str | None, policy: str | None, pci_in_placement: bool
) -> list[dict]:
    text = specs.get("pci_passthrough:alias")
    if text is None:
        return []
    key = "extra_specs 'pci_passthrough:alias'"
    if alias_problem is not None:
        raise _refuse(
            name,
            "pci_aliases",
            f"Invalid PCI alias definition: {alias_problem}",
            f"cannot be read as Nova reads [pci] alias: {alias_problem}",
        )
    alias_problem = _check_aliases_for_placement(aliases, pci_in_placement)
    if alias_problem is not None:
        raise _refuse(name, "pci_aliases", alias_problem, f"are refused by Nova: {alias_problem}")
    requests = []
    for index, item in enumerate(text.split(",")):
        alias_name, _sep, count = item.partition(":")
        alias_name = alias_name.strip()
        if alias_name not in aliases:
            hints = suggest(alias_name, sorted(aliases))
            hint = f"; did you mean {' or '.join(hints)}?" if hints else ""
            known = ", ".join(sorted(aliases)) or "none"
            raise _refuse(
                name,
                key,
                f"PCI alias {alias_name} is not defined",
                f"asks for alias {alias_name!r}, which [pci] alias does not define (defined: {known}){hint}",
                hints,
            )
        numa_policy, alias_specs = aliases[alias_name]
        requests.append(
            {
                "alias": alias_name,
                "count": int(count),
                "numa_policy": policy or numa_policy,
                "specs": [dict(s) for s in alias_specs],
                "index": index,
            }
        )
    return requests


def _device_profile_groups(name: str, specs: dict, device_profiles: dict | None) -> list[Group]:
    profile = specs.get("accel:device_profile")
    if not profile:
        return []
    profiles = device_profiles or {}
    if profile not in profiles:
        hints = suggest(profile, sorted(profiles))
        hint = f"; did you mean {' or '.join(hints)}?" if hints else ""
        raise _refuse(
            name,
            "extra_specs 'accel:device_profile'",
            f"Device profile name {profile}: Expected 1 device profile but got nothing.",
            f"names device profile {profile!r}, which Cyborg does not have (known: "
            f"{', '.join(sorted(profiles)) or 'none'}){hint}",
            hints,
        )
    groups = []
    listed = profiles[profile] or []
    if not isinstance(listed, list | tuple) or not all(isinstance(g, dict) or g is None for g in listed):
        raise FlavorError(
            f"flavor {name!r}: device_profiles {profile!r} is {kind_of(listed)}"
            + (
                f" holding {', '.join(sorted({kind_of(g) for g in listed if not isinstance(g, dict)}))}"
                if isinstance(listed, list | tuple)
                else ""
            )
            + "; give the profile's groups, a list of mappings of resources:RC, trait:NAME and accel: keys"
        )
    for index, dp_group in enumerate(listed):
        group = Group(f"device_profile_{index}", origin="device_profile")
        ignored: list[str] = []
        for key, value in (dp_group or {}).items():
            match = GROUP_KEY.match(str(key))
            if not match:
                continue
            prefix, _suffix, item = match.groups()
            if prefix == "resources":
                try:
                    int(value)
                except (TypeError, ValueError):
                    raise _refuse(
                        name,
                        f"device_profiles {profile!r} group {index} {key!r}",
                        f"invalid literal for int() with base 10: {value!r}",
                        f"is {value!r}; give a whole number",
                    ) from None
                _set_resource(group, item, value, ignored, str(key))
            else:
                _set_trait(group, item, value, ignored, str(key))
        groups.append(group)
    return groups


def _image_properties(name: str, image_properties: Any) -> dict:
    if image_properties is None:
        return {}
    if not isinstance(image_properties, dict):
        raise FlavorError(
            f"flavor {name!r}: image_properties is {image_properties!r}; give a mapping of image properties",
            flavor=name,
            key="image_properties",
        )
    return {str(k): v if isinstance(v, str) else str(v) for k, v in image_properties.items()}


# -- the queries -------------------------------------------------------------------------------
def _image_traits(image: dict) -> list[str]:
    # ImageMetaProps: every 'trait:<NAME>' property whose value is exactly 'required'
    return [key[6:] for key, value in image.items() if key.startswith("trait:") and value == "required"]


def _pci_groups(requests: list[dict]) -> list[Group]:
    groups = []
    for number, request in enumerate(requests):
        spec = request["specs"][0]
        for index in range(request["count"]):
            group = Group(f"_pci{number}-{index}", origin="pci")
            group.resources[pci_resource_class(spec)] = 1
            group.required = _normalise_traits(spec.get("traits", "")) | {OWNER_NOVA}
            groups.append(group)
    return groups


def _build(
    specs: dict,
    image: dict,
    sizes: dict,
    cpu: dict,
    outside: list[Group],
    pinning: bool,
    limit: int | None,
    pci_policy: str | None,
    feats: tuple[Features, list[str]] | None = None,
) -> _Build:
    """ResourceRequest.from_request_spec + resources_from_request_spec for one query."""
    build = _Build(limit=limit)
    for key, value in specs.items():
        where = f"extra_specs {key!r}"
        if key == "group_policy":
            if value in ("none", "isolate"):
                build.group_policy = value
            else:
                build.ignored.append(f"{where}: {value!r} is neither 'none' nor 'isolate'; Nova ignores it")
            continue
        match = GROUP_KEY.match(key)
        if not match:
            continue
        prefix, suffix, item = match.groups()
        if prefix == "resources":
            build.add_resource(item, value, suffix, where)
        else:
            build.add_trait(item, value, suffix, where)
    build.flavor_groups = build.suffixed()
    for trait in _image_traits(image):
        build.add_trait(trait, "required", where=f"image_properties 'trait:{trait}'")
    if pinning:
        policy = cpu["pinning_policy"]
        pcpus = 0
        if policy == "dedicated":
            build.pinning = True
            pcpus = sizes["vcpus"]
        if policy == "mixed":
            pcpus = len(cpu["dedicated_cpus"])
            build.add_resource("VCPU", sizes["vcpus"] - pcpus)
        if policy in ("dedicated", "mixed"):
            if cpu["emulator_threads_policy"] == "isolate":
                pcpus += 1
            build.add_resource("PCPU", pcpus)
        trait = {"isolate": "forbidden", "require": "required"}.get(cpu["pinning_thread_policy"])
        if trait:
            build.add_trait(HYPERTHREADING, trait)
    for group in outside:
        build.groups[group.suffix] = Group(
            group.suffix, dict(group.resources), set(group.required), set(group.forbidden), group.origin
        )
    merged = build.merged()
    if "VCPU" not in merged and "PCPU" not in merged:
        build.add_resource("VCPU", sizes["vcpus"])
    if "MEMORY_MB" not in merged:
        build.add_resource("MEMORY_MB", sizes["ram"])
    if "DISK_GB" not in merged and sizes["disk_gb"]:
        build.add_resource("DISK_GB", sizes["disk_gb"])
    found, late = feats or (Features(), [])
    for rc, amount in found.resources:
        build.add_resource(rc, amount)
    for trait in found.traits:
        build.add_trait(trait, "required")
    if pci_policy == "socket":
        build.add_trait(SOCKET_PCI_NUMA_AFFINITY, "required")
    for trait in late:
        build.add_trait(trait, "required")
    build.strip_zeros()
    if build.suffixed() >= 2 and not build.group_policy and build.flavor_groups <= 1:
        build.group_policy = "none"
    build.root_forbidden.add(STATUS_DISABLED)
    build.root_required.add(OWNER_NOVA)
    if specs.get("accel:device_profile"):
        build.root_required.add(ACCELERATORS)
    build.root_required.update(found.root_required)
    return build


def _feature_refusal(function, name: str, specs: dict, image: dict, image_name: str | None):
    """Call a flavor_features function; its FeatureRefusal becomes the flavor's refusal."""
    try:
        return function(name, specs, image, image_name)
    except FeatureRefusal as refused:
        raise _refuse(name, refused.key, refused.nova, refused.fix) from None


def _groups_of(build: _Build) -> list[dict]:
    return [
        {
            "suffix": g.suffix,
            "origin": g.origin,
            "resources": dict(g.resources),
            "required": sorted(g.required),
            "forbidden": sorted(g.forbidden),
        }
        for g in build.groups.values()
    ]


def translate(
    flavor: dict,
    *,
    pci_aliases: Any = (),
    pci_in_placement: bool = False,
    device_profiles: dict | None = None,
    image_properties: dict | None = None,
    boot_from_volume: bool = False,
    max_placement_results: int | None = MAX_PLACEMENT_RESULTS,
    image_name: str | None = None,
) -> NovaRequest:
    """The queries Nova 34 sends to ``GET /allocation_candidates`` for ``flavor``, or its refusal.

    Raises FlavorError for input that is not a flavor at all (a missing or non-integer size, extra
    specs that are not a mapping); everything Nova itself refuses comes back as ``refusal``.
    """
    name = _flavor_name(flavor)
    sizes = {key: _size(flavor, name, key) for key in ("vcpus", "ram", "disk")}
    sizes["ephemeral"] = _size(flavor, name, "ephemeral", 0)
    sizes["swap"] = _size(flavor, name, "swap", 0)
    # DISK_GB: root (none when booting from volume) + ephemeral + swap rounded up to whole GB
    sizes["disk_gb"] = sizes["ephemeral"] + (sizes["swap"] + 1023) // 1024 + (0 if boot_from_volume else sizes["disk"])
    specs = _extra_specs(flavor, name)
    image = _image_properties(name, image_properties)
    aliases, alias_problem = parse_aliases(pci_aliases)
    request = NovaRequest(flavor=name)
    try:
        _validate_extra_specs(name, specs)
        _feature_refusal(check_features, name, specs, image, image_name)
        cpu = _cpu_constraints(name, sizes["vcpus"], sizes["ram"], specs, image)
        page_size = _mem_page_size(name, specs, image)
        _feature_refusal(check_locked_memory, name, specs, image, image_name)
        pci_policy = _pci_numa_policy(name, specs, image)
        pci_requests = _pci_requests(name, specs, aliases, alias_problem, pci_policy, pci_in_placement)
        profile_groups = _device_profile_groups(name, specs, device_profiles)
        feats = (
            _feature_refusal(features, name, specs, image, image_name),
            _feature_refusal(late_traits, name, specs, image, image_name),
        )
    except _Refused as refused:
        request.refusal = {
            "code": "invalid_flavor",
            "message": refused.nova,
            "detail": refused.detail,
            "key": refused.key,
            "did_you_mean": refused.did_you_mean,
        }
        return request
    request.pci_requests = [{k: v for k, v in r.items() if k != "index"} for r in pci_requests]
    request.numa = {
        "cpu_policy": cpu["cpu_policy"],
        "cpu_thread_policy": cpu["cpu_thread_policy"],
        "emulator_threads_policy": cpu["emulator_threads_policy"],
        "dedicated_cpus": cpu["dedicated_cpus"],
        "pci_numa_affinity_policy": pci_policy,
        "numa_nodes": cpu["numa_nodes"],
        "mem_page_size": page_size,
        "vcpus": sizes["vcpus"],
        "memory_mb": sizes["ram"],
    }
    outside = (_pci_groups(pci_requests) if pci_in_placement else []) + profile_groups
    first = _build(specs, image, sizes, cpu, outside, True, max_placement_results, pci_policy, feats)
    request.queries.append(first.query())
    request.groups.append(_groups_of(first))
    request.ignored = list(dict.fromkeys(first.ignored))
    if first.pinning:
        fallback = _build(specs, image, sizes, cpu, outside, False, max_placement_results, pci_policy, feats)
        request.pcpu_fallback = True
        request.queries.append(fallback.query())
        request.groups.append(_groups_of(fallback))
    return request


# -- the scheduler's merge of Placement's answers ----------------------------------------------------
def merge_answers(req: NovaRequest, answers: list[tuple[int, dict | str]]) -> dict:
    """Placement's answers to ``req.queries`` merged as Nova 34's scheduler merges them.

    ``answers[i]`` is (HTTP status, body or error text) for ``req.queries[i]``. A non-200 answer is
    an empty one to Nova's report client; for a ``dedicated`` flavor a non-200 answer to the VCPU
    fallback query makes the scheduler extend a list with None: a TypeError, not NoValidHost.
    """
    if req.refusal:
        return {
            "outcome": "invalid_flavor",
            "status": None,
            "candidates": [],
            "provider_summaries": {},
            "message": req.refusal["message"],
        }
    if len(answers) != len(req.queries):
        raise ValueError(f"flavor {req.flavor!r}: {len(req.queries)} queries but {len(answers)} answers")
    candidates: list[dict] = []
    summaries: dict = {}
    errors = [(i, body) for i, (status, body) in enumerate(answers) if status != 200]
    status = answers[errors[0][0]][0] if errors else 200
    first_status, first_body = answers[0]
    if first_status == 200:
        candidates.extend(first_body.get("allocation_requests") or [])
        summaries.update(first_body.get("provider_summaries") or {})
    if req.pcpu_fallback:
        fallback_status, fallback_body = answers[1]
        if fallback_status != 200:
            return {
                "outcome": "scheduler_error",
                "status": fallback_status,
                "candidates": [],
                "provider_summaries": {},
                "message": (
                    "nova-scheduler fails with TypeError: 'NoneType' object is not iterable. The flavor asks for "
                    "dedicated CPUs, so Nova also sends the VCPU fallback query; Placement answered it with "
                    f"{fallback_status} ({_error_text(fallback_body)}) and the scheduler appends that missing "
                    "answer to its candidate list instead of reporting NoValidHost. Fix the flavor so that "
                    "Placement accepts its query (usually a misspelled trait or resource class)."
                ),
            }
        candidates.extend(fallback_body.get("allocation_requests") or [])
        summaries.update(fallback_body.get("provider_summaries") or {})
    if candidates:
        outcome, message = "fits", None
    elif errors:
        outcome, message = "rejected_by_placement", _error_text(errors[0][1])
    else:
        outcome, message = "no_host", "No valid host was found. There are not enough hosts available."
    return {
        "outcome": outcome,
        "status": status,
        "candidates": candidates,
        "provider_summaries": summaries,
        "message": message,
    }


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        errors = body.get("errors") or []
        if errors and isinstance(errors[0], dict):
            return str(errors[0].get("detail") or errors[0].get("title") or body)
        return json.dumps(body, sort_keys=True)
    return str(body)
