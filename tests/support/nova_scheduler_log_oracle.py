"""Nova 34's scheduler fails a boot against the real Placement and writes its own log lines: forensics.py's oracle.

Runs under the nova venv's interpreter (``.venv-nova/bin/python``), never imported by the test process:
JSON cases on stdin, JSON results on stdout (``nova_venv.serve``). A case::

    {"placement": URL, "log_file": path, "debug": bool, "request_id": "req-<uuid>", "instance_uuid": uuid,
     "flavor": {name, vcpus, ram, disk, extra_specs}, "pci_aliases": [...], "pci_in_placement": bool,
     "enabled_filters": [Nova filter names], "http_debug": bool (keystoneauth's request lines at DEBUG too),
     "hosts": {provider uuid: {"name": str, "disabled": bool, "numa_cells": [...], "pci_pools": [...],
                              "aggregates": [{"metadata": {...}}]}}}

Logging is oslo.log's own ``ContextFormatter`` with its default context format (Kolla's log files and
journald carry the same text), at DEBUG or INFO; the request context carries ``request_id``.
The flavor becomes the RequestSpec nova-api builds (``RequestSpec.from_components`` after nova-api's
checks, as ``nova_flavor_oracle.py``). ``SchedulerManager.select_destinations`` runs itself: its real
report client asks the real Placement for allocation candidates; the host states of the providers
Placement returns are built as ``nova_filter_oracle.py`` builds them (``hosts``); Nova's real
``HostManager.get_filtered_hosts`` runs the ``enabled_filters`` through Nova's filter handler. Only the
database reads are replaced (the cell cache and the host states come from the case; every nova-compute
is taken to be recent enough for the owner trait, and up for ComputeFilter's liveness check) and the
notifications are dropped. When the scheduler raises NoValidHost, the conductor's own
``set_vm_state_and_notify`` logs it as nova-conductor does for a build (``_conductor_reports``). A case with
``"retries_exhausted": true`` is a reschedule whose alternates are all used: only the conductor logs, with
the MaxRetriesExceeded it raises then. The result: ``outcome`` (``no_valid_host``, ``max_retries``,
``selected`` or ``crash``) and ``message``.
"""

from __future__ import annotations

import logging
import sys
import warnings

warnings.simplefilter("ignore")


def _setup():
    import nova.conf
    from nova import objects
    from oslo_log import log

    objects.register_all()
    conf = nova.conf.CONF
    if "log_date_format" not in conf:
        log.register_options(conf)
    conf([], project="nova", default_config_files=[])
    return conf


def _log_to(conf, path: str, debug: bool, http_debug: bool = False) -> logging.Handler:
    from oslo_log import formatters

    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(
        formatters.ContextFormatter(project="nova", version="34", config=conf, datefmt=conf.log_date_format)
    )
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    # oslo.log's default_log_levels, as a deployment runs them (keystoneauth, urllib3, ... quieter).
    for pair in conf.default_log_levels:
        name, _sep, level = pair.partition("=")
        logging.getLogger(name).setLevel(logging.getLevelName(level))
    if http_debug:
        # An operator who wants the queries Nova sends sets keystoneauth=DEBUG in default_log_levels.
        logging.getLogger("keystoneauth").setLevel(logging.DEBUG)
    return handler


def _host_manager(conf, hosts: dict):
    import nova_filter_oracle
    from nova.scheduler import host_manager

    class CaseHostManager(host_manager.HostManager):
        def refresh_cells_caches(self):
            self.cells = {}
            self.enabled_cells = []

        def _init_aggregates(self):
            self.aggs_by_id, self.host_aggregates_map = {}, {}

        def _init_instance_info(self, computes_by_cell=None):
            self._instance_info = {}

        def get_host_states_by_uuids(self, context, compute_uuids, spec_obj):
            for uuid in compute_uuids:
                if uuid not in hosts:
                    continue
                data = hosts[uuid]
                state = nova_filter_oracle._host_state(data)
                state.host = state.nodename = data["name"]
                state.uuid = uuid
                state.service = dict(state.service, host=data["name"])
                yield state

    return CaseHostManager()


def _conductor_reports(ctxt, instance_uuid: str, exc, spec) -> None:
    """What nova-conductor logs when a build fails to schedule: Nova's own ``set_vm_state_and_notify``
    (as ``ComputeTaskManager._set_vm_state_and_notify`` calls it for build_instances), with the instance
    save, the fault record and the notifications dropped (they need the database and a message bus)."""
    from nova import objects, rpc
    from nova.compute import utils as compute_utils
    from nova.scheduler import utils as scheduler_utils

    class Notifier:
        def error(self, *args, **kwargs):
            return None

    saved = (rpc.get_notifier, objects.Instance.save, compute_utils.add_instance_fault_from_exc)
    saved_error = compute_utils.notify_about_compute_task_error
    rpc.get_notifier = lambda *args, **kwargs: Notifier()
    objects.Instance.save = lambda self, *args, **kwargs: None
    compute_utils.add_instance_fault_from_exc = lambda *args, **kwargs: None
    compute_utils.notify_about_compute_task_error = lambda *args, **kwargs: None
    try:
        updates = {"vm_state": "error", "task_state": None}
        scheduler_utils.set_vm_state_and_notify(
            ctxt, instance_uuid, "compute_task", "build_instances", updates, exc, spec
        )
    finally:
        rpc.get_notifier, objects.Instance.save, compute_utils.add_instance_fault_from_exc = saved
        compute_utils.notify_about_compute_task_error = saved_error


def _case(conf, case: dict) -> dict:
    import nova_compute
    import nova_flavor_oracle
    from nova import context as nova_context
    from nova import exception, objects
    from nova.compute import utils as compute_utils
    from nova.pci import request as pci_request
    from nova.scheduler import manager, request_filter
    from nova.scheduler.client import report
    from nova.servicegroup import api as servicegroup_api

    conf.set_override("alias", case.get("pci_aliases") or [], group="pci")
    conf.set_override("pci_in_placement", bool(case.get("pci_in_placement")), group="filter_scheduler")
    conf.set_override("enabled_filters", case["enabled_filters"], group="filter_scheduler")
    pci_request.get_alias_from_config.cache_clear()
    # The minimum nova-compute version is a database read: every compute reports its owner trait (Nova 34).
    request_filter._should_filter_by_owner = lambda ctxt: True
    # ComputeFilter's liveness check reads service heartbeats: every service is up (as nova_filter_oracle.py).
    servicegroup_api.API.service_is_up = lambda self, service: True
    handler = _log_to(conf, case["log_file"], bool(case.get("debug")), bool(case.get("http_debug")))
    try:
        ctxt = nova_context.RequestContext(user_id="u", project_id="p", request_id=case["request_id"], overwrite=True)
        image = {"name": "image", "properties": {}}
        flavor = nova_flavor_oracle._flavor(case["flavor"])
        numa_topology, pci_requests = nova_flavor_oracle._checks(conf, case, flavor, image)
        spec = objects.RequestSpec.from_components(
            ctxt,
            case["instance_uuid"],
            image,
            flavor,
            numa_topology,
            pci_requests,
            {},
            None,
            None,
            project_id="p",
            user_id="u",
        )
        if case.get("retries_exhausted"):
            # A reschedule whose alternates are all used: the conductor raises this without asking the scheduler.
            exc = exception.MaxRetriesExceeded(
                reason="Exhausted all hosts available for retrying build failures for instance "
                f"{case['instance_uuid']}."
            )
            _conductor_reports(ctxt, case["instance_uuid"], exc, spec)
            return {"outcome": "max_retries", "message": exc.format_message()}
        sched = manager.SchedulerManager.__new__(manager.SchedulerManager)
        # The scheduler's placement client is the process-wide report client: the real one, on this Placement.
        report.PLACEMENTCLIENT = report.SchedulerReportClient(adapter=nova_compute._adapter(case["placement"]))
        sched.host_manager = _host_manager(conf, case["hosts"])

        class Notifier:
            def info(self, *args, **kwargs):
                return None

        sched.notifier = Notifier()
        original_notify = compute_utils.notify_about_scheduler_action
        compute_utils.notify_about_scheduler_action = lambda *args, **kwargs: None
        try:
            sched.select_destinations(
                ctxt, spec_obj=spec, instance_uuids=[case["instance_uuid"]], return_objects=True, return_alternates=True
            )
        except Exception as exc:  # noqa: BLE001  # select_destinations is an RPC endpoint: NoValidHost comes wrapped
            inner = exc.exc_info[1] if hasattr(exc, "exc_info") else exc
            if isinstance(inner, exception.NoValidHost):
                _conductor_reports(ctxt, case["instance_uuid"], inner, spec)
                return {"outcome": "no_valid_host", "message": inner.format_message()}
            import traceback

            trace = "".join(line for line in traceback.format_exc().splitlines(True) if "/nova/" in line)
            return {"outcome": "crash", "message": f"{type(inner).__name__}: {inner}", "trace": trace[-3000:]}
        finally:
            compute_utils.notify_about_scheduler_action = original_notify
        return {"outcome": "selected", "message": ""}
    finally:
        handler.close()
        logging.getLogger().removeHandler(handler)


def ask(cases: list[dict], timeout: int = 300) -> list[dict]:
    """Client side (test process): run the cases in one nova-venv process and return its results."""
    from tests.support import nova_venv

    return nova_venv.ask(__file__, cases, timeout, "nova scheduler log oracle")


if __name__ == "__main__":
    from nova_venv import serve_cases

    sys.exit(serve_cases(_setup, _case))
