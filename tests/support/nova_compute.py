"""Nova 34's own code playing nova-compute against a real Placement: a test harness, reusable.

nova-compute's periodic ``update_available_resource`` ends in the resource tracker's
``_update_to_placement``: the report client reads (or creates) the compute node's provider tree, the
virt driver sets the standard inventories, the tracker syncs the root's traits, the PCI-in-Placement
translator adds the PCI children, the provider config is merged, and the report client flushes the
tree to Placement. This module runs exactly that code of Nova 34 (``nova.compute.resource_tracker.
ResourceTracker._update_to_placement`` with ``nova.scheduler.client.report.SchedulerReportClient``
and ``nova.compute.provider_tree.ProviderTree``) for one host at a time, against the Placement at a
given URL (noauth2: the header ``X-Auth-Token: admin``, through keystoneauth's ``admin_token`` plugin).

Only what needs a hypervisor or Nova's database is stood in for:

- the virt driver is Nova's ``nova.virt.fake.FakeDriver`` with the host's ``vcpus``, ``memory_mb`` and
  ``local_gb`` (it reports VCPU, MEMORY_MB and DISK_GB with the reserved amounts and allocation ratios
  of the parsed config, as the libvirt driver does); with ``[devices] enabled_mdev_types`` it adds
  the vGPU children with the libvirt driver's own ``_ensure_pgpu_providers``, libvirt's mdev listing
  answered from the facts (as ``nova_oracle`` does);
- the PCI tracker is Nova's ``PciDevTracker`` whose database holds no device yet (a host's first
  start); the hypervisor's device list comes from the facts (``accel_pci_devices``), and Nova's sysfs
  look-ups while parsing device_spec are answered from the same facts;
- the compute service record, which the tracker reads for ``COMPUTE_STATUS_DISABLED``, is an enabled
  service.

API (test process)::

    from tests.support import nova_compute
    results = nova_compute.update(placement_url, [case, ...], timeout=300)

One nova-venv process runs the cases in order (each case is one periodic update of one host, so a
host listed twice is updated twice). A case::

    {"hostname": "gpu-01",                 # the hypervisor hostname (the root provider's name)
     "node_uuid": "...",                   # optional; default uuid5 of the hostname (stable, as
                                           # nova-compute keeps its compute node's uuid)
     "vcpus": 64, "memory_mb": 515072, "local_gb": 1800,     # what the driver reports
     "config": ["<nova.conf INI text>", ...],   # optional, parsed in order (later files win):
                                           # [DEFAULT] reserved_host_memory_mb, cpu_allocation_ratio,
                                           # [pci] device_spec / report_in_placement,
                                           # [devices] enabled_mdev_types ... (e.g. the rendered
                                           # nova-compute fragment)
     "provider_config": "<provider.yaml text>",  # optional, Nova's [compute] provider_config_location
     "devices": [<accel_pci_devices facts>],      # optional: the host's PCI devices
     "rounds": 2, "allocated": {address: instance uuid}}  # optional: periodic updates after the start,
                                           # each with those devices held ("allocated_rounds": one map per
                                           # update, to let instances come and go between them)

Each result is ``{"hostname", "ok": true, "rounds": [{"ok": true}, ...], "providers": [...]}`` with the
tree Nova holds after the last update (``name``, ``uuid``, ``parent_name``, ``inventories``, ``traits``,
``aggregates``, roots first), or ``{"hostname", "ok": false, "error": "<Type>: <message>"}`` when Nova raised
(for example ``ResourceProviderCreationFailed`` after Placement's 409 on a duplicate name).

``compute_case(hostname, facts, ...)`` builds a case from a host's discovery facts.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import uuid
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_NAMESPACE = uuid.UUID("6f1d6b0e-64a4-4b52-9a43-1f7d1d2b8c01")


# -- test process ------------------------------------------------------------------------------------
def node_uuid(hostname: str) -> str:
    """The compute node uuid the harness gives ``hostname`` unless the case names one."""
    return str(uuid.uuid5(NODE_NAMESPACE, hostname))


def compute_case(hostname: str, facts: dict | None = None, config=(), **extra) -> dict:
    """A case for ``hostname``: VCPU and MEMORY_MB from the facts' NUMA nodes unless given."""
    facts = facts or {}
    nodes = facts.get("accel_numa_nodes") or []
    case = {
        "hostname": hostname,
        "vcpus": sum(len(n.get("cpus") or []) for n in nodes) or 8,
        "memory_mb": sum(int(n.get("memory_mb") or 0) for n in nodes) or 16384,
        "local_gb": 1800,
        "config": list(config),
        "devices": facts.get("accel_pci_devices") or [],
    }
    case.update(extra)
    return case


def update(placement_url: str, cases: list[dict], timeout: int = 300) -> list[dict]:
    """Run each case's periodic update with Nova's code against ``placement_url``; see the module doc."""
    from tests.support import nova_venv

    payload = [dict(case, placement_url=placement_url) for case in cases]
    return nova_venv.ask(__file__, payload, timeout, "nova-compute (Nova's report client)")


# -- nova venv -----------------------------------------------------------------------------------------
def _adapter(url: str):
    from keystoneauth1 import adapter, session, token_endpoint

    auth = token_endpoint.Token(url, "admin")
    # As nova.utils.get_sdk_adapter: responses >= 400 come back to the report client, which handles them.
    return adapter.Adapter(session.Session(auth=auth), service_type="placement", endpoint_override=url, raise_exc=False)


def _configure(conf, case: dict, workdir: str) -> None:
    paths = []
    for index, text in enumerate(case.get("config") or []):
        path = os.path.join(workdir, f"nova-{index}.conf")
        with open(path, "w") as handle:
            handle.write(text)
        paths.append(path)
    conf.reset()
    conf.clear()
    conf(args=[], project="nova", default_config_files=paths, validate_default_values=True)
    conf.set_override("host", case["hostname"])
    directory = os.path.join(workdir, "provider_config")
    os.makedirs(directory)
    if case.get("provider_config"):
        with open(os.path.join(directory, "accel.yaml"), "w") as handle:
            handle.write(case["provider_config"])
    conf.set_override("provider_config_location", directory, group="compute")


def _driver(case: dict):
    import nova_oracle
    from nova.virt import fake

    devices = case.get("devices") or []
    vgpu = nova_oracle._vgpu_driver(devices)

    class HostDriver(fake.FakeDriver):
        vcpus = int(case.get("vcpus", 8))
        memory_mb = int(case.get("memory_mb", 16384))
        local_gb = int(case.get("local_gb", 1800))

        def update_provider_tree(self, provider_tree, nodename, allocations=None):
            super().update_provider_tree(provider_tree, nodename, allocations=allocations)
            if vgpu.supported_vgpu_types:
                vgpu._ensure_pgpu_providers(vgpu._get_gpu_inventories(), provider_tree, nodename)

    return HostDriver(virtapi=None)


def _pci_tracker(context, compute_node, devices: list[dict]):
    from unittest import mock

    import nova_oracle
    from nova import objects
    from nova.pci import manager

    nova_oracle._answer_sysfs_from_facts(devices)
    empty = objects.PciDeviceList(objects=[])
    with mock.patch.object(objects.PciDeviceList, "get_by_compute_node", return_value=empty):
        tracker = manager.PciDevTracker(context, compute_node)
    hypervisor = [
        {
            "address": d["address"],
            "vendor_id": d["vendor_id"],
            "product_id": d["product_id"],
            "dev_type": nova_oracle._dev_type(d),
            "parent_addr": d.get("physfn"),
            "numa_node": d.get("numa_node"),
            "label": f"label_{d['vendor_id']}_{d['product_id']}",
            "dev_id": "pci_" + d["address"].replace(":", "_").replace(".", "_"),
        }
        for d in devices
    ]
    tracker.update_devices_from_hypervisor_resources(json.dumps(hypervisor))
    return tracker


def _tree(tree, hostname: str) -> list[dict]:
    out = []
    for provider_uuid in tree.get_provider_uuids(hostname):
        data = tree.data(provider_uuid)
        out.append(
            {
                "name": data.name,
                "uuid": data.uuid,
                "parent_name": tree.data(data.parent_uuid).name if data.parent_uuid else None,
                "inventories": {rc: dict(inv) for rc, inv in data.inventory.items()},
                "traits": sorted(data.traits),
                "aggregates": sorted(data.aggregates),
            }
        )
    return out


def _update_one(conf, case: dict) -> dict:
    from nova import context as nova_context
    from nova import objects
    from nova.compute import resource_tracker
    from nova.scheduler.client import report

    hostname = case["hostname"]
    with tempfile.TemporaryDirectory() as workdir:
        _configure(conf, case, workdir)
        context = nova_context.get_admin_context()
        client = report.SchedulerReportClient(adapter=_adapter(case["placement_url"]))
        tracker = resource_tracker.ResourceTracker(hostname, _driver(case), client)
        # The service record lives in Nova's database: this compute service is enabled.
        tracker._sync_compute_service_disabled_trait = lambda _context, traits: traits.discard(
            "COMPUTE_STATUS_DISABLED"
        )
        node = objects.ComputeNode(
            id=1,
            uuid=case.get("node_uuid") or node_uuid(hostname),
            hypervisor_hostname=hostname,
            numa_topology=None,
        )
        tracker.pci_tracker = _pci_tracker(context, node, case.get("devices") or [])
        rounds = []
        for index, allocated in enumerate(_rounds(case)):
            for device in tracker.pci_tracker.pci_devs:  # the tracker's view: which instance holds each device
                device.instance_uuid = allocated.get(device.address)
                device.status = "allocated" if device.instance_uuid else "available"
            try:
                tracker._update_to_placement(context, node, startup=index == 0)
                rounds.append({"ok": True})
            except Exception as exc:  # what nova-compute would log: that is the answer
                rounds.append({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
        failed = [r for r in rounds if not r["ok"]]
        result = {"hostname": hostname, "ok": not failed, "rounds": rounds}
        if failed:
            result["error"] = failed[0]["error"]
        if tracker.provider_tree is not None:
            result["providers"] = _tree(tracker.provider_tree, hostname)
        return result


def _rounds(case: dict) -> list[dict]:
    """Per periodic update, the devices instances hold ({address: instance uuid}): ``allocated_rounds``, else
    ``allocated`` for each of ``rounds`` updates (one by default)."""
    if case.get("allocated_rounds") is not None:
        return list(case["allocated_rounds"])
    return [case.get("allocated") or {}] * int(case.get("rounds", 1))


def run(cases: list[dict]) -> list[dict]:
    import nova.conf
    from nova import objects

    objects.register_all()
    conf = nova.conf.CONF
    results = []
    for case in cases:
        try:
            results.append(_update_one(conf, case))
        except Exception as exc:  # Nova raised: that is the answer
            results.append({"hostname": case.get("hostname"), "ok": False, "error": f"{type(exc).__name__}: {exc}"})
    return results


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    import nova_venv

    sys.exit(nova_venv.serve(run))
