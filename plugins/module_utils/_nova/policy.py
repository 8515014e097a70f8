# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device policy: what each device model on the fleet becomes in Nova.

``accel_device_policy`` is a list of entries. :func:`parse_policy` validates every field of every
entry and returns either the typed entries or one error per bad field, each naming the entry, the
field and the fix. Nothing here reads hosts: matching entries against discovery facts lives in
:mod:`._nova_config`.

Entries with ``mode: baremetal`` describe whole Ironic nodes (how many GPUs of a model a node holds, its
interconnect, the node's resource class), not devices Nova passes through: they are validated with the
rest, but :func:`parse_policy` leaves them out of what it returns, so the host and Nova stages never see
them; :func:`baremetal_policy` returns them for the Ironic side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import device_catalog
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import normalize
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_pci_id, normalize_address
from ansible_collections.accel.openstack.plugins.module_utils._nova import address_pattern, naming
from ansible_collections.accel.openstack.plugins.module_utils._nova.address_pattern import AddressPattern

MODES = ("passthrough", "vgpu", "mig", "none", "baremetal")
KNOWN_KEYS = (
    "name",
    "vendor_id",
    "product_id",
    "mode",
    "addresses",
    "resource_class",
    "traits",
    "numa_policy",
    "device_type",
    "mdev_type",
    "mdev_class",
    "live_migratable",
    "managed",
    "max_instances",
    "mig_layout",
    "vfs",
    "sriov_numvfs",
    "count",
    "model",
    "interconnect",
)
# Keys that only mean something for one mode.
PASSTHROUGH_ONLY = ("resource_class", "numa_policy", "device_type", "live_migratable")
VGPU_ONLY = ("mdev_type", "mdev_class", "max_instances")
# The SR-IOV capability counts VFs in 16 bits.
MAX_VFS = 65535


def _shown(value: object) -> str:
    """``repr(value)`` for a message, short; a whole number too large to print is described instead."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return "(a number of more than 19 digits)"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


ALIAS_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,255}\Z")
MDEV_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
TRUE_STRINGS = ("true", "yes", "on", "1")
FALSE_STRINGS = ("false", "no", "off", "0")
# Nova's device_spec tags for one-time-use devices and Neutron SR-IOV (parsed by _parse_nova_tags).
NOVA_TAG_KEYS = ("one_time_use", "physical_network", "trusted", "remote_managed")
NOVA_BOOL_TAGS = ("one_time_use", "trusted", "remote_managed")
# mode baremetal: the keys it takes, the interconnects it knows, and the bound on GPUs per node.
BAREMETAL_KEYS = (
    "name",
    "vendor_id",
    "product_id",
    "mode",
    "count",
    "model",
    "interconnect",
    "resource_class",
    "fallback_resource_class",
    "traits",
)
BAREMETAL_ONLY = ("count", "model", "interconnect", "fallback_resource_class")
INTERCONNECTS = ("pcie", "nvlink", "nvswitch")
MAX_GPUS_PER_NODE = 64
# Ironic's node resource_class: at most 80 characters; Nova turns it into CUSTOM_<UPPER, _ for the rest>.
IRONIC_RESOURCE_CLASS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}\Z")
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


class PolicyError(AccelError):
    """The policy is invalid; ``errors`` holds one message per bad field (also a result key).

    With ``option`` (the module option that carried the policy) the message is one line naming it.
    """

    def __init__(self, errors: list[str], option: str | None = None):
        self.errors = list(errors)
        msg = f"{option}: " + "; ".join(self.errors) if option else "\n".join(self.errors)
        super().__init__(msg, errors=self.errors)


@dataclass(frozen=True)
class PolicyEntry:
    """One validated entry of ``accel_device_policy``."""

    index: int
    name: str
    vendor_id: str
    product_id: str
    mode: str
    addresses: tuple[str, ...] = ()
    resource_class: str | None = None
    traits: tuple[str, ...] = ()
    numa_policy: str | None = None
    device_type: str | None = None
    mdev_type: str | None = None
    mdev_class: str | None = None
    live_migratable: bool | None = None
    managed: bool | None = None
    max_instances: int | None = None
    mig_layout: tuple[dict, ...] = ()
    vfs: int | None = None
    sriov_numvfs: int | None = None
    # Every addresses item as Nova reads it (exact, glob or regex); ``addresses`` holds the exact ones.
    address_patterns: tuple[AddressPattern, ...] = ()
    # Nova's device_spec tags (see :func:`_parse_nova_tags`).
    one_time_use: bool | None = None
    physical_network: str | None = None
    trusted: bool | None = None
    remote_managed: bool | None = None
    # mode baremetal (see :func:`_parse_baremetal`).
    count: int | None = None
    model: str | None = None
    interconnect: str | None = None
    # The class a node of resource_class gets when a re-inspection no longer matches (None: no class).
    fallback_resource_class: str | None = None
    raw: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def label(self) -> str:
        return f"device policy entry {self.index} (name: {self.name})"

    @property
    def is_vgpu(self) -> bool:
        """Nova sees this entry as vGPU: mode vgpu, or MIG-backed vGPU (mode mig with mdev_type)."""
        return self.mode == "vgpu" or (self.mode == "mig" and self.mdev_type is not None)

    def matches_ids(self, vendor_id: str | None, product_id: str | None) -> bool:
        return vendor_id == self.vendor_id and product_id == self.product_id

    def matches_address(
        self, address: str, physfn: str | None = None, physical_functions: frozenset = frozenset()
    ) -> bool:
        """Whether the entry's addresses take the device, as Nova matches device_spec addresses."""
        if not self.address_patterns:
            return not self.addresses or normalize_address(address) in self.addresses
        return any(p.matches(address, physfn, physical_functions) for p in self.address_patterns)

    @property
    def for_neutron(self) -> bool:
        """The entry serves Neutron ports (it carries physical_network, trusted or remote_managed)."""
        return any(v is not None for v in (self.physical_network, self.trusted, self.remote_managed))


def _label(index: int, raw: object) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    return f"device policy entry {index} (name: {name})" if name else f"device policy entry {index}"


def _bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE_STRINGS + FALSE_STRINGS:
        return value.strip().lower() in TRUE_STRINGS
    return None


def _hex4(label: str, key: str, value: object, example: str, errors: list[str]) -> str | None:
    if value is None or value == "":
        errors.append(
            f'{label}: {key} is missing; give the 4-hex-digit PCI {key.split("_")[0]} ID, e.g. "{example}" '
            "(lspci -nn shows vendor:product as [10de:2330])"
        )
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        errors.append(
            f"{label}: {key} {value!r} was read as a number; quote it in YAML so it stays 4 hex digits, "
            f'e.g. "{value:04d}"'
        )
        return None
    if not is_pci_id(value):
        errors.append(f'{label}: {key} {value!r} is not 4 hex digits; write it as lspci -nn shows it, e.g. "{example}"')
        return None
    return value.lower()


def _mig_layout(label: str, mode: object, layout: object, errors: list[str]) -> tuple[dict, ...]:
    """Shape checks only; whether the layout fits is decided per GPU model on the host (nvidia_mig)."""
    if mode != "mig":
        if layout is not None:
            errors.append(f"{label}: mig_layout applies to mode mig only; remove it or set mode: mig")
        return ()
    example = "[{profile: 1g.10gb, count: 7}]"
    if not isinstance(layout, list) or not layout:
        errors.append(f"{label}: mode mig needs mig_layout, a list of {{profile, count}} entries, e.g. {example}")
        return ()
    out = []
    for number, item in enumerate(layout):
        where = f"{label}: mig_layout item {number}"
        if not isinstance(item, dict) or not isinstance(item.get("profile"), str):
            errors.append(f"{where} must be a mapping with profile (e.g. '3g.40gb') and count")
            continue
        extra = sorted(set(item) - {"profile", "count", "placement"})
        if extra:
            errors.append(f"{where}: unknown key {extra[0]!r}; the keys are profile, count, placement")
        count = item.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            errors.append(f"{where} ({item['profile']}): count {count!r} must be a whole number, 0 or more")
            continue
        out.append(dict(item, count=count))
    return tuple(out)


def _parse_entry(index: int, raw: object, errors: list[str]) -> PolicyEntry | None:
    label = _label(index, raw)
    if not isinstance(raw, dict):
        errors.append(f"{label}: must be a mapping with name, vendor_id, product_id and mode, got {raw!r}")
        return None
    before = len(errors)
    if raw.get("mode") == "baremetal":
        return _parse_baremetal(index, label, raw, errors)
    known = KNOWN_KEYS + NOVA_TAG_KEYS
    unknown = sorted(set(raw) - set(known))
    for key in unknown:
        errors.append(f"{label}: unknown key {key!r}; the keys are {', '.join(known)}")

    name = raw.get("name")
    if not isinstance(name, str) or not ALIAS_NAME.match(name):
        errors.append(
            f"{label}: name {name!r} is not a usable PCI alias name; use letters, digits, '_', '.' or '-' "
            "(flavors request it as pci_passthrough:alias=NAME:COUNT), e.g. 'h100'"
        )
    vendor_id = _hex4(label, "vendor_id", raw.get("vendor_id"), "10de", errors)
    product_id = _hex4(label, "product_id", raw.get("product_id"), "2330", errors)

    mode = raw.get("mode")
    if mode not in MODES:
        errors.append(f"{label}: mode {mode!r} is not one of {', '.join(MODES)}; say what this model becomes")

    addresses: list[str] = []
    patterns: list[AddressPattern] = []
    raw_addresses = raw.get("addresses")
    if raw_addresses is not None:
        if not isinstance(raw_addresses, list) or not raw_addresses:
            errors.append(f"{label}: addresses must be a non-empty list of PCI addresses like '0000:41:00.0'")
        else:
            for address in raw_addresses:
                try:
                    pattern = address_pattern.parse(address)
                except address_pattern.AddressPatternError as exc:
                    errors.append(f"{label}: addresses item {address!r}: {exc}")
                    continue
                patterns.append(pattern)
                if pattern.is_exact:
                    addresses.append(normalize_address(address))
            duplicates = sorted({a for a in addresses if addresses.count(a) > 1})
            if duplicates:
                errors.append(f"{label}: addresses lists {', '.join(duplicates)} more than once; list each once")

    resource_class = raw.get("resource_class")
    if resource_class is not None:
        problem = naming.resource_class_problem(resource_class)
        if problem:
            errors.append(f"{label}: resource_class {resource_class!r} {problem}")

    traits = raw.get("traits")
    trait_list: list[str] = []
    if traits is not None:
        if not isinstance(traits, list):
            errors.append(f"{label}: traits must be a list of trait names like ['CUSTOM_GPU_H100']")
        else:
            for trait in traits:
                problem = naming.device_trait_problem(trait) if mode == "passthrough" else naming.trait_problem(trait)
                if problem:
                    errors.append(f"{label}: traits item {trait!r} {problem}")
                else:
                    trait_list.append(trait)

    numa_policy = raw.get("numa_policy")
    if numa_policy is not None and numa_policy not in naming.NUMA_POLICIES:
        errors.append(
            f"{label}: numa_policy {numa_policy!r} is not one of {', '.join(naming.NUMA_POLICIES)} "
            "(Nova's PCI NUMA affinity policies)"
        )
    device_type = raw.get("device_type")
    if device_type is not None and device_type not in naming.DEVICE_TYPES:
        errors.append(
            f"{label}: device_type {device_type!r} is not one of {', '.join(naming.DEVICE_TYPES)}; "
            "use type-VF for SR-IOV virtual functions, type-PF for a whole SR-IOV device, type-PCI otherwise"
        )

    mdev_type = raw.get("mdev_type")
    if mode == "vgpu" and (not isinstance(mdev_type, str) or not MDEV_TYPE.match(mdev_type)):
        errors.append(
            f"{label}: mode vgpu needs mdev_type, the type name the host driver offers, e.g. 'nvidia-735' "
            "(see accel_pci_devices[].mdev_types[].type in the discovery facts)"
        )
    if mode == "mig" and mdev_type is not None and (not isinstance(mdev_type, str) or not MDEV_TYPE.match(mdev_type)):
        errors.append(
            f"{label}: mdev_type {mdev_type!r} is not a type name; give the MIG-backed vGPU type the host "
            "offers, e.g. 'nvidia-699', or remove it to keep the MIG instances out of Nova"
        )
    mig_layout = _mig_layout(label, mode, raw.get("mig_layout"), errors)
    counts: dict[str, int | None] = {}
    for key, least in (("vfs", 1), ("sriov_numvfs", 0)):
        value = raw.get(key)
        counts[key] = None
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            errors.append(f"{label}: {key} {_shown(value)} must be a whole number of at least {least}")
        elif value > MAX_VFS:
            # sriov_numvfs is a 16-bit number in the PCI SR-IOV capability.
            errors.append(f"{label}: {key} {_shown(value)} is more than {MAX_VFS}, the most VFs a PF has")
        else:
            counts[key] = value
    if raw.get("vfs") is not None and mode not in ("vgpu", "mig"):
        errors.append(
            f"{label}: vfs (VFs that get the vGPU type, NVIDIA vGPU 17+) applies to mode vgpu or mig; "
            "remove it, or use sriov_numvfs to create VFs"
        )
    if raw.get("sriov_numvfs") is not None and mode == "none":
        errors.append(f"{label}: sriov_numvfs has no effect with mode none; remove it or choose a mode")
    if counts["sriov_numvfs"] is not None and vendor_id and product_id:
        _sriov_numvfs_refusal(label, vendor_id, product_id, errors)
    mdev_class = raw.get("mdev_class")
    problem = None if mdev_class is None else naming.mdev_class_problem(mdev_class)
    if problem:
        errors.append(f"{label}: mdev_class {mdev_class!r} {problem}; e.g. VGPU or 'CUSTOM_VGPU_A16_4Q'")
    max_instances = raw.get("max_instances")
    if max_instances is not None and (
        isinstance(max_instances, bool) or not isinstance(max_instances, int) or max_instances < 1
    ):
        errors.append(f"{label}: max_instances {max_instances!r} must be a whole number of at least 1")

    flags: dict[str, bool | None] = {}
    for key in ("live_migratable", "managed"):
        value = raw.get(key)
        flags[key] = None if value is None else _bool(value)
        if value is not None and flags[key] is None:
            errors.append(f"{label}: {key} {value!r} is not a boolean; write true or false")

    if mode == "passthrough":
        for key in VGPU_ONLY:
            if raw.get(key) is not None:
                errors.append(f"{label}: {key} applies to mode vgpu only; remove it or set mode: vgpu")
    elif mode in ("vgpu", "mig"):
        for key in PASSTHROUGH_ONLY:
            if raw.get(key) is not None:
                hint = "use mdev_class for the vGPU resource class" if key == "resource_class" else "remove it"
                errors.append(f"{label}: {key} applies to mode passthrough only; {hint}")
    elif mode == "none":
        for key in PASSTHROUGH_ONLY + VGPU_ONLY + ("traits", "managed"):
            if raw.get(key) is not None:
                errors.append(f"{label}: {key} has no effect with mode none; remove it")

    tags = _parse_nova_tags(label, raw, mode, errors)

    for key in BAREMETAL_ONLY:
        if raw.get(key) is not None:
            errors.append(f"{label}: {key} applies to mode baremetal only (whole Ironic nodes); remove it")

    if len(errors) > before:
        return None
    return PolicyEntry(
        index=index,
        name=name,
        vendor_id=vendor_id,
        product_id=product_id,
        mode=mode,
        addresses=tuple(addresses),
        resource_class=resource_class,
        traits=tuple(trait_list),
        numa_policy=numa_policy,
        device_type=device_type,
        mdev_type=mdev_type if mode in ("vgpu", "mig") else None,
        mdev_class=mdev_class,
        live_migratable=flags["live_migratable"],
        managed=flags["managed"],
        max_instances=max_instances,
        mig_layout=mig_layout,
        vfs=counts["vfs"],
        sriov_numvfs=counts["sriov_numvfs"],
        address_patterns=tuple(patterns),
        raw=dict(raw),
        **tags,
    )


def _sriov_numvfs_refusal(label: str, vendor_id: str, product_id: str, errors: list[str]) -> None:
    """sriov_numvfs on a model whose VFs only its vendor's host driver makes, from its own setting (the
    device catalog's vf_creation driver_parameter: AMD GIM): the prepare stage could never apply it."""
    model = device_catalog.lookup(vendor_id, product_id) or device_catalog.lookup(vendor_id, product_id, is_vf=True)
    sriov = device_catalog.mechanism(model.get("sriov")) if model else None
    if not sriov or sriov["vf_creation"] != "driver_parameter":
        return
    module, option = sriov["parameter"].split()
    errors.append(
        f"{label}: sriov_numvfs cannot make VFs of the {model['vendor']} {model['model']}: its VFs come from the "
        f"{module} host driver, which enables them itself from its {option} setting ('options {module} "
        f"{option}=<N>' in /etc/modprobe.d/{module}.conf) and refuses sriov_numvfs; remove sriov_numvfs from the "
        "entry and set the count there"
    )


def _parse_baremetal(index: int, label: str, raw: dict, errors: list[str]) -> PolicyEntry | None:
    """An Ironic node class: nodes whose inspected inventory holds ``count`` GPUs ``vendor_id:product_id``
    (and, with ``interconnect: nvswitch``, NVIDIA NVSwitch bridges) get ``resource_class`` and the traits;
    a node of that class that no longer matches gets ``fallback_resource_class`` (none when not given)."""
    before = len(errors)
    for key in sorted(set(raw) - set(BAREMETAL_KEYS)):
        errors.append(
            f"{label}: {key} does not apply to mode baremetal (a whole Ironic node); "
            f"the keys are {', '.join(BAREMETAL_KEYS)}"
        )
    name = raw.get("name")
    if not isinstance(name, str) or not ALIAS_NAME.match(name):
        errors.append(f"{label}: name {name!r} must be letters, digits, '_', '.' or '-', e.g. 'hgx-h100x8'")
    vendor_id = _hex4(label, "vendor_id", raw.get("vendor_id"), "10de", errors)
    product_id = _hex4(label, "product_id", raw.get("product_id"), "2330", errors)
    count = raw.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_GPUS_PER_NODE:
        errors.append(
            f"{label}: count {count!r} must be the number of these GPUs in one node, 1 to {MAX_GPUS_PER_NODE}"
        )
    resource_class = raw.get("resource_class")
    _ironic_class(label, "resource_class", resource_class, "GPU_H100X8", errors)
    fallback = raw.get("fallback_resource_class")
    if fallback is not None:
        _ironic_class(label, "fallback_resource_class", fallback, "GPU_DEGRADED", errors)
        if fallback == resource_class:
            errors.append(
                f"{label}: fallback_resource_class is the entry's own resource_class {resource_class!r}; give the "
                "class a node gets when it no longer matches (e.g. 'GPU_DEGRADED'), or leave it out for none"
            )
    model = raw.get("model", name)
    if not isinstance(model, str) or not MODEL_NAME.match(model):
        errors.append(
            f"{label}: model {model!r} must be a short model name such as 'H100' (it names CUSTOM_GPU_<MODEL>)"
        )
    interconnect = raw.get("interconnect", "pcie")
    if interconnect not in INTERCONNECTS:
        errors.append(
            f"{label}: interconnect {interconnect!r} is not one of {', '.join(INTERCONNECTS)} "
            "(nvswitch: HGX boards whose NVSwitch bridges the inspection sees; nvlink: NVLink bridges)"
        )
    trait_list: list[str] = []
    traits = raw.get("traits")
    if traits is not None:
        if not isinstance(traits, list):
            errors.append(f"{label}: traits must be a list of custom traits like ['CUSTOM_HGX']")
        else:
            for trait in traits:
                problem = naming.trait_problem(trait)
                if problem:
                    errors.append(f"{label}: traits item {trait!r} {problem}")
                else:
                    trait_list.append(trait)
    if len(errors) > before:
        return None
    return PolicyEntry(
        index=index,
        name=name,
        vendor_id=vendor_id,
        product_id=product_id,
        mode="baremetal",
        resource_class=resource_class,
        traits=tuple(trait_list),
        count=count,
        model=model,
        interconnect=interconnect,
        fallback_resource_class=fallback,
        raw=dict(raw),
    )


def _ironic_class(label: str, key: str, value: object, example: str, errors: list[str]) -> None:
    """An Ironic node resource class, written without CUSTOM_ (Nova adds it)."""
    if not isinstance(value, str) or not IRONIC_RESOURCE_CLASS.match(value):
        errors.append(
            f"{label}: {key} {value!r} must be an Ironic node's resource class: up to 80 letters, digits, "
            f"'_', '.' or '-', e.g. '{example}' (flavors then ask resources:CUSTOM_{example}=1)"
        )
    elif re.match(r"(?i)custom[^0-9a-z]", value):
        suggestion = normalize(value)[len("CUSTOM_") :]
        errors.append(
            f"{label}: {key} {value!r} starts with CUSTOM_; an Ironic node's class is written "
            f"without it (Nova adds CUSTOM_ and would report {normalize(value, keep_custom_word=True)}): "
            f"write {suggestion!r}"
        )


def _parse_nova_tags(label: str, raw: dict, mode: object, errors: list[str]) -> dict:
    """``one_time_use``, ``physical_network``, ``trusted`` and ``remote_managed``, with the combinations
    Nova 34 refuses (nova/pci/devspec.py, nova/compute/pci_placement_translator.py) refused here, before
    anything is written. Checks that need the host's devices or report_in_placement are in selection."""
    tags: dict = {key: None for key in NOVA_TAG_KEYS}
    for key in NOVA_BOOL_TAGS:
        value = raw.get(key)
        if value is None:
            continue
        tags[key] = _bool(value)
        if tags[key] is None:
            errors.append(f"{label}: {key} {value!r} is not a boolean; write true or false")
    physnet = raw.get("physical_network")
    if physnet is not None:
        if not isinstance(physnet, str) or not physnet.strip() or physnet != physnet.strip():
            errors.append(
                f"{label}: physical_network {physnet!r} is not a Neutron physical network name; give the name "
                "the SR-IOV agent maps, e.g. 'physnet1' (neutron_sriov_physnet_mappings in Kolla-Ansible)"
            )
        else:
            tags["physical_network"] = physnet
    given = [key for key in NOVA_TAG_KEYS if raw.get(key) is not None]
    if given and mode != "passthrough":
        for key in given:
            errors.append(
                f"{label}: {key} is a [pci] device_spec tag and applies to mode passthrough only; remove it"
                + ("" if mode == "none" else " or set mode: passthrough")
            )
        return tags
    device_type = raw.get("device_type")
    if tags["one_time_use"] and device_type == naming.TYPE_VF:
        errors.append(
            f"{label}: one_time_use with device_type type-VF: Nova allows one_time_use only on type-PCI and "
            "type-PF devices (VFs are counted on their PF's provider, which cannot be reserved for one VF); "
            "pass the whole device through (device_type: type-PF or type-PCI) or remove one_time_use"
        )
    if tags["remote_managed"] and device_type in (naming.TYPE_PF, naming.TYPE_PCI):
        errors.append(
            f"{label}: remote_managed with device_type {device_type}: only VFs are remote managed (Nova refuses "
            "remote_managed on a PF); select the VFs (device_type: type-VF and the VF's product_id) or remove "
            "remote_managed"
        )
    if tags["one_time_use"] and tags["remote_managed"]:
        errors.append(
            f"{label}: one_time_use and remote_managed exclude each other: remote-managed devices are VFs and "
            "Nova allows one_time_use only on type-PCI and type-PF devices; remove one of them"
        )
    if tags["one_time_use"] and tags["physical_network"]:
        errors.append(
            f"{label}: one_time_use with physical_network: Nova keeps devices with a physical_network out of "
            "Placement (they serve Neutron ports), and one_time_use works only through Placement; remove one "
            "of them"
        )
    return tags


def _cross_checks(entries: list[PolicyEntry], errors: list[str]) -> None:
    """Checks between entries that hold whatever the hosts look like."""
    _baremetal_cross_checks([e for e in entries if e.mode == "baremetal"], errors)
    entries = [e for e in entries if e.mode != "baremetal"]
    by_name: dict[str, PolicyEntry] = {}
    for entry in entries:
        first = by_name.setdefault(entry.name, entry)
        if first is entry:
            continue
        if first.mode != entry.mode:
            errors.append(
                f"{entry.label}: name is already used by entry {first.index} with mode {first.mode}; "
                "an alias name must mean one mode; rename one of them"
            )
            continue
        if entry.is_vgpu:
            errors.append(
                f"{entry.label}: name is already used by vgpu entry {first.index}; give each vGPU entry its own name"
            )
            continue
        if (first.device_type or None) != (entry.device_type or None):
            errors.append(
                f"{entry.label}: device_type {entry.device_type!r} differs from {first.device_type!r} "
                f"in entry {first.index} of the same alias name; Nova refuses same-name aliases with "
                "different "
                "device_type: set the same device_type on both or rename one"
            )
        if (first.numa_policy or None) != (entry.numa_policy or None):
            errors.append(
                f"{entry.label}: numa_policy {entry.numa_policy!r} differs from {first.numa_policy!r} "
                f"in entry {first.index} of the same alias name; Nova refuses same-name aliases with "
                "different "
                "numa_policy: set the same numa_policy on both or rename one"
            )

    # Two vGPU types on one physical address (only checkable here when addresses are explicit).
    vgpu_by_address: dict[str, PolicyEntry] = {}
    for entry in entries:
        if not entry.is_vgpu:
            continue
        for address in entry.addresses:
            other = vgpu_by_address.setdefault(address, entry)
            if other is not entry and other.mdev_type != entry.mdev_type:
                errors.append(
                    f"{entry.label}: address {address} is already given mdev_type {other.mdev_type} by entry "
                    f"{other.index}; Nova allows one vGPU type per physical device: remove the address from "
                    "one entry"
                )
    # One device model split between entries: each must say which addresses it takes.
    by_ids: dict[tuple[str, str], list[PolicyEntry]] = {}
    for entry in entries:
        by_ids.setdefault((entry.vendor_id, entry.product_id), []).append(entry)
    for (vendor_id, product_id), group in by_ids.items():
        if len(group) < 2:
            continue
        catch_all = [e for e in group if not e.address_patterns]
        if catch_all:
            others = ", ".join(str(e.index) for e in group if e is not catch_all[0])
            errors.append(
                f"{catch_all[0].label}: {vendor_id}:{product_id} is also selected by entry {others}; "
                "when one model is split between entries, every entry must list its addresses"
            )
            continue
        seen: dict[str, PolicyEntry] = {}
        for entry in group:
            for address in entry.addresses:
                other = seen.setdefault(address, entry)
                if other is not entry and not (entry.is_vgpu and other.is_vgpu):
                    errors.append(
                        f"{entry.label}: address {address} is also listed by entry {other.index}; "
                        "a device can be in one entry only: remove it from one"
                    )


def _baremetal_cross_checks(entries: list[PolicyEntry], errors: list[str]) -> None:
    """Node classes must not overlap: one name each, and one entry per model, count and interconnect."""
    names: dict[str, PolicyEntry] = {}
    shapes: dict[tuple, PolicyEntry] = {}
    classes = {entry.resource_class: entry for entry in reversed(entries)}
    fallbacks: dict[str | None, PolicyEntry] = {}
    for entry in entries:
        # A fallback that is an entry's class would offer a node that no longer matches to that entry's flavors.
        owner = classes.get(entry.fallback_resource_class)
        if owner is not None:
            errors.append(
                f"{entry.label}: fallback_resource_class {entry.fallback_resource_class!r} is the resource_class of "
                f"baremetal entry {owner.index}; a node that no longer matches would be offered to that entry's "
                "flavors: give a class no entry uses (e.g. 'GPU_DEGRADED'), or leave it out for none"
            )
        same = fallbacks.setdefault(entry.resource_class, entry)
        if same.fallback_resource_class != entry.fallback_resource_class:
            here, there = entry.fallback_resource_class or "no class", same.fallback_resource_class or "no class"
            errors.append(
                f"{entry.label}: resource_class {entry.resource_class!r} falls back to {here} here but to {there} "
                f"in baremetal entry {same.index}; entries of one class must fall back alike: give both the same "
                "fallback_resource_class"
            )
        first = names.setdefault(entry.name, entry)
        if first is not entry:
            errors.append(f"{entry.label}: name is already used by baremetal entry {first.index}; rename one")
        # Inspection tells NVSwitch boards from the rest; NVLink bridges and plain PCIe look alike.
        shape = (entry.vendor_id, entry.product_id, entry.count, entry.interconnect == "nvswitch")
        other = shapes.setdefault(shape, entry)
        if other is not entry:
            errors.append(
                f"{entry.label}: nodes with {entry.count} x {entry.vendor_id}:{entry.product_id} "
                f"({entry.interconnect}) are already given a class by entry {other.index} ({other.interconnect}); "
                "inspection cannot tell them apart (only NVSwitch bridges show on PCI): merge them or change "
                "count or interconnect"
            )


def parse_policy(raw: object, option: str | None = None, baremetal: bool = False) -> list[PolicyEntry]:
    """Validate ``accel_device_policy``; raise :class:`PolicyError` with one message per bad field.

    ``option`` names the module option the policy came from, for the error message. Entries with
    ``mode: baremetal`` are validated but returned only with ``baremetal=True`` (then only they are).
    """
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PolicyError(
            [f"device policy must be a list of entries (name, vendor_id, product_id, mode), got {type(raw).__name__}"],
            option,
        )
    errors: list[str] = []
    entries = [e for e in (_parse_entry(i, item, errors) for i, item in enumerate(raw, start=1)) if e]
    if not errors:
        _cross_checks(entries, errors)
    if errors:
        raise PolicyError(errors, option)
    return [e for e in entries if (e.mode == "baremetal") == baremetal]


def baremetal_policy(raw: object, option: str | None = None) -> list[PolicyEntry]:
    """The ``mode: baremetal`` entries of a valid policy (the whole policy is validated)."""
    return parse_policy(raw, option, baremetal=True)


def policy_errors(raw: object) -> list[str]:
    """Every problem of ``raw`` as a list of messages; empty when the policy is valid."""
    try:
        parse_policy(raw)
    except PolicyError as exc:
        return exc.errors
    return []
