"""nova_flavor_info reads flavors from Nova 34's own compute API, and the validate stage judges them."""

import json
import sys

import pytest

from tests.support.ansible_runner import run_module, run_playbook

pytestmark = pytest.mark.xdist_group("nova_api")

FLAVORS = [
    {"name": "g1.h100", "vcpus": 8, "ram": 16384, "disk": 40, "extra_specs": {"resources:CUSTOM_NVIDIA_H100": "1"}},
    {"name": "m1.small", "vcpus": 2, "ram": 2048, "disk": 20, "swap": 512},
    {"name": "x1.huge", "vcpus": 512, "ram": 2048, "disk": 20},
]

FLEET = {
    "resource_providers": [
        {
            "uuid": "11111111-1111-4111-8111-111111111111",
            "name": "gpu-01",
            "parent_provider_uuid": None,
            "inventories": {
                "VCPU": {
                    "total": 64,
                    "reserved": 0,
                    "min_unit": 1,
                    "max_unit": 64,
                    "step_size": 1,
                    "allocation_ratio": 1.0,
                },
                "MEMORY_MB": {
                    "total": 262144,
                    "reserved": 0,
                    "min_unit": 1,
                    "max_unit": 262144,
                    "step_size": 1,
                    "allocation_ratio": 1.0,
                },
                "DISK_GB": {
                    "total": 1000,
                    "reserved": 0,
                    "min_unit": 1,
                    "max_unit": 1000,
                    "step_size": 1,
                    "allocation_ratio": 1.0,
                },
                "CUSTOM_NVIDIA_H100": {
                    "total": 2,
                    "reserved": 0,
                    "min_unit": 1,
                    "max_unit": 2,
                    "step_size": 1,
                    "allocation_ratio": 1.0,
                },
            },
            "traits": ["COMPUTE_NODE", "OWNER_NOVA"],
            "aggregates": [],
        }
    ]
}


@pytest.fixture(scope="module")
def nova(nova_api):
    """The session's nova-api with this module's flavors, deleted again at its end."""
    created = [nova_api.create_flavor(flavor) for flavor in FLAVORS]
    yield nova_api
    for flavor in created:
        nova_api.request("DELETE", f"/flavors/{flavor['id']}")


def test_every_flavor_comes_back_with_compute_flavors_keys_and_extra_specs(nova):
    result = run_module("nova_flavor_info", nova.auth)
    assert not result.get("failed"), result
    assert result["changed"] is False
    got = {
        f["name"]: {k: f[k] for k in ("vcpus", "ram", "disk", "ephemeral", "swap", "extra_specs")}
        for f in result["flavors"]
    }
    want = {
        f["name"]: {
            "vcpus": f["vcpus"],
            "ram": f["ram"],
            "disk": f["disk"],
            "ephemeral": 0,
            "swap": f.get("swap", 0),
            "extra_specs": f.get("extra_specs", {}),
        }
        for f in FLAVORS
    }
    assert got == want
    assert [f["name"] for f in result["flavors"]] == sorted(want)


def test_names_select_in_order_and_an_unknown_name_fails_with_the_names_the_cloud_has(nova):
    result = run_module("nova_flavor_info", dict(nova.auth, names=["x1.huge", "g1.h100"]))
    assert [f["name"] for f in result["flavors"]] == ["x1.huge", "g1.h100"]
    failed = run_module("nova_flavor_info", dict(nova.auth, names=["g1.h10O"]))
    assert failed["failed"]
    assert "no flavor named g1.h10O" in failed["msg"] and "g1.h100" in failed["msg"]


def test_the_validate_stage_judges_the_clouds_flavors_without_openstack_cloud(nova, tmp_path):
    report_path = tmp_path / "report.json"
    report = run_playbook(
        "playbooks/validate.yml",
        extra_vars={
            # the validate stage runs on the compute group; here the one host of the inventory
            "accel_nova_compute_group": "all",
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "accel_validate_fleet": FLEET,
            "accel_validate_cloud_flavors": True,
            "accel_validate_cloud_auth": nova.auth,
            "accel_validate_fail": False,
            "accel_validate_report": str(report_path),
        },
    )
    assert report["rc"] == 0, report["stderr"] + report["stdout"]
    flavors = {f["name"]: f for f in json.loads(report_path.read_text())["flavors"]["flavors"]}
    assert flavors["g1.h100"]["outcome"] == "fits", flavors["g1.h100"]
    assert flavors["m1.small"]["outcome"] == "fits", flavors["m1.small"]
    assert flavors["x1.huge"]["outcome"] == "no_host"
    assert flavors["x1.huge"]["reason"]["code"] == "too_big"
