"""The kolla layout proven through Kolla-Ansible 23 itself: its nova / nova-cell role templates and its
merge_configs action render nova.conf for nova-compute, nova-conductor, nova-api and nova-scheduler over
several globals combinations, with the collection's files in node_custom_config, and Nova 34's own
parsers judge the result."""

import json
import os

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.files import apply_all
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import plan
from tests.support import kolla_render, nova_libvirt_oracle, nova_oracle
from tests.support.fake_sysfs import build_root

pytestmark = [
    pytest.mark.nova,
    pytest.mark.skipif(not kolla_render.available(), reason="kolla venv missing: make kolla-venv"),
]

with open("inventories/demo/group_vars/all/device_policy.yml") as handle:
    POLICY = yaml.safe_load(handle)["accel_device_policy"]
COMPUTE = ("hgx-h100", "sriov-nic", "vgpu-a16")
CONTROL = "ctl-01"
SERVICES = {CONTROL: ["nova-api", "nova-scheduler", "nova-conductor"]} | {h: ["nova-compute"] for h in COMPUTE}
# What operators already had: a hand-written alias and device_spec, unrelated keys, and extra filters.
OPERATOR = {
    "global.conf": '[DEFAULT]\ndebug = True\n[pci]\nalias = {"name": "old", "vendor_id": "10de", '
    '"product_id": "1db4", "device_type": "type-PCI"}\n',
    "nova.conf": '[pci]\ndevice_spec = {"vendor_id": "10de", "product_id": "1db4"}\n'
    "[libvirt]\ncpu_mode = host-passthrough\nlive_migration_permit_post_copy = true\n",
    "nova/nova-scheduler.conf": "[filter_scheduler]\n"
    "enabled_filters = ComputeFilter,AggregateInstanceExtraSpecsFilter\n",
}
TUNED = {"live_migration_timeout_action": "force_complete", "live_migration_downtime": 1000}
PROVIDER_LOOKUP = (
    "{{ lookup('ansible.builtin.file', node_custom_config ~ '/nova/' ~ inventory_hostname ~ "
    "'/provider_config.yaml') | from_yaml }}"
)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    hosts = []
    for profile in COMPUTE:
        facts, _unused = discover(build_root(profile, str(tmp_path_factory.mktemp(profile))))
        hosts.append({"name": profile, "facts": facts})
    hosts[0]["compute_node_traits"] = ["CUSTOM_HGX"]
    return hosts


def _write(config_dir, files: dict) -> None:
    for name, text in files.items():
        path = config_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _apply(config_dir, hosts, globals_, report=True, operator=None):
    _write(config_dir, operator or {})
    params = {
        "layout": "kolla",
        "config_dir": str(config_dir),
        "hosts": hosts,
        "policy": POLICY,
        "report_in_placement": report,
        "pci_in_placement": report,
        "kolla_globals": globals_,
    }
    rendering, plans = plan(HostRoot("/"), params)
    apply_all(HostRoot("/"), plans)
    return rendering, params


def _judge(rendered: dict, hosts: list[dict]) -> dict:
    cases = []
    for host in hosts:
        case = {"id": host["name"], "hostname": host["name"], "compute": rendered[host["name"]]["nova-compute"]}
        case["devices"] = host["facts"]["accel_pci_devices"]
        if "provider_config" in rendered[host["name"]]:
            case["provider_config"] = rendered[host["name"]]["provider_config"]
        cases.append(case)
    control = rendered[CONTROL]
    cases.append(
        {
            "id": CONTROL,
            "api": control["nova-api"],
            "scheduler": control["nova-scheduler"],
            "conductor": control["nova-conductor"],
        }
    )
    return {answer["id"]: answer for answer in nova_oracle.ask(cases)}


def _nova_compute_answer(rendered: dict, host: str, facts: dict) -> dict:
    """Nova's verdict on one host's merged nova-compute config."""
    case = {"id": host, "hostname": host, "compute": rendered[host]["nova-compute"]}
    case["devices"] = facts["accel_pci_devices"]
    return nova_oracle.ask([case])[0]


@pytest.mark.parametrize(
    "name,globals_,operator",
    [
        ("plain", {}, None),
        ("sriov-whitelist-cleared", {"enable_neutron_sriov": True, "nova_pci_passthrough_whitelist": []}, None),
        ("blazar", {"enable_blazar": True}, None),
        ("operator-overrides", {}, OPERATOR),
    ],
)
def test_kolla_renders_what_nova_accepts(fleet, tmp_path, name, globals_, operator):
    globals_ = dict(globals_, nova_cell_compute_provider_config=PROVIDER_LOOKUP)
    if operator:  # the operator's [libvirt] options for the H100 host (accel_nova_libvirt)
        fleet = [dict(h, libvirt=TUNED) if h["name"] == "hgx-h100" else h for h in fleet]
    rendering, params = _apply(tmp_path, fleet, globals_, operator=operator)
    rendered = kolla_render.render(str(tmp_path), SERVICES, globals_)
    answers = _judge(rendered, fleet)
    for host in COMPUTE:
        compute = answers[host]["compute"]
        assert compute["ok"], f"{name} {host}: {compute.get('error')}"
        meant = {d["address"] for item in rendering.selections[host].passthrough for d in item.devices}
        assert set(compute["matched"]) == meant
        assert set(compute["aliases"]) == {json.loads(a)["name"] for a in rendering.api["pci"]["alias"]}
        assert "devname" not in rendered[host]["nova-compute"]
        provider = answers[host]["provider_config"]
        assert provider["ok"], provider.get("error")
        assert ("$COMPUTE_NODE" in json.dumps(provider["providers"])) == (host == "hgx-h100")
    control = answers[CONTROL]
    for service in ("api", "scheduler", "conductor"):
        assert control[service]["ok"], f"{name} {service}: {control[service].get('error')}"
        assert control[service]["pci_in_placement"] is True, f"{name}: {service} lacks pci_in_placement"
        assert "old" not in control[service]["aliases"]
    filters = control["scheduler"]["enabled_filters"]
    assert filters[-1] == "PciPassthroughFilter"
    if name == "blazar":
        assert "BlazarFilter" in filters
    if name == "operator-overrides":
        assert "AggregateInstanceExtraSpecsFilter" in filters
        assert "debug = True" in rendered[COMPUTE[0]]["nova-compute"]
        assert "cpu_mode = host-passthrough" in rendered[COMPUTE[0]]["nova-compute"]
        # Kolla's merge keeps its own [libvirt] keys and the operator's, the host's file wins: post-copy stays as
        # nova.conf permits it on the H100 host, and is off on the vGPU host (the collection's default there)
        merged = nova_libvirt_oracle.ask(
            [{"id": h, "files": {"nova.conf": rendered[h]["nova-compute"]}} for h in ("hgx-h100", "vgpu-a16")]
        )
        assert all(answer["ok"] for answer in merged), merged
        h100, a16 = (answer["libvirt"] for answer in merged)
        assert h100["live_migration_permit_post_copy"] is True and a16["live_migration_permit_post_copy"] is False
        assert h100["live_migration_timeout_action"] == "force_complete" and h100["live_migration_downtime"] == 1000
        assert "live_migration_timeout_action" not in a16
        for answer in (h100, a16):
            assert answer["cpu_mode"] == "host-passthrough" and answer["connection_uri"].startswith("qemu+tcp://")
    # A second run changes nothing, and the operator's filters survive it.
    _unused, plans = plan(HostRoot("/"), params)
    assert not [p.path for p in plans if p.changed]


def test_sriov_devname_whitelist_with_report_in_placement_is_refused(fleet, tmp_path):
    """Kolla renders devname entries for enable_neutron_sriov; Nova refuses them with report_in_placement."""
    globals_ = {"enable_neutron_sriov": True, "neutron_sriov_physnet_mappings": {"physnet1": "ens1f0"}}
    with pytest.raises(AccelError, match="nova_pci_passthrough_whitelist"):
        _apply(tmp_path, fleet, globals_)
    assert not os.listdir(tmp_path)
    # What Kolla would have rendered, had the collection written its files: Nova refuses it.
    _apply(tmp_path, fleet, {}, report=True)
    rendered = kolla_render.render(str(tmp_path), {"sriov-nic": ["nova-compute"], CONTROL: []}, globals_)
    assert "devname" in rendered["sriov-nic"]["nova-compute"]
    answer = _nova_compute_answer(rendered, "sriov-nic", fleet[1]["facts"])
    assert not answer["compute"]["ok"] and "devname" in answer["compute"]["error"]


def test_sriov_devname_whitelist_without_report_in_placement_is_accepted(fleet, tmp_path):
    globals_ = {"enable_neutron_sriov": True, "neutron_sriov_physnet_mappings": {"physnet1": "ens1f0"}}
    _apply(tmp_path, fleet, globals_, report=False)
    rendered = kolla_render.render(str(tmp_path), {"sriov-nic": ["nova-compute"], CONTROL: []}, globals_)
    answer = _nova_compute_answer(rendered, "sriov-nic", fleet[1]["facts"])
    assert answer["compute"]["ok"], answer["compute"].get("error")


def test_report_in_placement_is_never_turned_off(fleet, tmp_path):
    _apply(tmp_path, fleet, {}, report=True)
    before = {p: (tmp_path / p).read_text() for p in ("nova/hgx-h100/nova.conf",)}
    with pytest.raises(AccelError, match="report_in_placement"):
        _apply(tmp_path, fleet, {}, report=False)
    assert {p: (tmp_path / p).read_text() for p in before} == before


def test_provider_defined_twice_is_refused(fleet, tmp_path):
    hosts = [dict(fleet[0], provider_config=[{"identification": {"uuid": "$COMPUTE_NODE"}, "traits": {}}])]
    with pytest.raises(AccelError, match="defined twice"):
        _apply(tmp_path, hosts, {})
    assert not os.listdir(tmp_path)


def test_the_kolla_example_inventory_renders_what_nova_accepts(tmp_path):
    """inventories/kolla-example as shipped: its globals excerpt and device policy, through Kolla's code."""
    example = "inventories/kolla-example"
    with open(f"{example}/globals.yml") as handle:
        globals_ = yaml.safe_load(handle)
    with open(f"{example}/group_vars/all/accel.yml") as handle:
        settings = yaml.safe_load(handle)
    hosts = []
    for name, profile in (("gpu-01", "hgx-h100"), ("gpu-02", "sriov-nic")):
        facts, _unused = discover(build_root(profile, str(tmp_path / "roots" / name)))
        hosts.append({"name": name, "facts": facts})
    config_dir = tmp_path / "config"
    params = {
        "layout": settings["accel_nova_layout"],
        "config_dir": str(config_dir),
        "hosts": hosts,
        "policy": settings["accel_device_policy"],
        "report_in_placement": settings["accel_nova_report_in_placement"],
        "pci_in_placement": settings["accel_nova_pci_in_placement"],
        "kolla_globals": globals_,
    }
    rendering, plans = plan(HostRoot("/"), params)
    apply_all(HostRoot("/"), plans)
    services = {CONTROL: ["nova-api", "nova-scheduler", "nova-conductor"], "gpu-01": ["nova-compute"]}
    services["gpu-02"] = ["nova-compute"]
    globals_["node_custom_config"] = str(config_dir)
    rendered = kolla_render.render(str(config_dir), services, globals_)
    answers = _judge(rendered, hosts)
    for host in hosts:
        compute = answers[host["name"]]["compute"]
        assert compute["ok"], f"{host['name']}: {compute.get('error')}"
        meant = {d["address"] for item in rendering.selections[host["name"]].passthrough for d in item.devices}
        assert meant and set(compute["matched"]) == meant
        assert "devname" not in rendered[host["name"]]["nova-compute"]
    for service in ("api", "scheduler", "conductor"):
        assert answers[CONTROL][service]["ok"], answers[CONTROL][service].get("error")
        assert answers[CONTROL][service]["pci_in_placement"] is True
        # the VFs carry physical_network: Neutron's, outside Placement, with no alias (docs/kolla.md)
        assert set(answers[CONTROL][service]["aliases"]) == {"h100"}
