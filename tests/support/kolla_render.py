"""Render nova.conf the way Kolla-Ansible 23 does: its own role templates and ``merge_configs`` action.

Runs ``ansible-playbook`` from the kolla venv (``.venv-kolla``, Python >= 3.12, requirements/kolla.txt)
with Kolla-Ansible's ``group_vars/all`` and the ``nova`` / ``nova-cell`` role defaults loaded, so the
template sees what a real deployment sees; ``globals`` are passed as extra vars (as kolla-ansible passes
globals.yml). For every host the playbook runs Kolla's own merge with Kolla's source order:

- nova-compute and nova-conductor (role ``nova-cell``): template, ``global.conf``, ``nova.conf``,
  ``nova/<service>.conf``, ``nova/<host>/nova.conf``, ``nova/<host>/<service>.conf``;
- nova-api and nova-scheduler (role ``nova``): the same without the per-host per-service file.

It also evaluates ``nova_cell_compute_provider_config`` per compute host and writes it with Kolla's own
expression (``to_nice_yaml(indent=2)``), as the nova-cell role copies it into the container.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KOLLA_VENV = os.environ.get("ACCEL_KOLLA_VENV", os.path.join(ROOT, ".venv-kolla"))
# Kolla's multinode groups the templates and group_vars look into (all on the control hosts).
SHARED_GROUPS = (
    "rabbitmq",
    "mariadb",
    "memcached",
    "loadbalancer",
    "keystone",
    "glance-api",
    "placement-api",
    "neutron-server",
    "cinder-api",
    "nova-api",
    "nova-scheduler",
    "nova-conductor",
)
CELL_SERVICES = ("nova-compute", "nova-conductor")
API_SERVICES = ("nova-api", "nova-scheduler")
SERVICES = CELL_SERVICES + API_SERVICES

# What passwords.yml and the network facts would give; the templates only need them to be strings.
MINIMAL_VARS = {
    "kolla_internal_vip_address": "192.0.2.10",
    "kolla_external_vip_address": "192.0.2.10",
    "kolla_same_external_internal_vip": True,
    "api_interface_address": "192.0.2.11",
    "migration_interface_address": "192.0.2.11",
    "network_interface": "eth0",
    "api_interface": "eth0",
    "network_address_family": "ipv4",
    "api_address_family": "ipv4",
    "ansible_facts": {
        "hostname": "host",
        "nodename": "host",
        "processor_vcpus": 8,
        "architecture": "x86_64",
        "memtotal_mb": 65536,
        "distribution": "Debian",
        "os_family": "Debian",
        "eth0": {"active": True, "ipv4": {"address": "192.0.2.11"}, "ipv6": []},
    },
    "database_password": "x",
    "nova_database_password": "x",
    "nova_api_database_password": "x",
    "nova_keystone_password": "x",
    "neutron_keystone_password": "x",
    "placement_keystone_password": "x",
    "cinder_keystone_password": "x",
    "ironic_keystone_password": "x",
    "metadata_secret": "x",
    "rabbitmq_password": "x",
    "osprofiler_secret": "x",
    "libvirt_sasl_password": "x",
    "memcache_secret_key": "x",
    "keystone_admin_password": "x",
    "valkey_master_password": "x",
    "nova_compute_virt_type": "kvm",
}

PLAYBOOK = """
- name: Render nova.conf with Kolla-Ansible's templates and merge_configs
  hosts: all
  gather_facts: false
  connection: local
  vars_files: {vars_files}
  tasks:
    - name: Output directories
      ansible.builtin.file:
        path: "{{{{ accel_out }}}}/{{{{ inventory_hostname }}}}"
        state: directory
        mode: "0755"

    - name: nova-cell services (Kolla's nova-cell role order)
      vars:
        service_name: "{{{{ item }}}}"
      merge_configs:
        sources:
          - "{{{{ accel_kolla_share }}}}/roles/nova-cell/templates/nova.conf.j2"
          - "{{{{ node_custom_config }}}}/global.conf"
          - "{{{{ node_custom_config }}}}/nova.conf"
          - "{{{{ node_custom_config }}}}/nova/{{{{ item }}}}.conf"
          - "{{{{ node_custom_config }}}}/nova/{{{{ inventory_hostname }}}}/nova.conf"
          - "{{{{ node_custom_config }}}}/nova/{{{{ inventory_hostname }}}}/{{{{ item }}}}.conf"
        dest: "{{{{ accel_out }}}}/{{{{ inventory_hostname }}}}/{{{{ item }}}}.conf"
        mode: "0644"
      loop: "{{{{ accel_services[inventory_hostname] | select('in', {cell}) | list }}}}"

    - name: nova services (Kolla's nova role order)
      vars:
        service_name: "{{{{ item }}}}"
      merge_configs:
        sources:
          - "{{{{ accel_kolla_share }}}}/roles/nova/templates/nova.conf.j2"
          - "{{{{ node_custom_config }}}}/global.conf"
          - "{{{{ node_custom_config }}}}/nova.conf"
          - "{{{{ node_custom_config }}}}/nova/{{{{ item }}}}.conf"
          - "{{{{ node_custom_config }}}}/nova/{{{{ inventory_hostname }}}}/nova.conf"
        dest: "{{{{ accel_out }}}}/{{{{ inventory_hostname }}}}/{{{{ item }}}}.conf"
        mode: "0644"
      loop: "{{{{ accel_services[inventory_hostname] | select('in', {api}) | list }}}}"

    - name: Provider config as Kolla's nova-cell role copies it
      ansible.builtin.copy:
        content: "{{{{ nova_cell_compute_provider_config | to_nice_yaml(indent=2) }}}}"
        dest: "{{{{ accel_out }}}}/{{{{ inventory_hostname }}}}/provider_config.yaml"
        mode: "0644"
      when:
        - "'nova-compute' in accel_services[inventory_hostname]"
        - nova_cell_compute_provider_config is defined
"""


def kolla_share() -> str:
    return os.path.join(KOLLA_VENV, "share", "kolla-ansible", "ansible")


def available() -> bool:
    return os.path.exists(os.path.join(KOLLA_VENV, "bin", "ansible-playbook")) and os.path.isdir(kolla_share())


def _vars_files(share: str) -> list[str]:
    group_vars = os.path.join(share, "group_vars", "all")
    files = sorted(os.path.join(group_vars, name) for name in os.listdir(group_vars) if name.endswith(".yml"))
    files += [os.path.join(share, "roles", role, "defaults", "main.yml") for role in ("nova", "nova-cell")]
    return files


def globals_args(kolla_config_path: str | None) -> list[str]:
    if not kolla_config_path:
        return []
    files = [os.path.join(kolla_config_path, "globals.yml"), *kolla_vars_files(kolla_config_path)]
    return [arg for path in files if os.path.exists(path) for arg in ("-e", "@" + path)]


def kolla_vars_files(config_path: str) -> list[str]:
    """The files kolla-ansible passes as ``-e @file`` after globals.yml and passwords.yml: its own
    ``_get_vars_files`` (globals.d/*.yml, *.yaml, *.json, sorted), run in the kolla venv."""
    code = (
        "import json, sys; from kolla_ansible.ansible import _get_vars_files; "
        "print(json.dumps(_get_vars_files(sys.argv[1])))"
    )
    proc = subprocess.run(
        [os.path.join(KOLLA_VENV, "bin", "python"), "-c", code, config_path],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def render(
    config_dir: str,
    hosts: dict[str, list[str]],
    globals_: dict | None = None,
    groups: dict | None = None,
    kolla_config_path: str | None = None,
) -> dict[str, dict[str, str]]:
    """``hosts``: inventory hostname -> the Nova services it runs. Returns host -> service -> final text
    (``provider_config`` holds the YAML Kolla copies, when ``nova_cell_compute_provider_config`` is set).
    With ``kolla_config_path`` (Kolla's /etc/kolla), its globals.yml and globals.d files are passed after
    ``globals_`` as kolla-ansible passes them (``-e @globals.yml``, then ``-e @<file>`` per globals.d file)."""
    share = kolla_share()
    groups = groups or {
        "compute": [h for h, services in hosts.items() if "nova-compute" in services],
        "control": [h for h, services in hosts.items() if "nova-compute" not in services],
    }
    controllers = groups["control"]
    for group in SHARED_GROUPS:
        groups.setdefault(group, controllers)
    with tempfile.TemporaryDirectory(prefix="kolla-render-") as work:
        out = os.path.join(work, "out")
        inventory = {"all": {"children": {g: {"hosts": {h: {} for h in members}} for g, members in groups.items()}}}
        with open(os.path.join(work, "inventory.yml"), "w") as handle:
            yaml.safe_dump(inventory, handle)
        extra = dict(MINIMAL_VARS)
        extra.update(globals_ or {})
        extra.update(node_custom_config=config_dir, accel_out=out, accel_kolla_share=share, accel_services=dict(hosts))
        with open(os.path.join(work, "extra.json"), "w") as handle:
            json.dump(extra, handle)
        with open(os.path.join(work, "render.yml"), "w") as handle:
            handle.write(
                PLAYBOOK.format(
                    vars_files=json.dumps(_vars_files(share)), cell=list(CELL_SERVICES), api=list(API_SERVICES)
                )
            )
        env = dict(os.environ)
        for key in [k for k in env if k.startswith("ANSIBLE_")]:
            del env[key]
        env.update(
            ANSIBLE_ACTION_PLUGINS=os.path.join(share, "action_plugins"),
            ANSIBLE_FILTER_PLUGINS=":".join(
                [os.path.join(share, "filter_plugins"), os.path.join(share, "roles", "nova-cell", "filter_plugins")]
            ),
            ANSIBLE_LOCAL_TEMP=os.path.join(work, "tmp"),
            ANSIBLE_HOME=os.path.join(work, "home"),
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_PYTHON_INTERPRETER=os.path.join(KOLLA_VENV, "bin", "python"),
        )
        proc = subprocess.run(
            [
                os.path.join(KOLLA_VENV, "bin", "ansible-playbook"),
                "-i",
                os.path.join(work, "inventory.yml"),
                "-e",
                "@" + os.path.join(work, "extra.json"),
                *globals_args(kolla_config_path),
                os.path.join(work, "render.yml"),
            ],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"Kolla-Ansible's render failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}")
        result: dict[str, dict[str, str]] = {}
        for host in hosts:
            result[host] = {}
            host_dir = os.path.join(out, host)
            for name in sorted(os.listdir(host_dir)):
                with open(os.path.join(host_dir, name)) as handle:
                    key = name[: -len(".conf")] if name.endswith(".conf") else name[: -len(".yaml")]
                    result[host][key] = handle.read()
        return result
