"""accel_nova_libvirt through the real nova_config role on two simulated vGPU hosts in two host groups, in one
ansible-playbook run: check mode (changed, nothing written), apply, check mode again and apply again (no
change), a bad value refused naming the option with nothing written; then the written files read by
nova_config_info as the audit reads them, by oslo.config with Nova 34's own [libvirt] options, and by the
live-migration check.

Group ``vgpu`` sets nothing (the collection writes post-copy off); group ``tuned`` sets its own options and
permits post-copy, which the migration check then reports as ``post_copy_permitted``.
"""

import json
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.plugin_utils.migration import migration_targets
from tests.support import migration_fleet, nova_libvirt_oracle
from tests.support.ansible_runner import run_playbook
from tests.support.fake_sysfs import build_root
from tests.support.nova_venv import nova_python

pytestmark = pytest.mark.nova

with open("inventories/demo/group_vars/all/device_policy.yml") as handle:
    POLICY = yaml.safe_load(handle)["accel_device_policy"]
CONF = "etc/nova/nova.conf.d/50-accel-openstack.conf"
TUNED = {"live_migration_permit_post_copy": True, "live_migration_timeout_action": "force_complete"}
PLAY = """
- name: Discover
  hosts: compute
  gather_facts: false
  tasks:
    - name: Read the simulated host
      accel.openstack.pci_facts:
        root: "{{ accel_root }}"

- name: The nova_config role, four times
  hosts: compute
  gather_facts: false
  tasks:
    - name: Check mode first
      ansible.builtin.include_role:
        name: accel.openstack.nova_config
        apply: {check_mode: true, diff: true}
    - name: Keep it
      ansible.builtin.set_fact: {run_check: "{{ nova_config_conf_d_result }}"}
    - name: Nothing written in check mode
      ansible.builtin.stat: {path: "{{ accel_root }}/etc/nova/nova.conf.d/50-accel-openstack.conf"}
      register: after_check
    - name: Apply
      ansible.builtin.include_role: {name: accel.openstack.nova_config}
    - name: Keep it
      ansible.builtin.set_fact: {run_apply: "{{ nova_config_conf_d_result }}"}
    - name: Check mode again
      ansible.builtin.include_role:
        name: accel.openstack.nova_config
        apply: {check_mode: true}
    - name: Keep it
      ansible.builtin.set_fact: {run_check_again: "{{ nova_config_conf_d_result }}"}
    - name: Apply again
      ansible.builtin.include_role: {name: accel.openstack.nova_config}
    - name: Keep it
      ansible.builtin.set_fact: {run_apply_again: "{{ nova_config_conf_d_result }}"}
    - name: A value Nova refuses fails the stage and writes nothing
      block:
        - name: Apply with rx_queue_size 300
          ansible.builtin.include_role: {name: accel.openstack.nova_config}
          vars:
            accel_nova_libvirt: {rx_queue_size: 300}
      rescue:
        - name: Keep the failure
          ansible.builtin.set_fact: {run_bad: "{{ ansible_failed_result }}"}
    - name: Read what Nova now reads, as the audit does
      accel.openstack.nova_config_info:
        layout: nova_conf_d
        root: "{{ accel_root }}"
        hosts: [{name: "{{ inventory_hostname }}", services: [compute]}]
      register: deployed
    - name: Report
      ansible.builtin.copy:
        dest: "{{ out }}/{{ inventory_hostname }}.json"
        content: "{{ {'check': run_check, 'written_in_check': after_check.stat.exists, 'apply': run_apply,
                      'check_again': run_check_again, 'apply_again': run_apply_again, 'bad': run_bad,
                      'deployed': deployed.deployed} | to_json }}"
"""


@pytest.fixture(scope="module")
def stage(tmp_path_factory):
    try:
        nova_python()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    work = tmp_path_factory.mktemp("libvirt-role")
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = {
        "all": {
            "vars": {"accel_nova_layout": "nova_conf_d", "accel_become": False, "accel_device_policy": POLICY},
            "children": {
                "compute": {
                    "children": {
                        "vgpu": {"hosts": {"a16-01": dict(host, accel_root=build_root("vgpu-a16", str(work / "a")))}},
                        "tuned": {
                            "hosts": {"a16-02": dict(host, accel_root=build_root("vgpu-a16", str(work / "b")))},
                            "vars": {"accel_nova_libvirt": TUNED},
                        },
                    }
                }
            },
        }
    }
    (work / "hosts.yml").write_text(yaml.safe_dump(inventory))
    (work / "play.yml").write_text(PLAY)
    (work / "out").mkdir()
    report = run_playbook(str(work / "play.yml"), str(work / "hosts.yml"), {"out": str(work / "out")}, timeout=600)
    assert report["rc"] == 0, report["stderr"][-3000:] + report.get("stdout", "")[-3000:]
    results = {name: json.loads((work / "out" / f"{name}.json").read_text()) for name in ("a16-01", "a16-02")}
    roots = {name: inventory["all"]["children"]["compute"]["children"][group]["hosts"][name]["accel_root"]
             for group, name in (("vgpu", "a16-01"), ("tuned", "a16-02"))}  # fmt: skip
    return results, roots


def test_check_mode_then_apply_then_nothing_more_to_change(stage):
    results, _roots = stage
    for name, result in results.items():
        assert result["check"]["changed"] and not result["written_in_check"], name
        (diff,) = [d for d in result["check"]["diff"] if d["after_header"].endswith("50-accel-openstack.conf")]
        assert "[libvirt]" in diff["after"], name
        assert result["apply"]["changed"], name
        assert not result["check_again"]["changed"] and not result["apply_again"]["changed"], name


def test_each_group_gets_its_own_section_and_the_vgpu_default(stage):
    results, roots = stage
    plain = Path(roots["a16-01"], CONF).read_text()
    tuned = Path(roots["a16-02"], CONF).read_text()
    assert plain.endswith("[libvirt]\nlive_migration_permit_post_copy = false\n")
    assert tuned.endswith(
        "[libvirt]\nlive_migration_permit_post_copy = true\nlive_migration_timeout_action = force_complete\n"
    )
    # the fleet is rendered on each host (the aliases are the fleet's), so each run says it: about a16-02 only
    for name in ("a16-01", "a16-02"):
        assert [w for w in results[name]["apply"]["policy_warnings"] if "post_copy" in w] == [
            "a16-02: accel_nova_libvirt.live_migration_permit_post_copy is true on a host that offers vGPUs: Nova's "
            "vGPU documentation requires it false for live migration, so the migration check reports its vGPU "
            "instances as post_copy_permitted; set it false (or remove it: the collection then writes false)"
        ]
    answers = nova_libvirt_oracle.ask([{"id": n, "files": {"nova.conf.d/50-accel-openstack.conf": t}}
                                       for n, t in (("a16-01", plain), ("a16-02", tuned))])  # fmt: skip
    assert [a["libvirt"] for a in answers] == [
        {"live_migration_permit_post_copy": False},
        {"live_migration_permit_post_copy": True, "live_migration_timeout_action": "force_complete"},
    ]


def test_a_bad_value_fails_naming_the_option_and_writes_nothing(stage):
    results, roots = stage
    for name, result in results.items():
        assert result["bad"]["failed"], name
        assert (
            f"{name}: accel_nova_libvirt.rx_queue_size = 300 must be one of 256, 512, 1024; give one of 256, 512, "
            "1024 as Nova 34.0.0 reads it"
        ) in result["bad"]["msg"]
        assert "rx_queue_size" not in Path(roots[name], CONF).read_text()


def test_the_migration_check_reads_the_deployed_config_as_the_stage_wrote_it(stage):
    results, _roots = stage
    names = ("a16-01", "a16-02")
    inputs = migration_fleet.cloud(names)
    inputs["deployed"] = {name: results[name]["deployed"][name] for name in names}
    for name in names:  # the A16's first vGPU VF, as nova-compute names its provider
        migration_fleet.provider(inputs, f"{name}_pci_0000_84_00_0")["name"] = f"{name}_pci_0000_84_00_4"
        migration_fleet.place(inputs, f"vm-{name}", name, "vgpu")
    report = migration_targets(
        inputs["fleet"], hosts=inputs["hosts"], deployed_config=inputs["deployed"], servers=inputs["servers"]
    )
    found = {i["host"]: ([b["code"] for b in i["blockers"]], i["targets"]) for i in report["instances"]}
    assert found == {"a16-01": ([], ["a16-02"]), "a16-02": (["post_copy_permitted"], [])}
