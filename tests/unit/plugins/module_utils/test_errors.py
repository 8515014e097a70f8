"""Every error the collection raises on purpose derives from AccelError and carries its result keys."""

import importlib
import inspect
import pkgutil

import pytest

from ansible_collections.accel.openstack.plugins import plugin_utils
from ansible_collections.accel.openstack.plugins.module_utils import _cyborg, _host, _ironic, _nova, _placement
from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.commands import CommandFailed, Outcome
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError, parse_policy

# The boot-time restore script runs on hosts without the collection (standard library only); the
# modules that share its sysfs code catch its RestoreError and raise an AccelError in its place.
STANDALONE = {f"{_host.__name__}.gpu_restore"}


def _error_classes():
    modules = [
        f"{pkg.__name__}.{info.name}"
        for pkg in (_host, _nova, _placement, _cyborg, _ironic)
        for info in pkgutil.iter_modules(pkg.__path__)
    ]
    modules += [
        info.name
        for info in pkgutil.walk_packages(plugin_utils.__path__, plugin_utils.__name__ + ".")
        if not info.ispkg
    ]
    found = []
    for name in sorted(set(modules) - STANDALONE):
        module = importlib.import_module(name)
        for _attr, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == module.__name__:
                found.append(value)
    return found


ERRORS = _error_classes()


def test_the_packages_define_errors():
    names = {cls.__name__ for cls in ERRORS}
    assert {
        "HostRootError",
        "CommandFailed",
        "PolicyError",
        "PlacementError",
        "CyborgError",
        "FleetError",
        "IronicError",
    } <= names


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: cls.__name__)
def test_every_error_class_derives_from_accel_error(cls):
    assert issubclass(cls, AccelError)


def test_command_failed_carries_changed_and_the_command():
    outcome = Outcome("update-grub", "failed", "regenerate grub.cfg", rc=1, stderr="no space left\n")
    result = CommandFailed(outcome).result()
    assert result["changed"] is True and result["commands"] == [outcome.as_dict()]
    assert "update-grub" in result["msg"] and "no space left" in result["msg"]


def test_policy_errors_are_a_result_key_and_the_option_names_the_message():
    with pytest.raises(PolicyError) as caught:
        parse_policy([{"name": "x"}], "policy")
    result = caught.value.result()
    assert result["msg"].startswith("policy: ") and result["errors"] == caught.value.errors
    assert "; ".join(result["errors"]) in result["msg"]
