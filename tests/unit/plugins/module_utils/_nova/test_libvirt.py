"""Nova's [libvirt] options per host (accel_nova_libvirt): names and values checked as Nova 34 defines them,
what is written read back by oslo.config with Nova's own option definitions, the vGPU default, and the
live-migration check and the audit agreeing with what is rendered."""

import copy
import subprocess

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import update_text
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova import libvirt_options
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import (
    HostInput,
    Options,
    RenderError,
    render_fleet,
)
from ansible_collections.accel.openstack.plugins.module_utils._nova.files import plan
from ansible_collections.accel.openstack.plugins.module_utils._nova.libvirt import (
    POST_COPY,
    REFUSED,
    libvirt_section,
    written_value,
)
from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud
from ansible_collections.accel.openstack.plugins.plugin_utils.migration import migration_targets
from tests.support import migration_fleet
from tests.support.fake_sysfs import build_root
from tests.support.nova_venv import REPO, ask, nova_python

OPTIONS = libvirt_options.OPTIONS
GENERATOR = f"{REPO}/tests/support/gen_libvirt_options.py"
with open("inventories/demo/group_vars/all/device_policy.yml") as handle:
    DEMO = yaml.safe_load(handle)["accel_device_policy"]
A16_GPU = "0000:84:00.4"  # a VF of the A16 profile that the demo policy gives nvidia-735


@pytest.fixture(scope="module")
def facts_of(tmp_path_factory):
    cache = {}

    def load(profile):
        if profile not in cache:
            cache[profile] = discover(build_root(profile, str(tmp_path_factory.mktemp(profile))))[0]
        return copy.deepcopy(cache[profile])

    return load


# -- names and values --------------------------------------------------------------------------------------------
def test_the_table_is_what_novas_option_definitions_generate():
    try:
        python = nova_python()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    generated = subprocess.run([python, GENERATOR, "--print"], capture_output=True, text=True, timeout=120, check=True)
    with open(libvirt_options.__file__, encoding="utf-8") as handle:
        assert generated.stdout == handle.read(), "run `make names`: the [libvirt] table differs from Nova's options"
    assert libvirt_options.NOVA_VERSION == "34.0.0" and len(OPTIONS) == 103
    assert OPTIONS[POST_COPY] == ("bool", None, None, None, False, ())
    assert OPTIONS["live_migration_downtime"] == ("int", None, 100, None, False, ())
    assert OPTIONS["rx_queue_size"] == ("int", (256, 512, 1024), None, None, False, ())
    assert OPTIONS["cpu_models"] == ("list", None, None, None, False, ("cpu_model",))


def test_options_are_written_in_name_order_as_nova_reads_each_kind():
    section, errors, warnings = libvirt_section(
        "gpu-01",
        {
            "live_migration_timeout_action": "force_complete",
            "live_migration_downtime": "1000",
            "live_migration_permit_auto_converge": "Yes",
            "cpu_models": ["Cascadelake-Server", "Icelake-Server"],
            "cpu_model_extra_flags": "pcid, -mpx",
            "live_migration_inbound_addr": "gpu-01.migration.example.org",
            "hw_machine_type": [],
        },
        vgpu=False,
    )
    assert errors == [] and warnings == []
    assert section == {
        "cpu_model_extra_flags": ["pcid,-mpx"],
        "cpu_models": ["Cascadelake-Server,Icelake-Server"],
        "hw_machine_type": [""],
        "live_migration_downtime": ["1000"],
        "live_migration_inbound_addr": ["gpu-01.migration.example.org"],
        "live_migration_permit_auto_converge": ["true"],
        "live_migration_timeout_action": ["force_complete"],
    }
    assert list(section) == sorted(section)


@pytest.mark.parametrize(
    ("given", "error"),
    [
        (
            {"live_migration_permit_post_copi": False},
            "gpu-01: accel_nova_libvirt.live_migration_permit_post_copi is not a [libvirt] option of Nova 34.0.0: use "
            "an option name from Nova's configuration reference ([libvirt] group), or remove it; did you mean "
            "live_migration_permit_post_copy?",
        ),
        (
            {"cpu_model": "Icelake-Server"},
            "gpu-01: accel_nova_libvirt.cpu_model is a deprecated name; Nova 34.0.0 reads it as cpu_models: use "
            "cpu_models",
        ),
        (
            {"live_migration_downtime": 50},
            "gpu-01: accel_nova_libvirt.live_migration_downtime = 50 must be at least 100; give a whole number as Nova "
            "34.0.0 reads it",
        ),
        (
            {"rx_queue_size": 300},
            "gpu-01: accel_nova_libvirt.rx_queue_size = 300 must be one of 256, 512, 1024; give one of 256, 512, 1024 "
            "as Nova 34.0.0 reads it",
        ),
        (
            {"live_migration_timeout_action": "Abort"},
            'gpu-01: accel_nova_libvirt.live_migration_timeout_action = "Abort" must be one of abort, force_complete '
            "(exactly so written); give one of abort, force_complete as Nova 34.0.0 reads it",
        ),
        (
            {POST_COPY: "maybe"},
            'gpu-01: accel_nova_libvirt.live_migration_permit_post_copy = "maybe" must be true or false; give true '
            "or false as Nova 34.0.0 reads it",
        ),
        (
            {"live_migration_bandwidth": True},
            "gpu-01: accel_nova_libvirt.live_migration_bandwidth = true must be a whole number, not true or false; "
            "give a whole number as Nova 34.0.0 reads it",
        ),
        (
            {"live_migration_inbound_addr": "10.0.0"},
            'gpu-01: accel_nova_libvirt.live_migration_inbound_addr = "10.0.0" is not an IP address, and as a host '
            "name its last label has no letter; give an IP address or a host name as Nova 34.0.0 reads it",
        ),
        (
            {"live_migration_scheme": "tls\n[DEFAULT]\ndebug = true"},
            'gpu-01: accel_nova_libvirt.live_migration_scheme = "tls\\n[DEFAULT]\\ndebug = true" contains the control '
            "character '\\n'; a value must stay on one line; give a string as Nova 34.0.0 reads it",
        ),
        (
            {"migration_inbound_addr": "$my_ip"},
            "gpu-01: accel_nova_libvirt.migration_inbound_addr = \"$my_ip\" contains '$', which oslo.config reads as "
            "a reference to another option; give the value itself; give a string as Nova 34.0.0 reads it",
        ),
        (
            {"live_migration_scheme": "{{ lookup('pipe', 'id') }}"},
            "gpu-01: accel_nova_libvirt.live_migration_scheme = \"{{ lookup('pipe', 'id') }}\" contains a Jinja "
            "marker ({{, {% or {#), which Kolla-Ansible would render; give the value itself; give a string as Nova "
            "34.0.0 reads it",
        ),
        (
            {"cpu_models": ["Icelake-Server,pcid"]},
            'gpu-01: accel_nova_libvirt.cpu_models = ["Icelake-Server,pcid"] item 1 ("Icelake-Server,pcid") contains '
            "a comma, which would split it in two; give each item on its own; give a list of strings as Nova 34.0.0 "
            "reads it",
        ),
        (
            {"connection_uri": "qemu+tcp://10.0.0.5/system"},
            "gpu-01: accel_nova_libvirt.connection_uri is not written by this collection: it chooses the libvirt "
            "daemon nova-compute talks to, which the deployment owns (Kolla-Ansible points it at its nova_libvirt "
            "container); a wrong value stops nova-compute; remove it from accel_nova_libvirt",
        ),
    ],
)
def test_a_bad_name_or_value_is_refused_naming_host_option_and_fix(given, error):
    section, errors, _warnings = libvirt_section("gpu-01", given, vgpu=False)
    assert errors == [error]
    assert section == {}


def test_credentials_and_the_libvirt_connection_are_refused_whatever_their_value():
    assert sorted(REFUSED) == ["connection_uri", "live_migration_uri", "rbd_secret_uuid", "rbd_user"]
    for name in REFUSED:
        assert name in OPTIONS  # real Nova options, refused by decision
        for value in ("", "x", None):
            _section, errors, _warnings = libvirt_section("gpu-01", {name: value}, vgpu=False)
            assert len(errors) == 1 and "is not written by this collection" in errors[0], name
    _section, errors, _warnings = libvirt_section("gpu-01", {"rbd_secret_uuid": "457eb676-33da-42ec-9a8c"}, False)
    assert "457eb676" not in errors[0]  # the value of a credential is not repeated


def test_every_error_is_reported_at_once_and_a_non_dict_is_refused():
    _section, errors, _warnings = libvirt_section("gpu-01", {"nope": 1, "rx_queue_size": 1, 5: 1}, vgpu=True)
    assert len(errors) == 3
    assert errors[0].startswith("gpu-01: accel_nova_libvirt: option name 5 is not a string")
    _section, errors, _warnings = libvirt_section("gpu-01", ["live_migration_downtime"], vgpu=False)
    assert errors == [
        "gpu-01: accel_nova_libvirt is list; give a dict of Nova [libvirt] option names and values, e.g. "
        "{live_migration_permit_post_copy: false}"
    ]


def test_a_deprecated_option_is_written_with_a_warning():
    section, errors, warnings = libvirt_section("gpu-01", {"live_migration_tunnelled": False}, vgpu=False)
    assert section == {"live_migration_tunnelled": ["false"]} and errors == []
    assert warnings == [
        "gpu-01: accel_nova_libvirt.live_migration_tunnelled is deprecated for removal in Nova 34.0.0: it is "
        "written, but a later Nova refuses or ignores it; see Nova's configuration reference for what replaces it"
    ]


# -- the vGPU default --------------------------------------------------------------------------------------------
def test_a_vgpu_host_gets_post_copy_off_unless_the_operator_says_otherwise():
    assert libvirt_section("a16", {}, vgpu=True) == ({POST_COPY: ["false"]}, [], [])
    assert libvirt_section("a16", None, vgpu=True) == ({POST_COPY: ["false"]}, [], [])
    assert libvirt_section("h100", {}, vgpu=False) == ({}, [], [])
    # null: the operator takes the key out of the collection's hands, default included
    assert libvirt_section("a16", {POST_COPY: None}, vgpu=True) == ({}, [], [])
    section, errors, warnings = libvirt_section("a16", {POST_COPY: True, "live_migration_downtime": 800}, vgpu=True)
    assert section == {"live_migration_downtime": ["800"], POST_COPY: ["true"]} and errors == []
    assert warnings == [
        "a16: accel_nova_libvirt.live_migration_permit_post_copy is true on a host that offers vGPUs: Nova's vGPU "
        "documentation requires it false for live migration, so the migration check reports its vGPU instances as "
        "post_copy_permitted; set it false (or remove it: the collection then writes false)"
    ]
    # a host without vGPUs takes the operator's true silently: post-copy is the operator's call there
    assert libvirt_section("h100", {POST_COPY: True}, vgpu=False) == ({POST_COPY: ["true"]}, [], [])


def test_host_groups_get_their_own_values_and_only_the_vgpu_host_the_default(facts_of):
    hosts = [
        HostInput("vgpu-a16", facts_of("vgpu-a16")),
        HostInput("hgx-h100", facts_of("hgx-h100"), libvirt={"live_migration_timeout_action": "force_complete"}),
    ]
    rendering = render_fleet(hosts, DEMO, Options())
    assert rendering.compute["vgpu-a16"]["libvirt"] == {POST_COPY: ["false"]}
    assert rendering.compute["hgx-h100"]["libvirt"] == {"live_migration_timeout_action": ["force_complete"]}
    hosts[1].libvirt = {"live_migration_timeout_action": "later", "virt_typ": "kvm"}
    with pytest.raises(RenderError) as caught:
        render_fleet(hosts, DEMO, Options())
    assert [e.split(" = ")[0].split(" is ")[0] for e in caught.value.errors] == [
        "hgx-h100: accel_nova_libvirt.live_migration_timeout_action",
        "hgx-h100: accel_nova_libvirt.virt_typ",
    ]


# -- Nova reads back what is written -----------------------------------------------------------------------------
def _candidates(name: str) -> list:
    kind, choices, minimum, maximum = OPTIONS[name][:4]
    if kind == "bool":
        return [True, False, "yes", "Off", "1", "0", "maybe", 1, ""]
    if kind == "int":
        values = [0, -1, 7, " 42 ", "4x", True, 2**40, "", 1.5]
        values += [b + d for b in (minimum, maximum) if b is not None for d in (-1, 0, 1)]
        return values + list(choices or ())
    if kind == "list":
        return [["a", "b"], "a, b", [], ["a,b"], ["", "x"], [1], "x", ["#c", ";d", "é"]]
    if kind == "host":
        return ["10.0.0.1", "::1", "fd00::5", "node-1.example.org", "node_1", "node.", "1.2.3", "-bad", "256.1.1.1",
                "fe80::1%eth0", "", "a" * 64, "x.123", "10.0.0.01"]  # fmt: skip
    values = ["", "plain", "a b", "#hash", ";semi", "é", "$my_ip", '"q"', "'q", " lead", "x\ny", "{{ x }}", 5, "a=b"]
    return values + list(choices or ()) + [c.upper() for c in choices or ()]


def _naive_text(value: object) -> str:
    """The text an unchecked value would become in the file (how the refusals are compared with oslo.config's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def _expected(name: str, value: object) -> object:
    kind = OPTIONS[name][0]
    if kind == "bool":
        return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "yes", "on", "1")
    if kind == "int":
        return int(str(value).strip())
    if kind == "list":
        return [v.strip() for v in value.split(",")] if isinstance(value, str) else list(value)
    return value


@pytest.mark.nova
def test_every_accepted_value_reads_back_in_nova_as_given_and_what_nova_refuses_is_refused():
    try:
        nova_python()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    pairs = [(name, value) for name in OPTIONS if name not in REFUSED for value in _candidates(name)]
    accepted, refused = {}, []
    for name, value in pairs:
        text, problem = written_value(name, value)
        if problem:
            refused.append((name, value))
        else:
            accepted.setdefault(name, []).append((value, text))
    # each accepted value through a real file: one file per round, every option at most once in it
    rounds = max(len(v) for v in accepted.values())
    cases = []
    for number in range(rounds):
        chosen = {name: values[number] for name, values in accepted.items() if number < len(values)}
        keys = {name: [text] for name, (_value, text) in chosen.items()}
        body = update_text("", {"libvirt": keys}, "nova.conf.d/50-accel-openstack.conf")
        cases.append({"id": number, "files": {"nova.conf.d/50-accel-openstack.conf": body}, "chosen": chosen})
    types = [{"id": i, "kind": "type", "name": n, "value": _naive_text(v)} for i, (n, v) in enumerate(refused)]
    answers = ask("tests/support/nova_libvirt_oracle.py", cases + types, 300, "Nova [libvirt] oracle")
    for case, answer in zip(cases, answers[: len(cases)], strict=True):
        assert answer["ok"], answer
        read = answer["libvirt"]
        for name, (value, _text) in case["chosen"].items():
            assert read.get(name) == _expected(name, value), (name, value, read.get(name))
    # every accepted value read back as given: so the collection writes nothing Nova refuses. It refuses more than
    # Nova's types do, only for the reasons it documents (the value would not be read back as written, or is no
    # value of the option's kind as the operator wrote it)
    nova_accepts = [(n, v) for (n, v), a in zip(refused, answers[len(cases) :], strict=True) if a["ok"]]
    reasons = {why: 0 for why in DECIDED}
    for name, value in nova_accepts:
        problem = written_value(name, value)[1]
        matched = [why for why in DECIDED if why in problem]
        assert matched, (name, value, problem)
        reasons[matched[0]] += 1
    assert [why for why, count in reasons.items() if not count] == []  # each decision is exercised
    assert sum(len(v) for v in accepted.values()) > 400 and len(refused) - len(nova_accepts) > 300


DECIDED = (
    "which oslo.config reads as a reference",
    "Jinja marker",
    "starts or ends with a space",
    "starts or ends with a quote",
    "control character",
    "ends with '.'",
    "must be a string",
    "must be true or false",
    "reads as no value",
    "contains a comma",
    "every item must be a non-empty string",
)


# -- the migration check and the audit agree with the rendering ------------------------------------------------
def _cloud_for(rendered_compute: dict) -> dict:
    """migration_fleet's cloud with vgpu-a16 (deployed: the rendered config, one VGPU instance) and gpu-02."""
    inputs = migration_fleet.cloud(("vgpu-a16", "gpu-02"))
    gpu = migration_fleet.provider(inputs, "vgpu-a16_pci_0000_84_00_0")
    gpu["name"] = "vgpu-a16_pci_" + A16_GPU.replace(":", "_").replace(".", "_")
    inputs["deployed"]["vgpu-a16"] = {"compute": rendered_compute}
    inputs["deployed"]["gpu-02"]["compute"]["devices"] = {"enabled_mdev_types": ["nvidia-735"]}
    migration_fleet.place(inputs, "train", "vgpu-a16", "vgpu")
    return inputs


@pytest.mark.parametrize(("operator", "blockers"), [({}, []), ({POST_COPY: True}, ["post_copy_permitted"])])
def test_the_migration_check_and_the_audit_read_the_rendered_config_as_rendered(facts_of, operator, blockers):
    facts = facts_of("vgpu-a16")
    rendering = render_fleet([HostInput("vgpu-a16", facts, libvirt=operator)], DEMO, Options())
    compute = rendering.compute["vgpu-a16"]
    assert compute["libvirt"][POST_COPY] == (["true"] if operator else ["false"])
    inputs = _cloud_for(copy.deepcopy(compute))
    (instance,) = migration_targets(
        inputs["fleet"], hosts=inputs["hosts"], deployed_config=inputs["deployed"], servers=inputs["servers"]
    )["instances"]
    assert [b["code"] for b in instance["blockers"]] == blockers
    assert instance["targets"] == ([] if blockers else ["gpu-02"])
    # the audit: no drift from the new section, and the migration area says the same
    hosts = {"vgpu-a16": dict(facts, **migration_fleet.GOOD_FACTS), "gpu-02": dict(migration_fleet.GOOD_FACTS)}
    found = audit_cloud(hosts, inputs["deployed"], inputs["fleet"], policy=DEMO)["findings"]
    assert not [f for f in found if f["code"] == "nova_config_drift" and f["host"] == "vgpu-a16"]
    migration = [(f["code"], f["severity"]) for f in found if f["area"] == "migration"]
    assert migration == ([("migration_blocked", "warning")] if blockers else [])


def test_check_mode_diff_and_idempotence_of_the_section_in_both_layouts(facts_of, tmp_path):
    """The plan writes the section, a second plan changes nothing, a removed option is removed again."""
    from ansible_collections.accel.openstack.plugins.module_utils._host.files import apply_all

    root = HostRoot(str(tmp_path))
    hosts = [{"name": "vgpu-a16", "facts": facts_of("vgpu-a16"), "libvirt": {"live_migration_downtime": 900}}]
    for params in (
        {"layout": "kolla", "config_dir": "/etc/kolla/config"},
        {"layout": "nova_conf_d", "host": "vgpu-a16", "services": ["compute"]},
    ):
        params = dict(params, hosts=copy.deepcopy(hosts), policy=DEMO)
        _rendering, changes = plan(root, params)
        (conf,) = [c for c in changes if c.path.endswith(("vgpu-a16/nova.conf", "50-accel-openstack.conf"))]
        assert (
            conf.changed
            and "[libvirt]\nlive_migration_downtime = 900\nlive_migration_permit_post_copy = false\n" in (conf.after)
        )
        assert "libvirt.live_migration_downtime" in conf.after.splitlines()[0]  # owned, so removable later
        apply_all(root, changes)
        assert not any(c.changed for c in plan(root, params)[1])
        params["hosts"][0]["libvirt"] = {}
        _rendering, changes = plan(root, params)
        (conf,) = [c for c in changes if c.changed]
        assert "live_migration_downtime" not in conf.after.split("\n", 1)[1]
        assert "live_migration_permit_post_copy = false" in conf.after


def test_the_default_alone_rewrites_no_file_unless_another_file_permits_post_copy(facts_of, tmp_path):
    """A cloud whose files predate the default: Nova already reads post-copy off, so nothing is rewritten and
    no host waits for a reconfigure; where Kolla's global.conf permits it, the host's file turns it off."""
    from ansible_collections.accel.openstack.plugins.module_utils._host.files import apply_all

    root = HostRoot(str(tmp_path))
    facts = facts_of("vgpu-a16")
    params = {"layout": "kolla", "config_dir": "/etc/kolla/config", "policy": DEMO}
    before = dict(params, hosts=[{"name": "vgpu-a16", "facts": facts, "libvirt": {POST_COPY: None}}])
    apply_all(root, plan(root, before)[1])
    now = dict(params, hosts=[{"name": "vgpu-a16", "facts": facts}])
    rendering, changes = plan(root, now)
    assert rendering.compute["vgpu-a16"]["libvirt"] == {POST_COPY: ["false"]}
    assert not any(c.changed for c in changes)
    (tmp_path / "etc/kolla/config/global.conf").write_text("[libvirt]\nlive_migration_permit_post_copy = True\n")
    changed = [c for c in plan(root, now)[1] if c.changed]
    assert [c.path for c in changed] == ["/etc/kolla/config/nova/vgpu-a16/nova.conf"]
    assert changed[0].after.endswith("[libvirt]\nlive_migration_permit_post_copy = false\n")
