"""The day-2 features on the demo fleet itself (inventories/demo), against the real Placement run as the demo runs it.

The module builds the demo once: the simulated roots of every host of inventories/demo/hosts.yml, with Xid 79
planted on GPU 0000:18:00.0 of hgx-01 (its profile's ``health: {xid: [79]}``: the kernel log shows the driver's
line, the simulated nvidia-smi answers for it), then one ``site.yml --tags nova_config,placement`` run (the Kolla
Nova config, and the providers nova-compute would report, registered in the session's Placement restarted with
the demo's ``accel_placement_config``). Then:

1. ``playbooks/health.yml -i inventories/demo`` quarantines the failed H100 in Placement, and after the repair
   (the Xid older than the cooldown, the health command passing) releases it;
2. Nova 34's own ``SchedulerManager.select_destinations`` (tests/support/nova_scheduler_log_oracle.py) boots four
   flavors of the demo's catalog (inventories/demo/group_vars/all/validate.yml), claiming their allocations in
   Placement; the ``migration_targets`` lookup, asked as docs/migration.md asks it, names for each instance
   holding a device exactly the other hosts Placement's ``GET /allocation_candidates`` returns for its resources;
3. the same scheduler fails two flavors with NoValidHost (nine H100s; an A16 vGPU type no host offers), logging
   at INFO and at DEBUG, and forensics names the failed constraint from each log.

Only the hosts these checks use are pinned (hgx-01, the two A16 hosts, vgpu-l40s-01, epyc-01): the demo may grow. The
samples of docs/health.md, docs/migration.md and docs/forensics.md ("On the demo") are this run's output
(``ACCEL_WRITE_DOCS=1`` writes them there).
"""

from __future__ import annotations

import json
import os
import re
import time

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._placement import quarantine
from ansible_collections.accel.openstack.plugins.module_utils._simulate.nvidia_smi import install
from ansible_collections.accel.openstack.plugins.plugin_utils import forensics
from tests.support.ansible_runner import REPO, run_expression, run_module, run_playbook, task_results
from tests.support.fake_sysfs import DEMO_INVENTORY, build_inventory_roots, build_root, inventory_profiles, load_profile
from tests.support.run_demo import demo_placement_config

pytestmark = pytest.mark.placement

HGX, A16, L40S, EPYC = "hgx-01", "vgpu-a16-01", "vgpu-l40s-01", "epyc-01"
A16_TWIN = "vgpu-a16-02"
A16_HOSTS = {A16, A16_TWIN}
FAILED = "0000:18:00.0"
H100 = "CUSTOM_NVIDIA_H100"
COOLDOWN = 600
SHOW = "Show the GPUs that are not healthy or are acted on"
HEADER = "host | address | state | classes | action"
# The libvirt and QEMU of a compute host live in its libvirt container, not in the host's files: the simulated
# roots have none (nor a kernel release), so the test gives them as the inventory variables docs/migration.md names.
VERSIONS = {
    "accel_kernel_release": "6.8.0-49-generic",
    "accel_libvirt_version": "10.0.0",
    "accel_qemu_version": "8.2.2",
}
# The demo's flavors booted (inventories/demo/group_vars/all/validate.yml), each as one server.
BOOTED = {
    "gpu.h100.1": ("train-h100", "5d0e0000-0000-4000-8000-000000000001"),
    "vgpu.a16-4q": ("desktop-a16", "5d0e0000-0000-4000-8000-000000000002"),
    "vgpu.l40s-4q": ("render-l40s", "5d0e0000-0000-4000-8000-000000000003"),
    "general.small": ("web-small", "5d0e0000-0000-4000-8000-000000000004"),
}
# Flavors no demo host can take: nine H100s (hgx-01 has eight), and an A16 vGPU type the demo does not enable.
UNPLACEABLE = {
    "gpu.h100.9": {
        "name": "gpu.h100.9",
        "vcpus": 16,
        "ram": 131072,
        "disk": 20,
        "extra_specs": {"pci_passthrough:alias": "h100:9"},
    },
    "vgpu.a16-8q": {
        "name": "vgpu.a16-8q",
        "vcpus": 8,
        "ram": 16384,
        "disk": 40,
        "extra_specs": {"resources:CUSTOM_VGPU_A16_8Q": "1", "trait:CUSTOM_VGPU_A16": "required"},
    },
}


def plant(root: str, xid_age: int) -> None:
    """hgx-01's root as its profile builds it, with Xid 79 on FAILED ``xid_age`` seconds ago and the simulated
    nvidia-smi installed (the health command runs it)."""
    profile = load_profile(inventory_profiles(DEMO_INVENTORY)[HGX])
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - xid_age))
    (device,) = [d for d in profile["devices"] if d["address"] == FAILED]
    device["health"] = {"xid": [79], "xid_time": stamp}
    build_root(profile, root)
    os.makedirs(os.path.join(root, "usr", "bin"), exist_ok=True)
    install(root)


def demo_vars(name: str):
    with open(os.path.join(REPO, "inventories", "demo", "group_vars", "all", name)) as handle:
        return yaml.safe_load(handle)


def roots_by_name(placement) -> dict[str, str]:
    providers = placement.request("GET", "/resource_providers")[1]["resource_providers"]
    return {p["name"]: p["uuid"] for p in providers if p["parent_provider_uuid"] is None}


def candidate_hosts(placement, query: str) -> set[str]:
    """The compute nodes Placement's GET /allocation_candidates returns for ``query``."""
    status, body = placement.request("GET", "/allocation_candidates?" + query)
    assert status == 200, body
    names = {uuid: name for name, uuid in roots_by_name(placement).items()}
    summaries = body["provider_summaries"]
    return {names[summaries[rp]["root_provider_uuid"]] for c in body["allocation_requests"] for rp in c["allocations"]}


def h100_offered(placement) -> set[str]:
    status, body = placement.request("GET", f"/allocation_candidates?resources={H100}:1")
    assert status == 200, body
    names = {p["uuid"]: p["name"] for p in placement.request("GET", "/resource_providers")[1]["resource_providers"]}
    return {names[rp] for c in body["allocation_requests"] for rp in c["allocations"]}


def device_masked(text: str) -> str:
    """``text`` with the address in each device provider's name masked: which free device of a host Nova takes
    differs between runs (Placement returns candidates in no fixed order)."""
    return re.sub(r"\b([a-z0-9-]+)_(?:0000:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7]|pci_0000_[0-9a-f]{2}_[0-9a-f]{2}_[0-7])\b",
                  r"\1_DEVICE", text)  # fmt: skip


def check_doc_sample(doc: str, fence: str, wanted: str, mask=lambda text: text) -> None:
    """The block after ``<!-- demo sample: recomputed by tests/integration/test_day2_on_demo.py -->`` in ``doc``
    (compared through ``mask``)."""
    path = os.path.join(REPO, "docs", doc)
    with open(path) as handle:
        text = handle.read()
    match = re.search(
        r"<!-- demo sample: recomputed by tests/integration/test_day2_on_demo\.py -->\n```" + fence + r"\n(.*?)```",
        text,
        re.S,
    )
    assert match, f"docs/{doc} has no demo sample block"
    if os.environ.get("ACCEL_WRITE_DOCS") == "1":
        with open(path, "w") as handle:
            handle.write(text[: match.start(1)] + wanted + text[match.end(1) :])
        return
    assert mask(match.group(1)) == mask(wanted), f"docs/{doc}: the demo sample differs from this run:\n{wanted}"


@pytest.fixture(scope="module")
def demo(placement, tmp_path_factory):
    """The demo built once: roots (hgx-01's GPU failing), the Nova config and the providers in Placement."""
    placement.reconfigure(demo_placement_config())
    try:
        top = tmp_path_factory.mktemp("demo")
        build_inventory_roots(DEMO_INVENTORY, str(top / "roots"))
        plant(str(top / "roots" / HGX), 60)
        hosts = sorted(inventory_profiles(DEMO_INVENTORY))
        for host in hosts:
            (top / "textfile" / host).mkdir(parents=True)
        built = run_playbook(
            "site.yml",
            "inventories/demo",
            {"accel_placement_auth": placement.auth},
            timeout=600,
            ACCEL_DEMO_DIR=str(top),
            ANSIBLE_RUN_TAGS="nova_config,placement",
        )
        assert built["rc"] == 0, built["stderr"][-3000:] + built["stdout"][-3000:]
        (registered,) = task_results(built, "Register every host's providers in one call").values()
        assert registered["changed"] is True
        # every host of the demo is a compute node in Placement
        assert {HGX, A16, L40S, EPYC} <= set(roots_by_name(placement)) == set(hosts)
        yield {"top": top, "hosts": hosts, "kolla": str(top / "kolla-config")}
    finally:
        placement.reconfigure({})


def health_run(demo, placement, hosts: str = "compute") -> dict:
    root = str(demo["top"] / "roots" / HGX)
    extra = {
        "accel_placement_auth": placement.auth,
        "accel_health_hosts": hosts,
        "gpu_health_cooldown": COOLDOWN,
        "gpu_health_textfile_dir": "{{ accel_demo_dir }}/textfile/{{ inventory_hostname }}",
        # the health command: hgx-01's simulated nvidia-smi (only hgx-01 has a GPU to release)
        "gpu_health_health_command": [f"{root}/usr/bin/nvidia-smi", "--root", root, "-q", "-i", "{bus_id}"],
    }
    ran = run_playbook("playbooks/health.yml", "inventories/demo", extra, ACCEL_DEMO_DIR=str(demo["top"]))
    assert ran["rc"] == 0, ran["stderr"][-3000:] + ran["stdout"][-3000:]
    return ran


def test_a_failing_h100_of_hgx_01_is_quarantined_then_released_after_the_repair(demo, placement):
    plant(str(demo["top"] / "roots" / HGX), 60)  # the Xid a minute ago, however long the stages took
    gpus = h100_offered(placement)
    assert f"{HGX}_{FAILED.upper()}" in gpus and all(name.startswith(f"{HGX}_") for name in gpus)

    held_run = health_run(demo, placement)
    (table,) = [r["msg"] for r in task_results(held_run, SHOW).values()]
    assert table == [HEADER, f"{HGX} | {FAILED} | failed | fell_off_bus | quarantine"]
    (held,) = task_results(held_run, "Take each failed GPU out of scheduling")[HGX]["results"]
    assert held["changed"] is True and held["held"] == {H100: 1}
    assert held["provider"]["name"] == f"{HGX}_{FAILED.upper()}"
    assert h100_offered(placement) == gpus - {f"{HGX}_{FAILED.upper()}"}
    consumer = quarantine.consumer_uuid(held["provider"]["uuid"])
    reason = placement.request("GET", f"/allocations/{consumer}")[1]["user_id"]
    assert reason == (
        "gpu_health: fell_off_bus (Xid 79: GPU has fallen off the bus (it no longer answers on PCI Express))"
    )
    with open(demo["top"] / "textfile" / HGX / "accel_gpu_health.prom") as handle:
        metrics = handle.read()
    assert re.search(r'accel_gpu_health_quarantined\{[^}]*pci_bus_id="00000000:18:00.0"[^}]*\} 1\n', metrics)
    assert re.search(r'accel_gpu_health\{[^}]*pci_bus_id="00000000:18:00.0"[^}]*state="failed"\} 1\n', metrics)

    # The repair: the GPU answers again and its Xid is older than the cooldown.
    plant(str(demo["top"] / "roots" / HGX), 2 * COOLDOWN)
    released_run = health_run(demo, placement, HGX)  # the repaired host alone
    (after,) = [r["msg"] for r in task_results(released_run, SHOW).values()]
    (ran,) = task_results(released_run, "Run the health command on each GPU healthy for the cooldown (on its host)")[
        HGX
    ]["results"]
    assert ran["rc"] == 0 and ran["cmd"][-1] == "00000000:18:00.0"
    (back,) = task_results(released_run, "Put back each GPU whose health command exited 0 (it ran in the task above)")[
        HGX
    ]["results"]
    assert back["changed"] is True
    assert h100_offered(placement) == gpus
    assert placement.request("GET", f"/allocations/{consumer}")[1]["allocations"] == {}
    assert after == [HEADER, f"{HGX} | {FAILED} | healthy | - | release"]
    check_doc_sample("health.md", "text", "\n".join(table) + f"\n\nPlacement: {reason}\n\n" + "\n".join(after) + "\n")


@pytest.fixture(scope="module")
def scheduled(demo, placement, tmp_path_factory):
    """Nova 34's scheduler on the demo: the unplaceable flavors at INFO and DEBUG, then the four boots (claimed)."""
    from tests.support import nova_scheduler_log_oracle

    deployed = run_module(
        "nova_config_info",
        {"config_dir": demo["kolla"], "compute_hosts": demo["hosts"], "control_hosts": ["controller"]},
    )["deployed"]
    scheduler = deployed["controller"]["scheduler"]
    aliases = deployed["controller"]["api"]["pci"]["alias"]
    # nova-compute's PCI device pools are not simulated (no nova-compute runs in the demo): PciPassthroughFilter,
    # which reads them, is left out; with pci_in_placement the device is Placement's choice.
    enabled = ",".join(scheduler["filter_scheduler"]["enabled_filters"]).split(",")
    filters = [name for name in enabled if name != "PciPassthroughFilter"]
    assert scheduler["filter_scheduler"]["pci_in_placement"] == ["true"]
    hosts = {
        uuid: {"name": name, "disabled": False, "numa_cells": [], "pci_pools": [], "aggregates": []}
        for name, uuid in roots_by_name(placement).items()
    }
    catalog = {f["name"]: f for f in demo_vars("validate.yml")["accel_validate_flavors"]}
    folder = tmp_path_factory.mktemp("nova-logs")
    cases = []
    for number, name in enumerate(sorted(UNPLACEABLE)):
        for debug in (False, True):
            tail = f"{number:04d}{int(debug):04d}0000"
            cases.append(
                {"id": (name, debug), "flavor": UNPLACEABLE[name], "debug": debug, "http_debug": debug,
                 "request_id": f"req-d3e00000-0000-4000-8000-{tail}",
                 "instance_uuid": f"d3e10000-0000-4000-8000-{tail}"}
            )  # fmt: skip
    for number, (name, (_server, instance)) in enumerate(BOOTED.items()):
        flavor = {key: catalog[name][key] for key in ("name", "vcpus", "ram", "disk", "extra_specs")}
        cases.append({"id": (name, False), "flavor": flavor, "debug": False, "http_debug": False,
                      "request_id": f"req-d3e00000-0000-4000-8000-1{number:011d}",
                      "instance_uuid": instance})  # fmt: skip
    for case in cases:
        case.update(
            placement=placement.url,
            log_file=str(folder / f"{case['id'][0]}-{'debug' if case['debug'] else 'info'}.log"),
            pci_aliases=aliases,
            pci_in_placement=True,
            enabled_filters=filters,
            hosts=hosts,
        )
    results = nova_scheduler_log_oracle.ask([dict(c, id=list(c["id"])) for c in cases])
    logs = {}
    for case, result in zip(cases, results, strict=True):
        with open(case["log_file"], encoding="utf-8") as handle:
            logs[case["id"]] = (case, result, handle.read())
    fleet = run_module("placement_info", dict(placement.auth, allocations=True))["fleet"]
    return {"logs": logs, "fleet": fleet, "deployed": deployed, "aliases": aliases, "catalog": catalog}


def test_nova_s_scheduler_claims_the_demo_flavors_in_placement(scheduled, placement):
    names = {uuid: name for name, uuid in roots_by_name(placement).items()}
    landed = {}
    for flavor, (_server, instance) in BOOTED.items():
        case, result, _text = scheduled["logs"][(flavor, False)]
        assert result["outcome"] == "selected", result
        status, body = placement.request("GET", f"/allocations/{instance}")
        assert status == 200 and body["project_id"] == "p", body
        claimed = {rp: a["resources"] for rp, a in body["allocations"].items()}
        root = [rp for rp in claimed if rp in names]
        assert len(root) == 1, claimed
        assert claimed[root[0]] == {"VCPU": case["flavor"]["vcpus"], "MEMORY_MB": case["flavor"]["ram"],
                                    "DISK_GB": case["flavor"]["disk"]}  # fmt: skip
        landed[flavor] = (names[root[0]], sorted(c for rp, r in claimed.items() if rp != root[0] for c in r.items()))
    assert landed["gpu.h100.1"][0] == HGX and landed["gpu.h100.1"][1] == [(H100, 1)]
    # the demo has two A16 hosts alike: Nova's weighers tie them, and either may take the instance
    assert landed["vgpu.a16-4q"][0] in A16_HOSTS and landed["vgpu.a16-4q"][1] == [("CUSTOM_VGPU_A16_4Q", 1)]
    assert landed["vgpu.l40s-4q"] == (L40S, [("CUSTOM_VGPU_L40S_4Q", 1)])
    assert landed["general.small"][1] == []


def test_the_demo_s_instances_get_the_targets_placement_answers_for_their_resources(scheduled, placement, tmp_path):
    fleet = scheduled["fleet"]
    hosts = {}
    for host in inventory_profiles(DEMO_INVENTORY):
        hosts[host] = dict(VERSIONS)
    servers = [
        {
            "id": instance,
            "name": server,
            "flavor": {"name": name, "extra_specs": scheduled["catalog"][name]["extra_specs"]},
        }
        for name, (server, instance) in BOOTED.items()
    ]
    data = {
        "snapshot": {"fleet": fleet},
        "host_facts": hosts,
        "nova_configs": scheduled["deployed"],
        "servers": servers,
        "aliases": scheduled["aliases"],
    }
    expression = (
        "{{ query('accel.openstack.migration_targets', fleet=snapshot.fleet, hosts=host_facts, "
        "deployed=nova_configs, servers=servers, pci_aliases=aliases) | to_json }}"
    )
    done = run_expression(tmp_path, expression, data)
    assert done.returncode == 0, done.stdout + done.stderr
    (report,) = json.loads(json.loads(done.stdout.split("=>", 1)[1])["msg"])
    by_name = {i["name"]: i for i in report["instances"]}
    # an instance with no device is no instance of the report (docs/migration.md, "Which instances are looked at")
    assert set(by_name) == {"train-h100", "desktop-a16", "render-l40s"}
    computes = set(roots_by_name(placement))
    for instance in report["instances"]:
        source = instance["host"]
        theirs = candidate_hosts(placement, instance["query"]) - {source}
        if instance["blockers"]:
            assert instance["targets"] == []
        else:
            assert sorted(instance["targets"]) == sorted(theirs), instance["name"]
        # every other host Placement has no candidate on says why; the hosts it has one on say nothing
        assert set(instance["why_not"]) == {source} | (computes - theirs - {source}), instance["name"]
        held = placement.request("GET", f"/allocations/{instance['uuid']}")[1]["allocations"]
        assert {d["provider_uuid"]: d["resources"] for d in instance["devices"]} == {
            rp: a["resources"] for rp, a in held.items() if rp in {d["provider_uuid"] for d in instance["devices"]}
        }
    h100, a16, l40s = by_name["train-h100"], by_name["desktop-a16"], by_name["render-l40s"]
    assert (h100["host"], l40s["host"]) == (HGX, L40S) and a16["host"] in A16_HOSTS
    assert [d["kind"] for d in h100["devices"]] == ["pci"] and [d["kind"] for d in l40s["devices"]] == ["pci"]
    assert a16["devices"][0]["kind"] == "vgpu" and a16["devices"][0]["mdev_type"] == "nvidia-735"
    # the demo's device_spec entries are not tagged live_migratable, nor is its h100 alias
    assert [b["code"] for b in h100["blockers"]] == ["device_not_live_migratable", "alias_not_live_migratable"]
    assert [b["code"] for b in l40s["blockers"]] == ["device_not_live_migratable"]
    # the vGPU instance can move, and only to the other A16 host: the one other host with its type
    assert a16["blockers"] == [] and a16["targets"] == sorted(A16_HOSTS - {a16["host"]}), (a16["query"], a16["why_not"])
    assert a16["why_not"][EPYC] == (
        "mdev type nvidia-735 is not in its [devices] enabled_mdev_types; no provider of CUSTOM_VGPU_A16_4Q"
    )
    assert h100["why_not"][EPYC] == f"no provider of {H100} on a HW_PCI_LIVE_MIGRATABLE device"

    def shown(entry: dict) -> dict:
        """The instance without the provider UUIDs Placement made up, its why_not for the hosts pinned here."""
        out = dict(entry)
        out["devices"] = [{k: v for k, v in d.items() if k != "provider_uuid"} for d in entry["devices"]]
        out["why_not"] = {h: w for h, w in entry["why_not"].items() if h in {HGX, L40S, EPYC} | A16_HOSTS}
        return out

    sample = {
        "drain": {host: report["drain"][host]["summary"] for host in (HGX, a16["host"], L40S)},
        "instances": [shown(i) for i in report["instances"]],
    }
    rendered = yaml.safe_dump(sample, sort_keys=False, width=110)
    assert device_masked(rendered).count("_DEVICE") >= 6 and "_0000:" not in device_masked(rendered)
    check_doc_sample("migration.md", "yaml", rendered, device_masked)


@pytest.mark.parametrize("debug", [False, True], ids=["info", "debug"])
def test_nova_s_novalidhost_on_the_demo_is_explained_naming_the_failed_constraint(scheduled, debug):
    options = {"pci_aliases": scheduled["aliases"], "pci_in_placement": True}
    options["placement_config"] = demo_placement_config()
    answers = {}
    for name, flavor in UNPLACEABLE.items():
        case, result, text = scheduled["logs"][(name, debug)]
        assert result["outcome"] == "no_valid_host", result
        assert "Got no allocation candidates from the Placement API." in text
        evidence = forensics.read_request([text], case["instance_uuid"])
        assert evidence["requests"] == [case["request_id"]] and evidence["failure"] == "NoValidHost"
        assert evidence["placement"] == "no_candidates"
        answer = forensics.explain(evidence, flavor, scheduled["fleet"], **options)
        assert answer["agrees"] is True, answer["disagreement"]
        # at DEBUG keystoneauth's request line shows the query Nova sent
        assert bool(evidence["queries"]) is debug
        answers[name] = answer
    nine = answers["gpu.h100.9"]
    assert nine["replay"]["reason"]["code"] == "too_many_devices"
    assert nine["replay"]["reason"]["detail"].startswith(f"it asks more devices than any host has (9 {H100} asked, ")
    by_host = {c["host"]: c for c in nine["constraints"]}
    computes = {p["name"] for p in scheduled["fleet"]["resource_providers"] if not p.get("parent_provider_uuid")}
    assert set(by_host) == computes
    assert by_host[HGX]["kind"] == "resource" and f"the flavor asks 9 {H100} in total" in by_host[HGX]["detail"]
    assert by_host[EPYC]["detail"].endswith(f"no provider in this tree has {H100} inventory")
    typo = answers["vgpu.a16-8q"]
    assert typo["replay"]["outcome"] == "rejected_by_placement"
    assert typo["replay"]["reason"]["code"] == "unknown_resource_class"
    assert typo["replay"]["reason"]["did_you_mean"] == ["CUSTOM_VGPU_A16_4Q"]
    (constraint,) = typo["constraints"]
    assert constraint["host"] is None and "No such resource class CUSTOM_VGPU_A16_8Q" in constraint["detail"]
    assert typo["summary"].startswith("NoValidHost: Placement returned no allocation candidates; today: Invalid")
    if debug:
        sample = {
            name: {
                "failure": answer["failure"],
                "log": {"placement": answer["log"]["placement"]},
                "replay": {"outcome": answer["replay"]["outcome"], "reason": answer["replay"]["reason"]},
                "agrees": answer["agrees"],
            }
            for name, answer in answers.items()
        }
        sample["vgpu.a16-8q"]["constraints"] = typo["constraints"]
        sample["vgpu.a16-8q"]["summary"] = typo["summary"]
        check_doc_sample("forensics.md", "yaml", yaml.safe_dump(sample, sort_keys=False, width=110))
