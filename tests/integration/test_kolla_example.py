"""inventories/kolla-example, as shipped, through site.yml against a real Placement where Nova 34's own
report client plays nova-compute (tests/support/nova_compute.py): the Kolla loop of docs/kolla.md, check
mode, the reconfigure command kept until Kolla-Ansible has applied the change, and Kolla's globals.d.

The loop: the host stages and the Nova config (``--skip-tags placement,validate``), Kolla-Ansible's
reconfigure (its own templates and merge write each service's nova.conf on the hosts, and nova-compute's
periodic update runs with the merged config), then the whole site.yml, whose placement stage finds the
providers nova-compute reported and rewrites none of them; site.yml in check mode then changes nothing.

The example's multinode inventory and group_vars are used as they are; a second inventory source only
says how to reach the simulated hosts (connection local, the interpreter, each host's fake root built
from a hardware profile). Kolla's config directory is a test directory holding the example's globals.yml
(with node_custom_config pointing into it) and a Kolla-style clouds.yaml whose cloud ``kolla-admin``
reaches the real Placement; Kolla-Ansible 23's own group_vars are its defaults. Kolla-Ansible's own code
applies the change (its templates and merge, tests/support/kolla_render.py) and says which globals.d
files it reads.
"""

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from tests.support import kolla_render, nova_compute
from tests.support.ansible_runner import BIN, REPO, ansible_env, task_results
from tests.support.fake_sysfs import build_root

pytestmark = [
    pytest.mark.skipif(not kolla_render.available(), reason="kolla venv missing: make kolla-venv"),
    pytest.mark.xdist_group("tarball"),
]

EXAMPLE = os.path.join(REPO, "inventories", "kolla-example")
ROOTS = {"gpu-01": "hgx-h100", "gpu-02": "sriov-nic", "ctl-01": "amd-epyc", "localhost": "iommu-off"}
SERVICES = {
    "gpu-01": ["nova-compute"],
    "gpu-02": ["nova-compute"],
    "ctl-01": ["nova-api", "nova-scheduler", "nova-conductor"],
}
SAY = "Say which hosts Kolla-Ansible must reconfigure"
COMMAND = "kolla-ansible reconfigure -i /etc/kolla/multinode -t nova --limit ctl-01,gpu-01,gpu-02"


@pytest.fixture(scope="module")
def site(tmp_path_factory, placement):
    base = tmp_path_factory.mktemp("kolla-example")
    kolla = base / "etc" / "kolla"
    (kolla / "globals.d").mkdir(parents=True)
    with open(os.path.join(EXAMPLE, "globals.yml")) as handle:
        globals_ = yaml.safe_load(handle)
    globals_["node_custom_config"] = str(kolla / "config")
    (kolla / "globals.yml").write_text(yaml.safe_dump(globals_))
    cloud = dict(placement.auth, region_name="RegionOne", interface="internal")
    (kolla / "clouds.yaml").write_text(yaml.safe_dump({"clouds": {"kolla-admin": cloud}}))
    hosts = {}
    for name, profile in ROOTS.items():
        hosts[name] = {
            "accel_root": build_root(profile, str(base / "roots" / name)),
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
        }
    (base / "simulated.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    # nova-compute already runs on the GPU hosts (Kolla deployed it): its first periodic update
    facts = {name: discover(hosts[name]["accel_root"])[0] for name in ("gpu-01", "gpu-02")}
    (base / "facts.json").write_text(json.dumps(facts))
    nova = nova_compute.update(placement.url, [nova_compute.compute_case(name, facts[name]) for name in facts])
    assert all(result["ok"] for result in nova), nova
    extra = {
        "accel_kolla_globals_file": str(kolla / "globals.yml"),
        "accel_kolla_clouds_file": str(kolla / "clouds.yaml"),
        "accel_kolla_group_vars": os.path.join(kolla_render.kolla_share(), "group_vars", "all"),
        "accel_become": False,
    }
    (base / "extra.json").write_text(json.dumps(extra))
    return base


def play(site, *args):
    cmd = [
        os.path.join(BIN, "ansible-playbook"),
        "-i",
        os.path.join(EXAMPLE, "multinode"),
        "-i",
        str(site / "simulated.yml"),
        "-e",
        "@" + str(site / "extra.json"),
        "site.yml",
        *args,
    ]
    proc = subprocess.run(cmd, cwd=REPO, env=ansible_env(), capture_output=True, text=True, timeout=600, check=False)
    report = json.loads(proc.stdout[proc.stdout.index("{") :])
    report["rc"] = proc.returncode
    report["stderr"] = proc.stderr
    return report


def said(report) -> str:
    (result,) = task_results(report, SAY).values()
    return result["msg"]


def failures(report) -> dict:
    return {
        f"{task['task']['name']} [{host}]": result.get("msg")
        for p in report["plays"]
        for task in p["tasks"]
        for host, result in task["hosts"].items()
        if result.get("failed")
    }


def nova_files(site) -> dict:
    config = site / "etc" / "kolla" / "config"
    return {str(p.relative_to(config)): p.read_text() for p in sorted(config.rglob("*")) if p.is_file()}


def nova_update(site, placement, configs=None) -> list[dict]:
    """nova-compute's periodic update on gpu-01 and gpu-02, with Kolla's merged config when given."""
    facts = json.loads((site / "facts.json").read_text())
    cases = []
    for name in ("gpu-01", "gpu-02"):
        merged = (configs or {}).get(name) or {}
        config = [merged["nova-compute"]] if merged else []
        case = nova_compute.compute_case(name, facts[name], config, provider_config=merged.get("provider_config"))
        cases.append(case)
    results = nova_compute.update(placement.url, cases)
    assert all(result["ok"] for result in results), results
    return results


def snapshot(placement) -> dict:
    """Every provider with its parent, inventories and traits, by name."""
    status, body = placement.request("GET", "/resource_providers")
    assert status == 200
    out = {}
    for provider in body["resource_providers"]:
        uuid = provider["uuid"]
        inventories = placement.request("GET", f"/resource_providers/{uuid}/inventories")[1]["inventories"]
        traits = placement.request("GET", f"/resource_providers/{uuid}/traits")[1]["traits"]
        out[provider["name"]] = {
            "uuid": uuid,
            "parent": provider["parent_provider_uuid"],
            "inventories": inventories,
            "traits": sorted(traits),
        }
    return out


HOST_STAGES = ("--skip-tags", "placement,validate")


def test_check_mode_writes_nothing_and_says_what_would_change(site, placement):
    before = snapshot(placement)
    report = play(site, "--check", *HOST_STAGES)
    assert report["rc"] == 0, failures(report) or report["stderr"][-3000:]
    assert said(report) == f"Nova config would change on ctl-01, gpu-01, gpu-02; run: {COMMAND}"
    assert nova_files(site) == {}
    assert snapshot(placement) == before
    assert not (site / "etc" / "kolla" / "accel-openstack-reconfigure.json").exists()


def test_the_host_stages_write_kollas_files_for_every_nova_host(site, placement):
    before = snapshot(placement)
    report = play(site, *HOST_STAGES)
    assert report["rc"] == 0, failures(report) or report["stderr"][-3000:]
    assert said(report) == f"Nova config changed on ctl-01, gpu-01, gpu-02; run: {COMMAND}"
    files = nova_files(site)
    for name in ("nova/gpu-01/nova.conf", "nova/gpu-02/nova.conf", "nova/nova-api.conf", "nova/nova-scheduler.conf"):
        assert name in files, sorted(files)
    assert report["stats"]["ctl-01"]["failures"] == 0
    assert snapshot(placement) == before  # Placement is the next pass's, after reconfigure


def test_the_command_comes_back_until_kolla_ansible_has_applied_it(site, placement):
    again = play(site, "--tags", "nova_config")
    assert again["rc"] == 0, failures(again)
    assert said(again) == f"not yet applied by Kolla-Ansible on ctl-01, gpu-01, gpu-02; run: {COMMAND}"
    # kolla-ansible reconfigure -t nova: Kolla's own templates and merge write each service's nova.conf,
    # and nova-compute restarts with it
    globals_ = yaml.safe_load((site / "etc" / "kolla" / "globals.yml").read_text())
    rendered = kolla_render.render(
        str(site / "etc" / "kolla" / "config"),
        SERVICES,
        {"nova_cell_compute_provider_config": globals_["nova_cell_compute_provider_config"]},
        kolla_config_path=str(site / "etc" / "kolla"),
    )
    for host, services in rendered.items():
        for service, text in services.items():
            if service == "provider_config":
                continue
            path = site / "roots" / host / "etc" / "kolla" / service / "nova.conf"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    (site / "rendered.json").write_text(json.dumps(rendered))
    nova_update(site, placement, rendered)
    applied = play(site, "--tags", "nova_config")
    assert applied["rc"] == 0, failures(applied)
    assert said(applied) == "Nova config unchanged; nothing to reconfigure"
    assert not (site / "etc" / "kolla" / "accel-openstack-reconfigure.json").exists()


def test_site_yml_then_finds_nova_computes_providers_and_rewrites_none(site, placement):
    nova = snapshot(placement)
    gpus = [name for name in nova if name.startswith("gpu-01_")]
    assert len(gpus) == 8, sorted(nova)  # nova-compute reports the H100s with [pci] report_in_placement
    report = play(site)
    assert report["rc"] == 0, failures(report) or report["stderr"][-3000:]
    after = snapshot(placement)
    assert set(after) == set(nova)
    for name, provider in nova.items():
        assert {k: after[name][k] for k in ("uuid", "parent", "inventories")} == {
            k: provider[k] for k in ("uuid", "parent", "inventories")
        }, name
        assert set(provider["traits"]) <= set(after[name]["traits"]), name
    # nova-compute's next periodic update: no 409, nothing of the collection's lost
    nova_update(site, placement, json.loads((site / "rendered.json").read_text()))
    assert snapshot(placement) == after


def test_check_mode_on_the_converged_cloud_changes_nothing(site, placement):
    before = snapshot(placement)
    files = nova_files(site)
    report = play(site, "--check")
    assert report["rc"] == 0, failures(report) or report["stderr"][-3000:]
    assert said(report) == "Nova config unchanged; nothing to reconfigure"
    assert nova_files(site) == files
    assert snapshot(placement) == before


def test_globals_d_cannot_bring_back_the_devname_whitelist(site):
    """A globals.d file, templated on Kolla's own defaults, that Kolla-Ansible would render as devname."""
    sriov = site / "etc" / "kolla" / "globals.d" / "50-sriov.yml"
    sriov.write_text(
        "neutron_sriov_physnet_mappings: {physnet1: ens1f0}\n"
        'nova_pci_passthrough_whitelist: "{{ enable_neutron | bool | ternary(neutron_sriov_physnet_mappings'
        " | dict2items(key_name='physical_network', value_name='devname'), []) }}\"\n"
    )
    try:
        kolla = str(site / "etc" / "kolla")
        assert kolla_render.kolla_vars_files(kolla) == [str(sriov)]
        rendered = kolla_render.render(
            str(site / "etc" / "kolla" / "config"), {"gpu-02": ["nova-compute"], "ctl-01": []}, kolla_config_path=kolla
        )
        assert '"devname": "ens1f0"' in rendered["gpu-02"]["nova-compute"]
        before = nova_files(site)
        refused = play(site, "--tags", "nova_config")
        assert refused["rc"] != 0
        (message,) = failures(refused).values()
        assert "nova_pci_passthrough_whitelist" in message and "ens1f0" in message, message
        assert nova_files(site) == before
    finally:
        sriov.unlink()


def boot(root: str) -> list[str]:
    """What the next boot does to a simulated host: the devices whose IDs the prepare stage gave vfio-pci
    (``options vfio-pci ids=`` in its modprobe.d file) come up on vfio-pci. Returns the addresses moved."""
    ids: set[str] = set()
    with open(os.path.join(root, "etc", "modprobe.d", "accel-openstack-vfio.conf")) as handle:
        for line in handle:
            if line.startswith("options vfio-pci ids="):
                ids.update(line.split("=", 1)[1].strip().split(","))
    vfio = os.path.join(root, "sys", "bus", "pci", "drivers", "vfio-pci")
    os.makedirs(vfio, exist_ok=True)
    moved = []
    devices = os.path.join(root, "sys", "bus", "pci", "devices")
    for address in sorted(os.listdir(devices)):
        path = os.path.realpath(os.path.join(devices, address))
        with open(os.path.join(path, "vendor")) as vendor, open(os.path.join(path, "device")) as device:
            pci_id = f"{vendor.read().strip()[2:]}:{device.read().strip()[2:]}"
        link = os.path.join(path, "driver")
        if pci_id not in ids or (os.path.lexists(link) and os.path.realpath(link) == os.path.realpath(vfio)):
            continue
        if os.path.lexists(link):
            os.unlink(os.path.join(os.path.realpath(link), address))
            os.unlink(link)
        os.symlink(os.path.relpath(vfio, path), link)
        os.symlink(os.path.relpath(path, vfio), os.path.join(vfio, address))
        moved.append(address)
    return moved


def test_the_installed_collection_audits_the_converged_cloud(
    site, placement, installed_collection, user_venv, tmp_path
):
    """``ansible-playbook accel.openstack.audit`` from the installed tarball (ansible-core and requirements.txt
    only), with the example's inventory as shipped in it: the audit reads the override directory Kolla's
    globals.yml names (node_custom_config), as the nova_config stage wrote it, and once gpu-01 has rebooted
    into the vfio-pci binding the prepare stage set up, the cloud the Kolla loop converged has no finding at
    warning or above. The report lands where ansible-playbook runs; Placement and the overrides stay as they
    were."""
    root, env = installed_collection
    moved = boot(str(site / "roots" / "gpu-01"))
    assert len(moved) == 8, moved  # the H100s; nothing else of the host had been given to vfio-pci
    before, files = snapshot(placement), nova_files(site)
    example = root / "inventories" / "kolla-example"
    cmd = [
        os.path.join(user_venv, "ansible-playbook"),
        "accel.openstack.audit",
        *("-i", str(example / "multinode"), "-i", str(site / "simulated.yml")),
        *("-e", "@" + str(site / "extra.json")),
        *("-e", json.dumps({"ansible_python_interpreter": os.path.join(user_venv, "python")})),
    ]
    proc = subprocess.run(cmd, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert sorted(os.listdir(tmp_path)) == ["accel-adopted-policy.yml", "accel-audit.json"]
    report = json.loads((tmp_path / "accel-audit.json").read_text())
    assert [f for f in report["findings"] if f["severity"] != "info"] == []
    # the Nova config was read from node_custom_config: the adopted policy is the example's own
    adopted = {e["name"]: e for e in report["adopted"]["accel_device_policy"]}
    assert adopted["h100"]["resource_class"] == "CUSTOM_NVIDIA_H100", adopted
    assert report["adopted"]["accel_nova_pci_in_placement"] is True
    assert snapshot(placement) == before and nova_files(site) == files
