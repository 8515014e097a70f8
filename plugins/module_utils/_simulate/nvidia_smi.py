# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stateful stand-in for ``nvidia-smi`` that enforces NVIDIA's MIG rules on a fake host root.

State lives in the root at ``/var/lib/fake-nvidia-smi/state.json`` (written by fake_sysfs from the
hardware profile); after every change the double re-renders the recorded outputs discovery reads
(``/var/lib/accel-openstack/nvidia-smi/q-x.xml`` and ``mig-lgi/<address>.txt``), so what the collection
reads back through a fixture root is what the double now holds.

Rules it enforces, from NVIDIA's MIG User Guide (profile tables in tests/fixtures/nvidia/mig-profiles.yml of a
checkout: only the command needs them, building a simulated root does not):
- a GPU instance takes one of its profile's placement starts, and no slot twice; compute slices add up
  to at most the model's; ``+me`` at most once;
- MIG mode changes go pending and take effect only at a GPU reset (``-r``) or a reboot, refused while
  processes run or nvidia_drm is loaded; a GPU marked ``reset: false`` refuses the reset as "Not Supported"
  (a GPU whose reset the platform does not allow), so only a reboot applies its pending mode;
- MIG mode survives a reboot (it is kept on the GPU) while GPU instances do not: :func:`after_reboot`
  gives the state a reboot leaves, the pending mode then current, unless the mode was lost;
- GPU/compute instances are created only in MIG mode and destroyed only when no process uses them.

Supported command lines (the forms the collection runs)::

    nvidia-smi -q -x
    nvidia-smi -q -i BUSID                  (rc 15 for a GPU the profile's health marks lost)
    nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name --format=csv,noheader
    nvidia-smi -i BUSID -mig 0|1
    nvidia-smi -r -i BUSID
    nvidia-smi mig -lgi -i BUSID | -lgip -i BUSID | -dci -i BUSID | -dgi -i BUSID
    nvidia-smi mig -i BUSID -cgi ID[:START][,ID[:START]...] -C

Use as a callable in tests (``FakeNvidiaSmi(root)(argv) -> (rc, out, err)``) or as a command
(``python -m tests.support.fake_nvidia_smi --root ROOT ARGS...``; installed as ``/usr/bin/nvidia-smi``
inside a Debian root with ``--root /``).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "tests", "fixtures", "nvidia", "mig-profiles.yml"
)
STATE = "/var/lib/fake-nvidia-smi/state.json"
INSTALLED_TABLES = "/var/lib/fake-nvidia-smi/tables.json"  # the tables inside a root (no PyYAML there)
RECORDED = "/var/lib/accel-openstack/nvidia-smi"


def load_tables(path: str = TABLES) -> dict:
    import yaml  # only on the machine running the tests; an installed double reads tables.json

    with open(path) as handle:
        models = yaml.safe_load(handle)["models"]
    for model in models.values():
        for profile in model["profiles"]:
            starts, size = re.match(r"^\{([\d,]+)\}:(\d+)\Z", profile["placements"]).groups()
            profile["starts"] = [int(s) for s in starts.split(",")]
            profile["size"] = int(size)
    return models


def model_name(tables: dict, product_id: str) -> str | None:
    for name, model in tables.items():
        if product_id in model["product_ids"]:
            return name
    return None


def address_of(bus_id: str) -> str:
    domain, rest = bus_id.split(":", 1)
    return f"{int(domain, 16):04x}:{rest.lower()}"


class FakeNvidiaSmi:
    def __init__(self, root: str, tables: dict | None = None):
        self.root = root
        installed = os.path.join(root, INSTALLED_TABLES.lstrip("/"))
        if tables is None and os.path.exists(installed):
            with open(installed) as handle:
                tables = json.load(handle)
        self.tables = tables or load_tables()
        self.calls: list[list[str]] = []

    # -- state -------------------------------------------------------------------------------------
    def _path(self, host_path: str) -> str:
        return os.path.join(self.root, host_path.lstrip("/"))

    def load(self) -> dict:
        with open(self._path(STATE)) as handle:
            return json.load(handle)

    def save(self, state: dict) -> None:
        os.makedirs(os.path.dirname(self._path(STATE)), exist_ok=True)
        with open(self._path(STATE), "w") as handle:
            json.dump(state, handle, indent=2, sort_keys=True)
        render_recorded(self.root, state)

    # -- the command -------------------------------------------------------------------------------
    def __call__(self, argv: list[str]) -> tuple[int, str, str]:
        argv = list(argv)
        if argv and os.path.basename(argv[0]) == "nvidia-smi":
            argv = argv[1:]
        self.calls.append(argv)
        state = self.load()
        try:
            rc, out = self._dispatch(state, argv)
        except SmiError as exc:
            return exc.rc, "", str(exc) + "\n"
        return rc, out, ""

    def _gpu(self, state: dict, argv: list[str]) -> dict:
        if "-i" not in argv:
            raise SmiError("this double needs -i BUSID (the collection never selects GPUs by index)")
        bus_id = argv[argv.index("-i") + 1]
        try:
            address = address_of(bus_id)
        except ValueError:
            raise SmiError(f"Invalid GPU identifier: {bus_id}", 2) from None
        for gpu in state["gpus"]:
            if gpu["address"] == address:
                return gpu
        raise SmiError(f"No devices were found matching {bus_id}", 6)

    def _dispatch(self, state: dict, argv: list[str]) -> tuple[int, str]:
        if argv[:2] == ["-q", "-x"]:
            return 0, render_xml(state)
        if argv[:1] == ["-q"] and "-i" in argv:
            gpu = self._gpu(state, argv)
            bus_id = "0000" + gpu["address"].upper()
            if (gpu.get("health") or {}).get("lost"):
                raise SmiError(f"Unable to determine the device handle for GPU {bus_id}: Unknown Error", 15)
            return 0, (
                f"\n==============NVSMI LOG==============\n\nAttached GPUs                             : 1\n"
                f"GPU {bus_id}\n    Product Name                          : {gpu['name']}\n"
            )
        if argv and argv[0].startswith("--query-compute-apps"):
            lines = [
                f"0000{g['address'].upper()}, {p['pid']}, {p['name']}" for g in state["gpus"] for p in g["processes"]
            ]
            return 0, "".join(line + "\n" for line in lines)
        if "-mig" in argv:
            gpu = self._gpu(state, argv)
            want = "Enabled" if argv[argv.index("-mig") + 1] == "1" else "Disabled"
            if gpu["processes"]:
                raise SmiError(f"Unable to set MIG mode on GPU {gpu['address']}: In use by another client", 2)
            gpu["mig"]["pending"] = want
            self.save(state)
            note = "" if gpu["mig"]["current"] == want else "\nWarning: MIG mode is pending a GPU reset"
            return 0, f"{want} MIG Mode for GPU 0000{gpu['address'].upper()}.{note}\nAll done.\n"
        if "-r" in argv:
            gpu = self._gpu(state, argv)
            if gpu.get("reset") is False:  # e.g. a GPU on an NVSwitch baseboard, or one the hypervisor holds
                raise SmiError(
                    f"The following GPUs could not be reset:\n  GPU 0000{gpu['address'].upper()}: Not Supported", 3
                )
            if gpu["processes"] or state.get("nvidia_drm_loaded"):
                who = "nvidia_drm is loaded" if state.get("nvidia_drm_loaded") else "processes are running"
                raise SmiError(f"Unable to reset GPU 0000{gpu['address'].upper()}: In use ({who})", 255)
            gpu["mig"]["current"] = gpu["mig"]["pending"]
            gpu["instances"] = []
            self.save(state)
            return 0, f"GPU 0000{gpu['address'].upper()} was successfully reset.\n"
        if argv[:1] == ["mig"]:
            return self._mig(state, argv[1:])
        raise SmiError(f"unsupported arguments: {' '.join(argv)}", 2)

    def _mig(self, state: dict, argv: list[str]) -> tuple[int, str]:
        gpu = self._gpu(state, argv)
        model = self.tables.get(model_name(self.tables, gpu["product_id"]) or "")
        if gpu["mig"]["current"] != "Enabled":
            raise SmiError(f"MIG mode is disabled on GPU 0000{gpu['address'].upper()}", 6)
        if "-lgi" in argv:
            if not gpu["instances"]:
                raise SmiError("No GPU instances found: Not Found", 6)
            return 0, render_lgi(state, gpu)
        if "-lgipp" in argv:
            return 0, render_lgipp(model)
        if "-lgip" in argv:
            return 0, render_lgip(gpu, model)
        if "-dci" in argv or "-dgi" in argv:
            if gpu["processes"]:
                raise SmiError("Unable to destroy instance: In use by another client", 2)
            if "-dgi" in argv:
                if not gpu["instances"]:
                    raise SmiError("No GPU instances found: Not Found", 6)
                if any(i["compute_instances"] for i in gpu["instances"]):
                    raise SmiError("Unable to destroy GPU instance: In use by another client (compute instances)", 2)
                gpu["instances"] = []
            else:
                for inst in gpu["instances"]:
                    inst["compute_instances"] = 0
            self.save(state)
            return 0, "Successfully destroyed instances.\n"
        if "-cgi" in argv:
            if model is None:
                raise SmiError("MIG is not supported on this GPU", 3)
            specs = argv[argv.index("-cgi") + 1].split(",")
            out = []
            for spec in specs:
                ident, _sep, start = spec.partition(":")
                profile = next(
                    (p for p in model["profiles"] if str(p["id"]) == ident or p["name"] == ident),
                    None,
                )
                if profile is None:
                    raise SmiError(f"Invalid GPU instance profile: {ident}", 2)
                slot = self._place(gpu, model, profile, int(start) if start else None)
                instance_id = max([i["instance_id"] for i in gpu["instances"]] + [0]) + 1
                gpu["instances"].append(
                    {
                        "profile": profile["name"],
                        "profile_id": profile["id"],
                        "instance_id": instance_id,
                        "placement": f"{slot}:{profile['size']}",
                        "compute_instances": 1 if "-C" in argv else 0,
                    }
                )
                out.append(
                    f"Successfully created GPU instance ID {instance_id:>2} on GPU 0 using profile "
                    f"MIG {profile['name']} (ID {profile['id']:>2})"
                )
            self.save(state)
            return 0, "\n".join(out) + "\n"
        raise SmiError(f"unsupported mig arguments: {' '.join(argv)}", 2)

    def _place(self, gpu: dict, model: dict, profile: dict, start: int | None) -> int:
        used = set()
        compute = 0
        names = []
        for inst in gpu["instances"]:
            s, size = (int(x) for x in inst["placement"].split(":"))
            used.update(range(s, s + size))
            other = next(p for p in model["profiles"] if p["id"] == inst["profile_id"])
            compute += other["compute"]
            names.append(other["name"])
        insufficient = SmiError(
            f"Unable to create a GPU instance on GPU 0 using profile {profile['id']}: Insufficient Resources", 2
        )
        if compute + profile["compute"] > model["compute_slices"]:
            raise insufficient
        if names.count(profile["name"]) >= profile["max"]:
            raise insufficient
        if profile["name"].endswith("+me") and any(n.endswith("+me") for n in names):
            raise insufficient
        candidates = profile["starts"] if start is None else [start]
        for candidate in candidates:
            if candidate not in profile["starts"]:
                raise SmiError(f"Invalid placement {candidate} for profile {profile['id']}", 2)
            slots = set(range(candidate, candidate + profile["size"]))
            if max(slots) < model["memory_slices"] and not slots & used:
                return candidate
        raise insufficient


class SmiError(Exception):
    def __init__(self, msg: str, rc: int = 2):
        super().__init__(msg)
        self.rc = rc


# -- rendering the outputs discovery reads ---------------------------------------------------------------
def render_xml(state: dict) -> str:
    entries = []
    for gpu in state["gpus"]:
        bus_id = "0000" + gpu["address"].upper()
        mig = gpu.get("mig") or {"current": "N/A", "pending": "N/A"}
        devices = "".join(
            f"<mig_device><index>{n}</index><gpu_instance_id>{i['instance_id']}</gpu_instance_id>"
            f"<compute_instance_id>0</compute_instance_id></mig_device>"
            for n, i in enumerate(gpu["instances"])
            if i.get("compute_instances")
        )
        procs = "".join(
            f"<process_info><pid>{p['pid']}</pid><process_name>{escape(p['name'])}</process_name></process_info>"
            for p in gpu["processes"]
        )
        health = gpu.get("health") or {}
        lost = "Unknown Error" if health.get("lost") else None
        entries.append(
            f'<gpu id="{bus_id}"><product_name>{escape(lost or gpu["name"])}</product_name>'
            f"<serial>{escape(lost or gpu.get('serial') or default_serial(gpu['address']))}</serial>"
            f"<uuid>{escape(lost or gpu.get('uuid') or default_uuid(gpu))}</uuid>"
            f"<minor_number>{lost or state['gpus'].index(gpu)}</minor_number>"
            f"<mig_mode><current_mig>{mig['current']}</current_mig><pending_mig>{mig['pending']}</pending_mig>"
            f"</mig_mode><mig_devices>{devices or 'None'}</mig_devices>"
            f"<pci><pci_bus>{gpu['address'][5:7].upper()}</pci_bus><pci_bus_id>{bus_id}</pci_bus_id></pci>"
            f"{render_health(health) if health else ''}<processes>{procs}</processes></gpu>"
        )
    return (
        '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n<nvidia_smi_log>'
        f"<driver_version>{state.get('driver_version', '550.127.05')}</driver_version>"
        f"<attached_gpus>{len(entries)}</attached_gpus>" + "".join(entries) + "</nvidia_smi_log>\n"
    )


def render_health(health: dict) -> str:
    """The ECC, retired-pages and remapped-rows elements of ``nvidia-smi -q -x`` (driver 550, nvsmi_device_v12)
    for a GPU whose profile declares ``health``."""
    lost = bool(health.get("lost"))

    def value(given, word: bool = False) -> str:
        if lost:
            return "Unknown Error"
        if word:
            return "Yes" if given else "No"
        return str(int(given or 0))

    ecc = "".join(
        f"<{name}>{value(health.get('ecc_uncorrectable') if name == 'dram_uncorrectable' else 0)}</{name}>"
        for name in ("sram_correctable", "sram_uncorrectable_parity", "sram_uncorrectable_secded", "dram_correctable",
                     "dram_uncorrectable")
    )  # fmt: skip
    pending = value(health.get("retired_pages_pending"), word=True)
    return (
        f"<ecc_mode><current_ecc>Enabled</current_ecc><pending_ecc>Enabled</pending_ecc></ecc_mode>"
        f"<ecc_errors><volatile>{ecc}</volatile><aggregate>{ecc}</aggregate></ecc_errors>"
        "<retired_pages><multiple_single_bit_retirement><retired_count>N/A</retired_count>"
        "<retired_pagelist>N/A</retired_pagelist></multiple_single_bit_retirement><double_bit_retirement>"
        "<retired_count>N/A</retired_count><retired_pagelist>N/A</retired_pagelist></double_bit_retirement>"
        f"<pending_blacklist>N/A</pending_blacklist><pending_retirement>{pending}</pending_retirement></retired_pages>"
        f"<remapped_rows><remapped_row_corr>{value(0)}</remapped_row_corr>"
        f"<remapped_row_unc>{value(health.get('ecc_uncorrectable'))}</remapped_row_unc>"
        f"<remapped_row_pending>{value(health.get('remapped_row_pending'), word=True)}</remapped_row_pending>"
        f"<remapped_row_failure>{value(health.get('remapped_row_failure'), word=True)}</remapped_row_failure>"
        "</remapped_rows>"
    )


# What the driver writes after the Xid number for the Xids a profile may plant (as real drivers print them).
XID_TEXT = {
    13: "pid=3201, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address",
    31: "pid=3201, name=python3, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ "
        "0x7f3a_5c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    43: "pid=3201, name=python3, Ch 00000008",
    45: "pid=3201, name=python3, Ch 00000008",
    48: "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the "
        "framebuffer at partition 0, subpartition 0.",
    63: "pid='<unknown>', name=<unknown>, Row Remapper: New row (0x0000000000012ab4) marked for remapping, reset gpu "
        "to activate.",
    64: "pid='<unknown>', name=<unknown>, Row Remapper: Failed to remap row (0x0000000000012ab4)",
    74: "pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, "
        "0x0)",
    79: "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    92: "pid='<unknown>', name=<unknown>, High single-bit ECC error rate",
    94: "pid=3201, name=python3, Contained: SM (0x1). RST: No, D-RST: No",
    95: "pid='<unknown>', name=<unknown>, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No",
    119: "pid='<unknown>', name=<unknown>, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected "
         "function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).",
    120: "pid='<unknown>', name=<unknown>, GSP task exception",
}  # fmt: skip
DEFAULT_XID_TIME = "2026-01-01T00:00:00+00:00"


def kernel_log(state: dict, hostname: str) -> str | None:
    """``/var/log/kern.log`` lines (rsyslog's ISO 8601 format, as on Ubuntu 24.04) for the Xid events the
    profile's ``health: {xid: [...], xid_time: ...}`` plants; None when no GPU has any."""
    lines = []
    for gpu in state["gpus"]:
        health = gpu.get("health") or {}
        numbers = health.get("xid") or []
        if not isinstance(numbers, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
            raise ValueError(f"GPU {gpu['address']}: health.xid must be a list of Xid numbers, e.g. [79]")
        when = str(health.get("xid_time") or DEFAULT_XID_TIME)
        stamp = when.replace("+00:00", ".000000+00:00") if "." not in when else when
        address = gpu["address"][: gpu["address"].rindex(".")]
        for number in numbers:
            text = XID_TEXT.get(int(number), "pid='<unknown>', name=<unknown>, ")
            lines.append(f"{stamp} {hostname} kernel: NVRM: Xid (PCI:{address}): {int(number)}, {text}")
    return "".join(line + "\n" for line in lines) if lines else None


def default_uuid(gpu: dict) -> str:
    """A GPU UUID for a GPU whose profile names none: stable per serial (or address, without one). GPUs that
    share a board serial (an A16 board) need their own ``gpu_uuid`` in the profile to be told apart."""
    return f"GPU-{uuid.uuid5(uuid.NAMESPACE_OID, gpu.get('serial') or gpu['address'])}"


def default_serial(address: str) -> str:
    """A board serial for a GPU whose profile names none: 13 digits, stable per address."""
    return "1650" + "".join(f"{int(part, 16):03d}" for part in address.replace(".", ":").split(":")[1:4])


def render_lgi(state: dict, gpu: dict) -> str:
    index = state["gpus"].index(gpu)
    rows = [
        "+-------------------------------------------------------+",
        "| GPU instances:                                        |",
        "| GPU   Name             Profile  Instance   Placement  |",
        "|                          ID       ID       Start:Size |",
        "|=======================================================|",
    ]
    for inst in sorted(gpu["instances"], key=lambda i: i["instance_id"]):
        start, size = inst["placement"].split(":")
        rows.append(
            f"|   {index}  MIG {inst['profile']:<12} {inst['profile_id']:>4}     {inst['instance_id']:>4}"
            f"          {start}:{size}     |"
        )
    rows.append("+-------------------------------------------------------+")
    return "\n".join(rows) + "\n"


def render_lgip(gpu: dict, model: dict | None) -> str:
    """``nvidia-smi mig -lgip`` in nvidia-smi's layout (memory and engine columns are not modelled)."""
    rule = "+" + "-" * 79 + "+"

    def row(text: str) -> str:
        return "|" + text.ljust(79)[:79] + "|"

    used: dict[int, int] = {}
    for inst in gpu["instances"]:
        used[inst["profile_id"]] = used.get(inst["profile_id"], 0) + 1
    rows = [rule, row(" GPU instance profiles:"),
            row(" GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC"),
            row("                                Free/Total   GiB              CE    JPEG  OFA"),
            "|" + "=" * 79 + "|"]  # fmt: skip
    for p in (model or {}).get("profiles", []):
        free = max(0, p["max"] - used.get(p["id"], 0))
        counts = f"{free}/{p['max']}"
        rows.append(row(f"   0  MIG {p['name']:<16}{p['id']:>2}     {counts:<11}0.00       No     0      0     0"))
        rows.append(row(" " * 62 + "0     0     0"))
        rows.append(rule)
    return "\n".join(rows) + "\n"


def render_lgipp(model: dict | None) -> str:
    """``nvidia-smi mig -lgipp``: each profile's allowed placements as ``{starts}:size``."""
    lines = []
    for p in (model or {}).get("profiles", []):
        word = "Placements:" if len(p["starts"]) > 1 else "Placement :"
        lines.append(f"GPU  0 Profile ID {p['id']:>2} {word} {{{','.join(map(str, p['starts']))}}}:{p['size']}")
    return "\n".join(lines) + "\n"


def recorded_outputs(state: dict) -> dict[str, str]:
    """The recorded outputs discovery reads for ``state``: host path -> text."""
    out = {f"{RECORDED}/q-x.xml": render_xml(state)}
    for gpu in state["gpus"]:
        if (gpu.get("mig") or {}).get("current") == "Enabled":
            text = render_lgi(state, gpu) if gpu["instances"] else "No GPU instances found: Not Found\n"
            out[f"{RECORDED}/mig-lgi/{gpu['address']}.txt"] = text
    return out


def render_recorded(root: str, state: dict) -> None:
    def write(host_path: str, text: str) -> None:
        real = os.path.join(root, host_path.lstrip("/"))
        os.makedirs(os.path.dirname(real), exist_ok=True)
        with open(real, "w") as handle:
            handle.write(text)

    outputs = recorded_outputs(state)
    for host_path, text in outputs.items():
        write(host_path, text)
    for gpu in state["gpus"]:
        path = f"{RECORDED}/mig-lgi/{gpu['address']}.txt"
        if path not in outputs and os.path.exists(os.path.join(root, path.lstrip("/"))):
            os.unlink(os.path.join(root, path.lstrip("/")))


def initial_state(gpus: list[dict], nvidia_drm_loaded: bool = False) -> dict:
    """The double's state for the profile's GPUs on the nvidia driver (fake_sysfs calls this)."""
    out = []
    for gpu in gpus:
        mig = gpu.get("mig") or {}
        mode = mig.get("mode", {"current": "N/A", "pending": "N/A"})
        out.append(
            {
                "address": gpu["address"],
                "product_id": gpu["product_id"],
                "name": gpu.get("smi_name", "NVIDIA GPU"),
                **({"serial": str(gpu["serial"])} if gpu.get("serial") else {}),
                **({"uuid": str(gpu["gpu_uuid"])} if gpu.get("gpu_uuid") else {}),
                "mig": {"current": mode["current"], "pending": mode["pending"]},
                "instances": [
                    {
                        "profile": i["profile"],
                        "profile_id": i["profile_id"],
                        "instance_id": i["instance_id"],
                        "placement": str(i["placement"]),
                        "compute_instances": i.get("compute_instances", 1),
                    }
                    for i in mig.get("instances", [])
                ],
                "processes": list(gpu.get("processes", [])),
                **({"health": dict(gpu["health"])} if gpu.get("health") else {}),
            }
        )
    return {"gpus": out, "nvidia_drm_loaded": nvidia_drm_loaded}


def after_reboot(before: dict, fresh: dict, mig_lost: bool = False, no_reset: bool = False) -> dict:
    """The double's state after a reboot: ``fresh`` (what the hardware profile gives at power-on: no GPU
    instances) with each GPU's MIG mode carried over from ``before`` (the pending mode becomes current, as
    at a real boot), or off when ``mig_lost``; ``no_reset`` marks the MIG-capable GPUs as refusing a reset."""
    old = {g["address"]: g for g in before.get("gpus", [])}
    for gpu in fresh["gpus"]:
        mode = gpu.get("mig") or {}
        if mode.get("current") in (None, "N/A"):
            continue  # no MIG on this GPU
        previous = (old.get(gpu["address"]) or {}).get("mig") or mode
        kept = "Disabled" if mig_lost else previous.get("pending", mode["current"])
        gpu["mig"] = {"current": kept, "pending": kept}
        if no_reset:
            gpu["reset"] = False
    return fresh


# The entry point of the copy installed as /usr/bin/nvidia-smi in a Debian root (the module itself has none).
INSTALLED_ENTRY = """

if __name__ == "__main__":
    import sys

    _status, _out, _err = command_line(sys.argv[1:])
    sys.stdout.write(_out)
    sys.stderr.write(_err)
    sys.exit(_status)
"""


def install(root: str) -> str:
    """Put the double at ``<root>/usr/bin/nvidia-smi`` (run by the root's python3) with its tables."""
    tables = os.path.join(root, INSTALLED_TABLES.lstrip("/"))
    os.makedirs(os.path.dirname(tables), exist_ok=True)
    with open(tables, "w") as handle:
        json.dump(load_tables(), handle, indent=1, sort_keys=True)
    target = os.path.join(root, "usr/bin/nvidia-smi")
    with open(os.path.abspath(__file__)) as source, open(target, "w") as handle:
        handle.write("#!/usr/bin/python3\n" + source.read() + INSTALLED_ENTRY)
    os.chmod(target, 0o755)
    return target


def command_line(argv: list[str]) -> tuple[int, str, str]:
    """The double's command line: ``--install ROOT`` (the installed script's path as output), or ``[--root
    ROOT] ARGS`` as nvidia-smi; returns the exit status, stdout and stderr."""
    argv = list(argv)
    if argv[:1] == ["--install"]:
        return 0, install(argv[1]) + "\n", ""
    root = "/"
    if argv[:1] == ["--root"]:
        root, argv = argv[1], argv[2:]
    return FakeNvidiaSmi(root)(argv)
