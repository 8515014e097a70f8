"""Feed flavors through Nova 34's own server-create checks and scheduler request building.

Runs under the nova venv's interpreter (``.venv-nova/bin/python``), never imported by the test
process: JSON cases on stdin, JSON results on stdout, one process for many cases (the same pattern as
nova_oracle.py).

A case::

    {"id": "...", "flavor": {name, vcpus, ram, disk, ephemeral, swap, extra_specs},
     "pci_aliases": ["<[pci] alias JSON>", ...], "pci_in_placement": bool,
     "device_profiles": {name: [group dicts]}, "image_properties": {...}, "boot_from_volume": bool,
     "answers": [[status, body], ...]   # optional: Placement's answers, for the scheduler's merge}

What Nova's code does with it, in the order nova-api, nova-conductor and nova-scheduler do it:

1. ``nova.api.validation.extra_specs.validators.validate`` for every extra spec (microversion 2.86+);
2. ``API._validate_flavor_image_numa_pci`` and ``_validate_and_build_base_options``' NUMA, PCI NUMA
   policy and ``pci.request.get_pci_requests_from_flavor`` calls, with ``[pci] alias`` and
   ``[filter_scheduler] pci_in_placement`` set through oslo.config;
3. ``cyborg.get_device_profile_request_groups`` with the Cyborg HTTP call answered from
   ``device_profiles`` (a missing name gets Cyborg's empty list);
4. ``RequestSpec.from_components`` (PCI request groups), the device-profile groups appended as
   ``_provision_instances`` does, ``request_filter.process_reqspec`` (with every nova-compute reporting
   the OWNER_NOVA trait), then ``scheduler.utils.resources_from_request_spec`` with and without the
   pinning translation, exactly as ``SchedulerManager.select_destinations`` calls it;
5. with ``answers``: ``SchedulerManager.select_destinations`` itself, its report client answering
   from ``answers``, to see how the scheduler merges them (candidates, NoValidHost or a crash).

A refusal is ``{"type": "<exception class>", "message": format_message()}``.
"""

from __future__ import annotations

import sys
import uuid
import warnings

warnings.simplefilter("ignore")


def _setup():
    import nova.conf
    from nova import objects

    objects.register_all()
    conf = nova.conf.CONF
    conf([], project="nova", default_config_files=[])
    return conf


def _message(exc: BaseException) -> str:
    if hasattr(exc, "format_message"):
        return exc.format_message()
    return str(exc)


def _refusal(exc: BaseException) -> dict:
    return {"type": type(exc).__name__, "message": _message(exc)}


def _flavor(data: dict):
    from nova import objects

    return objects.Flavor(
        id=1,
        flavorid="f-1",
        name=data["name"],
        vcpus=data["vcpus"],
        memory_mb=data["ram"],
        root_gb=data["disk"],
        ephemeral_gb=data.get("ephemeral", 0),
        swap=data.get("swap", 0),
        extra_specs=dict(data.get("extra_specs") or {}),
        rxtx_factor=1.0,
        vcpu_weight=0,
        disabled=False,
        is_public=True,
        description=None,
    )


def _patch_cyborg(profiles: dict):
    from nova import exception
    from nova.accelerator import cyborg

    def groups(self, dp_name):
        if dp_name not in profiles:
            raise exception.DeviceProfileError(name=dp_name, msg="Expected 1 device profile but got nothing.")
        return profiles[dp_name]

    cyborg._CyborgClient.get_device_profile_groups = groups


def _checks(conf, case: dict, flavor, image: dict):
    """nova-api: extra spec validation, then the server-create checks. Raises Nova's exception."""
    from nova.api.validation.extra_specs import validators
    from nova.compute import api as compute_api
    from nova.pci import request as pci_request
    from nova.virt import hardware

    for key, value in flavor.extra_specs.items():
        validators.validate(key, value)
    compute_api.API._validate_flavor_image_numa_pci(image, flavor, validate_numa=True, validate_pci=True)
    image_meta = compute_api._get_image_meta_obj(image)
    numa_topology = hardware.numa_get_constraints(flavor, image_meta)
    policy = hardware.get_pci_numa_policy_constraint(flavor, image_meta)
    pci_requests = pci_request.get_pci_requests_from_flavor(flavor, affinity_policy=policy)
    return numa_topology, pci_requests


def _case(conf, case: dict) -> dict:
    from nova import context as nova_context
    from nova import objects
    from nova.accelerator import cyborg
    from nova.pci import request as pci_request
    from nova.scheduler import request_filter, utils

    conf.set_override("alias", case.get("pci_aliases") or [], group="pci")
    conf.set_override("pci_in_placement", bool(case.get("pci_in_placement")), group="filter_scheduler")
    pci_request.get_alias_from_config.cache_clear()
    _patch_cyborg(case.get("device_profiles") or {})
    request_filter._should_filter_by_owner = lambda ctxt: True

    ctxt = nova_context.RequestContext(user_id="u", project_id="p")
    image = {"name": "image", "properties": dict(case.get("image_properties") or {})}
    try:
        flavor = _flavor(case["flavor"])
        numa_topology, pci_requests = _checks(conf, case, flavor, image)
        dp_name = flavor.extra_specs.get("accel:device_profile")
        dp_groups = cyborg.get_device_profile_request_groups(ctxt, dp_name) if dp_name else []
    except Exception as exc:  # Nova refused the flavor: that is the answer
        return {"refusal": _refusal(exc), "queries": []}

    try:
        spec = objects.RequestSpec.from_components(
            ctxt,
            str(uuid.uuid4()),
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
        spec.requested_resources.extend(dp_groups)
        spec.is_bfv = bool(case.get("boot_from_volume"))
        request_filter.process_reqspec(ctxt, spec)
        first = utils.resources_from_request_spec(ctxt, spec, None, enable_pinning_translate=True)
        queries = [first.to_querystring()]
        fallback = first.cpu_pinning_requested and not conf.workarounds.disable_fallback_pcpu_query
        if fallback:
            second = utils.resources_from_request_spec(ctxt, spec, None, enable_pinning_translate=False)
            queries.append(second.to_querystring())
    except Exception as exc:
        return {"refusal": None, "error": _refusal(exc), "queries": []}
    result = {"refusal": None, "queries": queries, "pcpu_fallback": bool(fallback)}
    if "answers" in case:
        result["scheduled"] = _schedule(ctxt, spec, case["answers"])
    return result


def _schedule(ctxt, spec, answers: list) -> dict:
    """SchedulerManager.select_destinations with a report client that answers from ``answers``."""
    from nova import exception
    from nova.scheduler import manager

    seen = []

    class Client:
        def get_allocation_candidates(self, context, resources):
            status, body = answers[len(seen)]
            seen.append(resources.to_querystring())
            if status == 200:
                return body["allocation_requests"], body["provider_summaries"], "1.39"
            return None, None, None

    captured = {}

    def select(self, context, spec_obj, instance_uuids, alloc_reqs_by_rp_uuid, provider_summaries, *args):
        captured["by_rp"] = {k: list(v) for k, v in (alloc_reqs_by_rp_uuid or {}).items()}
        captured["provider_summaries"] = provider_summaries
        return [[]]

    sched = manager.SchedulerManager.__new__(manager.SchedulerManager)
    sched.host_manager = None
    original = manager.SchedulerManager._select_destinations
    original_client = manager.report.report_client_singleton
    manager.SchedulerManager._select_destinations = select
    manager.report.report_client_singleton = Client
    try:
        sched.select_destinations(ctxt, spec_obj=spec, instance_uuids=[str(uuid.uuid4())], return_objects=True)
    except Exception as exc:
        # select_destinations is an RPC endpoint: oslo.messaging wraps NoValidHost as ExpectedException
        inner = exc.exc_info[1] if hasattr(exc, "exc_info") else exc
        if isinstance(inner, exception.NoValidHost):
            return {"outcome": "no_valid_host", "queries": seen, "message": _message(inner)}
        return {"outcome": "crash", "queries": seen, "error": _refusal(inner)}
    finally:
        manager.SchedulerManager._select_destinations = original
        manager.report.report_client_singleton = original_client
    return {
        "outcome": "candidates",
        "queries": seen,
        "providers": sorted(captured["by_rp"]),
        "provider_summaries": sorted(captured["provider_summaries"] or {}),
    }


def ask(cases: list[dict], timeout: int = 600) -> list[dict]:
    """Client side (test process): run the cases in one nova-venv process and return its results."""
    from tests.support import nova_venv

    return nova_venv.ask(__file__, cases, timeout, "nova flavor oracle")


if __name__ == "__main__":
    # Run as a script in the nova venv: this folder is on sys.path, the collection's tests package is not.
    from nova_venv import serve_cases

    sys.exit(serve_cases(_setup, _case))
