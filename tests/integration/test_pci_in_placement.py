"""playbooks/pci_in_placement.yml moves a small cloud to PCI-in-Placement, with Nova 34's own resource tracker
playing nova-compute against the real Placement.

Two compute hosts (configured-t4: one T4 each) in the nova.conf.d layout, each under its own root; t4-01 also runs
nova-api, nova-scheduler and nova-conductor (the nova.conf.d layout renders control services on compute hosts).
Before the move, nova-compute (tests/support/nova_compute.py, Nova's ``_update_to_placement``) reported both hosts
without report_in_placement, and three instances hold allocations as a cloud without PCI-in-Placement has them
(VCPU and MEMORY_MB only): one on each host holding its T4, and one on t4-01 without a device. While the playbook
runs, a watcher restarts "nova-compute" (one more periodic update with Nova's code) on each host whose nova.conf.d
file the playbook changed while report_in_placement is on in it, with that file: when the stage's wait has looked
once and asks for it, or after the run (NovaComputes).

A check-mode run writes nothing anywhere; a run without the confirmation, and one with a problem the pre-check
finds (a second alias of the same name), refuse before writing. Run 1, limited
to t4-01: t4-01 reports and its instance is healed by Nova's code; the scheduler step is refused because t4-02 does
not report, and pci_in_placement stays off. Run 2, the whole cloud: t4-02 reports and is healed, the scheduler step
turns pci_in_placement on and verifies it. After it, every instance keeps its VCPU and MEMORY_MB and the two with a
T4 hold CUSTOM_NVIDIA_T4 on their host's PCI provider.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest
import yaml

from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._simulate.host_root import build_root
from tests.support import nova_compute
from tests.support.ansible_runner import BIN, REPO, ansible_env, run_module

pytestmark = [pytest.mark.placement, pytest.mark.nova]

COMPUTE = ("t4-01", "t4-02")
CONTROL = "t4-01"
POLICY = [
    {
        "name": "t4",
        "vendor_id": "10de",
        "product_id": "1eb8",
        "mode": "passthrough",
        "resource_class": "CUSTOM_NVIDIA_T4",
    }
]
T4 = "0000:b0:00.0"
INSTANCES = {  # instance -> (host, device it holds or None)
    "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a51": ("t4-01", T4),
    "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a52": ("t4-02", T4),
    "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a53": ("t4-01", None),
}
CONF_D = os.path.join("etc", "nova", "nova.conf.d", "50-accel-openstack.conf")
PROJECT = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


DOC = os.path.join(REPO, "docs", "pci-in-placement.md")
SAMPLE = re.compile(
    r"(<!-- sample output: a run of tests/integration/test_pci_in_placement.py -->\n```text\n)(.*?)(```)", re.S
)
COMMAND = "$ ansible-playbook -i hosts.yml playbooks/pci_in_placement.yml -e accel_pci_in_placement_confirm=true"
SHOWN_TASKS = (
    "Say which allocations nova-compute will heal",
    "Say what cannot be undone",
    "Say what the wait needs",
    "Say how far it is",
    "Refuse to go on while Placement does not show the host's PCI providers and healed allocations",
    "Refuse the scheduler step while a compute host does not report",
    "Verify that nova-api, nova-scheduler and every conductor read pci_in_placement",
)


def transcript(stdout: str) -> list[str]:
    """The messages of the move's own tasks in a run's output (the default callback), one line each."""
    lines, task, host = [], "", None
    for line in stdout.splitlines():
        header = re.match(r"^TASK \[(?:[\w.]+ : )?(.*)\] \**$", line)
        if header:
            task = header.group(1)
            continue
        if task not in SHOWN_TASKS:
            continue
        started = re.match(r"^(?:ok|fatal): \[([\w.-]+)(?: -> [\w.-]+)?\]", line)
        if started:
            host = started.group(1)
        message = re.match(r'^\s*"msg": (".*"),?$', line)
        if message and host:
            lines.append(f"[{host}] {json.loads(message.group(1))}")
    return lines


def masked(text: str) -> str:
    """Elapsed seconds differ from run to run, and so does how often a wait says the same state again
    before nova-compute has reported: a line equal to the one before it (once masked) is said once."""
    lines = re.sub(r"\b\d+ s of ", "N s of ", text).split("\n")
    return "\n".join(line for number, line in enumerate(lines) if number == 0 or line != lines[number - 1])


def allocated(host: str) -> dict:
    return {device: instance for instance, (where, device) in INSTANCES.items() if where == host and device}


def conf_text(root: str) -> str:
    path = os.path.join(root, CONF_D)
    if not os.path.exists(path):
        return ""
    with open(path) as handle:
        return handle.read()


def tree_digest(top: str) -> str:
    digest = hashlib.sha256()
    for base, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files):
            with open(os.path.join(base, name), "rb") as handle:
                digest.update(os.path.join(base, name).encode() + handle.read())
    return digest.hexdigest()


class NovaComputes:
    """nova-compute as an operator restarts it while the stage runs: on each compute host whose nova.conf.d file
    the playbook turned report_in_placement on in, once per change of the file, one periodic update with Nova's
    code. The restart comes when the stage asks for it, and its update reaches Placement after the wait's first
    look (a real restart takes seconds: config, hypervisor, message bus); a file that changed where the stage
    asked nothing (pci_in_placement on t4-01, the scheduler step) is read by a restart after the run."""

    def __init__(self, cloud, placement):
        self.cloud, self.placement = cloud, placement
        self.seen = {host: conf_text(cloud["roots"][host]) for host in COMPUTE}
        self.pending: list[str] = []
        self.results: list[dict] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)

    def asked(self, host: str) -> bool:
        """Whether the running stage's wait looked once for ``host`` and found it not done yet."""
        try:
            with open(self.cloud["live_log"]) as handle:
                out = handle.read()
        except OSError:
            return False
        looks = rf"\[{re.escape(host)}\] {re.escape(host)}: \d+ of \d+ PCI providers, .* s of \d+ s"
        return any(re.fullmatch(looks, line) for line in transcript(out))

    def watch(self) -> None:
        while True:
            stopping = self.stop.is_set()
            for host in COMPUTE:
                text = conf_text(self.cloud["roots"][host])
                if text != self.seen[host] and "report_in_placement = true" in text:
                    self.seen[host] = text
                    self.pending.append(host)
            for host in list(self.pending):
                if stopping or self.asked(host):
                    self.pending.remove(host)
                    self.results += update(self.placement, self.cloud, host)
            if stopping:
                return
            time.sleep(0.5)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=400)


def update(placement, cloud, host: str) -> list[dict]:
    case = nova_compute.compute_case(
        host, cloud["facts"][host], config=[conf_text(cloud["roots"][host])], allocated=allocated(host), rounds=1
    )
    return nova_compute.update(placement.url, [case], timeout=180)


def run(cloud, limit: str | None = None, check: bool = False, **extra) -> subprocess.CompletedProcess:
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", cloud["inventory"], "playbooks/pci_in_placement.yml"]
    cmd += ["-e", "accel_pci_in_placement_confirm=true"] if not check else ["--check"]
    for key, value in extra.items():
        cmd += ["-e", json.dumps({key: json.loads(value)}) if value.startswith("[") else f"{key}={value}"]
    if limit:
        cmd += ["--limit", limit]
    env = ansible_env(ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default")
    # The output goes to the run's log as it comes (NovaComputes reads what the stage asks); stdout is the log.
    cloud["live_log"] = os.path.join(cloud["log_dir"], f"run-{len(cloud['logs']) + 1}.log")
    with open(cloud["live_log"], "w") as log:
        done = subprocess.run(
            cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.PIPE, text=True, timeout=400, check=False
        )
    with open(cloud["live_log"]) as log:
        done.stdout = log.read()
    cloud["logs"].append(done.stdout)
    return done


def placement_state(placement) -> dict:
    _status, body = placement.request("GET", "/resource_providers")
    providers = {p["name"]: p for p in body["resource_providers"]}
    traits = {}
    for name, provider in providers.items():
        _status, answer = placement.request("GET", f"/resource_providers/{provider['uuid']}/traits")
        traits[name] = answer["traits"]
    allocations = {}
    for instance in INSTANCES:
        _status, answer = placement.request("GET", f"/allocations/{instance}")
        allocations[instance] = {
            next(n for n, p in providers.items() if p["uuid"] == uuid): held["resources"]
            for uuid, held in answer["allocations"].items()
        }
    return {"providers": sorted(providers), "traits": traits, "allocations": allocations}


@pytest.fixture(scope="module")
def reshaping_placement(tmp_path_factory, placement):
    """The real Placement that lets the caller reshape: nova-compute heals PCI allocations with POST /reshaper,
    which Placement's policy gives the service role its Keystone user has; noauth2 knows only admin."""
    policy = tmp_path_factory.mktemp("policy") / "policy.yaml"
    policy.write_text('"placement:reshaper:reshape": "role:admin"\n')
    os.environ["OS_OSLO_POLICY__POLICY_FILE"] = str(policy)
    try:
        yield placement.reconfigure({})
    finally:
        del os.environ["OS_OSLO_POLICY__POLICY_FILE"]
        placement.reconfigure({})


@pytest.fixture(scope="module")
def cloud(tmp_path_factory, reshaping_placement):
    placement = reshaping_placement
    top = tmp_path_factory.mktemp("pci-move")
    roots, facts = {}, {}
    for host in COMPUTE:
        roots[host] = build_root("configured-t4", str(top / host))
        facts[host] = discover(roots[host])[0]
    fleet = [{"name": host, "facts": facts[host]} for host in COMPUTE]
    # The cloud as the nova_config stage left it, without PCI-in-Placement.
    for host, services in [("t4-01", ["compute", "api", "scheduler", "conductor"]), ("t4-02", ["compute"])]:
        result = run_module(
            "nova_config",
            {"layout": "nova_conf_d", "host": host, "services": services, "root": roots[host], "policy": POLICY,
             "hosts": fleet},
        )  # fmt: skip
        assert not result.get("failed"), result
    for host in COMPUTE:  # nova-compute started without report_in_placement
        assert [r["ok"] for r in update(placement, {"roots": roots, "facts": facts}, host)] == [True]
    for instance, (host, _device) in INSTANCES.items():
        status, body = placement.request(
            "PUT",
            f"/allocations/{instance}",
            {
                "allocations": {nova_compute.node_uuid(host): {"resources": {"VCPU": 4, "MEMORY_MB": 8192}}},
                "project_id": PROJECT,
                "user_id": PROJECT,
                "consumer_generation": None,
            },
            microversion="1.28",
        )
        assert status == 204, body
    hosts = {host: {"accel_root": roots[host], "accel_pci_allocated_devices": allocated(host)} for host in COMPUTE}
    inventory = {
        "all": {
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "accel_become": False,
                "accel_nova_layout": "nova_conf_d",
                "accel_device_policy": POLICY,
                "accel_placement_auth": placement.auth,
                "accel_nova_show_rendered": False,
                "accel_pci_in_placement_wait_delay": 1,
                "accel_pci_in_placement_wait_timeout": 150,
            },
            "children": {
                "compute": {"hosts": hosts},
                "nova-api": {"hosts": {CONTROL: {}}},
                "nova-scheduler": {"hosts": {CONTROL: {}}},
                "nova-conductor": {"hosts": {CONTROL: {}}},
            },
        }
    }
    (top / "hosts.yml").write_text(yaml.safe_dump(inventory))
    return {
        "top": str(top),
        "roots": roots,
        "facts": facts,
        "inventory": str(top / "hosts.yml"),
        "logs": [],
        "log_dir": str(tmp_path_factory.mktemp("pci-move-logs")),
    }


def test_the_move_is_staged_refused_early_and_healed_by_nova(cloud, reshaping_placement):
    placement = reshaping_placement
    before = placement_state(placement)
    assert not [name for name in before["providers"] if "_0000:" in name]
    assert before["allocations"]["6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a51"] == {"t4-01": {"VCPU": 4, "MEMORY_MB": 8192}}

    # Check mode plans: the pre-check passes and names the healing, nothing is written anywhere.
    files = tree_digest(cloud["top"])
    planned = run(cloud, check=True)
    assert planned.returncode == 0, planned.stdout[-4000:] + planned.stderr[-2000:]
    assert "2 instance allocation(s) to heal: 6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a51 on t4-01, " in planned.stdout
    assert "This cannot be undone" in planned.stdout and "Check mode: nothing is written." in planned.stdout
    assert tree_digest(cloud["top"]) == files
    assert placement_state(placement) == before

    # Without the confirmation nothing is written either.
    refused = run(cloud, limit="t4-02", accel_pci_in_placement_confirm="false")
    assert refused.returncode != 0
    assert "report_in_placement cannot be turned off again once on; nothing was changed" in refused.stdout
    assert tree_digest(cloud["top"]) == files

    # A problem the pre-check finds stops the run before anything is written: a second alias t4 on the scheduler.
    second = json.dumps({"name": "t4", "vendor_id": "10de", "product_id": "1eb9"})
    planted = run(cloud, limit="t4-02", accel_pci_in_placement_aliases=json.dumps([second]))
    assert planted.returncode != 0
    assert (
        "The pre-check found 1 problem(s); nothing was changed. [every host] alias_not_unique (t4): alias t4 is "
        "defined 2 times"
    ) in " ".join(planted.stdout.split())
    assert "This cannot be undone" not in planted.stdout
    assert tree_digest(cloud["top"]) == files and placement_state(placement) == before

    # Run 1: t4-01 only (and the control host); the scheduler step is refused while t4-02 does not report.
    started = time.monotonic()
    with NovaComputes(cloud, placement) as computes:
        first = run(cloud, limit="t4-01")
    first_s = time.monotonic() - started
    assert first.returncode != 0, first.stdout[-4000:]
    assert [(r["hostname"], r["ok"], r.get("error")) for r in computes.results] == [("t4-01", True, None)]
    assert "t4-01: 1 of 1 PCI providers, 1 of 1 allocations healed;" in first.stdout
    assert "t4-01 reports: 1 PCI provider(s), 1 instance allocation(s) healed" in first.stdout
    assert (
        "pci_in_placement stays off: 1 of 2 compute host(s) do not report their PCI devices to Placement (t4-02: its "
        "deployed nova-compute config does not set [pci] report_in_placement = true)"
    ) in " ".join(first.stdout.split())
    assert "pci_in_placement" not in conf_text(cloud["roots"][CONTROL])
    assert "report_in_placement = true" in conf_text(cloud["roots"]["t4-01"])
    assert "report_in_placement" not in conf_text(cloud["roots"]["t4-02"])
    middle = placement_state(placement)
    assert "t4-01_0000:B0:00.0" in middle["providers"] and "t4-02_0000:B0:00.0" not in middle["providers"]
    assert middle["allocations"]["6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a51"] == {
        "t4-01": {"VCPU": 4, "MEMORY_MB": 8192},
        "t4-01_0000:B0:00.0": {"CUSTOM_NVIDIA_T4": 1},
    }

    # Run 2: the whole cloud.
    started = time.monotonic()
    with NovaComputes(cloud, placement) as computes:
        second = run(cloud)
    second_s = time.monotonic() - started
    assert second.returncode == 0, second.stdout[-4000:] + second.stderr[-2000:]
    # nova-compute restarts on t4-02 (report_in_placement) and on t4-01 (its file gained pci_in_placement)
    assert sorted((r["hostname"], r["ok"], r.get("error")) for r in computes.results) == [
        ("t4-01", True, None),
        ("t4-02", True, None),
    ]
    assert "Every compute host reports: t4-01, t4-02" in second.stdout
    assert "pci_in_placement is on for t4-01" in second.stdout
    control = conf_text(cloud["roots"][CONTROL])
    assert "[filter_scheduler]" in control and "pci_in_placement = true" in control

    after = placement_state(placement)
    assert {"t4-01_0000:B0:00.0", "t4-02_0000:B0:00.0"} <= set(after["providers"])
    for host in COMPUTE:
        assert "COMPUTE_MANAGED_PCI_DEVICE" in after["traits"][f"{host}_0000:B0:00.0"]
    assert after["allocations"] == {
        "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a51": {
            "t4-01": {"VCPU": 4, "MEMORY_MB": 8192},
            "t4-01_0000:B0:00.0": {"CUSTOM_NVIDIA_T4": 1},
        },
        "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a52": {
            "t4-02": {"VCPU": 4, "MEMORY_MB": 8192},
            "t4-02_0000:B0:00.0": {"CUSTOM_NVIDIA_T4": 1},
        },
        "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a53": {"t4-01": {"VCPU": 4, "MEMORY_MB": 8192}},
    }
    print(f"run 1: {first_s:.1f} s, run 2: {second_s:.1f} s")

    # The doc's sample is these two runs' messages (ACCEL_WRITE_DOCS=1 writes them).
    sample = "\n".join(
        [COMMAND + " --limit t4-01"] + transcript(first.stdout) + ["", COMMAND] + transcript(second.stdout)
    )
    with open(DOC) as handle:
        doc = handle.read()
    if os.environ.get("ACCEL_WRITE_DOCS") == "1":
        with open(DOC, "w") as handle:
            handle.write(SAMPLE.sub(lambda m: m.group(1) + sample + "\n" + m.group(3), doc))
    else:
        assert masked(SAMPLE.search(doc).group(2).rstrip("\n")) == masked(sample)
