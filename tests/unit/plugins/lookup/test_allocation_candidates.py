"""The lookups, run by ansible-playbook itself: one answer per query, bad queries fail with the fix."""

import json
import os
import subprocess
import sys

import yaml

FLEET = {
    "resource_providers": [
        {"uuid": "cn1", "name": "compute1", "parent_provider_uuid": None, "inventories": {"VCPU": {"total": 8}}},
    ]
}

PLAY = [
    {
        "hosts": "localhost",
        "gather_facts": False,
        "vars": {"fleet": FLEET},
        "tasks": [
            {
                "name": "candidates",
                "ansible.builtin.set_fact": {
                    "answer": "{{ query('accel.openstack.allocation_candidates', 'resources=VCPU:2', "
                    "{'resources': 'VCPU:9'}, fleet=fleet) }}",
                    "why": "{{ query('accel.openstack.placement_explain', 'resources=VCPU:9', fleet=fleet) }}",
                },
            },
            {
                "name": "out",
                "ansible.builtin.copy": {
                    "content": "{{ {'answer': answer, 'why': why} | to_json }}",
                    "dest": "{{ out }}",
                },
            },
            {
                "name": "bad",
                "ansible.builtin.debug": {
                    "msg": "{{ query('accel.openstack.allocation_candidates', 'resources=VPCU:1', fleet=fleet) }}"
                },
            },
        ],
    }
]


def test_lookups_answer_and_fail_like_placement(tmp_path):
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(PLAY))
    out = tmp_path / "out.json"
    env = dict(
        os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false"
    )
    result = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(playbook), "-e", f"out={out}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr  # the last task must fail
    data = json.loads(out.read_text())
    assert data["answer"][0]["allocation_requests"] == [
        {"allocations": {"cn1": {"resources": {"VCPU": 2}}}, "mappings": {"": ["cn1"]}}
    ]
    assert data["answer"][0]["provider_summaries"]["cn1"]["resources"] == {"VCPU": {"capacity": 8, "used": 0}}
    assert data["answer"][1] == {"allocation_requests": [], "provider_summaries": {}}
    assert data["why"][0]["roots"][0]["reason"].startswith(
        "the unsuffixed group needs VCPU:9; compute1 has 8 free of 8"
    )
    output = result.stdout + result.stderr
    assert "Invalid resource class in resources parameter: No such resource class VPCU." in output
    assert "Did you mean VGPU or VCPU or PCPU?" in output
