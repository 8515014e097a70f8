"""The nova_config module through ansible-playbook: check mode, diff, idempotence, bad input."""

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from tests.support.fake_sysfs import build_root

POLICY = [
    {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough"},
    {"name": "cx6-vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough"},
]
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: check mode first
      accel.openstack.nova_config: "{{ args }}"
      check_mode: true
      diff: true
      register: first
    - name: nothing written in check mode
      ansible.builtin.stat: {path: "{{ args.root }}/etc/nova/nova.conf.d/50-accel-openstack.conf"}
      register: before
    - name: apply
      accel.openstack.nova_config: "{{ args }}"
      register: second
    - name: check mode again
      accel.openstack.nova_config: "{{ args }}"
      check_mode: true
      register: third
    - name: apply again
      accel.openstack.nova_config: "{{ args }}"
      register: fourth
    - name: a bad policy fails and writes nothing
      accel.openstack.nova_config: "{{ args | combine({'policy': [{'name': 't4', 'vendor_id': '10de',
                                    'product_id': '1eb', 'mode': 'passthrough'}]}) }}"
      register: bad
      ignore_errors: true
    - name: report
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'first': first, 'before': before.stat.exists, 'second': second, 'third': third,
                      'fourth': fourth, 'bad': bad} | to_json }}"
      delegate_to: localhost
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("module")
    facts, _unused = discover(build_root("sriov-nic", str(work / "fixture")))
    root = work / "host"
    (root / "etc" / "nova" / "nova.conf.d").mkdir(parents=True)
    conf = root / "etc" / "nova" / "nova.conf.d" / "50-accel-openstack.conf"
    conf.write_text("[DEFAULT]\ndebug = True\n")
    args = {
        "layout": "nova_conf_d",
        "host": "net-01",
        "services": ["compute"],
        "report_in_placement": True,
        "root": str(root),
        "policy": POLICY,
        "hosts": [{"name": "net-01", "facts": facts}],
    }
    (work / "play.yml").write_text(PLAY)
    (work / "vars.json").write_text(json.dumps({"args": args, "out": str(work / "out.json")}))
    env = dict(
        os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false"
    )
    proc = subprocess.run(
        [
            os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
            str(work / "play.yml"),
            "-e",
            f"@{work / 'vars.json'}",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((work / "out.json").read_text()), conf


def test_check_mode_reports_the_change_and_writes_nothing(run):
    result, _unused = run
    assert result["first"]["changed"] and result["before"]
    diff = result["first"]["diff"][0]
    assert diff["before"] == "[DEFAULT]\ndebug = True\n" and "device_spec" in diff["after"]


def test_apply_writes_then_every_later_run_is_unchanged(run):
    result, conf = run
    assert result["second"]["changed"]
    assert not result["third"]["changed"] and not result["fourth"]["changed"]
    text = conf.read_text()
    assert text.startswith("# accel.openstack owns:") and "debug = True" in text
    assert 'device_spec = {"vendor_id": "15b3", "product_id": "101e"}' in text
    assert "report_in_placement = true" in text


def test_bad_policy_fails_naming_the_field_and_changes_nothing(run):
    result, conf = run
    assert result["bad"]["failed"] and not result["bad"]["changed"]
    assert "device policy entry 1 (name: t4): product_id '1eb' is not 4 hex digits" in result["bad"]["msg"]
    assert 'product_id": "1eb"' not in conf.read_text()
