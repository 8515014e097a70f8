"""inventories/kolla-example, as shipped, through site.yml against a real Placement: check mode, a real
run, the reconfigure command kept until Kolla-Ansible has applied the change, and Kolla's globals.d.

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

from tests.support import kolla_render
from tests.support.ansible_runner import BIN, REPO, ansible_env, task_results
from tests.support.fake_sysfs import build_root

pytestmark = pytest.mark.skipif(not kolla_render.available(), reason="kolla venv missing: make kolla-venv")

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


def providers(placement) -> set:
    status, body = placement.request("GET", "/resource_providers")
    assert status == 200
    return {p["name"] for p in body["resource_providers"]}


def test_check_mode_writes_nothing_and_says_what_would_change(site, placement):
    report = play(site, "--check")
    assert report["rc"] == 0, failures(report) or report["stderr"][-3000:]
    assert said(report) == f"Nova config would change on ctl-01, gpu-01, gpu-02; run: {COMMAND}"
    assert nova_files(site) == {}
    assert providers(placement) == set()
    assert not (site / "etc" / "kolla" / "accel-openstack-reconfigure.json").exists()


def test_the_real_run_writes_kollas_files_for_every_nova_host_and_registers_the_gpus(site, placement):
    report = play(site)
    assert report["rc"] == 0, failures(report) or report["stderr"][-3000:]
    assert said(report) == f"Nova config changed on ctl-01, gpu-01, gpu-02; run: {COMMAND}"
    files = nova_files(site)
    for name in ("nova/gpu-01/nova.conf", "nova/gpu-02/nova.conf", "nova/nova-api.conf", "nova/nova-scheduler.conf"):
        assert name in files, sorted(files)
    assert {"gpu-01", "gpu-02"} <= providers(placement)
    assert report["stats"]["ctl-01"]["failures"] == 0


def test_the_command_comes_back_until_kolla_ansible_has_applied_it(site):
    again = play(site, "--tags", "nova_config")
    assert again["rc"] == 0, failures(again)
    assert said(again) == f"not yet applied by Kolla-Ansible on ctl-01, gpu-01, gpu-02; run: {COMMAND}"
    # kolla-ansible reconfigure -t nova: Kolla's own templates and merge write each service's nova.conf
    rendered = kolla_render.render(
        str(site / "etc" / "kolla" / "config"), SERVICES, kolla_config_path=str(site / "etc" / "kolla")
    )
    for host, services in rendered.items():
        for service, text in services.items():
            if service == "provider_config":
                continue
            path = site / "roots" / host / "etc" / "kolla" / service / "nova.conf"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    assert "device_spec" in rendered["gpu-01"]["nova-compute"]
    applied = play(site, "--tags", "nova_config")
    assert applied["rc"] == 0, failures(applied)
    assert said(applied) == "Nova config unchanged; nothing to reconfigure"
    assert not (site / "etc" / "kolla" / "accel-openstack-reconfigure.json").exists()


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
