"""The accel.openstack.fleet inventory through ansible-inventory, over a real fact cache and the real Placement.

The fact cache is what Ansible's jsonfile cache wrote while the discover stage's pci_facts ran over the
demo fleet's fake roots; Placement holds what the placement stage registered for the same fleet.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from tests.support import fake_sysfs
from tests.support.ansible_runner import BIN, REPO, ansible_env, run_playbook

pytestmark = pytest.mark.placement

with open(os.path.join(REPO, "inventories", "demo", "group_vars", "all", "device_policy.yml")) as _handle:
    DEMO_POLICY = yaml.safe_load(_handle)["accel_device_policy"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, placement):
    """Demo roots, the discover stage's facts in a jsonfile cache, and the placement stage's providers."""
    dest = tmp_path_factory.mktemp("fleet")
    fake_sysfs.build_inventory_roots(fake_sysfs.DEMO_INVENTORY, str(dest / "roots"))
    cache_env = {
        "ACCEL_DEMO_DIR": str(dest),
        "ANSIBLE_CACHE_PLUGIN": "jsonfile",
        "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(dest / "facts"),
    }
    quiet = {"accel_discover_report": False}
    discovered = run_playbook("playbooks/discover.yml", "inventories/demo", quiet, **cache_env)
    assert discovered["rc"] == 0, discovered["stderr"] + discovered["stdout"]
    registered = run_playbook(
        "playbooks/placement.yml", "inventories/demo", {"accel_placement_auth": placement.auth}, **cache_env
    )
    assert registered["rc"] == 0, registered["stderr"] + registered["stdout"]
    return {"dir": dest, "facts": str(dest / "facts"), "placement": placement}


def write_source(directory, name: str, config: dict) -> str:
    path = os.path.join(str(directory), name)
    with open(path, "w") as handle:
        yaml.safe_dump(config, handle)
    return path


def inventory(path: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    cmd = [os.path.join(BIN, "ansible-inventory"), "-i", path, *args]
    # No ambient fact cache settings: every source file says where its cache is.
    base = {k: v for k, v in ansible_env(**env).items() if not k.startswith("ANSIBLE_CACHE_PLUGIN")}
    base.update(env)
    return subprocess.run(cmd, cwd=REPO, env=base, capture_output=True, text=True, timeout=120, check=False)


def plain(value):
    """ansible-inventory --list writes strings no template may expand as {"__ansible_unsafe": text}."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def listing(path: str) -> dict:
    proc = inventory(path, "--list", ANSIBLE_INVENTORY_UNPARSED_FAILED="true")
    assert proc.returncode == 0, proc.stderr
    return plain(json.loads(proc.stdout))


def members(data: dict, group: str) -> set[str]:
    return set(data.get(group, {}).get("hosts", []))


def test_facts_and_placement_give_groups_and_device_summaries(fleet, tmp_path):
    source = write_source(
        tmp_path,
        "demo.fleet.yml",
        {
            "plugin": "accel.openstack.fleet",
            "fact_cache_connection": fleet["facts"],
            "auth_type": "admin_token",
            "auth": fleet["placement"].auth["auth"],
            "device_policy": DEMO_POLICY,
            "compose": {"h100_total": "accel_fleet_resource_classes.CUSTOM_NVIDIA_H100.total | default(0)"},
            "groups": {"eight_gpu_hosts": "(accel_fleet_resource_classes.CUSTOM_NVIDIA_H100.total | default(0)) >= 8"},
            "keyed_groups": [{"key": "accel_cpu_vendor", "prefix": "cpu"}],
        },
    )
    data = listing(source)
    hostvars = data["_meta"]["hostvars"]
    assert set(hostvars) == {
        "hgx-01", "workstation-01", "vgpu-a16-01", "vgpu-l40s-01", "mig-01", "net-01", "epyc-01", "legacy-01",
        "vgpu-a16-02", "mi300x-01", "flex170-01",
    }  # fmt: skip
    # model and mode (the demo policy decides the mode of what it selects)
    assert members(data, "accel_model_10de_2330") == {"hgx-01"}
    assert members(data, "accel_model_10de_1eb8") == {"legacy-01", "net-01"}
    assert members(data, "accel_mode_vgpu") == {"vgpu-a16-01", "vgpu-a16-02", "vgpu-l40s-01"}
    assert {"hgx-01", "mig-01", "net-01", "epyc-01", "legacy-01", "workstation-01"} <= members(
        data, "accel_mode_passthrough"
    )
    assert "accel_mode_mig" not in data  # the demo policy passes the MIG A100s through whole
    # NUMA: the A16 sits on node 1 only
    assert "vgpu-a16-01" in members(data, "accel_numa_1") and "vgpu-a16-01" not in members(data, "accel_numa_0")
    # resource classes and traits from Placement, as the placement stage registered them
    assert members(data, "accel_rc_custom_nvidia_h100") == {"hgx-01"}
    assert members(data, "accel_trait_custom_gpu_nvlink") == {"hgx-01"}
    assert members(data, "accel_trait_custom_vgpu_a16") == {"vgpu-a16-01", "vgpu-a16-02"}
    assert members(data, "accel_rc_custom_vgpu_a16_4q") == {"vgpu-a16-01", "vgpu-a16-02"}
    hgx = hostvars["hgx-01"]
    assert hgx["accel_fleet_resource_classes"]["CUSTOM_NVIDIA_H100"] == {
        "total": 8, "reserved": 0, "used": 0, "providers": 8,
    }  # fmt: skip
    assert "VCPU" not in hgx["accel_fleet_resource_classes"]
    (h100,) = [d for d in hgx["accel_fleet_devices"] if d["policy_entry"] == "h100"]
    assert (h100["count"], h100["mode"], h100["product_name"]) == (8, "passthrough", "GH100 [H100 SXM5 80GB]")
    assert hgx["accel_fleet_sources"] == ["facts", "placement"]
    # reboot: mig-01 has a GPU whose MIG mode is pending; hgx-01 runs without iommu=pt and vfio-pci.ids
    assert "mig-01" in members(data, "accel_reboot_pending")
    assert any("MIG mode of 0000:d8:00.0" in r for r in hostvars["mig-01"]["accel_fleet_reboot_reasons"])
    assert "hgx-01" in members(data, "accel_reboot_pending")
    (reason,) = hgx["accel_fleet_reboot_reasons"]
    assert "iommu=pt" in reason and "vfio-pci.ids with 10de:2330" in reason
    # compose, groups and keyed_groups
    assert hgx["h100_total"] == 8
    assert members(data, "eight_gpu_hosts") == {"hgx-01"}
    assert "epyc-01" in members(data, "cpu_amd") and "hgx-01" in members(data, "cpu_intel")


def test_graph_and_list_agree_and_placement_alone_gives_its_groups(fleet, tmp_path):
    source = write_source(
        tmp_path,
        "placement.fleet.yml",
        {
            "plugin": "accel.openstack.fleet",
            "sources": ["placement"],
            "auth_type": "admin_token",
            "auth": fleet["placement"].auth["auth"],
            "trait_patterns": ["CUSTOM_*", "COMPUTE_MANAGED_PCI_DEVICE"],
        },
    )
    data = listing(source)
    graph = inventory(source, "--graph", "accel_rc_custom_nvidia_h100")
    assert graph.returncode == 0, graph.stderr
    assert graph.stdout.split() == ["@accel_rc_custom_nvidia_h100:", "|--hgx-01"]
    assert "accel_mode_passthrough" not in data  # modes come from facts, not a source here
    assert members(data, "accel_trait_compute_managed_pci_device") >= {"hgx-01", "mig-01"}
    assert data["_meta"]["hostvars"]["hgx-01"]["accel_fleet_sources"] == ["placement"]


def test_facts_alone_take_modes_from_the_facts(fleet, tmp_path):
    source = write_source(
        tmp_path,
        "facts.fleet.yml",
        {"plugin": "accel.openstack.fleet", "sources": ["facts"], "fact_cache_connection": fleet["facts"],
         "model_group_names": "names"},
    )  # fmt: skip
    data = listing(source)
    assert members(data, "accel_mode_mig") == {"mig-01"}
    assert members(data, "accel_mode_vgpu") == {"vgpu-a16-01", "vgpu-a16-02", "vgpu-l40s-01"}
    assert members(data, "accel_model_nvidia_gh100_h100_sxm5_80gb") == {"hgx-01"}
    # without a policy nothing says a host needs passthrough, so only the pending MIG mode counts
    assert members(data, "accel_reboot_pending") == {"mig-01"}


def test_inventory_cache_serves_the_second_run(fleet, tmp_path):
    cache_dir = tmp_path / "inventory-cache"
    config = {
        "plugin": "accel.openstack.fleet",
        "sources": ["facts"],
        "fact_cache_connection": fleet["facts"],
        "cache": True,
        "cache_plugin": "ansible.builtin.jsonfile",
        "cache_connection": str(cache_dir),
    }
    source = write_source(tmp_path, "cached.fleet.yml", config)
    first = listing(source)
    assert len(os.listdir(cache_dir)) == 1
    # the facts are gone, yet the cached inventory answers
    config["fact_cache_connection"] = str(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    write_source(tmp_path, "cached.fleet.yml", config)
    assert listing(source) == first
    refreshed = inventory(source, "--list", "--flush-cache", ANSIBLE_INVENTORY_UNPARSED_FAILED="true")
    assert refreshed.returncode != 0 and "holds no facts" in refreshed.stderr


@pytest.mark.parametrize(
    "case, config, expected",
    [
        ("missing cache", {"sources": ["facts"], "fact_cache_connection": "{tmp}/nope"},
         "fact_cache_connection {tmp}/nope is not a directory"),
        ("empty cache", {"sources": ["facts"], "fact_cache_connection": "{tmp}/empty"},
         "holds no facts"),
        ("no cache setting", {"sources": ["facts"]}, "fact_cache_connection is not set"),
        ("memory cache", {"sources": ["facts"], "fact_cache_plugin": "memory"}, "fact_cache_plugin is memory"),
        ("unreachable Placement", {"sources": ["facts", "placement"], "fact_cache_connection": "{facts}",
                                   "auth_type": "admin_token",
                                   "auth": {"endpoint": "http://127.0.0.1:9", "token": "admin"}},
         "Check the OpenStack options of this file (given: auth_type, auth)"),
        ("bad policy", {"sources": ["facts"], "fact_cache_connection": "{facts}",
                        "device_policy": [{"name": "x", "vendor_id": "10de", "mode": "passthrough"}]},
         "device_policy: device policy entry 1 (name: x): product_id is missing"),
    ],
)  # fmt: skip
def test_bad_sources_fail_with_the_setting_and_no_hosts(fleet, tmp_path, case, config, expected):
    (tmp_path / "empty").mkdir()
    fill = {"tmp": str(tmp_path), "facts": fleet["facts"]}

    def expand(value):
        if isinstance(value, str):
            return value.format(**fill)
        if isinstance(value, dict):
            return {k: expand(v) for k, v in value.items()}
        if isinstance(value, list):
            return [expand(v) for v in value]
        return value

    source = write_source(tmp_path, "bad.fleet.yml", {"plugin": "accel.openstack.fleet", **expand(config)})
    failed = inventory(source, "--list", ANSIBLE_INVENTORY_UNPARSED_FAILED="true")
    assert failed.returncode != 0
    assert expand(expected) in " ".join(failed.stderr.split()), failed.stderr
    # the default: a warning and no host at all from this source (never a partial inventory)
    lenient = inventory(source, "--list")
    assert lenient.returncode == 0
    assert set(json.loads(lenient.stdout)["_meta"]["hostvars"]) == set()
    assert not (tmp_path / "nope").exists()  # a missing cache directory is not created
