"""nova-compute's periodic Placement update, run with Nova 34's own code against a real Placement.

Runs under the nova venv's interpreter (``.venv-nova/bin/python``): JSON cases on stdin, JSON results
on stdout. Each case is one nova-compute start (a fresh report client, so a fresh provider cache)
followed by ``rounds`` periodic updates, each doing what ``ResourceTracker._update_to_placement`` does:

    prov_tree = reportclient.get_provider_subtree_and_ensure_root(...)
    allocs = reportclient.get_allocations_for_provider_tree(...)
    <driver.update_provider_tree: root inventory; libvirt's vGPU providers from the mdev facts>
    pci_placement_translator.update_provider_tree_for_pci(prov_tree, nodename, tracker, allocs, [])
    reportclient.update_from_provider_tree(ctx, prov_tree, allocations=allocs if reshaped else None)

Only the PCI tracker's device list (the DB-backed part) is built here from the facts, as
``nova_oracle.py`` does. A case::

    {"placement": URL, "hostname": "cn1", "compute_uuid": UUID, "compute": "<nova-compute INI>",
     "devices": [<accel_pci_devices facts>], "allocated": {address: instance uuid}, "rounds": 2}

``allocated_rounds`` (a list of such maps, one per round) instead of ``allocated`` and ``rounds`` lets
instances come and go between the rounds of one start.

The result: ``{"ok": true}`` or ``{"ok": false, "error": ...}`` per round.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nova_oracle  # noqa: E402  (the same folder: the facts -> PciDevice translation)


class _Tracker:
    """The two things update_provider_tree_for_pci reads from nova-compute's PciDevTracker."""

    class _Stats:
        def populate_pools_metadata_from_assigned_devices(self):
            return None

    def __init__(self, devices, whitelist):
        self.pci_devs = devices
        self.dev_filter = whitelist
        self.stats = self._Stats()


def _report_client(url: str):
    from keystoneauth1 import adapter, session, token_endpoint
    from nova.scheduler.client import report

    sess = session.Session(auth=token_endpoint.Token(url, "admin"))
    return report.SchedulerReportClient(adapter=adapter.Adapter(sess, service_type="placement"))


def _update(client, ctx, case: dict, claimed, whitelist, drv) -> None:
    from nova.compute import pci_placement_translator as translator

    hostname = case["hostname"]
    tree = client.get_provider_subtree_and_ensure_root(ctx, case["compute_uuid"], name=hostname)
    allocs = client.get_allocations_for_provider_tree(ctx, hostname)
    tree.update_inventory(
        hostname,
        {
            "VCPU": {
                "total": 64,
                "reserved": 0,
                "min_unit": 1,
                "max_unit": 64,
                "step_size": 1,
                "allocation_ratio": 4.0,
            },
            "MEMORY_MB": {
                "total": 262144,
                "reserved": 4096,
                "min_unit": 1,
                "max_unit": 262144,
                "step_size": 1,
                "allocation_ratio": 1.0,
            },
        },
    )
    if drv.supported_vgpu_types:
        drv._ensure_pgpu_providers(drv._get_gpu_inventories(), tree, hostname)
    reshaped = translator.update_provider_tree_for_pci(
        tree, hostname, _Tracker([pci for pci, _spec in claimed], whitelist), allocs, []
    )
    client.update_from_provider_tree(ctx, tree, allocations=allocs if reshaped else None)


def _case(conf, case: dict, workdir: str) -> dict:
    from nova import context
    from nova.pci import whitelist as nova_whitelist

    nova_oracle._parse_conf(conf, case["compute"], workdir, "nova-compute.conf")
    nova_oracle._answer_sysfs_from_facts(case["devices"])
    whitelist = nova_whitelist.Whitelist(conf.pci.device_spec)
    per_round = case.get("allocated_rounds") or [case.get("allocated") or {}] * int(case.get("rounds", 1))
    claimed = nova_oracle._pci_objects(case["devices"], whitelist)
    drv = nova_oracle._vgpu_driver(case["devices"])
    client = _report_client(case["placement"])
    ctx = context.get_admin_context()
    rounds = []
    for allocated in per_round:
        for pci, _spec in claimed:  # the tracker's view: which instance holds each device now
            pci.instance_uuid = allocated.get(pci.address)
            pci.status = "allocated" if pci.instance_uuid else "available"
        try:
            _update(client, ctx, case, claimed, whitelist, drv)
            rounds.append({"ok": True})
        except Exception as exc:  # what nova-compute would log: that is the answer
            rounds.append({"ok": False, "error": nova_oracle._error(exc)})
    return {"rounds": rounds}


def run(cases: list[dict]) -> list[dict]:
    conf = nova_oracle._load_nova()
    results = []
    for case in cases:
        with tempfile.TemporaryDirectory() as workdir:
            results.append(_case(conf, case, workdir))
    return results


def ask(cases: list[dict], timeout: int = 300) -> list[dict]:
    """Client side (test process)."""
    from tests.support import nova_venv

    return nova_venv.ask(__file__, cases, timeout, "nova-compute update")


if __name__ == "__main__":
    from nova_venv import serve

    sys.exit(serve(run))
