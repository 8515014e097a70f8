# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The accelerator device catalog: models by PCI ID, their SR-IOV mechanism, partition modes and memory.

The data lives in ``device_catalog.yml`` beside this file; ``device_catalog_data.py`` holds the same data
as a Python literal (generated, so module_utils import on a managed host without a YAML parser). This
module answers questions about it:

- :func:`lookup` a device's model by vendor and product ID, as a PF (or plain device) or as a VF;
- :func:`is_accelerator_class` whether a PCI class code is one an accelerator uses (display VGA
  ``0300``, 3D controller ``0302``, other display ``0380``, processing accelerator ``1200``);
- :func:`partition_of` the partition mode a PF runs in, from the files the driver shows or, where the
  driver shows none, from its VF count (AMD GIM) or its VF profile (Intel);
- :func:`catalog_problems` every way a catalog document breaks the schema (the generator and a unit
  test refuse such a document).
"""

from __future__ import annotations

import re

from ansible_collections.accel.openstack.plugins.module_utils._host.device_catalog_data import CATALOG
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import custom_name_problem
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_pci_id

# PCI class codes (base class and subclass, 4 hex digits) of devices that can be accelerators.
ACCELERATOR_CLASSES = {
    "0300": "VGA compatible controller",
    "0302": "3D controller",
    "0380": "display controller",
    "1200": "processing accelerator",
}
VF_CREATION = ("sriov_numvfs", "driver_parameter")
PARTITION_MODE = re.compile(r"[A-Z][A-Z0-9]{1,7}\Z")
SHORT_NAME = re.compile(r"[A-Z0-9][A-Z0-9_]{0,31}\Z")
MODEL_KEYS = {
    "vendor_id": True,
    "product_id": True,
    "vendor": True,
    "model": True,
    "short": True,
    "memory_gb": True,
    "memory_type": True,
    "vf_product_id": True,
    "sriov": True,
    "resource_class": True,
    "sources": True,
    "vf_resource_class": False,
    "partition_modes": False,
    "vf_modes": False,
    "vf_profiles": False,
    "mig": False,
}
MECHANISM_KEYS = ("vendor_id", "description", "vf_creation", "pf_drivers", "vf_drivers")


def is_accelerator_class(class_code: str | None) -> bool:
    """Whether a 6-hex-digit class code (``030200``) is one accelerators use."""
    return isinstance(class_code, str) and class_code[:4] in ACCELERATOR_CLASSES


def class_name(class_code: str | None) -> str:
    """``3D controller`` for ``030200``; the code itself for a class the catalog does not name."""
    if not isinstance(class_code, str):
        return "unknown class"
    return ACCELERATOR_CLASSES.get(class_code[:4], f"class {class_code[:4]}")


def models() -> list[dict]:
    return list(CATALOG["models"])


def mechanism(name: str | None) -> dict | None:
    """A mechanism of the catalog by name (``amd_mxgpu_gim``), None when unknown or None."""
    return CATALOG["mechanisms"].get(name) if name else None


def _by_pf() -> dict[tuple[str, str], dict]:
    return {(m["vendor_id"], m["product_id"]): m for m in CATALOG["models"]}


def _by_vf() -> dict[tuple[str, str], dict]:
    return {(m["vendor_id"], m["vf_product_id"]): m for m in CATALOG["models"] if m.get("vf_product_id")}


def lookup(vendor_id: str | None, product_id: str | None, is_vf: bool = False) -> dict | None:
    """The model a device is, as a dict: the catalog entry plus ``role`` (``pf`` for a whole device or a
    PF, ``vf`` for a virtual function); None when the catalog does not know it.

    A VF is looked up by the device ID VFs of a model carry, a PF or plain device by the model's own ID;
    an Intel or NVIDIA VF carries its PF's ID, so ``is_vf`` (the device has a ``physfn``) decides."""
    key = (str(vendor_id or "").lower(), str(product_id or "").lower())
    model = (_by_vf() if is_vf else _by_pf()).get(key)
    if model is None:
        return None
    return dict(model, role="vf" if is_vf else "pf")


def describe(model: dict) -> dict:
    """What discovery reports for a catalog model: name, memory, SR-IOV, modes (no source notes)."""
    sriov = mechanism(model.get("sriov"))
    out = {
        "vendor": model["vendor"],
        "model": model["model"],
        "role": model.get("role", "pf"),
        "memory_gb": model.get("memory_gb"),
        "memory_type": model.get("memory_type"),
        "vf_product_id": model.get("vf_product_id"),
        "sriov_mechanism": model.get("sriov"),
        "vf_creation": sriov["vf_creation"] if sriov else None,
        "resource_class": model.get("vf_resource_class") if model.get("role") == "vf" else model.get("resource_class"),
        "partition_modes": model.get("partition_modes"),
    }
    return out


def partition_of(model: dict, numvfs: int | None, compute: str | None, memory: str | None) -> dict | None:
    """The partition a PF of ``model`` runs in, or None when the catalog publishes no modes for it.

    ``compute`` and ``memory`` are what the driver shows (amdgpu's ``current_compute_partition`` and
    ``current_memory_partition``); without them the mode follows from the VF count where the vendor ties
    one to the other (AMD GIM: 8 VFs on an MI300X is CPX and NPS4) or names a VF profile for it (Intel:
    ``flex170_m4`` for 4 VFs, each with a quarter of the memory). ``source`` says which."""
    if compute or memory:
        return {"compute": compute, "memory": memory, "profile": None, "vf_memory_mb": None, "source": "driver"}
    count = numvfs or 0
    for mode in model.get("vf_modes") or []:
        if count and mode["vfs"] == count:
            vf_memory = (model["memory_gb"] * 1024 // count) if model.get("memory_gb") else None
            return {
                "compute": mode["compute"],
                "memory": mode["memory"],
                "profile": None,
                "vf_memory_mb": vf_memory,
                "source": f"vf_count: {count} VFs",
            }
    for profile in model.get("vf_profiles") or []:
        if count and profile["vfs"] == count:
            return {
                "compute": None,
                "memory": None,
                "profile": profile["name"],
                "vf_memory_mb": profile["vf_memory_mb"],
                "source": f"vf_count: {count} VFs",
            }
    return None


def vf_creation_refusal(model: dict | None, driver: str | None) -> str | None:
    """Why ``sriov_numvfs`` cannot change this PF's VF count (only its vendor's host driver makes the VFs,
    from its own setting), with the fix; None when writing ``sriov_numvfs`` is the way (every mechanism
    but AMD GIM, and any PF the catalog does not know)."""
    if model is None:
        return None
    sriov = mechanism(model.get("sriov"))
    if not sriov or sriov["vf_creation"] != "driver_parameter":
        return None
    modes = ", ".join(f"{m['vfs']} VF(s) = {m['compute']}/{m['memory']}" for m in model.get("vf_modes") or [])
    parameter = sriov["parameter"].split()
    if driver not in sriov["pf_drivers"]:
        return (
            f"the {model['vendor']} {model['model']} gets VFs only from the {'/'.join(sriov['pf_drivers'])} host "
            f"driver ({model.get('sriov')}), and this PF is on {driver or 'no driver'}: bind it to "
            f"{sriov['pf_drivers'][0]} with {parameter[-1]} set ('options {parameter[0]} {parameter[-1]}=<N>' in "
            f"/etc/modprobe.d/{parameter[0]}.conf" + (f"; {modes}" if modes else "") + "), then run again"
        )
    return (
        f"the {model['vendor']} {model['model']} is on the {driver} driver ({model.get('sriov')}), which enables "
        f"its VFs itself when it loads, from its {parameter[-1]} setting; the kernel refuses sriov_numvfs for it. "
        f"Set the count in {parameter[0]}'s configuration ('options {parameter[0]} {parameter[-1]}=<N>' in "
        f"/etc/modprobe.d/{parameter[0]}.conf, one value per GPU"
        + (f"; {modes}" if modes else "")
        + f"), reload {parameter[0]} with no VF in use, then run again"
    )


# -- the schema, for the generator and the tests ------------------------------------------------------
def catalog_problems(document: object) -> list[str]:
    """Every way ``document`` is not a catalog (one sentence each, naming the model and the key)."""
    if not isinstance(document, dict):
        return ["the catalog is not a mapping with schema, mechanisms and models"]
    problems: list[str] = []
    if document.get("schema") != 1:
        problems.append("schema must be 1")
    mechanisms = document.get("mechanisms")
    if not isinstance(mechanisms, dict) or not mechanisms:
        problems.append("mechanisms must be a mapping of mechanism names to their description")
        mechanisms = {}
    for name, value in mechanisms.items():
        missing = [k for k in MECHANISM_KEYS if not isinstance(value, dict) or k not in value]
        if missing:
            problems.append(f"mechanism {name}: missing {', '.join(missing)}")
            continue
        if len(str(value["description"])) > 90:
            problems.append(f"mechanism {name}: description is longer than 90 characters; say it shorter")
        if value["vf_creation"] not in VF_CREATION:
            problems.append(f"mechanism {name}: vf_creation must be one of {', '.join(VF_CREATION)}")
        if value["vf_creation"] == "driver_parameter" and len(str(value.get("parameter", "")).split()) != 2:
            problems.append(f"mechanism {name}: parameter must be '<module> <option>', e.g. 'gim vf_num'")
    seen: set[tuple[str, str]] = set()
    vfs: set[tuple[str, str]] = set()
    for index, model in enumerate(document.get("models") or []):
        label = f"model {index} ({model.get('model') if isinstance(model, dict) else model})"
        if not isinstance(model, dict):
            problems.append(f"{label}: not a mapping")
            continue
        missing = [k for k, required in MODEL_KEYS.items() if required and k not in model]
        unknown = sorted(set(model) - set(MODEL_KEYS))
        if missing:
            problems.append(f"{label}: missing {', '.join(missing)}")
        if unknown:
            problems.append(f"{label}: unknown key(s) {', '.join(unknown)}")
        if missing:
            continue
        for key in ("vendor_id", "product_id"):
            if not is_pci_id(model[key]) or model[key] != model[key].lower():
                problems.append(f"{label}: {key} '{model[key]}' is not 4 lowercase hex digits")
        key = (model["vendor_id"], model["product_id"])
        if key in seen:
            problems.append(f"{label}: {key[0]}:{key[1]} is listed twice")
        seen.add(key)
        if not SHORT_NAME.match(str(model["short"])):
            problems.append(f"{label}: short '{model['short']}' must be upper-case letters, digits and _")
        if model["memory_gb"] is not None and (not isinstance(model["memory_gb"], int) or model["memory_gb"] < 1):
            problems.append(f"{label}: memory_gb must be a whole number of GB or null")
        for rc_key in ("resource_class", "vf_resource_class"):
            if rc_key in model and custom_name_problem(model[rc_key]):
                problems.append(f"{label}: {rc_key} '{model[rc_key]}' {custom_name_problem(model[rc_key])}")
        sriov, vf_id = model["sriov"], model["vf_product_id"]
        if (sriov is None) != (vf_id is None):
            problems.append(f"{label}: sriov and vf_product_id go together (both set or both null)")
        if sriov is not None and vf_id is not None:
            if sriov not in mechanisms:
                problems.append(f"{label}: sriov '{sriov}' is not one of the mechanisms ({', '.join(mechanisms)})")
            elif mechanisms[sriov]["vendor_id"] != model["vendor_id"]:
                problems.append(f"{label}: sriov {sriov} is a mechanism of another vendor")
            if not is_pci_id(vf_id):
                problems.append(f"{label}: vf_product_id '{vf_id}' is not 4 lowercase hex digits")
            elif (model["vendor_id"], vf_id) in vfs:
                problems.append(f"{label}: VF ID {model['vendor_id']}:{vf_id} belongs to another model too")
            vfs.add((model["vendor_id"], vf_id))
            if "vf_resource_class" not in model:
                problems.append(f"{label}: an SR-IOV model needs vf_resource_class")
        problems += _mode_problems(label, model)
    return problems


def _mode_problems(label: str, model: dict) -> list[str]:
    problems: list[str] = []
    modes = model.get("partition_modes") or {}
    if not isinstance(modes, dict) or not all(isinstance(modes.get(k, []), list) for k in ("compute", "memory")):
        return [f"{label}: partition_modes must be a mapping with compute and memory lists"]
    for kind in ("compute", "memory"):
        for mode in modes.get(kind, []):
            if not PARTITION_MODE.match(str(mode)):
                problems.append(f"{label}: partition mode '{mode}' is not an upper-case name such as CPX or NPS4")
    for mode in model.get("vf_modes") or []:
        if not isinstance(mode, dict):
            problems.append(f"{label}: each vf_modes entry is a mapping of vfs, compute and memory")
            continue
        named = f"{mode.get('compute')}/{mode.get('memory')}"
        if mode.get("compute") not in modes.get("compute", []) or mode.get("memory") not in modes.get("memory", []):
            problems.append(
                f"{label}: vf_modes entry for {mode.get('vfs')} VF(s) names {named}, a mode that partition_modes "
                "does not list"
            )
        if not isinstance(mode.get("vfs"), int) or mode["vfs"] < 1:
            problems.append(f"{label}: the vf_modes entry {named} needs vfs, a whole number of 1 or more")
    for profile in model.get("vf_profiles") or []:
        if not isinstance(profile, dict):
            problems.append(f"{label}: each vf_profiles entry is a mapping of name, vfs and vf_memory_mb")
            continue
        name = profile.get("name")
        if not isinstance(profile.get("vfs"), int) or not isinstance(profile.get("vf_memory_mb"), int):
            problems.append(f"{label}: vf_profiles entry {name} needs vfs and vf_memory_mb as whole numbers")
        elif model.get("memory_gb") and profile["vfs"] * profile["vf_memory_mb"] > model["memory_gb"] * 1024:
            problems.append(f"{label}: vf_profiles entry {name} gives its VFs more memory than the GPU has")
    return problems
