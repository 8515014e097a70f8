#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: gpu_health
short_description: Read the health of a host's NVIDIA GPUs from nvidia-smi, the kernel log's Xid events and DCGM
description:
  - Reads, and changes nothing, the health of each NVIDIA GPU of the host under O(root), by PCI address, from
    three sources; each is bounded in size and time, every value is type-checked, and an error names the file
    (or command) and the field.
  - C(nvidia-smi -q -x) (run with a timeout on a live host, else the recorded output under the root, or
    O(nvidia_smi_xml)) tells a lost GPU (its product name or UUID reads C(Unknown Error) or C(GPU is lost), or
    nvidia-smi's error names it), a row remapping failure (C(remapped_row_failure)), a pending row remapping
    (C(remapped_row_pending)), pages pending retirement (C(pending_blacklist), C(pending_retirement)) and
    volatile uncorrectable ECC errors (C(dram_uncorrectable), C(sram_uncorrectable*)). The XML is parsed with
    expat and refused when it declares an entity or an internal DTD subset; it is never expanded.
  - The kernel log (O(kernel_log), or O(kernel_log_command) run on a live host) gives the Xid events the NVIDIA
    driver logs (C(NVRM) lines naming the GPU's PCI address and the Xid number) with their time, in the formats of
    journalctl, syslog and dmesg.
    Each Xid is described from NVIDIA's Xid catalog, with its event class, meaning and recommended action.
  - Optionally a DCGM exporter's metrics (O(dcgm_metrics) or O(dcgm_url)) give C(DCGM_FI_DEV_XID_ERRORS),
    C(DCGM_FI_DEV_ROW_REMAP_FAILURE) and C(DCGM_EXP_GPU_HEALTH_STATUS).
  - Each GPU gets a state, V(healthy), V(degraded) or V(failed), the worst state of its current events. An
    Xid event counts while it is at most O(window) seconds old (an event whose time is unknown always counts);
    nvidia-smi's and DCGM's conditions are current. So a GPU is V(healthy) again once its conditions have
    cleared and it has gone O(window) seconds without an Xid event.
  - The result is also set as the fact C(accel_gpu_health), which the audit reads.
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  nvidia_smi_xml:
    description:
      - A file under O(root) that holds C(nvidia-smi -q -x) output, instead of running nvidia-smi. With a root
        other than C(/) the default is the recorded C(/var/lib/accel-openstack/nvidia-smi/q-x.xml).
    type: path
  nvidia_smi_command:
    description: The command that prints C(nvidia-smi -q -x) output on a live host, without a shell.
    type: list
    elements: str
    default: [nvidia-smi, -q, -x]
  kernel_log:
    description:
      - A file under O(root) that holds kernel log text (C(dmesg), C(journalctl -k), C(/var/log/kern.log)),
        instead of running O(kernel_log_command). With a root other than C(/) the default is C(/var/log/kern.log).
      - Its last 16 MiB are read.
    type: path
  kernel_log_command:
    description: The command that prints the kernel log on a live host, without a shell; its last 16 MiB are read.
    type: list
    elements: str
    default: [journalctl, -k, -b, -o, short-iso, --no-pager]
  dcgm_metrics:
    description: A file under O(root) that holds a DCGM exporter's metrics text (at most 8 MiB).
    type: path
  dcgm_url:
    description: The URL of a DCGM exporter's metrics (for example C(http://127.0.0.1:9400/metrics)), read with O(timeout).
    type: str
  window:
    description: Seconds an Xid event counts for the GPU's state (1 to 2678400, 31 days).
    type: int
    default: 3600
  timeout:
    description: Seconds each command (and O(dcgm_url)) may take (1 to 600); a command still running then is killed.
    type: int
    default: 60
extends_documentation_fragment:
  - accel.openstack.root
attributes:
  check_mode:
    support: full
    description: The module only reads; check mode reads the same.
  diff_mode:
    support: none
    description: Nothing changes, so there is no diff.
notes:
  - Runs on the GPU host; run it with become so that nvidia-smi and the kernel log can be read.
"""

EXAMPLES = r"""
- name: Read the GPUs' health on the compute hosts
  accel.openstack.gpu_health:
    window: 3600
  become: true

- name: Read it from a DCGM exporter too
  accel.openstack.gpu_health:
    dcgm_url: http://127.0.0.1:9400/metrics

- name: Read a recorded host (a mounted image or a simulated root)
  accel.openstack.gpu_health:
    root: /srv/hosts/gpu-node-1
"""

RETURN = r"""
devices:
  description: >-
    One entry per GPU, sorted by address: C(address), C(bus_id) (nvidia-smi's form), C(gpu) (its index in
    nvidia-smi's list), C(device) (C(nvidia<minor>)), C(product_name), C(uuid), C(in_nvidia_smi), C(state)
    (V(healthy), V(degraded) or V(failed)), C(classes) (the event classes of its current events), C(events)
    (the 100 most recent, each C(source), C(class), C(state), C(xid), C(time), C(current), C(meaning), C(action),
    C(detail)), C(events_dropped) and C(last_event) (the time of its most recent timed event).
  returned: always
  type: list
  elements: dict
counts:
  description: GPUs per state.
  returned: always
  type: dict
  sample: {healthy: 7, degraded: 0, failed: 1}
sources:
  description: What was read for C(nvidia_smi), C(kernel_log) and C(dcgm) (a file, or a command and how it ended; null when none).
  returned: always
  type: dict
window:
  description: The window used.
  returned: always
  type: int
ansible_facts:
  description: C(accel_gpu_health) with C(devices), C(counts) and C(window).
  returned: always
  type: dict
"""

import time
from http.client import HTTPException

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_health
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule

MAX_TIMEOUT = 600


def fetch(url: str, timeout: int, limit: int) -> str:
    """The text at ``url``, at most ``limit`` bytes."""
    from ansible.module_utils.urls import open_url

    try:
        response = open_url(url, timeout=timeout, follow_redirects="none")
        data = response.read(limit + 1)
    except (OSError, ValueError, HTTPException) as exc:  # URLError, HTTPError and socket errors are OSErrors
        code, reason = getattr(exc, "code", None), getattr(exc, "reason", None)
        said = (
            f"HTTP {code} {reason}"
            if isinstance(code, int)
            else str(getattr(reason, "strerror", None) or reason or exc)
        )
        raise AccelError(
            f"dcgm_url {url}: cannot read it ({said}); check that the DCGM exporter listens there"
        ) from None
    if len(data) > limit:
        raise AccelError(f"dcgm_url {url}: more than {limit:,} bytes; at most {limit:,} are read")
    return data.decode("utf-8", errors="replace")


class GpuHealthModule(HostModule):
    argument_spec = {
        "nvidia_smi_xml": {"type": "path"},
        "nvidia_smi_command": {"type": "list", "elements": "str", "default": ["nvidia-smi", "-q", "-x"]},
        "kernel_log": {"type": "path"},
        "kernel_log_command": {"type": "list", "elements": "str", "default": gpu_health.DEFAULT_KERNEL_LOG_COMMAND},
        "dcgm_metrics": {"type": "path"},
        "dcgm_url": {"type": "str"},
        "window": {"type": "int", "default": 3600},
        "timeout": {"type": "int", "default": 60},
    }
    module_kwargs = {"mutually_exclusive": [("dcgm_metrics", "dcgm_url")]}

    def run(self) -> dict:
        params = self.params
        for name in ("nvidia_smi_command", "kernel_log_command"):
            if not params[name] or not params[name][0].strip():
                raise AccelError(
                    f"{name} is empty; give the command as a list, e.g. {self.argument_spec[name]['default']}"
                )
        if not 1 <= params["timeout"] <= MAX_TIMEOUT:
            raise AccelError(f"timeout is {params['timeout']}; give the seconds a command may run, 1 to {MAX_TIMEOUT}")
        if params["dcgm_url"] is not None and not params["dcgm_url"].startswith(("http://", "https://")):
            raise AccelError(
                f"dcgm_url {params['dcgm_url']} is not an http:// or https:// URL; give the exporter's metrics URL"
            )
        options = dict(params, fetch=fetch)
        result = gpu_health.gather(self.host, options, time.time())
        for message in result.pop("warnings"):
            self.warn(message)
        facts = {key: result[key] for key in ("devices", "counts", "window")}
        return {"changed": False, **result, "ansible_facts": {"accel_gpu_health": facts}}


def main() -> None:
    GpuHealthModule()()


if __name__ == "__main__":
    main()
