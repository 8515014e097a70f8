# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Declarative MIG layouts per GPU, selected by PCI address: read, plan, assert, apply, persist.

The plan is a pure function of the GPU's state and the model's profile table (mig_profiles.py). A
layout that cannot fit fails before anything changes. Applying runs ``nvidia-smi`` only on a running
system (``run`` given); on any other root the desired layout is written to the state file the boot unit
applies, and the ``nvidia-smi`` commands are reported as pending.

State file: ``/etc/accel-openstack/mig/<address>.json`` = ``{"address", "mode": "enabled",
"instances": [{"profile", "profile_id", "start"}]}``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore, mig_profiles, nvidia_smi
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._names import pci

STATE_DIR = "/etc/accel-openstack/mig"


class MigError(AccelError):
    """The GPU cannot take the layout now (busy, not in MIG mode, unknown model); nothing was changed."""


def state_path(address: str) -> str:
    return f"{STATE_DIR}/{address}.json"


def bus_id(address: str) -> str:
    """nvidia-smi's bus id: the PCI domain as 8 hex digits (``0000:3b:00.0`` -> ``00000000:3B:00.0``; a
    domain of 5 digits, as VMD gives, ``10000:01:00.0`` -> ``00010000:01:00.0``)."""
    domain, rest = address.split(":", 1)
    return domain.upper().rjust(8, "0") + ":" + rest.upper()


def _pid(text: str | None) -> int | None:
    """A process id as nvidia-smi prints it; None when it is not one (the process is then listed by name)."""
    text = (text or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 10 else None


@dataclass
class GpuState:
    address: str
    product_id: str | None
    product_name: str | None
    mode_current: str | None
    mode_pending: str | None
    instances: list[dict]  # [{profile, profile_id, instance_id, placement: {start, size}}]
    processes: list[dict] = field(default_factory=list)  # [{pid, name}]
    nvidia_drm: bool = False


def normalise_address(address: str, label: str = "address") -> str:
    try:
        return pci.normalize_address(str(address or ""))  # the whole text, untrimmed, as the grammar says
    except pci.PciAddressError as exc:
        raise MigError(f"{label}: {exc}") from None


def read_gpu(host: HostRoot, address: str, run=None) -> GpuState:
    """The GPU's MIG state: from ``run`` (nvidia-smi on a running system) or the root's recorded output."""
    if not host.exists(f"/sys/bus/pci/devices/{address}"):
        present = [a for a in host.listdir("/sys/bus/pci/devices") if _is_nvidia_gpu(host, a)]
        raise MigError(
            f"address {address} is not on this host; NVIDIA GPUs here: {', '.join(present) or 'none'}; "
            "give the address pci_facts reports"
        )
    product_id = (host.read_attr(f"/sys/bus/pci/devices/{address}/device") or "").lower().replace("0x", "") or None
    if run is not None:
        rc, out, err = run(["nvidia-smi", "-q", "-x"])
        if rc != 0:
            raise MigError(
                f"nvidia-smi -q -x failed (rc={rc}): {(err or out).strip()[:300]}; is the NVIDIA driver loaded?"
            )
        xml_text = out
    else:
        xml_text = host.read_text(f"{nvidia_smi.RECORDED_DIR}/q-x.xml") or ""
    try:
        gpus = nvidia_smi.parse_query_xml(xml_text) if xml_text else {}
    except ET.ParseError as exc:
        source = "nvidia-smi -q -x" if run is not None else f"{nvidia_smi.RECORDED_DIR}/q-x.xml"
        raise MigError(f"{source} is not valid XML ({exc}); the GPU's MIG state cannot be read") from None
    gpu = gpus.get(address)
    if gpu is None:
        raise MigError(
            f"address {address}: nvidia-smi does not list this GPU; bind it to the nvidia driver "
            "(not vfio-pci) before configuring MIG"
        )
    instances: list[dict] = []
    if gpu["mode_current"] == "enabled":
        if run is not None:
            rc, out, err = run(["nvidia-smi", "mig", "-lgi", "-i", bus_id(address)])
            if rc == 0:
                instances = _lgi(out, f"nvidia-smi mig -lgi -i {bus_id(address)}")
            elif "No GPU instances found" not in (out + err):
                raise MigError(
                    f"nvidia-smi mig -lgi -i {bus_id(address)} failed (rc={rc}): {(err or out).strip()[:300]}"
                )
        else:
            recorded = f"{nvidia_smi.RECORDED_DIR}/mig-lgi/{address}.txt"
            instances = _lgi(host.read_text(recorded) or "", recorded)
    processes = _processes(host, address, run, xml_text)
    nvidia_drm = host.exists("/sys/module/nvidia_drm")
    return GpuState(
        address,
        product_id,
        gpu["product_name"],
        gpu["mode_current"],
        gpu["mode_pending"],
        instances,
        processes,
        nvidia_drm,
    )


def _is_nvidia_gpu(host: HostRoot, address: str) -> bool:
    base = f"/sys/bus/pci/devices/{address}"
    return host.read_attr(f"{base}/vendor") == "0x10de" and (host.read_attr(f"{base}/class") or "").startswith("0x03")


def _processes(host: HostRoot, address: str, run, xml_text: str) -> list[dict]:
    if run is not None:
        rc, out, _err = run(["nvidia-smi", "--query-compute-apps=gpu_bus_id,pid,process_name", "--format=csv,noheader"])
        found = []
        if rc == 0:
            for line in out.splitlines():
                parts = [p.strip() for p in line.split(",")]
                if len(parts) >= 3 and nvidia_smi.bus_id_to_address(parts[0]) == address:
                    found.append({"pid": _pid(parts[1]), "name": parts[2]})
        return found
    try:
        tree = ET.fromstring(xml_text)
    except ET.ParseError:
        return []
    for gpu in tree.findall("gpu"):
        if nvidia_smi.bus_id_to_address(gpu.get("id") or "") == address:
            return [
                {"pid": _pid(p.findtext("pid")), "name": (p.findtext("process_name") or "").strip()}
                for p in gpu.findall("processes/process_info")
            ]
    return []


@dataclass
class MigPlan:
    address: str
    model: str
    desired: list[mig_profiles.Placement]
    gpu: GpuState
    mode_change: bool  # nvidia-smi -mig 1 needed
    reset_pending: bool  # MIG enabled but waiting for a GPU reset
    instances_change: bool  # GPU instances must be destroyed and created
    commands: list[list[str]]
    state_before: str | None
    state_after: str

    @property
    def state_changed(self) -> bool:
        return self.state_before != self.state_after

    live: bool = True  # nvidia-smi runs; False: a root whose GPU state is only recorded
    table: str = "built-in"  # where the profile table came from: "gpu" (-lgip/-lgipp) or "built-in"

    @property
    def changed(self) -> bool:
        """On a running system, any GPU change; on any other root only the state file changes (the GPU
        commands are pending there, for the boot unit, and reported on every run)."""
        if not self.live:
            return self.state_changed
        return self.mode_change or self.instances_change or self.state_changed

    def drift(self) -> list[str]:
        out = []
        if self.gpu.mode_current != "enabled":
            out.append(f"MIG mode is {self.gpu.mode_current} (pending {self.gpu.mode_pending}), want enabled")
        if self.instances_change:
            have = ", ".join(_describe(i["profile"], i["placement"]["start"]) for i in self.gpu.instances) or "none"
            want = ", ".join(_describe(p.profile, p.start) for p in self.desired) or "none"
            out.append(f"GPU instances are [{have}], want [{want}]")
        return out

    def result(self) -> dict:
        return {
            "address": self.address,
            "model": self.model,
            "mode": {"current": self.gpu.mode_current, "pending": self.gpu.mode_pending},
            "reset_required": self.reset_pending or (self.mode_change and self.gpu.mode_current != "enabled"),
            "layout": [p.as_dict() for p in self.desired],
            "current_instances": self.gpu.instances,
            "plan": [" ".join(c) for c in self.commands],
            "state_file": state_path(self.address),
            "profile_table": self.table,
        }

    def diff(self) -> dict:
        before = {
            "mode": self.gpu.mode_current,
            "instances": [_describe(i["profile"], i["placement"]["start"]) for i in self.gpu.instances],
        }
        after = {"mode": "enabled", "instances": [_describe(p.profile, p.start) for p in self.desired]}
        return {
            "before": json.dumps(before, indent=2) + "\n" + (self.state_before or ""),
            "after": json.dumps(after, indent=2) + "\n" + self.state_after,
            "before_header": f"GPU {self.address}",
            "after_header": f"GPU {self.address}",
        }


def _lgi(text: str, source: str) -> list[dict]:
    """The GPU instances ``nvidia-smi mig -lgi`` lists, or MigError naming ``source`` (the command or file)."""
    try:
        return nvidia_smi.parse_lgi(text)
    except ValueError as err:
        raise MigError(f"{source}: {err}; record the output of the real nvidia-smi again, then run again") from None


def _describe(profile: str, start: int) -> str:
    return f"{profile}@{start}"


def _satisfied(gpu: GpuState, desired: list[mig_profiles.Placement], layout: list[dict]) -> bool:
    """Current instances meet the layout: same profiles and counts, and every pinned start in place."""
    have = Counter(i["profile"] for i in gpu.instances)
    if have != Counter(p.profile for p in desired):
        return False
    starts = {(i["profile"], i["placement"]["start"]) for i in gpu.instances}
    for entry in layout:
        if entry.get("placement") is None:
            continue
        pins = entry["placement"] if isinstance(entry["placement"], list) else [entry["placement"]]
        for pin in pins:
            start = int(pin["start"]) if isinstance(pin, dict) else int(pin)
            if (str(entry["profile"]), start) not in starts:
                return False
    return True


def state_document(address: str, placements: list[mig_profiles.Placement]) -> str:
    data = {
        "address": address,
        "mode": "enabled",
        "instances": [{"profile": p.profile, "profile_id": p.profile_id, "start": p.start} for p in placements],
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def create_command(address: str, placements: list[mig_profiles.Placement]) -> list[str]:
    specs = ",".join(f"{p.profile_id}:{p.start}" for p in placements)
    return ["nvidia-smi", "mig", "-i", bus_id(address), "-cgi", specs, "-C"]


def plan(host: HostRoot, address: str, layout: list, run=None) -> MigPlan:
    """Read the GPU, check the layout fits its model, and list the commands that would reach it."""
    address = normalise_address(address)
    if not isinstance(layout, list):
        raise mig_profiles.MigLayoutError("layout must be a list of {profile, count} entries")
    problem = gpu_restore.state_dir_problem(host, STATE_DIR)
    if problem:
        raise MigError(problem)
    gpu = read_gpu(host, address, run)
    model, table = profile_table(host, gpu, run)
    if model is None:
        raise MigError(
            f"address {address} ({gpu.product_name or gpu.product_id}): no MIG profile table for this model; "
            f"the built-in tables cover {mig_profiles.supported_models()}, and with MIG mode on the GPU's own "
            "(nvidia-smi mig -lgip and -lgipp) is used"
        )
    desired = mig_profiles.plan_layout(model, layout, label=f"layout for {address}")
    mode_change = gpu.mode_pending != "enabled"
    reset_pending = gpu.mode_current != "enabled" and not mode_change
    instances_change = gpu.mode_current == "enabled" and not _satisfied(gpu, desired, layout)
    commands: list[list[str]] = []
    if mode_change:
        commands.append(["nvidia-smi", "-i", bus_id(address), "-mig", "1"])
    if instances_change:
        if gpu.instances:
            commands.append(["nvidia-smi", "mig", "-dci", "-i", bus_id(address)])
            commands.append(["nvidia-smi", "mig", "-dgi", "-i", bus_id(address)])
        if desired:
            commands.append(create_command(address, desired))
    elif gpu.mode_current != "enabled" and desired:
        commands.append(create_command(address, desired))  # after the reset (the boot unit runs it)
    document = state_document(address, desired)
    problems = gpu_restore.state_problems("mig", f"{address}.json", json.loads(document))
    if problems:  # the boot unit would refuse this file: never store it
        raise MigError(f"address {address}: {'; '.join(problems)}; the boot unit could not restore this layout")
    before = host.read_text(state_path(address))
    return MigPlan(
        address,
        model.model,
        desired,
        gpu,
        mode_change,
        reset_pending,
        instances_change,
        commands,
        before,
        document,
        live=run is not None,
        table=table,
    )


def profile_table(host: HostRoot, gpu: GpuState, run=None) -> tuple[mig_profiles.MigModel | None, str]:
    """The GPU's own table (``-lgip``/``-lgipp``, live or recorded) when it gives one, else the built-in one."""
    lgip, lgipp = nvidia_smi.read_profile_tables(host, gpu.address, run)
    if lgip and lgipp:
        model = mig_profiles.model_from_gpu(lgip, lgipp, gpu.product_id, gpu.product_name)
        if model is not None:
            return model, "gpu"
    return mig_profiles.model_for(gpu.product_id, gpu.product_name), "built-in"


def refusal(p: MigPlan) -> str | None:
    """Why the plan must not run now, with how to free the GPU; None when it may."""
    touches_gpu = p.mode_change or p.instances_change
    if touches_gpu and p.gpu.processes:
        users = ", ".join(
            f"{x['name']} (pid {x['pid'] if x['pid'] is not None else 'unreadable'})" for x in p.gpu.processes
        )
        return (
            f"GPU {p.address} is in use by {users}; changing its MIG layout would destroy their work. "
            "Stop those processes (drain the host: openstack compute service set --disable, migrate or stop "
            "the instances) and run again"
        )
    if p.mode_change and p.gpu.nvidia_drm:
        return (
            f"GPU {p.address}: nvidia_drm is loaded and holds the GPU, so the MIG mode change cannot take "
            "effect at a GPU reset; stop the display manager and run 'modprobe -r nvidia_drm' (or blacklist it), "
            "then run again"
        )
    return None


def apply(host: HostRoot, p: MigPlan, run=None) -> list[dict]:
    """Write the state file; run the commands on a running system. Returns what ran or stays pending."""
    outcomes: list[dict] = []
    if p.state_changed:
        host.write_text(state_path(p.address), p.state_after)
    if run is None:
        return [
            {
                "command": " ".join(c),
                "status": "pending",
                "reason": "not a running system; the boot unit applies the state file",
            }
            for c in p.commands
        ]
    for command in p.commands:
        if command[1:2] == ["mig"] and "-cgi" in command and p.gpu.mode_current != "enabled":
            # The mode change is pending a GPU reset: instances can only be made afterwards.
            current = read_gpu(host, p.address, run)
            if current.mode_current != "enabled":
                outcomes.append(
                    {
                        "command": " ".join(command),
                        "status": "pending",
                        "reason": "MIG mode is pending a GPU reset; reboot (the boot unit creates the instances) "
                        f"or reset the GPU with 'nvidia-smi -r -i {bus_id(p.address)}' and run again",
                    }
                )
                continue
        rc, out, err = run(command)
        if rc != 0:
            raise MigError(
                f"{' '.join(command)} failed (rc={rc}): {(err or out).strip()[:300]}; the state file "
                f"{state_path(p.address)} holds the wanted layout, fix the cause and run again",
                commands=outcomes,
            )
        outcomes.append({"command": " ".join(command), "status": "ran", "stdout": out.strip()[-500:]})
    return outcomes
