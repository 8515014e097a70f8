# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova 34's guest features that turn into Placement resources and traits (flavor extra specs and image
properties): memory encryption, persistent memory, vTPM, secure boot, the physical address mode,
stateless firmware, and the request filters' root traits (virtio packed ring, ephemeral encryption,
the virtio sound model, the TPM secret security).

``features(flavor_name, specs, image)`` returns what ``ResourceRequest.from_request_spec`` adds to the
unsuffixed group after the flavor's sizes (in Nova's order) and what ``request_filter.process_reqspec``
adds to ``root_required``; it raises ``FeatureRefusal`` with Nova's message where Nova refuses the
combination (nova-api for memory encryption; the scheduler, failing the build, for a flavor and image
that set the same feature differently). docs/flavors.md lists each rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

# oslo strutils.bool_from_string (not strict): anything else is False
_TRUE = ("1", "t", "true", "on", "y", "yes")
MEM_ENCRYPTION_TRAITS = {
    "amd-sev": "HW_CPU_X86_AMD_SEV",
    "amd-sev-es": "HW_CPU_X86_AMD_SEV_ES",
    "amd-sev-snp": "HW_CPU_X86_AMD_SEV_SNP",
    "intel-tdx": "HW_CPU_X86_INTEL_TDX",
}
_NEEDS_STATELESS = ("amd-sev-snp", "intel-tdx")
TPM_SECRET_TRAITS = {
    "user": "COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER",
    "host": "COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST",
    "deployment": "COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT",
}
MAXPHYSADDR_TRAITS = {"passthrough": "COMPUTE_ADDRESS_SPACE_PASSTHROUGH", "emulate": "COMPUTE_ADDRESS_SPACE_EMULATED"}


class FeatureRefusal(AccelError):
    """Nova refuses the flavor and image together: ``nova`` is Nova's message, ``key`` the setting."""

    def __init__(self, key: str, nova: str, fix: str):
        super().__init__(nova)
        self.key = key
        self.nova = nova
        self.fix = fix


@dataclass
class Features:
    """What the features add: (resource class, amount) and required traits of the unsuffixed group, in
    Nova's order, and the request filters' required root traits."""

    resources: list[tuple[str, int]] = field(default_factory=list)
    traits: list[str] = field(default_factory=list)
    root_required: list[str] = field(default_factory=list)


def _bool(value) -> bool:
    return str(value).strip().lower() in _TRUE


def _unique(flavor_name: str, specs: dict, image: dict, key: str, prefix: str = "hw", image_name=None):
    """hardware._get_unique_flavor_image_meta: the flavor's or the image's value, refused when both differ."""
    flavor_value = specs.get(f"{prefix}:{key}")
    image_value = image.get(f"{prefix}_{key}")
    if image_value and flavor_value and image_value != flavor_value:
        raise FeatureRefusal(
            f"image_properties '{prefix}_{key}'",
            f"Flavor {flavor_name} has {prefix}:{key} extra spec explicitly set to {flavor_value}, conflicting "
            f"with image {image_name} which has {prefix}_{key} explicitly set to {image_value}.",
            f"is {image_value!r} while the flavor's {prefix}:{key} is {flavor_value!r}; drop one of them "
            "(Nova fails the build in the scheduler)",
        )
    return flavor_value or image_value


def _mem_encryption(flavor_name: str, specs: dict, image: dict, image_name) -> str | None:
    """hardware.get_mem_encryption_constraint as nova-api calls it: the model, None, or Nova's refusal."""
    flavor_text = specs.get("hw:mem_encryption")
    flavor_on = None if flavor_text is None else _bool(flavor_text)
    image_on = None if image.get("hw_mem_encryption") is None else _bool(image["hw_mem_encryption"])
    if not flavor_on and not image_on:
        return None
    if flavor_on is not None and image_on is not None and flavor_on != image_on:
        raise FeatureRefusal(
            "image_properties 'hw_mem_encryption'",
            f"Flavor {flavor_name} has hw:mem_encryption extra spec explicitly set to {flavor_text}, conflicting "
            f"with image {image_name} which has hw_mem_encryption property explicitly set to {image_on}",
            f"is {image['hw_mem_encryption']!r} while the flavor's hw:mem_encryption is {flavor_text!r}; drop one",
        )
    requesters = []
    if flavor_on:
        requesters.append(f"hw:mem_encryption extra spec in {flavor_name} flavor")
    if image_on:
        requesters.append("hw_mem_encryption property of image <no-id>")
    flavor_model = specs.get("hw:mem_encryption_model")
    image_model = image.get("hw_mem_encryption_model")
    if flavor_model is not None and image_model is not None and flavor_model != image_model:
        raise FeatureRefusal(
            "image_properties 'hw_mem_encryption_model'",
            f"Flavor {flavor_name} has hw:mem_encryption_model extra spec explicitly set to {flavor_model}, "
            f"conflicting with image {image_name} which has hw_mem_encryption_model property explicitly set to "
            f"{image_model}",
            f"is {image_model!r} while the flavor's hw:mem_encryption_model is {flavor_model!r}; drop one",
        )
    model = image_model or flavor_model or "amd-sev"
    if model not in MEM_ENCRYPTION_TRAITS:
        raise FeatureRefusal(
            "hw_mem_encryption_model",
            f"Invalid memory encryption model {model!r}. Allowed values: {', '.join(MEM_ENCRYPTION_TRAITS)}.",
            f"is {model!r}; use one of {', '.join(MEM_ENCRYPTION_TRAITS)}",
        )
    if image.get("hw_firmware_type") != "uefi":
        raise FeatureRefusal(
            "image_properties 'hw_firmware_type'",
            f"Memory encryption is requested by {' and '.join(requesters)} but the image metadata doesn't have "
            "the 'hw_firmware_type' property set to 'uefi'",
            "must be 'uefi' on the image for memory encryption",
        )
    machine = image.get("hw_machine_type")
    if machine is not None and "q35" not in machine:
        raise FeatureRefusal(
            "image_properties 'hw_machine_type'",
            f"Machine type '{machine}' is not compatible with image {image_name} (<no-id>): q35 type is required "
            f"for {model} to work",
            f"is {machine!r}; memory encryption needs a q35 machine type",
        )
    if model in _NEEDS_STATELESS and not _stateless_firmware(image):
        raise FeatureRefusal(
            "image_properties 'hw_firmware_stateless'",
            f"The {model} memory encryption model requires stateless firmware but the image metadata doesn't have "
            "the 'hw_firmware_stateless' property set to True",
            f"must be true on the image for {model} (with hw_firmware_type=uefi)",
        )
    if model == "intel-tdx" and image.get("hw_video_model") != "none":
        raise FeatureRefusal(
            "image_properties 'hw_video_model'",
            f"The {model} memory encryption model is incompatible with an attached video device. Set the "
            "'hw_video_model' image property to 'none' to disable it",
            "must be 'none' on the image for intel-tdx",
        )
    return model


def _stateless_firmware(image: dict) -> bool:
    # hardware.get_stateless_firmware_constraint: only with UEFI firmware
    value = image.get("hw_firmware_stateless")
    return value is not None and image.get("hw_firmware_type") == "uefi" and _bool(value)


def check_features(flavor_name: str, specs: dict, image: dict, image_name=None) -> None:
    """The feature checks nova-api makes when a server is created (raises FeatureRefusal)."""
    _mem_encryption(flavor_name, specs, image, image_name)


def check_locked_memory(flavor_name: str, specs: dict, image: dict, image_name=None) -> None:
    """hardware.get_locked_memory_constraint's refusals (nova-api, within the NUMA checks)."""
    flavor_text = specs.get("hw:locked_memory")
    image_on = None if image.get("hw_locked_memory") is None else _bool(image["hw_locked_memory"])
    locked = image_on
    if flavor_text is not None:
        locked = _bool(flavor_text)
        if image_on is not None and locked != image_on:
            raise FeatureRefusal(
                "image_properties 'hw_locked_memory'",
                f"locked_memory value in image ({image_on}) and flavor ({locked}) conflict. A consistent value is "
                "expected if both specified.",
                f"is {image['hw_locked_memory']!r} while the flavor's hw:locked_memory is {flavor_text!r}; drop one",
            )
    if locked and not (specs.get("hw:mem_page_size") or image.get("hw_mem_page_size")):
        raise FeatureRefusal(
            "extra_specs 'hw:locked_memory'" if flavor_text is not None else "image_properties 'hw_locked_memory'",
            "locked_memory value in image or flavor is forbidden when mem_page_size is not set.",
            "needs hw:mem_page_size (or the image's hw_mem_page_size) as well",
        )


def _pmem_resources(specs: dict) -> list[tuple[str, int]]:
    # hardware.get_vpmems + os_resource_classes.normalize_name("PMEM_NAMESPACE_" + label), counted
    counts: dict[str, int] = {}
    for label in (specs.get("hw:pmem") or "").split(","):
        label = label.strip()
        if label:
            rc = "CUSTOM_" + re.sub("[^0-9A-Za-z]+", "_", "PMEM_NAMESPACE_" + label).upper()
            counts[rc] = counts.get(rc, 0) + 1
    return list(counts.items())


def _flag(flavor_name: str, specs: dict, image: dict, key: str) -> bool:
    """A boolean feature the flavor or the image turns on, refused when both are set and differ."""
    flavor_text = specs.get(f"hw:{key}")
    image_text = image.get(f"hw_{key}")
    flavor_on = None if flavor_text is None else _bool(flavor_text)
    image_on = None if image_text is None else _bool(image_text)
    if flavor_on is not None and image_on is not None and flavor_on != image_on:
        raise FeatureRefusal(
            f"image_properties 'hw_{key}'",
            f"Flavor has hw:{key} extra spec explicitly set to {flavor_on}, conflicting with image which has "
            f"hw_{key} explicitly set to {image_on}.",
            f"is {image_text!r} while the flavor's hw:{key} is {flavor_text!r}; drop one of them",
        )
    return bool(flavor_on or image_on)


def features(flavor_name: str, specs: dict, image: dict, image_name=None) -> Features:
    """What Nova's request filters and ``from_request_spec`` add for the flavor and image (see module doc)."""
    out = Features()
    vtpm = _vtpm(flavor_name, specs, image, image_name)
    # request_filter.process_reqspec, in its order
    if _flag(flavor_name, specs, image, "virtio_packed_ring"):
        out.root_required.append("COMPUTE_NET_VIRTIO_PACKED")
    if _flag(flavor_name, specs, image, "ephemeral_encryption"):
        out.root_required.append("COMPUTE_EPHEMERAL_ENCRYPTION")
        fmt = _unique(flavor_name, specs, image, "ephemeral_encryption_format", image_name=image_name)
        if fmt:
            out.root_required.append(f"COMPUTE_EPHEMERAL_ENCRYPTION_{fmt.upper()}")
    if _unique(flavor_name, specs, image, "sound_model", image_name=image_name) == "virtio":
        out.root_required.append("COMPUTE_SOUND_MODEL_VIRTIO")
    if vtpm:
        security = specs.get("hw:tpm_secret_security") or "user"
        if security not in TPM_SECRET_TRAITS:
            raise FeatureRefusal(
                "extra_specs 'hw:tpm_secret_security'",
                f"TPM secret security '{security}' is not supported.",
                f"is {security!r}; use {', '.join(TPM_SECRET_TRAITS)}",
            )
        out.root_required.append(TPM_SECRET_TRAITS[security])
    # ResourceRequest.from_request_spec, after the flavor's sizes
    model = _mem_encryption(flavor_name, specs, image, image_name)
    if model:
        out.resources.append(("MEM_ENCRYPTION_CONTEXT", 1))
        out.traits.append(MEM_ENCRYPTION_TRAITS[model])
    out.resources.extend(_pmem_resources(specs))
    if vtpm:
        version, model_name = vtpm
        out.traits.append("COMPUTE_SECURITY_TPM_CRB" if model_name == "tpm-crb" else "COMPUTE_SECURITY_TPM_TIS")
        out.traits.append("COMPUTE_SECURITY_TPM_2_0" if version == "2.0" else "COMPUTE_SECURITY_TPM_1_2")
    return out


def late_traits(flavor_name: str, specs: dict, image: dict, image_name=None) -> list[str]:
    """The traits ``from_request_spec`` adds after the PCI NUMA socket trait: secure boot, the physical
    address mode, stateless firmware."""
    out = []
    if _unique(flavor_name, specs, image, "secure_boot", prefix="os", image_name=image_name) == "required":
        out.append("COMPUTE_SECURITY_UEFI_SECURE_BOOT")
    mode = _unique(flavor_name, specs, image, "maxphysaddr_mode", image_name=image_name)
    if mode is not None:
        if mode not in MAXPHYSADDR_TRAITS:
            raise FeatureRefusal(
                "image_properties 'hw_maxphysaddr_mode'",
                f"Invalid Maxphyaddr mode {mode!r}. Allowed values: {', '.join(MAXPHYSADDR_TRAITS)}.",
                f"is {mode!r}; use {' or '.join(MAXPHYSADDR_TRAITS)}",
            )
        out.append(MAXPHYSADDR_TRAITS[mode])
    if _stateless_firmware(image):
        out.append("COMPUTE_SECURITY_STATELESS_FIRMWARE")
    return out


def _vtpm(flavor_name: str, specs: dict, image: dict, image_name) -> tuple[str, str] | None:
    """hardware.get_vtpm_constraint: (version, model) or None."""
    version = _unique(flavor_name, specs, image, "tpm_version", image_name=image_name)
    if version is None:
        return None
    if version not in ("1.2", "2.0"):
        raise FeatureRefusal(
            _where(specs, "tpm_version"),
            f"Invalid TPM version {version!r}. Allowed values: 1.2, 2.0.",
            "use 1.2 or 2.0",
        )
    model = _unique(flavor_name, specs, image, "tpm_model", image_name=image_name)
    if model is None:
        model = "tpm-tis"
    elif model not in ("tpm-tis", "tpm-crb"):
        raise FeatureRefusal(
            _where(specs, "tpm_model"),
            f"Invalid TPM model {model!r}. Allowed values: tpm-tis, tpm-crb.",
            "use tpm-tis or tpm-crb",
        )
    elif model == "tpm-crb" and version != "2.0":
        raise FeatureRefusal(
            _where(specs, "tpm_model"),
            "TPM model CRB is only valid with TPM version 2.0.",
            "tpm-crb needs tpm_version 2.0",
        )
    return version, model


def _where(specs: dict, key: str) -> str:
    return f"extra_specs 'hw:{key}'" if f"hw:{key}" in specs else f"image_properties 'hw_{key}'"
