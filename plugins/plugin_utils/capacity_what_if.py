# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hypothetical hosts for capacity plans: "what if we buy this hardware?".

``what_if_hosts(option, pci_in_placement)`` turns one option (``{name, model, count, mode, ...}``) into
fleet-snapshot records: per host the discovery facts such a host would give (the NUMA nodes of a simulated
hardware profile, ``roles/simulated_fleet/files/hardware/<shape>.yml``, and the option's GPUs with the IDs of
the device catalog), a device policy entry for the sharing mode, and ``nova_fleet`` (the collection's one
prediction of what nova-compute reports from facts and policy) builds the providers:

- ``passthrough``: every GPU whole (the catalog's resource class);
- ``vgpu``: a time-sliced vGPU type (``type``, e.g. ``NVIDIA L40S-4Q``) on SR-IOV VFs as the vGPU 17+ host
  driver offers it, as many per GPU as the framebuffer divided by the type's (12 for L40S-4Q on 48 GB);
- ``mig``: a MIG layout (``layout``, one profile of the GPU's MIG table, e.g. ``3g.71gb``) created as many
  times as the GPU holds it, each GPU instance carrying one MIG-backed vGPU (``NVIDIA H200-3-71C``);
- ``sriov``: the GPU's SR-IOV VFs passed through (``vfs`` per GPU, the catalog's VF resource class).

The vGPU type's numeric ID differs between host driver releases; the what-if host names the type by its
name (``L40S-4Q``), which decides nothing in the plan (the resource class is ``VGPU``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import device_catalog, mig_profiles
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of, parse_cpu_set, shown
from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import VF_VGPU_MECHANISM
from ansible_collections.accel.openstack.plugins.module_utils._simulate.host_root import load_profile, profile_names
from ansible_collections.accel.openstack.plugins.plugin_utils.nova_fleet import FleetPredictionError, nova_fleet

MODES = ("passthrough", "vgpu", "mig", "sriov")
KEYS = {"name", "model", "count", "mode", "type", "layout", "gpus", "vfs", "shape", "alone"}
MAX_HOSTS = 10_000  # hypothetical hosts per option
MAX_GPUS = 16
MAX_VFS = 64
DEFAULT_SHAPE = "hgx-h100"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")
# NVIDIA names a time-sliced vGPU type <GPU>-<framebuffer GB><series>: B (virtual PC), Q (virtual
# workstation), A (virtual applications), C (compute).
TIME_SLICED = re.compile(r"(?:NVIDIA )?(?P<gpu>[A-Z0-9]+)-(?P<gb>\d+)(?P<series>[ABCQ])\Z")


class WhatIfError(AccelError):
    """A what-if option that gives no hosts; the message names it and the fix."""


def _model(option_name: str, model) -> dict:
    entries = [m for m in device_catalog.models() if m.get("vendor") == "NVIDIA" and m.get("memory_gb")]
    if isinstance(model, str):
        for entry in entries:
            if model.lower() in (entry["short"].lower(), entry["model"].lower()):
                return entry
    known = ", ".join(sorted({m["short"] for m in entries}))
    raise WhatIfError(
        f"what_if {option_name}: model {shown(model)} is not in the device catalog; known models: {known}"
    )


def _int(option_name: str, key: str, value, lowest: int, highest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= highest:
        raise WhatIfError(
            f"what_if {option_name}: {key} must be a whole number from {lowest} to {highest}, got {shown(value)}"
        )
    return value


def _nodes(option_name: str, shape) -> list[dict]:
    names = profile_names()
    if not isinstance(shape, str) or shape not in names:
        raise WhatIfError(
            f"what_if {option_name}: shape {shown(shape)} is not a simulated hardware profile; known shapes: "
            + ", ".join(n for n in names if n != "pci")
        )
    nodes = []
    for node in load_profile(shape).get("numa_nodes") or ():
        cpus = node["cpus"] if isinstance(node["cpus"], list) else sorted(parse_cpu_set(str(node["cpus"])))
        nodes.append({"id": int(node["id"]), "cpus": cpus, "memory_mb": int(node["memory_mb"])})
    return nodes


def _device(address: str, model: dict, product_id: str, node: int, group: int, driver: str, **more) -> dict:
    return {
        "address": address,
        "vendor_id": model["vendor_id"],
        "product_id": product_id,
        "subsystem_vendor_id": model["vendor_id"],
        "subsystem_product_id": "0000",
        "class_code": "030200",
        "vendor_name": "NVIDIA Corporation",
        "product_name": model["model"],
        "driver": driver,
        "numa_node": node,
        "iommu_group": group,
        "physfn": None,
        "sriov_totalvfs": None,
        "sriov_numvfs": None,
        "mdev_types": [],
        "is_boot_vga": False,
        **more,
    }


def _vgpu_type(option_name: str, model: dict, wanted) -> tuple[str, int]:
    """(type name as the host driver lists it, vGPUs per GPU) of a time-sliced type of the model."""
    found = TIME_SLICED.match(wanted) if isinstance(wanted, str) else None
    memory = model["memory_gb"]
    if not found or found["gpu"] != model["short"] or memory % int(found["gb"]) or not int(found["gb"]):
        sizes = [n for n in (1, 2, 3, 4, 6, 8, 12, 16, 24, 48, 80, 96) if n <= memory and not memory % n]
        raise WhatIfError(
            f"what_if {option_name}: type {shown(wanted)} is not a time-sliced vGPU type of the {model['short']} "
            f"({memory} GB); give NVIDIA {model['short']}-<GB><B|Q|A|C> with GB dividing {memory}, e.g. "
            + ", ".join(f"NVIDIA {model['short']}-{n}Q" for n in sizes[-4:])
        )
    return f"NVIDIA {found['gpu']}-{found['gb']}{found['series']}", memory // int(found["gb"])


def _mig(option_name: str, model: dict, layout) -> tuple[mig_profiles.MigProfile, str]:
    mig_model = next((m for m in mig_profiles.MODELS if model["product_id"] in m.product_ids), None)
    if mig_model is None:
        with_mig = sorted({m["short"] for m in device_catalog.models() if m.get("mig")})
        raise WhatIfError(
            f"what_if {option_name}: the {model['short']} has no MIG; models with MIG: {', '.join(with_mig)}"
        )
    profile = mig_model.profile(layout) if isinstance(layout, str) else None
    if profile is None or "+" in profile.name:
        known = ", ".join(p.name for p in mig_model.profiles if "+" not in p.name)
        raise WhatIfError(
            f"what_if {option_name}: layout {shown(layout)} is not a MIG profile of the {mig_model.model}; give one "
            f"of {known} (every GPU is split into as many of it as it holds)"
        )
    gb = profile.name.split(".")[1].removesuffix("gb")
    return profile, f"NVIDIA {model['short']}-{profile.compute}-{gb}C"


def _host_facts(option_name: str, option: Mapping, model: dict) -> tuple[dict, dict]:
    """(facts of one hypothetical host, its device policy entry)."""
    mode = option.get("mode")
    if mode not in MODES:
        raise WhatIfError(f"what_if {option_name}: mode must be one of {', '.join(MODES)}, got {shown(mode)}")
    gpus = _int(option_name, "gpus", option.get("gpus", 8), 1, MAX_GPUS)
    nodes = _nodes(option_name, option.get("shape", DEFAULT_SHAPE))
    devices = []
    entry = {"name": f"{option_name}-{mode}", "vendor_id": model["vendor_id"], "product_id": model["product_id"]}
    per_gpu = 0
    type_name = None
    if mode == "passthrough":
        entry.update(mode="passthrough", resource_class=model["resource_class"])
    elif mode == "sriov":
        if not model.get("vf_product_id") or not model.get("vf_resource_class"):
            with_vfs = sorted({m["short"] for m in device_catalog.models() if m.get("vf_resource_class")})
            raise WhatIfError(
                f"what_if {option_name}: the {model['short']} has no SR-IOV VFs; models with VFs: {', '.join(with_vfs)}"
            )
        per_gpu = _int(option_name, "vfs", option.get("vfs", 4), 1, MAX_VFS)
        entry.update(
            mode="passthrough",
            product_id=model["vf_product_id"],
            device_type="type-VF",
            resource_class=model["vf_resource_class"],
        )
    elif mode == "vgpu":
        type_name, per_gpu = _vgpu_type(option_name, model, option.get("type"))
        entry.update(mode="vgpu", mdev_type=type_name.removeprefix("NVIDIA "))
    else:
        profile, type_name = _mig(option_name, model, option.get("layout"))
        per_gpu = profile.max_count
        entry.update(
            mode="mig",
            mdev_type=type_name.removeprefix("NVIDIA "),
            mig_layout=[{"profile": profile.name, "count": profile.max_count}],
        )
    group = 100
    for index in range(gpus):
        bus = 0x10 + index * 0x10
        address = f"0000:{bus:02x}:00.0"
        node = nodes[index * len(nodes) // gpus]["id"]
        group += 1
        more: dict = {}
        if per_gpu:
            more.update(sriov_totalvfs=per_gpu, sriov_numvfs=per_gpu)
        if mode == "mig":
            more["mig"] = {
                "mode": {"current": "Enabled", "pending": "Enabled"},
                "gpu_instances": [{"profile": entry["mig_layout"][0]["profile"]} for _i in range(per_gpu)],
            }
        driver = "vfio-pci" if mode == "passthrough" else "nvidia"
        devices.append(_device(address, model, model["product_id"], node, group, driver, **more))
        for vf in range(per_gpu):
            slot = vf + 1
            vf_address = f"0000:{bus:02x}:{slot // 8:02x}.{slot % 8}"
            group += 1
            extra = {"physfn": address}
            if type_name:
                mdev_type = entry["mdev_type"]
                extra["mdev_types"] = [
                    {
                        "type": mdev_type,
                        "name": type_name,
                        "available_instances": 1,
                        "device_api": "vfio-pci",
                        "description": "",
                        "mechanism": VF_VGPU_MECHANISM,
                    }
                ]
            vf_driver = "vfio-pci" if mode == "sriov" else "nvidia"
            product = model.get("vf_product_id") or model["product_id"]
            devices.append(_device(vf_address, model, product, node, group, vf_driver, **extra))
    facts = {
        "accel_numa_nodes": nodes,
        "accel_pci_devices": devices,
        "accel_cpu_vendor": "intel",
        "accel_iommu_enabled": True,
        "accel_kernel_cmdline": "intel_iommu=on iommu=pt",
    }
    return facts, entry


def what_if_hosts(option, pci_in_placement: bool, taken: set[str]) -> tuple[str, list[dict], bool]:
    """(option name, the snapshot records of its hosts, whether it stands alone). ``taken``: host names
    already in use (the fleet's and earlier options')."""
    if not isinstance(option, Mapping):
        raise WhatIfError(f"what_if entries must be dicts {{name, model, count, mode, ...}}, got {kind_of(option)}")
    name = option.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise WhatIfError(
            f"what_if: name {shown(name)} must be 1 to 63 letters, digits, '_', '.' or '-' "
            "(it prefixes the hosts' names)"
        )
    unknown = sorted(set(option) - KEYS)
    if unknown:
        raise WhatIfError(
            f"what_if {name}: unknown key(s) {', '.join(map(str, unknown))}; known: {', '.join(sorted(KEYS))}"
        )
    count = _int(name, "count", option.get("count"), 1, MAX_HOSTS)
    alone = option.get("alone", False)
    if not isinstance(alone, bool):
        raise WhatIfError(f"what_if {name}: alone must be true or false, got {shown(alone)}")
    model = _model(name, option.get("model"))
    facts, entry = _host_facts(name, option, model)
    hostnames = [f"{name}-{index:04d}" for index in range(1, count + 1)]
    clash = sorted(set(hostnames) & taken)
    if clash:
        raise WhatIfError(f"what_if {name}: host name {clash[0]} is already in the fleet; choose another name")
    try:
        snapshot = nova_fleet(
            dict.fromkeys(hostnames, facts),
            [entry],
            report_in_placement=pci_in_placement,
        )
    except FleetPredictionError as exc:
        raise WhatIfError(f"what_if {name}: {exc}") from exc
    return name, snapshot["resource_providers"], alone
