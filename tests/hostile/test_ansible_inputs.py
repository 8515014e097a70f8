"""Inputs as Ansible delivers them, and messages a person can read: tagged and lazy values, caches,
credentials, roots given as lists, policy and facts of the wrong shape, MIG layouts."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host import mig_profiles
from ansible_collections.accel.openstack.plugins.module_utils._host.mig import bus_id
from tests.hostile.conftest import no_traceback, nova_conf_d_args, run_play
from tests.support.ansible_runner import BIN, REPO, ansible_env, run_module

CASE_SECONDS = 90
PYTHON_WORDS = ("Exceeds the limit", "Traceback", "object has no attribute", "unexpected keyword", "TypeError")
FLEET = {
    "resource_providers": [
        {
            "uuid": "00000000-0000-0000-0000-000000000001",
            "name": "c1",
            "traits": ["OWNER_NOVA"],
            "inventories": {"VCPU": {"total": 16}, "MEMORY_MB": {"total": 8192}, "DISK_GB": {"total": 100}},
        }
    ]
}
DEVICE = {
    "address": "0000:41:00.0",
    "vendor_id": "10de",
    "product_id": "1eb8",
    "class_code": "030200",
    "numa_node": 0,
    "iommu_group": 1,
    "physfn": None,
    "sriov_totalvfs": None,
    "sriov_numvfs": None,
    "mdev_types": [],
}
T4 = {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough"}


def _readable(text: str) -> None:
    assert not any(words in text for words in PYTHON_WORDS), text


# -- tagged ints, lazy template lists, and numbers of 5,000 digits through ansible-playbook ----------------
def test_templated_values_reach_the_lookups_and_filters_as_plain_data(tmp_path):
    play_vars = {
        "n": 4,
        "fleet": {"resource_providers": [dict(FLEET["resource_providers"][0], disabled="{{ 'false' }}")]},
        "flavors": [{"name": "f1", "vcpus": "{{ n | int }}", "ram": "{{ 256 * n }}", "disk": 1}],
        "filters": "{{ ['ComputeFilter'] + ['NUMATopologyFilter'] }}",
        "facts": {
            "accel_pci_devices": [dict(DEVICE, numa_node="{{ n - 4 }}", mdev_types="{{ [] }}")],
            "accel_numa_nodes": [{"id": 0, "cpus": "{{ range(0, n) | list }}", "memory_mb": "{{ 2048 * n }}"}],
        },
        "policy": [dict(T4, traits="{{ ['CUSTOM_A'] + ['CUSTOM_B'] }}")],
    }
    tasks = [
        {
            "name": "fit",
            "ansible.builtin.set_fact": {
                "fit": "{{ query('accel.openstack.flavor_fit', *flavors, fleet=fleet, enabled_filters=filters) }}"
            },
        },
        {"ansible.builtin.assert": {"that": ["fit[0].outcome == 'fits'", "fit[0].after_filters.hosts == ['c1']"]}},
        {"ansible.builtin.set_fact": {"spec": "{{ facts | accel.openstack.nova_device_spec(policy, 'c1') }}"}},
        {"ansible.builtin.assert": {"that": ["'CUSTOM_A,CUSTOM_B' in spec[0]"]}},
        {"ansible.builtin.set_fact": {"predicted": "{{ {'c1': facts} | accel.openstack.nova_fleet(policy) }}"}},
        {"ansible.builtin.assert": {"that": ["predicted.resource_providers[0].numa_cells[0].memory_mb == 8192"]}},
    ]
    rc, output = run_play(tmp_path, tasks, play_vars)
    assert rc == 0, output[-3000:]


NUMBERS = [
    ("query('accel.openstack.allocation_candidates', 'resources=VCPU:' ~ ('9' * 5000), fleet=fleet)",
     "expected positive integer amount"),
    ("{'name': 'f', 'vcpus': '9' * 5000, 'ram': 1, 'disk': 1} | accel.openstack.nova_request",
     "vcpus is a number of 5,000 digits"),
    ("[{'name': 'q', 'query': 'resources=VCPU:1'}] | accel.openstack.validate_requests(fleet, '9' * 5000)",
     "count_limit is a number of 5,000 digits"),
]  # fmt: skip


def test_numbers_of_5000_digits_are_refused_in_our_words(tmp_path):
    """A lookup term, a flavor and a filter argument (one playbook run, one task each)."""
    tasks = [{"ansible.builtin.debug": {"msg": "{{ " + e + " }}"}, "ignore_errors": True} for e, _n in NUMBERS]
    rc, output = run_play(tmp_path, tasks, {"fleet": FLEET})
    assert rc == 0 and output.count("FAILED!") == len(NUMBERS), output[-3000:]
    for _expression, named in NUMBERS:
        assert named in output, (named, output[-3000:])
    _readable(output)


# -- credentials ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("auth", "named"),
    [
        ({"token": "admin"}, "needs auth.endpoint"),
        ({"endpoint": "http://127.0.0.1:9"}, "needs auth.token"),
        ({"endpoint": "http://127.0.0.1:9", "token": "admin", "username": "x"}, "remove auth.username"),
        ({"endpoint": ["http://127.0.0.1:9"], "token": "admin"}, "auth.endpoint is list"),
    ],
)
def test_token_auth_with_a_missing_extra_or_listed_key_is_named(auth, named):
    result = run_module("placement_info", {"auth_type": "admin_token", "auth": auth})
    assert result.get("failed") and named in result["msg"], result
    no_traceback(result)
    _readable(result["msg"])


def test_a_short_secret_is_refused_in_a_message_ansible_does_not_blank_out(tmp_path):
    """Tokens ``e`` and ``tok``: before, Ansible replaced every ``e`` (every ``tok``) of the refusal."""
    tokens = ["e", "tok"]
    tasks = [
        {
            "accel.openstack.placement_info": {
                "auth_type": "admin_token",
                "auth": {"endpoint": "http://127.0.0.1:9", "token": token},
            },
            "ignore_errors": True,
        }
        for token in tokens
    ]
    rc, output = run_play(tmp_path, tasks, verbosity=3)
    assert rc == 0, output[-2000:]
    for token in tokens:
        assert f"auth.token is {len(token)} characters; a secret shorter than 8" in output, output[-2000:]
        # The secret itself is still never shown: the echoed options carry Ansible's placeholder.
        assert f'"token": "{token}"' not in output
    assert "secret shorter than 8 would make Ansible hide every occurrence" in output


@pytest.mark.parametrize("root", [["/x"], {"path": "/x"}, [""]], ids=["list", "dict", "list-of-empty"])
@pytest.mark.parametrize("module", ["pci_facts", "vfio_pci"])
def test_a_root_that_is_not_one_path_is_named_as_such(module, root):
    result = run_module(module, {"root": root})
    kind = "a list" if isinstance(root, list) else "a mapping"
    assert result.get("failed") and f"root is {kind}, not a path" in result["msg"], result
    assert "does not exist" not in result["msg"]
    no_traceback(result)


# -- nova_config: filter names, policy and facts of the wrong shape ---------------------------------------
@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"enabled_filters": ["PciPassthroughFilter,AvailabilityZoneFilter"]}, "enabled_filters[1]"),
        ({"enabled_filters": ["Pci Filter"]}, "enabled_filters[1]"),
        ({"enabled_filters": ["NUMATopologyFilter\n[DEFAULT]"]}, "enabled_filters[1]"),
        ({"policy": [dict(T4, sriov_numvfs=10**30)]}, "sriov_numvfs"),
        ({"policy": [dict(T4, mode="mig", mig_layout=[{"profile": "1g.10gb", "count": 2.5}])]}, "count 2.5"),
        ({"policy": [dict(T4, mode="mig", mig_layout=[{"profile": "1g.10gb", "count": True}])]}, "count True"),
        ({"policy": [dict(T4, mode="mig", mig_layout=[{"profile": "1g.10gb", "placment": 0}])]}, "placment"),
        ({"hosts": [{"name": "c1", "facts": {"accel_pci_devices": "0000:41:00.0"}}]}, "accel_pci_devices is a string"),
        ({"hosts": [{"name": "c1", "facts": {"accel_pci_devices": ["0000:41:00.0"]}}]}, "accel_pci_devices[0]"),
        ({"hosts": [{"name": "c1", "facts": {"accel_pci_devices": [dict(DEVICE, numa_node="x")]}}]}, "numa_node"),
        ({"hosts": [{"name": "c1", "facts": {"accel_pci_devices": [dict(DEVICE, address=5)]}}]}, ".address"),
        ({"hosts": [{"name": "c1", "facts": {}, "compute_node_inventories": {"CUSTOM_X": "4"}}]}, "CUSTOM_X needs"),
        ({"hosts": [{"name": "c1", "facts": {}, "compute_node_inventories": {"CUSTOM_X": {"total": 2**40}}}]},
         "total from 1 to 2147483647"),
        ({"hosts": [{"name": "c1", "facts": {},
                     "compute_node_inventories": {"CUSTOM_X": {"total": 4, "reserved": "x"}}}]}, "reserved must be"),
        ({"hosts": [{"name": "c1", "facts": {}, "provider_config": [{"identification": {"name": ["x"]}}]}]},
         "identification values must be text"),
    ],
)  # fmt: skip
def test_nova_config_refuses_values_of_the_wrong_shape_and_writes_nothing(tmp_path, args, named):
    root = tmp_path / "root"
    root.mkdir()
    result = run_module("nova_config", nova_conf_d_args(root, **{"policy": [T4], **args}))
    assert result.get("failed") and named in result["msg"], result
    no_traceback(result)
    assert not any(files for _d, _s, files in os.walk(root)), "nothing may be written"


def test_an_enabled_filter_list_converges_instead_of_growing(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    args = nova_conf_d_args(root, policy=[T4], enabled_filters=["PciPassthroughFilter", "NUMATopologyFilter"])
    first = run_module("nova_config", args)
    second = run_module("nova_config", args)
    assert not first.get("failed") and not second.get("failed") and second["changed"] is False, second


# -- MIG layouts and bus ids -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("entry", "named"),
    [
        ({"profile": "1g.5gb", "count": 2.5}, "count 2.5"),
        ({"profile": "1g.5gb", "count": True}, "count True"),
        ({"profile": "1g.5gb", "count": float("inf")}, "count inf"),
        ({"profile": "1g.5gb", "count": "9" * 5000}, "is not a whole number"),
        ({"profile": "1g.5gb", "count": 1, "placment": 0}, "unknown key 'placment'"),
    ],
)
def test_a_mig_layout_refuses_counts_that_are_not_whole_numbers_and_unknown_keys(entry, named):
    model = mig_profiles.model_for("20b0", "NVIDIA A100-SXM4-40GB")
    with pytest.raises(mig_profiles.MigLayoutError) as caught:
        mig_profiles.plan_layout(model, [entry], label="layout")
    assert named in str(caught.value), str(caught.value)
    _readable(str(caught.value))


@pytest.mark.parametrize(
    ("address", "expected"),
    [("0000:3b:00.0", "00000000:3B:00.0"), ("10000:01:00.0", "00010000:01:00.0"), ("ffff:c1:00.1", "0000FFFF:C1:00.1")],
)
def test_nvidia_smi_bus_ids_keep_every_pci_domain_in_eight_digits(address, expected):
    assert bus_id(address) == expected


# -- the fleet inventory's caches ------------------------------------------------------------------------
def _inventory(tmp_path, facts_by_host: dict, cache: bool = False) -> tuple[subprocess.CompletedProcess, str]:
    facts_dir = tmp_path / "facts"
    facts_dir.mkdir(exist_ok=True)
    for host, facts in facts_by_host.items():  # written as Ansible's own jsonfile fact cache writes them
        _cache(facts_dir).set(host, facts)
    config = {
        "plugin": "accel.openstack.fleet",
        "sources": ["facts"],
        "fact_cache_plugin": "ansible.builtin.jsonfile",
        "fact_cache_connection": str(facts_dir),
    }
    if cache:
        config.update(cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "inv"))
    source = tmp_path / "gpu.fleet.yml"
    source.write_text(yaml.safe_dump(config))
    env = {k: v for k, v in ansible_env().items() if not k.startswith("ANSIBLE_CACHE_PLUGIN")}
    env["ANSIBLE_INVENTORY_UNPARSED_FAILED"] = "true"
    proc = subprocess.run(
        [os.path.join(BIN, "ansible-inventory"), "-i", str(source), "--list"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return proc, str(tmp_path / "inv")


def _cache(directory, prefix: str = ""):
    """Ansible's jsonfile cache plugin on ``directory`` (an inventory cache's keys start ansible_inventory_)."""
    from ansible.plugins.loader import cache_loader

    return cache_loader.get("jsonfile", _uri=str(directory), _prefix=prefix, _timeout=0)


GOOD = {"accel_pci_devices": [DEVICE], "accel_numa_nodes": [{"id": 0, "cpus": [0, 1], "memory_mb": 1024}]}


@pytest.mark.parametrize(
    ("facts", "named"),
    [
        ({**GOOD, "accel_numa_nodes": "0-1"}, "accel_numa_nodes is a string"),
        ({**GOOD, "accel_pci_devices": [dict(DEVICE, vendor_id=["10de"])]}, "accel_pci_devices[0].vendor_id"),
    ],
)
def test_a_poisoned_fact_cache_entry_is_named_by_host_and_fact(tmp_path, facts, named):
    proc, _cache = _inventory(tmp_path, {"gpu1": GOOD, "gpu2": facts})
    assert proc.returncode != 0
    assert "fact cache entry of gpu2" in proc.stderr and named in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("poison", ['{"facts": "x", "placement": null}', '{"facts": {"gpu1": 5}, "placement": null}'])
def test_a_poisoned_inventory_cache_is_read_again_from_the_sources(tmp_path, poison):
    first, cache_dir = _inventory(tmp_path, {"gpu1": GOOD}, cache=True)
    assert first.returncode == 0, first.stderr[-2000:]
    cache = _cache(cache_dir, "ansible_inventory_")
    assert cache.keys()
    for key in list(cache.keys()):  # noqa: SIM118 - a cache plugin, not a dict
        cache.set(key, json.loads(poison))
    second, _dir = _inventory(tmp_path, {"gpu1": GOOD}, cache=True)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "reading the sources again" in second.stderr, second.stderr[-2000:]
    assert "gpu1" in json.loads(second.stdout)["_meta"]["hostvars"]
