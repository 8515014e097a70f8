"""Feed rendered Nova config through Nova 34's own parsers and report what Nova makes of it.

Runs under the nova venv's interpreter (``.venv-nova/bin/python``), never imported by the test
process: JSON cases on stdin, JSON results on stdout, one process for many cases.

A case::

    {"id": "...", "hostname": "cn1",
     "compute": "<nova-compute INI text>", "scheduler": "<INI>", "api": "<INI>",
     "provider_config": "<YAML text or null>",
     "devices": [<accel_pci_devices facts>]}

For each case the result says whether Nova accepts each file and what it derives:

- ``device_spec``: ``PciDeviceSpec`` objects from ``nova.pci.whitelist.Whitelist``; for every device
  of the host, the tags of the spec that claims it (``matched``);
- ``aliases``: ``nova.pci.request.get_alias_from_config`` for each service's file;
- ``providers``: with ``[pci] report_in_placement``, Nova's ``PlacementView`` run over the claimed
  devices into a real ``ProviderTree``; with ``[devices] enabled_mdev_types``, the libvirt driver's
  ``_get_supported_vgpu_types``, ``_get_gpu_inventories`` and ``_ensure_pgpu_providers`` into the same
  tree. Only the device list comes from the facts, standing in for libvirt's node device listing;
- ``provider_config``: ``nova.compute.provider_config.get_provider_configs`` on the rendered YAML.

Where Nova reads the host's sysfs while it parses device_spec (is an address a PF, the PF's IDs and
its VFs' product ID), the answers come from the same facts, so a PF's address claims its VFs as it does
on the host. Optional case keys: ``card_serials`` (true: every device has a card serial number in its
PCI VPD, which Nova needs for ``remote_managed`` devices; libvirt reports it, the facts do not) and
``allocated`` (addresses an instance holds, for Nova's one-time-use reservation).

Any exception from Nova is reported as ``{"ok": false, "error": "<Type>: <message>"}``.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
import uuid
import warnings

warnings.simplefilter("ignore")


def _load_nova():
    import nova.conf
    from nova import objects

    objects.register_all()
    return nova.conf.CONF


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _parse_conf(conf, text: str, workdir: str, name: str) -> None:
    path = os.path.join(workdir, name)
    with open(path, "w") as handle:
        handle.write(text or "")
    conf.reset()
    conf.clear()
    conf(args=[], project="nova", default_config_files=[path], validate_default_values=True)


def _aliases():
    from nova.pci import request

    request.get_alias_from_config.cache_clear()
    parsed = request.get_alias_from_config()
    return {name: {"numa_policy": policy, "specs": specs} for name, (policy, specs) in sorted(parsed.items())}


def _dev_type(device: dict) -> str:
    # libvirt reports a phys_function capability for a VF and virt_functions for an SR-IOV PF.
    if device.get("physfn"):
        return "type-VF"
    if (device.get("sriov_totalvfs") or 0) > 0:
        return "type-PF"
    return "type-PCI"


def _answer_sysfs_from_facts(devices: list[dict]) -> None:
    """Nova's sysfs look-ups while parsing device_spec, answered from the host's facts."""
    from nova import exception
    from nova.pci import utils

    by_address = {d["address"]: d for d in devices}

    def is_physical_function(domain, bus, slot, function):
        device = by_address.get(f"{domain}:{bus}:{slot}.{function}")
        return bool(device and (device.get("sriov_totalvfs") or 0) > 0)

    def get_vf_product_id_by_pf_addr(pci_addr):
        for device in devices:
            if device.get("physfn") == pci_addr:
                return device["product_id"]
        # As on the host when sysfs has no such PF (Nova passes the text of its address spec here).
        raise exception.PciDeviceNotFoundById(id=pci_addr)

    def get_pci_ids_by_pci_addr(pci_addr):
        device = by_address[pci_addr]
        return (device["vendor_id"], device["product_id"])

    utils.is_physical_function = is_physical_function
    utils.get_vf_product_id_by_pf_addr = get_vf_product_id_by_pf_addr
    utils.get_pci_ids_by_pci_addr = get_pci_ids_by_pci_addr


def _pci_objects(devices: list[dict], whitelist, card_serials: bool = False, allocated=()):
    from nova import objects

    claimed = []
    for device in devices:
        capabilities = {"vpd": {"card_serial_number": f"SN{device['address']}"}} if card_serials else {}
        dev_dict = {
            "vendor_id": device["vendor_id"],
            "product_id": device["product_id"],
            "address": device["address"],
            "parent_addr": device.get("physfn"),
            "capabilities": capabilities,
        }
        spec = whitelist.device_assignable(dev_dict)
        if spec is None:
            continue
        pci = objects.PciDevice(
            address=device["address"],
            vendor_id=device["vendor_id"],
            product_id=device["product_id"],
            dev_type=_dev_type(device),
            parent_addr=device.get("physfn"),
            status="allocated" if device["address"] in allocated else "available",
            instance_uuid=str(uuid.uuid4()) if device["address"] in allocated else None,
            extra_info={"capabilities": json.dumps(capabilities)},
            numa_node=device.get("numa_node"),
        )
        claimed.append((pci, spec))
    return claimed


def _vgpu_driver(devices: list[dict]):
    """The libvirt driver's vGPU bookkeeping, with libvirt's mdev listing answered from the facts."""
    import os_resource_classes as orc
    from nova.virt.libvirt import driver as libvirt_driver

    drv = libvirt_driver.LibvirtDriver.__new__(libvirt_driver.LibvirtDriver)
    drv.pgpu_type_mapping = collections.defaultdict(str)
    drv.mdev_class_mapping = collections.defaultdict(lambda: orc.VGPU)
    drv.mdev_classes = set()
    drv.mdev_type_max_mapping = collections.defaultdict(str)
    drv.pgpu_type_default = None
    drv.virtual_mdevs = set()
    drv.supported_vgpu_types = drv._get_supported_vgpu_types()

    def mdev_capable(types=None):
        found = []
        for device in devices:
            offered = {
                m["type"]: {"availableInstances": m.get("available_instances") or 0}
                for m in device.get("mdev_types") or []
                if m.get("mechanism", "mdev") == "mdev" and (types is None or m["type"] in types)
            }
            if offered:
                found.append(
                    {"dev_id": "pci_" + device["address"].replace(":", "_").replace(".", "_"), "types": offered}
                )
        return found

    drv._get_mdev_capable_devices = mdev_capable
    drv._get_mediated_devices = lambda types=None: []  # a freshly configured host has created none
    return drv


def _tree_as_list(tree, hostname: str) -> list[dict]:
    out = []
    for provider_uuid in tree.get_provider_uuids(hostname):
        data = tree.data(provider_uuid)
        parent = tree.data(data.parent_uuid).name if data.parent_uuid else None
        out.append(
            {
                "name": data.name,
                "parent_name": parent,
                "inventories": {rc: dict(inv) for rc, inv in data.inventory.items()},
                "traits": sorted(data.traits),
            }
        )
    return out


def _compute(conf, case: dict, workdir: str) -> dict:
    from nova.compute import pci_placement_translator as translator
    from nova.compute import provider_tree
    from nova.pci import whitelist as nova_whitelist

    result: dict = {"ok": True}
    try:
        _parse_conf(conf, case["compute"], workdir, "nova-compute.conf")
        _answer_sysfs_from_facts(case["devices"])
        wl = nova_whitelist.Whitelist(conf.pci.device_spec)
        result["device_spec_count"] = len(wl.specs)
        result["aliases"] = _aliases()
        claimed = _pci_objects(case["devices"], wl, case.get("card_serials", False), case.get("allocated", ()))
        result["matched"] = {pci.address: dict(spec.get_tags()) for pci, spec in claimed}
        result["report_in_placement"] = bool(conf.pci.report_in_placement)
        hostname = case["hostname"]
        tree = provider_tree.ProviderTree()
        tree.new_root(hostname, str(uuid.uuid4()))
        if conf.pci.report_in_placement:
            translator.ensure_no_dev_spec_with_devname(wl.specs)
            view = translator.PlacementView(hostname, [])
            for pci, _spec in claimed:
                view.process_dev(pci, wl.get_devspec(pci))
            view.update_provider_tree(tree, {})
        drv = _vgpu_driver(case["devices"])
        result["enabled_mdev_types"] = list(drv.supported_vgpu_types)
        result["mdev_classes"] = sorted(drv.mdev_classes)
        result["pgpu_types"] = dict(drv.pgpu_type_mapping)
        if drv.supported_vgpu_types:
            drv._ensure_pgpu_providers(drv._get_gpu_inventories(), tree, hostname)
        result["providers"] = _tree_as_list(tree, hostname)
    except Exception as exc:  # Nova refused it: that is the answer
        result = {"ok": False, "error": _error(exc)}
    return result


def _service(conf, text: str, workdir: str, name: str) -> dict:
    try:
        _parse_conf(conf, text, workdir, name)
        return {
            "ok": True,
            "aliases": _aliases(),
            "enabled_filters": list(conf.filter_scheduler.enabled_filters),
            "pci_in_placement": bool(conf.filter_scheduler.pci_in_placement),
        }
    except Exception as exc:
        return {"ok": False, "error": _error(exc)}


def _provider_config(text: str | None, workdir: str) -> dict | None:
    if text is None:
        return None
    from nova.compute import provider_config

    directory = os.path.join(workdir, "provider_config")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "accel.yaml"), "w") as handle:
        handle.write(text)
    try:
        parsed = provider_config.get_provider_configs(directory)
        return {"ok": True, "providers": dict(parsed.items())}
    except Exception as exc:
        return {"ok": False, "error": _error(exc)}


def _names(payload: dict) -> dict:
    """Nova's own resource class and trait derivation for names given in the payload."""
    from nova.compute import pci_placement_translator as translator

    out = {}
    for item in payload.get("names", []):
        out[item["key"]] = {
            "resource_class": translator.get_resource_class(
                item.get("resource_class"), item["vendor_id"], item["product_id"]
            ),
            "traits": sorted(translator.get_traits(item.get("traits", ""))),
        }
    return out


def run(cases: list[dict]) -> list[dict]:
    conf = _load_nova()
    results = []
    for case in cases:
        with tempfile.TemporaryDirectory() as workdir:
            result = {"id": case.get("id")}
            if "compute" in case:
                result["compute"] = _compute(conf, case, workdir)
            for service in ("scheduler", "api", "conductor"):
                if service in case:
                    result[service] = _service(conf, case[service], workdir, f"nova-{service}.conf")
            if "provider_config" in case:
                result["provider_config"] = _provider_config(case["provider_config"], workdir)
            if "names" in case:
                result["names"] = _names(case)
            if case.get("standard_traits"):
                import os_traits

                result["standard_traits"] = sorted(os_traits.get_traits())
            results.append(result)
    return results


def ask(cases: list[dict], timeout: int = 300) -> list[dict]:
    """Client side (test process): run the cases in one nova-venv process and return its results."""
    from tests.support import nova_venv

    return nova_venv.ask(__file__, cases, timeout, "nova oracle")


if __name__ == "__main__":
    # Run as a script in the nova venv: this folder is on sys.path, the collection's tests package is not.
    from nova_venv import serve

    sys.exit(serve(run))
