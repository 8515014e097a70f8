"""accel_nova_libvirt (nova_config's hosts[].libvirt) is the operator's text that becomes a Nova config line:
a value that would add a line or a section, reach Kolla-Ansible's Jinja rendering or oslo.config's references,
or a name that is no [libvirt] option, fails with a message naming it and writes nothing, in both layouts."""

from __future__ import annotations

import os

import pytest

from tests.hostile.conftest import no_traceback, nova_conf_d_args
from tests.support.ansible_runner import run_module

INJECTED = "rabbit://guest:SECRETPASS@10.0.0.1"
HOSTILE = [
    ("live_migration_scheme", f"tls\n[DEFAULT]\ntransport_url = {INJECTED}"),
    ("live_migration_scheme", f"tls\r\ntransport_url = {INJECTED}"),
    ("live_migration_scheme", "tls\u2028x"),
    ("live_migration_scheme", "{{ lookup('pipe', 'cat /etc/shadow') }}"),
    ("live_migration_scheme", "{% include '/etc/shadow' %}"),
    ("migration_inbound_addr", "${DEFAULT.transport_url}"),
    ("cpu_models", ["Icelake-Server", f"x\n[DEFAULT]\ntransport_url = {INJECTED}"]),
    ("cpu_models", {"nested": "dict"}),
    ("live_migration_inbound_addr", "10.0.0.1/system"),
    ("live_migration_downtime", "100; rm -rf /"),
    ("live_migration_downtime", 10**30),
    ("live_migration_permit_post_copy", ["true"]),
    ("rbd_secret_uuid", INJECTED),
    ("connection_uri", f"qemu+ssh://{INJECTED}/system"),
    (f"x\n[DEFAULT]\ntransport_url = {INJECTED}", "1"),
    ("live_migration_scheme", "x" * 100_000),
]


@pytest.mark.parametrize("layout", ["nova_conf_d", "kolla"])
@pytest.mark.parametrize(("name", "value"), HOSTILE)
def test_a_hostile_option_fails_naming_it_and_writes_nothing(tmp_path, layout, name, value):
    host = {"name": "c1", "facts": {}, "libvirt": {name: value}}
    extra = {"hosts": [host], "services": ["compute"]}
    if layout == "kolla":
        extra.update(layout="kolla", host=None, config_dir="/etc/kolla/config")
    root = tmp_path / "root"
    root.mkdir()
    result = run_module("nova_config", nova_conf_d_args(root, **extra), diff=True)
    no_traceback(result)
    assert result.get("failed") and not result.get("changed"), result
    intro, error = result["msg"].split("\n")  # the value is shown escaped: one error, on one line
    assert intro == "the device policy cannot be rendered:" and error.startswith("c1: accel_nova_libvirt")
    if name in ("rbd_secret_uuid", "connection_uri"):
        assert "SECRETPASS" not in result["msg"]  # a credential's value is never repeated
    assert len(error) < 700
    assert not [f for _d, _ds, files in os.walk(root) for f in files]
