# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health of a host's NVIDIA GPUs, read without changing anything: nvidia-smi, the kernel log, DCGM.

Three sources, each bounded and type-checked, each error naming the file (or command) and the field:

- ``nvidia-smi -q -x`` (run on a live host with a timeout, else the recorded
  ``/var/lib/accel-openstack/nvidia-smi/q-x.xml`` under the root): a GPU whose fields read ``Unknown Error`` or
  ``GPU is lost`` is lost; ``remapped_rows`` (``remapped_row_failure``, ``remapped_row_pending``),
  ``retired_pages`` (``pending_blacklist``, ``pending_retirement``) and the volatile uncorrectable ECC counts
  (``dram_uncorrectable``, ``sram_uncorrectable*``, or ``double_bit/total`` of older drivers). The XML is parsed
  with expat and refused when it declares an entity or carries an internal DTD subset (nvidia-smi writes
  only ``<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">``, which is never fetched);
- the kernel log (a file under the root, or ``journalctl -k`` run with a timeout): Xid events (``xid.py``);
- optionally a DCGM exporter's metrics text (a file, or its URL): ``DCGM_FI_DEV_XID_ERRORS`` (the last Xid),
  ``DCGM_FI_DEV_ROW_REMAP_FAILURE`` and ``DCGM_EXP_GPU_HEALTH_STATUS`` (DCGM's health result: 0 pass,
  10 warning, 20 failure).

:func:`assess` gives each GPU (by PCI address) a state, ``healthy``, ``degraded`` or ``failed``: the worst
state of its current events. nvidia-smi's conditions and DCGM's values are current; an Xid event is current
when it is at most ``window`` seconds old (or when its time is unknown), and older ones are listed with
``current: false`` so that a GPU is healthy again once it has gone ``window`` seconds without an event.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shlex
import signal
import stat
import subprocess
import tempfile
from xml.etree import ElementTree
from xml.parsers import expat

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host import xid as xids
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot, HostRootError
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_address, normalize_address

RECORDED_XML = "/var/lib/accel-openstack/nvidia-smi/q-x.xml"
DEFAULT_KERNEL_LOG = "/var/log/kern.log"
DEFAULT_KERNEL_LOG_COMMAND = ["journalctl", "-k", "-b", "-o", "short-iso", "--no-pager"]
MAX_XML = 8 << 20  # bytes of nvidia-smi -q -x (8 GPUs with hundreds of processes stay far below 1 MiB)
MAX_ELEMENTS = 500000
MAX_DEPTH = 32
MAX_LOG = 16 << 20  # bytes of kernel log read: its last 16 MiB, where the recent events are
MAX_DCGM = 8 << 20
MAX_DCGM_LINES = 200000
MAX_LABELS = 64
MAX_EVENTS = 100  # events kept per GPU (the most recent); the rest are counted
MAX_WINDOW = 31 * 86400
LOST_TEXTS = ("Unknown Error", "GPU is lost")
# The fields that say a GPU is lost when they read one of LOST_TEXTS (other fields may read Unknown Error on a
# healthy GPU whose driver cannot answer that one query).
LOST_FIELDS = ("product_name", "uuid")
DCGM_HEALTH = {0: "healthy", 10: "degraded", 20: "failed"}
CONDITIONS = {
    # class: (state, meaning, action)
    "gpu_lost": ("failed", "nvidia-smi cannot reach the GPU (its fields read Unknown Error or GPU is lost)",
                 "drain the host, then reset the GPU or power-cycle the host; check the PCIe seating, power and "
                 "cooling, and contact NVIDIA support if it recurs"),
    "row_remap_failure": ("failed", "row remapping failed: the GPU has no spare row left for a failing memory row",
                          "drain the GPU; it needs replacing (contact NVIDIA support)"),
    "uncorrectable_ecc": ("failed", "volatile uncorrectable ECC errors since the driver loaded",
                          "drain the GPU and reset it so that the failing memory is remapped or retired"),
    "row_remap_pending": ("degraded", "a row remapping waits for a GPU reset",
                          "reset the GPU when it is idle so that the remapping takes effect"),
    "retired_pages_pending": ("degraded", "retired pages wait for a GPU reset or reboot (page retirement)",
                              "reset the GPU (or reboot the host) when it is idle so that the pages are retired"),
    "dcgm_health": ("degraded", "DCGM's health watches report a problem", "read dcgmi health -c for the details"),
}  # fmt: skip
_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)(?:\s+-?\d+)?\s*\Z")
_LABEL = re.compile(r'\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*"(?P<value>(?:[^"\\]|\\.)*)"\s*(?:,|\Z)')
_SMI_LOST = re.compile(
    r"GPU\s*(?P<bus_id>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\b[^\n]*?(?:Unknown Error|GPU is lost)"
)
DCGM_METRICS = ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_EXP_GPU_HEALTH_STATUS")


class GpuHealthError(AccelError, ValueError):
    """A health source that cannot be read as what it claims to be; the message names it and the field."""


def _shown(value: object, width: int = 60) -> str:
    text = "".join(c if c.isprintable() else " " for c in str(value))
    return text if len(text) <= width else text[:width] + f" (and {len(text) - width} more characters)"


def _quoted(value: object, width: int = 60) -> str:
    """``value`` in quotes, at most ``width`` characters of it, and how many more there are."""
    text = "".join(c if c.isprintable() else " " for c in str(value))
    more = f" (and {len(text) - width} more characters)" if len(text) > width else ""
    return repr(text[:width]) + more


def bus_id(address: str) -> str:
    """nvidia-smi's and DCGM's form of an address: ``00000000:3B:00.0``."""
    domain, rest = address.split(":", 1)
    return f"{domain:0>8}:{rest}".upper()


# -- nvidia-smi -q -x ------------------------------------------------------------------------------------
def parse_xml(text: str, source: str) -> ElementTree.Element:
    """``text`` as an element tree; refused when too large, too deep, or declaring entities or a DTD subset."""
    if len(text) > MAX_XML:
        raise GpuHealthError(
            f"{source}: {len(text):,} characters of XML; nvidia-smi -q -x writes far less, and at most "
            f"{MAX_XML:,} are read: give the output of nvidia-smi -q -x"
        )
    builder = ElementTree.TreeBuilder()
    parser = expat.ParserCreate()
    depth = [0, 0]  # current depth, elements seen

    def refuse(what: str):
        raise GpuHealthError(
            f"{source}: the XML {what}; nvidia-smi -q -x never does, so it is refused unread (no entity is expanded)"
        )

    def doctype(_name, _system, _public, internal_subset):
        if internal_subset:
            refuse("carries an internal DTD subset")

    def start(tag, attrs):
        depth[0] += 1
        depth[1] += 1
        if depth[0] > MAX_DEPTH:
            refuse(f"nests elements deeper than {MAX_DEPTH} levels")
        if depth[1] > MAX_ELEMENTS:
            refuse(f"holds more than {MAX_ELEMENTS:,} elements")
        builder.start(tag, attrs)

    def end(tag):
        depth[0] -= 1
        builder.end(tag)

    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = lambda name, *_rest: refuse(f"declares the entity {_shown(name)}")
    parser.UnparsedEntityDeclHandler = lambda name, *_rest: refuse(f"declares the entity {_shown(name)}")
    parser.ExternalEntityRefHandler = lambda *_args: refuse("refers to an external entity")
    parser.SkippedEntityHandler = lambda name, *_rest: refuse(f"refers to the undeclared entity {_shown(name)}")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise GpuHealthError(
            f"{source}: not well-formed XML ({expat.ErrorString(exc.code)} at line {exc.lineno}); "
            "give the output of nvidia-smi -q -x"
        ) from None
    root = builder.close()
    if root.tag != "nvidia_smi_log":
        raise GpuHealthError(
            f"{source}: the document element is <{_shown(root.tag)}>, not <nvidia_smi_log>; "
            "give the output of nvidia-smi -q -x"
        )
    return root


def _text(gpu: ElementTree.Element, path: str) -> str | None:
    element = gpu.find(path)
    return None if element is None else (element.text or "").strip()


def _count(gpu, path: str, where: str) -> int | None:
    """A counter nvidia-smi writes as a whole number or N/A; None when absent or N/A."""
    value = _text(gpu, path)
    if value is None or value in ("N/A", "", "[N/A]") or value in LOST_TEXTS:
        return None
    if not value.isdigit() or len(value) > 19:
        raise GpuHealthError(f"{where}: {path} is {_quoted(value)}; nvidia-smi writes a whole number or N/A there")
    return int(value)


def _flag(gpu, path: str, where: str) -> bool | None:
    """A Yes/No field; None when absent or N/A."""
    value = _text(gpu, path)
    if value is None or value in ("N/A", "", "[N/A]") or value in LOST_TEXTS:
        return None
    if value not in ("Yes", "No"):
        raise GpuHealthError(f"{where}: {path} is {_quoted(value)}; nvidia-smi writes Yes, No or N/A there")
    return value == "Yes"


def _identity(value: str | None) -> str | None:
    text = (value or "").strip()
    return text if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.:()/-]{0,127}", text) and text not in LOST_TEXTS else None


def parse_smi(text: str, source: str) -> dict[str, dict]:
    """``nvidia-smi -q -x`` -> {address: {index, product_name, uuid, minor_number, lost, conditions, counts}}."""
    root = parse_xml(text, source)
    out: dict[str, dict] = {}
    for index, gpu in enumerate(root.findall("gpu")):
        given = gpu.get("id") or _text(gpu, "pci/pci_bus_id") or ""
        if not is_address(given, require_domain=True):
            raise GpuHealthError(
                f"{source}: gpu {index + 1}: its id {_quoted(given)} is not a PCI bus id such as 00000000:3B:00.0"
            )
        address = normalize_address(given, require_domain=True)
        where = f"{source}: GPU {address}"
        if address in out:
            raise GpuHealthError(f"{where}: listed twice; nvidia-smi lists each GPU once")
        lost = any((_text(gpu, path) or "") in LOST_TEXTS for path in LOST_FIELDS)
        minor = _count(gpu, "minor_number", where)
        volatile = [
            _count(gpu, f"ecc_errors/volatile/{name}", where)
            for name in ("dram_uncorrectable", "sram_uncorrectable", "sram_uncorrectable_parity",
                         "sram_uncorrectable_secded", "double_bit/total")
        ]  # fmt: skip
        pending_pages = [_flag(gpu, f"retired_pages/{n}", where) for n in ("pending_blacklist", "pending_retirement")]
        failure = [
            _flag(gpu, f"remapped_rows/{n}", where) for n in ("remapped_row_failure", "remapping_failure_occurred")
        ]
        conditions = []
        if lost:
            conditions.append(("gpu_lost", "its product_name or uuid reads Unknown Error or GPU is lost"))
        if any(failure):
            conditions.append(("row_remap_failure", "remapped_rows/remapped_row_failure is Yes"))
        uncorrectable = sum(v for v in volatile if v)
        if uncorrectable:
            conditions.append(("uncorrectable_ecc", f"{uncorrectable} volatile uncorrectable ECC errors"))
        if _flag(gpu, "remapped_rows/remapped_row_pending", where):
            conditions.append(("row_remap_pending", "remapped_rows/remapped_row_pending is Yes"))
        if any(pending_pages):
            conditions.append(("retired_pages_pending", "retired_pages has pages pending retirement"))
        out[address] = {
            "index": index,
            "product_name": _identity(_text(gpu, "product_name")),
            "uuid": _identity(_text(gpu, "uuid")),
            "minor_number": minor,
            "lost": lost,
            "volatile_uncorrectable": uncorrectable,
            "remapped_rows_uncorrectable": _count(gpu, "remapped_rows/remapped_row_unc", where),
            "retired_pages_double_bit": _count(gpu, "retired_pages/double_bit_retirement/retired_count", where),
            "conditions": conditions,
        }
    return out


def lost_from_errors(text: str) -> list[str]:
    """Addresses nvidia-smi's error text names as lost (``Unable to determine the device handle for GPU
    0000:3B:00.0: Unknown Error``, ``GPU 00000000:3B:00.0: GPU is lost``)."""
    found = []
    for match in _SMI_LOST.finditer(text[:MAX_XML]):
        if is_address(match["bus_id"], require_domain=True):
            address = normalize_address(match["bus_id"], require_domain=True)
            if address not in found:
                found.append(address)
    return found


# -- DCGM exporter ---------------------------------------------------------------------------------------
def _labels(text: str, where: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _LABEL.match(text, position)
        if match is None:
            raise GpuHealthError(
                f'{where}: labels {_quoted(text)} are not in the exposition format (name="value", ...)'
            )
        labels[match["key"]] = re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), match["value"])
        position = match.end()
        if len(labels) > MAX_LABELS:
            raise GpuHealthError(f"{where}: more than {MAX_LABELS} labels")
    return labels


def parse_dcgm(text: str, source: str) -> tuple[list[dict], list[str]]:
    """The DCGM exporter's samples the health reads: [{metric, address, value, labels}], and warnings."""
    if len(text) > MAX_DCGM:
        raise GpuHealthError(f"{source}: {len(text):,} characters of metrics; at most {MAX_DCGM:,} are read")
    lines = text.splitlines()
    if len(lines) > MAX_DCGM_LINES:
        raise GpuHealthError(f"{source}: {len(lines):,} lines of metrics; at most {MAX_DCGM_LINES:,} are read")
    samples, warnings = [], []
    for number, line in enumerate(lines, 1):
        if not line.startswith(DCGM_METRICS):
            continue
        where = f"{source} line {number}"
        match = _SAMPLE.match(line)
        if match is None and line.split("{", 1)[0].split(" ", 1)[0] in DCGM_METRICS:
            raise GpuHealthError(f"{where}: {_quoted(line)} is not a sample line (name{{labels}} value)")
        if match is None or match["name"] not in DCGM_METRICS:
            continue  # another family whose name starts alike (DCGM_FI_DEV_XID_ERRORS_COUNT)
        labels = _labels(match["labels"] or "", where)
        try:
            value = float(match["value"])
        except ValueError:
            raise GpuHealthError(
                f"{where}: {match['name']}'s value {_quoted(match['value'])} is not a number"
            ) from None
        if math.isnan(value) or math.isinf(value):
            warnings.append(f"{where}: {match['name']} is {match['value']}; the sample is not counted")
            continue
        given = labels.get("pci_bus_id", "")
        if not is_address(given, require_domain=True):
            warnings.append(
                f"{where}: {match['name']} has pci_bus_id {_quoted(given)}, not a PCI bus id; the sample is not counted"
            )
            continue
        samples.append(
            {"metric": match["name"], "address": normalize_address(given, require_domain=True), "value": value,
             "labels": {k: _shown(v, 128) for k, v in labels.items() if k in ("gpu", "UUID", "device", "modelName")}}
        )  # fmt: skip
    return samples, warnings


def _dcgm_events(samples: list[dict]) -> list[dict]:
    events = []
    for sample in samples:
        value = sample["value"]
        base = {"source": "dcgm", "address": sample["address"], "time": None, "stamp": None, "xid": None}
        if sample["metric"] == "DCGM_FI_DEV_XID_ERRORS" and value >= 1:
            number = int(value)
            events.append(
                {**base, "xid": number, "detail": f"DCGM_FI_DEV_XID_ERRORS is {number}", **xids.describe(number)}
            )
        elif sample["metric"] == "DCGM_FI_DEV_ROW_REMAP_FAILURE" and value >= 1:
            events.append({**base, "detail": "DCGM_FI_DEV_ROW_REMAP_FAILURE is 1", **_condition("row_remap_failure")})
        elif sample["metric"] == "DCGM_EXP_GPU_HEALTH_STATUS" and value != 0:
            state = DCGM_HEALTH.get(int(value), "degraded")
            event = {**base, "detail": f"DCGM_EXP_GPU_HEALTH_STATUS is {value:g}", **_condition("dcgm_health")}
            events.append({**event, "state": state})
    return events


def _condition(kind: str) -> dict:
    state, meaning, action = CONDITIONS[kind]
    return {"class": kind, "state": state, "meaning": meaning, "action": action}


# -- the assessment --------------------------------------------------------------------------------------
def assess(
    smi: dict[str, dict], events: list[dict], now: float, window: int, lost: list[str] | None = None, seen=()
) -> list[dict]:
    """One entry per GPU (of nvidia-smi, of an event, of ``lost`` and of ``seen``: the addresses DCGM reports):
    its identity, ``state``, the ``classes`` of its current events, and its ``events``."""
    addresses = sorted(set(smi) | {e["address"] for e in events} | set(lost or ()) | set(seen))
    devices = []
    for address in addresses:
        gpu = smi.get(address) or {}
        found = []
        for kind, detail in gpu.get("conditions") or ():
            found.append({"source": "nvidia_smi", "address": address, "xid": None, "time": None, "stamp": None,
                          "detail": detail, **_condition(kind)})  # fmt: skip
        if address in (lost or ()) and not gpu.get("lost"):
            said = "nvidia-smi reports the GPU lost (Unknown Error)"
            found.append({"source": "nvidia_smi", "address": address, "xid": None, "time": None, "stamp": None,
                          "detail": said, **_condition("gpu_lost")})  # fmt: skip
        found += [e for e in events if e["address"] == address]
        for event in found:
            stamp = event.get("stamp")
            event["current"] = stamp is None or now - stamp <= window
        current = [e for e in found if e["current"]]
        state = max((e["state"] for e in current), key=xids.STATES.index, default="healthy")
        stamps = [e["stamp"] for e in found if e.get("stamp") is not None]
        ordered = sorted(found, key=lambda e: (e.get("stamp") is None, e.get("stamp") or 0), reverse=True)
        kept = [{k: v for k, v in e.items() if k not in ("stamp", "address")} for e in ordered[:MAX_EVENTS]]
        devices.append(
            {
                "address": address,
                "bus_id": bus_id(address),
                "gpu": gpu.get("index"),
                "device": f"nvidia{gpu['minor_number']}" if gpu.get("minor_number") is not None else None,
                "product_name": gpu.get("product_name"),
                "uuid": gpu.get("uuid"),
                "in_nvidia_smi": address in smi,
                "state": state,
                "classes": sorted({e["class"] for e in current if e["state"] != "healthy"}),
                "events": kept,
                "events_dropped": max(0, len(found) - MAX_EVENTS),
                "last_event": xids.iso(max(stamps)) if stamps else None,
            }
        )
    return devices


def check_window(window: object) -> int:
    if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= MAX_WINDOW:
        raise GpuHealthError(
            f"window is {_shown(window)}; give the seconds an event counts for the GPU's state, 1 to {MAX_WINDOW:,} "
            "(31 days)"
        )
    return window


# -- reading the sources ---------------------------------------------------------------------------------
def run_bounded(argv: list[str], timeout: int, limit: int) -> dict:
    """Run ``argv`` without a shell for at most ``timeout`` seconds; keep the last ``limit`` bytes of stdout.

    Returns ``{rc, stdout, stderr, timed_out, error}``; ``rc`` is None when it was killed or did not start."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            # run_command has no timeout: the command runs in its own session, which the timeout kills whole.
            process = subprocess.Popen(  # noqa: S603  # pylint: disable=ansible-bad-function
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
            )
        except OSError as exc:
            missing = isinstance(exc, FileNotFoundError)
            return {"rc": 127 if missing else None, "stdout": "", "stderr": exc.strerror or str(exc),
                    "timed_out": False, "error": exc.strerror or str(exc)}  # fmt: skip
        timed_out = False
        try:
            rc = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
            rc = None
        result = {"rc": rc, "timed_out": timed_out, "error": ""}
        for name, handle, keep in (("stdout", out, limit), ("stderr", err, 4000)):
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - keep))
            result[name] = handle.read().decode("utf-8", errors="replace")
            result[f"{name}_cut"] = size > keep
        return result


def _read_host_file(host: HostRoot, path: str, limit: int, what: str, tail: bool = False) -> tuple[str | None, bool]:
    """(text or None when absent, whether it was cut). A file over ``limit`` is refused, or only its last
    ``limit`` bytes are read when ``tail`` (a log's recent end)."""
    try:
        real = host.path(path)
        if not os.path.lexists(real):
            return None, False
        info = os.stat(real)
        if not stat.S_ISREG(info.st_mode):
            raise GpuHealthError(f"{path}: not a regular file; give the {what} as a file")
        if info.st_size > limit and not tail:
            raise GpuHealthError(
                f"{path}: {info.st_size:,} bytes; a {what} is read up to {limit:,} bytes: give the {what} itself"
            )
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise GpuHealthError(f"{path}: not a regular file; give the {what} as a file")
            size = os.fstat(fd).st_size
            start = max(0, size - limit)
            os.lseek(fd, start, os.SEEK_SET)
            chunks, read = [], 0
            while read <= limit:
                chunk = os.read(fd, min(1 << 16, limit + 1 - read))
                if not chunk:
                    break
                chunks.append(chunk)
                read += len(chunk)
        finally:
            os.close(fd)
    except HostRootError as exc:
        raise GpuHealthError(f"{path}: {exc}") from None
    except OSError as exc:
        raise GpuHealthError(f"{path}: cannot read it ({exc.strerror or exc}); run with become") from None
    data = b"".join(chunks)
    if len(data) > limit and not tail:
        raise GpuHealthError(f"{path}: more than {limit:,} bytes; a {what} is read up to {limit:,} bytes")
    text = data[-limit:].decode("utf-8", errors="replace")
    if start > 0:
        text = text.split("\n", 1)[-1]  # the first line read may be the end of a longer one
    return text, start > 0


def boot_time(host: HostRoot) -> float | None:
    """The host's boot time from ``/proc/stat`` (``btime``), to place dmesg's seconds-since-boot in time."""
    try:
        text = host.read_text("/proc/stat", limit=1 << 20) or ""
    except (HostRootError, OSError):
        return None
    match = re.search(r"^btime (\d{1,12})$", text, re.M)
    return float(match.group(1)) if match else None


def gather(host: HostRoot, options: dict, now: float) -> dict:
    """Read every source the options name, assess each GPU; returns the module's result (changes nothing)."""
    window = check_window(options.get("window"))
    timeout = options.get("timeout") or 60
    warnings: list[str] = []
    sources: dict[str, dict | None] = {"nvidia_smi": None, "kernel_log": None, "dcgm": None}
    smi: dict[str, dict] = {}
    lost: list[str] = []
    # nvidia-smi -q -x
    xml_path = options.get("nvidia_smi_xml")
    if xml_path or not host.is_live:
        path = xml_path or RECORDED_XML
        text, _cut = _read_host_file(host, path, MAX_XML, "nvidia-smi -q -x output")
        if text is not None:
            smi = parse_smi(text, path)
            sources["nvidia_smi"] = {"file": path}
    else:
        argv = list(options.get("nvidia_smi_command") or ["nvidia-smi", "-q", "-x"])
        ran = run_bounded(argv, timeout, MAX_XML + 1)
        shown = shlex.join(argv)
        sources["nvidia_smi"] = {"command": shown, "rc": ran["rc"], "timed_out": ran["timed_out"]}
        lost = lost_from_errors(ran["stderr"] + "\n" + ran["stdout"][-4000:])
        if ran["timed_out"]:
            warnings.append(f"{shown} was still running after {timeout} seconds (timeout) and was killed; a GPU that "
                            "fell off the bus can hold it: look at the kernel log's Xid events")  # fmt: skip
        elif ran["rc"] == 127:
            sources["nvidia_smi"] = None  # no nvidia-smi: no NVIDIA driver on this host
        elif ran["stdout_cut"]:
            raise GpuHealthError(f"{shown}: more than {MAX_XML:,} bytes of output; at most {MAX_XML:,} are read")
        elif ran["stdout"].lstrip().startswith("<?xml") or ran["stdout"].lstrip().startswith("<nvidia_smi_log"):
            smi = parse_smi(ran["stdout"], shown)
        elif ran["rc"] != 0 and not lost:
            said = " ".join((ran["stderr"] or ran["stdout"]).split())[-400:] or "nothing"
            warnings.append(f"{shown} exited with status {ran['rc']} and wrote no XML; it said: {said}")
    events: list[dict] = []
    # the kernel log
    log_path = options.get("kernel_log")
    if log_path or not host.is_live:
        path = log_path or DEFAULT_KERNEL_LOG
        text, cut = _read_host_file(host, path, MAX_LOG, "kernel log", tail=True)
        if text is not None:
            sources["kernel_log"] = {"file": path, "cut": cut}
            found, said = xids.parse_kernel_log(text, path, now, boot_time(host) if host.is_live else None)
            events += found
            warnings += said
        elif log_path:
            warnings.append(f"kernel_log {log_path} does not exist under the root; no Xid event was read")
    else:
        argv = list(options.get("kernel_log_command") or DEFAULT_KERNEL_LOG_COMMAND)
        shown = shlex.join(argv)
        ran = run_bounded(argv, timeout, MAX_LOG)
        sources["kernel_log"] = {
            "command": shown,
            "rc": ran["rc"],
            "timed_out": ran["timed_out"],
            "cut": ran["stdout_cut"],
        }
        if ran["rc"] != 0:
            said = " ".join(ran["stderr"].split())[-400:] or "nothing"
            how = f"was killed after {timeout} seconds" if ran["timed_out"] else f"exited with status {ran['rc']}"
            warnings.append(f"{shown} {how} (it said: {said}); the Xid events it printed are counted")
        found, said = xids.parse_kernel_log(ran["stdout"], shown, now, boot_time(host))
        events += found
        warnings += said
    # DCGM
    dcgm_path, url = options.get("dcgm_metrics"), options.get("dcgm_url")
    seen: list[str] = []
    if dcgm_path:
        text, _cut = _read_host_file(host, dcgm_path, MAX_DCGM, "DCGM exporter metrics text")
        if text is None:
            warnings.append(f"dcgm_metrics {dcgm_path} does not exist under the root; DCGM was not read")
        else:
            sources["dcgm"] = {"file": dcgm_path}
            samples, said = parse_dcgm(text, dcgm_path)
            seen += [s["address"] for s in samples]
            events += _dcgm_events(samples)
            warnings += said
    elif url:
        sources["dcgm"] = {"url": url}
        samples, said = parse_dcgm(options["fetch"](url, timeout, MAX_DCGM), url)
        seen += [s["address"] for s in samples]
        events += _dcgm_events(samples)
        warnings += said
    devices = assess(smi, events, now, window, lost, seen)
    counts = {state: sum(1 for d in devices if d["state"] == state) for state in xids.STATES}
    return {"devices": devices, "counts": counts, "sources": sources, "window": window, "warnings": warnings}
