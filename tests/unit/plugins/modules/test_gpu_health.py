"""The gpu_health module on a live root: nvidia-smi and the kernel log as commands, bounded in time.

The commands are the simulated nvidia-smi of a simulated host (the collection's own double, run as a
program) and ``cat`` of a recorded kernel log: the module runs them as it runs the real ones.
"""

from __future__ import annotations

import http.server
import os
import shlex
import sys
import threading
import time

import pytest

from tests.support.ansible_runner import REPO, run_module
from tests.support.fake_sysfs import build_root, load_profile

FIXTURES = os.path.join(REPO, "tests", "fixtures", "nvidia", "health")


def smi(root: str) -> list[str]:
    return [sys.executable, "-m", "tests.support.fake_nvidia_smi", "--root", root, "-q", "-x"]


@pytest.fixture(autouse=True)
def module_warnings_in_results(monkeypatch):
    """Modules run in this process return their warnings in the result (other tests may have made this process
    a controller, which displays them instead)."""
    from ansible.module_utils import _internal as ansible_internal

    monkeypatch.setattr(ansible_internal, "is_controller", False)


def warnings(result: dict) -> list[str]:
    """The warnings of a result (in this process Ansible's list also holds those of earlier runs)."""
    return [w["event"]["msg"] if isinstance(w, dict) else w for w in result.get("warnings") or []]


def planted_root(tmp_path, health: dict) -> str:
    profile = load_profile("hgx-h100")
    for device in profile["devices"]:
        if device["address"] == "0000:18:00.0":
            device["health"] = health
    return build_root(profile, str(tmp_path / "host"))


def test_live_commands_give_the_same_answer_as_the_recorded_root(tmp_path):
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - 120))
    health = {"xid": [48], "xid_time": stamp, "ecc_uncorrectable": 2, "remapped_row_pending": True}
    root = planted_root(tmp_path, health)
    log = os.path.join(root, "var", "log", "kern.log")
    recorded = run_module("gpu_health", {"root": root}, check=True)
    live = run_module(
        "gpu_health",
        {"nvidia_smi_command": smi(root), "kernel_log_command": ["cat", log], "timeout": 30},
        check=True,
    )
    assert recorded["changed"] is False and live["changed"] is False, live
    assert live["devices"] == recorded["devices"]
    failed = [d for d in live["devices"] if d["state"] != "healthy"]
    assert [(d["address"], d["state"], d["classes"]) for d in failed] == [
        ("0000:18:00.0", "failed", ["row_remap_pending", "uncorrectable_ecc"])
    ]
    assert live["sources"]["kernel_log"] == {"command": f"cat {log}", "rc": 0, "timed_out": False, "cut": False}
    assert live["sources"]["nvidia_smi"]["command"] == shlex.join(smi(root))
    assert live["ansible_facts"]["accel_gpu_health"]["counts"] == {"healthy": 7, "degraded": 0, "failed": 1}


def test_a_hanging_nvidia_smi_is_killed_at_the_timeout_and_said_so(tmp_path):
    started = time.monotonic()
    result = run_module(
        "gpu_health",
        {"nvidia_smi_command": ["sleep", "30"], "kernel_log_command": ["cat", os.path.join(FIXTURES, "dmesg.txt")],
         "timeout": 1},
    )  # fmt: skip
    assert time.monotonic() - started < 15
    assert result["sources"]["nvidia_smi"] == {"command": "sleep 30", "rc": None, "timed_out": True}
    assert (
        "sleep 30 was still running after 1 seconds (timeout) and was killed; a GPU that fell off the bus can hold "
        "it: look at the kernel log's Xid events"
    ) in warnings(result)
    # plain dmesg: seconds since this machine's boot, placed with /proc/stat's btime
    assert [d["address"] for d in result["devices"]] == ["0000:18:00.0"]


def test_a_lost_gpu_named_by_nvidia_smi_errors_is_failed(tmp_path):
    script = tmp_path / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\necho 'Unable to determine the device handle for GPU0000:5D:00.0: Unknown Error' >&2\nexit 15\n"
    )
    script.chmod(0o755)
    empty = tmp_path / "empty.log"
    empty.write_text("")
    result = run_module("gpu_health", {"nvidia_smi_command": [str(script)], "kernel_log_command": ["cat", str(empty)]})
    assert [(d["address"], d["state"], d["classes"], d["in_nvidia_smi"]) for d in result["devices"]] == [
        ("0000:5d:00.0", "failed", ["gpu_lost"], False)
    ]
    assert result["sources"]["nvidia_smi"]["rc"] == 15


def test_bad_options_name_the_fix_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    command = ["sh", "-c", f"touch {shlex.quote(str(marker))}"]
    cases = [
        ({"timeout": 0}, "timeout is 0; give the seconds a command may run, 1 to 600"),
        ({"window": 0}, "window is 0; give the seconds an event counts for the GPU's state, 1 to 2,678,400 (31 days)"),
        ({"dcgm_url": "file:///etc/shadow"}, "dcgm_url file:///etc/shadow is not an http:// or https:// URL"),
        ({"nvidia_smi_command": []}, "nvidia_smi_command is empty; give the command as a list"),
    ]
    for options, message in cases:
        result = run_module("gpu_health", {"kernel_log_command": command, **options})
        assert result.get("failed") and message in result["msg"], result
    assert not marker.exists()


def test_a_dcgm_exporter_is_read_over_http_and_its_failures_said_plainly(tmp_path):
    with open(os.path.join(FIXTURES, "dcgm-metrics.txt"), "rb") as handle:
        page = handle.read()

    class Exporter(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the handler's name in http.server
            body, status = (page, 200) if self.path == "/metrics" else (b"no", 404)
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Exporter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        root = planted_root(tmp_path, {})
        url = f"http://127.0.0.1:{server.server_port}"
        result = run_module("gpu_health", {"root": root, "dcgm_url": url + "/metrics"})
        states = {d["address"]: (d["state"], d["classes"]) for d in result["devices"]}
        assert states["0000:2a:00.0"] == ("failed", ["dcgm_health", "row_remap_failure", "uncorrectable_ecc"])
        assert states["0000:18:00.0"] == ("healthy", []) and result["sources"]["dcgm"] == {"url": url + "/metrics"}
        missing = run_module("gpu_health", {"root": root, "dcgm_url": url + "/nothing"})
        assert missing["msg"] == (
            f"dcgm_url {url}/nothing: cannot read it (HTTP 404 Not Found); check that the DCGM exporter listens there"
        )
    finally:
        server.shutdown()


def test_a_profile_health_with_xid_numbers_of_the_wrong_type_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"GPU 0000:18:00.0: health.xid must be a list of Xid numbers, e.g. \[79\]"):
        planted_root(tmp_path, {"xid": "79"})


def test_a_profile_can_plant_a_lost_gpu_that_nvidia_smi_cannot_reach(tmp_path):
    from tests.support.fake_nvidia_smi import FakeNvidiaSmi

    root = planted_root(tmp_path, {"lost": True})
    smi_double = FakeNvidiaSmi(root)
    assert smi_double(["nvidia-smi", "-q", "-i", "00000000:18:00.0"]) == (
        15, "", "Unable to determine the device handle for GPU 00000000:18:00.0: Unknown Error\n"
    )  # fmt: skip
    assert smi_double(["nvidia-smi", "-q", "-i", "00000000:2A:00.0"])[0] == 0
    result = run_module("gpu_health", {"root": root})
    lost = [(d["address"], d["state"], d["classes"], d["uuid"]) for d in result["devices"] if d["state"] != "healthy"]
    assert lost == [("0000:18:00.0", "failed", ["gpu_lost"], None)]
    assert result["sources"]["kernel_log"] is None  # no Xid planted: the root has no /var/log/kern.log
