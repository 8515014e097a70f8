"""Fix texts name the collection's playbooks the way the run that reports them was started."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud
from ansible_collections.accel.openstack.plugins.plugin_utils.playbooks import (
    PlaybookFormError,
    name_playbooks,
    playbook,
)
from tests.support import audit_cloud as world


def test_each_form_names_the_playbook():
    assert playbook("nova_config", "path") == "playbooks/nova_config.yml"
    assert playbook("nova_config", "fqcn") == "accel.openstack.nova_config"
    with pytest.raises(PlaybookFormError, match="'installed' is not one of path, fqcn"):
        playbook("nova_config", "installed")


def test_only_the_collections_playbook_paths_are_renamed():
    text = (
        "run playbooks/nova_config.yml --check --diff, then playbooks/prepare_hosts.yml for this host "
        "(see playbooks/validate.yml's table); keep /srv/playbooks/site.yml, my/playbooks/x.yml, "
        "playbooks/notes.yml.bak and playbooks/tasks/require_hosts.yml"
    )
    assert name_playbooks(text, "fqcn") == (
        "run accel.openstack.nova_config --check --diff, then accel.openstack.prepare_hosts for this host "
        "(see accel.openstack.validate's table); keep /srv/playbooks/site.yml, my/playbooks/x.yml, "
        "playbooks/notes.yml.bak and playbooks/tasks/require_hosts.yml"
    )
    assert name_playbooks(text, "path") == text


@pytest.fixture(scope="module")
def drifted(tmp_path_factory):
    """The healthy cloud of tests/support/audit_cloud.py with one drift (t4-01's devices unmanaged)."""
    cloud = copy.deepcopy(world.healthy(str(tmp_path_factory.mktemp("cloud"))))
    pci = cloud["deployed"]["t4-01"]["compute"]["pci"]
    pci["device_spec"] = [
        s.replace('"CUSTOM_NVIDIA_T4"', '"CUSTOM_NVIDIA_T4", "managed": "no"') for s in pci["device_spec"]
    ]
    return cloud


def _drift(cloud, **options) -> dict:
    result = audit_cloud(
        cloud["hosts"], cloud["deployed"], cloud["fleet"], cloud["flavors"], cloud["policy"], **options
    )
    (item,) = [f for f in result["findings"] if f["code"] == "nova_config_drift"]
    return item


def test_an_installed_collections_audit_names_its_playbooks_by_fqcn(drifted):
    from_checkout = _drift(drifted)
    assert "run playbooks/nova_config.yml --check --diff" in from_checkout["fix"]
    installed = _drift(drifted, playbook_form="fqcn")
    assert installed["fix"] == from_checkout["fix"].replace("playbooks/nova_config.yml", "accel.openstack.nova_config")
    assert "playbooks/" not in installed["fix"] and "accel.openstack.nova_config --check --diff" in installed["fix"]
    assert installed["message"] == from_checkout["message"]
    with pytest.raises(PlaybookFormError, match="fqcn"):
        _drift(drifted, playbook_form="FQCN")
