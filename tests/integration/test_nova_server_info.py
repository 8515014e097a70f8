"""nova_server_info reads the servers of all projects from Nova 34's own compute API."""

import pytest

from tests.support.ansible_runner import run_module

pytestmark = pytest.mark.xdist_group("nova_api")


@pytest.fixture(scope="module")
def nova(nova_api):
    return nova_api


def test_the_servers_of_all_projects_come_from_novas_api(nova):
    result = run_module("nova_server_info", nova.auth)
    assert not result.get("failed"), result.get("msg")
    # a cloud with no instance: Nova answers the all-projects list with none, and nothing changes
    assert result["changed"] is False and result["servers"] == []


def test_a_limit_below_one_is_refused_with_its_value(nova):
    result = run_module("nova_server_info", dict(nova.auth, limit=0))
    assert result["failed"] and "limit is 0" in result["msg"]


def test_an_unreachable_compute_api_says_what_to_give_instead(tmp_path):
    result = run_module(
        "nova_server_info",
        {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9/v2.1", "token": "admin"}},
    )
    assert result["failed"]
    assert "could not list the servers" in result["msg"] and "give instances" in result["msg"]
