"""Through ansible-playbook itself: no secret at any verbosity, lookups that refuse instead of spinning."""

from __future__ import annotations

import math

import pytest

from tests.hostile.conftest import run_play

CASE_SECONDS = 150

PASSWORD = "S3cret-Passw0rd-in-a-cloud-dict"
TOKEN = "T0ken-Secret-for-admin-token"
NESTED = "Nested-Secret-application-credential"


def _task(name: str, args: dict) -> dict:
    return {"name": name, "accel.openstack.placement_info": args, "ignore_errors": True, "register": name}


@pytest.mark.parametrize("verbosity", [0, 3])
def test_no_secret_appears_in_the_output_at_any_verbosity(tmp_path, verbosity):
    tasks = [
        _task(
            "cloud_dict",
            {
                "cloud": {
                    "auth": {
                        "auth_url": "http://127.0.0.1:9/v3",
                        "username": "operator",
                        "password": PASSWORD,
                        "project_name": "admin",
                    },
                    "region_name": "RegionOne",
                    "identity_api_version": 3,
                },
                "api_timeout": 2,
            },
        ),
        _task(
            "auth_token",
            {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": TOKEN}, "api_timeout": 2},
        ),
        _task(
            "nested",
            {
                "auth_type": "v3applicationcredential",
                "auth": {
                    "auth_url": "http://127.0.0.1:9/v3",
                    "application_credential_id": "id-1",
                    "application_credential_secret": NESTED,
                },
                "api_timeout": 2,
            },
        ),
        {"name": "show", "ansible.builtin.debug": {"var": "cloud_dict"}},
    ]
    rc, output = run_play(tmp_path, tasks, verbosity=verbosity)
    assert "cloud_dict" in output and "auth_token" in output, output
    for secret in (PASSWORD, TOKEN, NESTED):
        assert secret not in output, f"{secret} leaked at -{'v' * verbosity}"
    if verbosity:
        # Only the secrets are masked: the invocation still shows the rest of the cloud dict.
        assert "RegionOne" in output and "operator" in output


def test_a_short_secret_is_refused_naming_the_option(tmp_path):
    tasks = [
        _task("short", {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": "abc"}}),
        _task("cloud_str", {"cloud": ["not", "a", "cloud"]}),
        _task("auth_str", {"auth": "password=hunter2hunter2"}),
        _task("timeout", {"cloud": "devstack", "api_timeout": -1}),
    ]
    rc, output = run_play(tmp_path, tasks)
    assert "auth.token is 3 characters" in output, output
    assert "cloud is list" in output, output
    assert "api_timeout is -1" in output, output
    assert "Traceback" not in output
    assert "hunter2hunter2" not in output


def _isolated_fleet() -> dict:
    root = "00000000-0000-0000-0000-000000000001"
    providers = [{"uuid": root, "name": "host", "inventories": {"VCPU": {"total": 8}}}]
    providers += [
        {
            "uuid": f"00000000-0000-0000-0000-{index + 100:012d}",
            "name": f"gpu{index}",
            "parent_provider_uuid": root,
            "inventories": {"VGPU": {"total": 1}},
        }
        for index in range(11)
    ]
    return {"resource_providers": providers}


def _lookup_task(name: str, expression: str) -> dict:
    return {"name": name, "ansible.builtin.debug": {"msg": "{{ " + expression + " }}"}, "ignore_errors": True}


def test_lookups_refuse_a_combinatorial_query_and_bad_types(tmp_path):
    query = {f"resources{index}": "VGPU:1" for index in range(12)}
    query["group_policy"] = "isolate"
    bad_total = {"resource_providers": [{"uuid": "a", "inventories": {"VCPU": {"total": math.nan}}}]}
    negative = {"resource_providers": [{"uuid": "a", "inventories": {"VCPU": {"total": -4}}}]}
    string_traits = {"resource_providers": [{"uuid": "a", "traits": "CUSTOM_X", "inventories": {"VCPU": {"total": 1}}}]}
    tasks = [
        _lookup_task("isolate_candidates", "query('accel.openstack.allocation_candidates', q, fleet=fleet)"),
        _lookup_task("isolate_explain", "query('accel.openstack.placement_explain', q, fleet=fleet)"),
        _lookup_task("term_int", "query('accel.openstack.allocation_candidates', 5, fleet=fleet)"),
        _lookup_task("fleet_str", "query('accel.openstack.allocation_candidates', 'resources=VCPU:1', fleet='x')"),
        _lookup_task("nan", "query('accel.openstack.allocation_candidates', 'resources=VCPU:1', fleet=bad_total)"),
        _lookup_task("negative", "query('accel.openstack.allocation_candidates', 'resources=VCPU:1', fleet=negative)"),
        _lookup_task("traits", "query('accel.openstack.allocation_candidates', 'resources=VCPU:1', fleet=traits)"),
    ]
    play_vars = {
        "q": query,
        "fleet": _isolated_fleet(),
        "bad_total": bad_total,
        "negative": negative,
        "traits": string_traits,
    }
    rc, output = run_play(tmp_path, tasks, play_vars)
    assert output.count("too combinatorial for an exact answer") >= 2, output
    assert "term 1 is an integer (5)" in output
    assert "'fleet'" in output and "invalid value" in output.lower()
    assert "total must be an integer, got a number nan" in output
    assert "total is -4; Placement takes 1 or more" in output
    assert "traits must be a list of names, got a string 'CUSTOM_X'" in output
    assert "Traceback" not in output


@pytest.mark.parametrize(
    ("playbook", "variable"),
    [
        ("playbooks/discover.yml", "accel_nova_compute_group"),
        ("playbooks/prepare_hosts.yml", "accel_nova_compute_group"),
        ("playbooks/nova_config.yml", "accel_nova_compute_group"),
        ("playbooks/validate.yml", "accel_nova_compute_group"),
        ("playbooks/audit.yml", "accel_audit_hosts"),
        ("playbooks/replace_hardware.yml", "accel_nova_compute_group"),
        ("playbooks/health.yml", "accel_health_hosts"),
        ("playbooks/capacity.yml", "accel_capacity_target"),
        ("playbooks/pci_in_placement.yml", "accel_nova_compute_group"),
    ],
)
def test_a_stage_whose_target_matches_no_host_fails_naming_the_variable(tmp_path, playbook, variable):
    from tests.support.ansible_runner import run_playbook

    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  hosts:\n    gpu-a:\n      ansible_connection: local\n")
    # capacity runs on localhost unless a target is chosen: chosen here, as a group the inventory lacks
    extra = {"accel_capacity_target": "gpu_hosts"} if variable == "accel_capacity_target" else None
    done = run_playbook(playbook, inventory=str(inventory), extra_vars=extra, check=True)
    assert done["rc"] != 0
    messages = [
        result.get("msg", "")
        for play in done["plays"]
        for task in play["tasks"]
        for result in task["hosts"].values()
        if result.get("failed")
    ]
    assert len(messages) == 1 and f"-e {variable}=<group>" in messages[0] and "matches no host" in messages[0]
    # Nothing ran on the host the target does not name.
    assert all("gpu-a" not in task["hosts"] for play in done["plays"] for task in play["tasks"])
