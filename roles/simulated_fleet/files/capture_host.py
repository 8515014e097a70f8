# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Capture a host as a hardware profile of accel.openstack, read-only: what the simulated_host module rebuilds.

    python3 capture_host.py --name NAME --out DIR [--root ROOT]

Reads the host under ROOT (default ``/``): PCI devices from ``/sys/bus/pci/devices`` (IDs, class,
parent bridge, NUMA node, IOMMU group, driver, boot VGA, SR-IOV with its VFs' device ID, driver and vGPU
types, mdev types, network interfaces, block devices), ``/sys/class/iommu``, the NUMA nodes,
``/proc/cmdline``, ``/proc/cpuinfo``, ``/proc/mounts``, ``/proc/net/route``, ``/proc/net/if_inet6`` and
NVIDIA's view: on the live host (ROOT ``/``) it runs ``nvidia-smi -q -x`` and ``nvidia-smi mig -lgi``,
``-lgip``, ``-lgipp`` for each GPU in MIG mode, which only read; any other root is read for the outputs
recorded under ``/var/lib/accel-openstack/nvidia-smi``.

Writes ``DIR/NAME.yml`` (the profile; YAML when PyYAML is installed, else its JSON form, which YAML readers
read alike) and ``DIR/NAME-nvidia-smi/`` (the nvidia-smi outputs as recorded files; the profile carries
them too, under ``files``, so one file rebuilds the host). Nothing is written under ROOT: an output
directory inside ROOT (or, for ``/``, under ``/sys`` or ``/proc``) is refused. Needs only python3.

What a profile cannot say, and the rebuilt root therefore lacks: the VFs' IOMMU groups (numbered after
the host's highest group, as the builder numbers them), a vGPU type already set on a VF, the MIG profile
behind a MIG-backed vGPU type, and files beyond those listed above.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import socket
import struct
import subprocess
import sys
from xml.etree import ElementTree

ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\Z")
RECORDED = "/var/lib/accel-openstack/nvidia-smi"
VGPU_LINE = re.compile(r"^\s*(\d+)\s*:\s*(.+?)\s*$")


class Host:
    """Reads under ``root`` only; a link is resolved inside it."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)

    def real(self, host_path: str) -> str:
        return os.path.join(self.root, host_path.lstrip("/"))

    def read(self, host_path: str) -> str | None:
        real = self.real(host_path)
        if not os.path.isfile(real):
            return None
        try:
            with open(real, "rb") as handle:
                return handle.read(16 * 1024 * 1024).decode("utf-8", "replace")
        except OSError:
            return None

    def value(self, host_path: str) -> str | None:
        text = self.read(host_path)
        return None if text is None else text.strip()

    def listdir(self, host_path: str) -> list[str]:
        try:
            return sorted(os.listdir(self.real(host_path)))
        except OSError:
            return []

    def resolve(self, host_path: str) -> str:
        """The host path ``host_path`` leads to, its links followed inside the root."""
        real = os.path.realpath(self.real(host_path))
        if os.path.commonpath([real, self.root]) != self.root:
            return host_path
        return "/" + os.path.relpath(real, self.root) if real != self.root else "/"

    def link_name(self, host_path: str) -> str | None:
        real = self.real(host_path)
        return os.path.basename(os.readlink(real)) if os.path.islink(real) else None


def _hex(text: str | None, digits: int) -> str | None:
    if not text or not re.match(r"^0x[0-9a-fA-F]+$", text):
        return None
    return text[2:].lower().zfill(digits)[-digits:]


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def cpu(host: Host) -> dict:
    text = host.read("/proc/cpuinfo") or ""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    vendor = {"GenuineIntel": "intel", "AuthenticAMD": "amd"}.get(
        fields.get("vendor_id"), fields.get("vendor_id", "unknown")
    )
    out = {"vendor": vendor, "model": fields.get("model name", "Generic CPU")}
    if _int(fields.get("cpu family")) is not None:
        out["family"] = int(fields["cpu family"])
    return out


def iommu(host: Host) -> str:
    units = host.listdir("/sys/class/iommu")
    if any(u.startswith("ivhd") for u in units):
        return "amd"
    return "intel" if units else "none"


def numa_nodes(host: Host) -> list[dict]:
    nodes = []
    for name in host.listdir("/sys/devices/system/node"):
        if not re.match(r"^node\d+$", name):
            continue
        meminfo = host.read(f"/sys/devices/system/node/{name}/meminfo") or ""
        match = re.search(r"MemTotal:\s+(\d+) kB", meminfo)
        nodes.append(
            {
                "id": int(name[4:]),
                "cpus": host.value(f"/sys/devices/system/node/{name}/cpulist") or "",
                "memory_mb": int(match.group(1)) // 1024 if match else 0,
            }
        )
    return sorted(nodes, key=lambda n: n["id"])


def _vgpu_types(text: str | None) -> list[dict]:
    out = []
    for line in (text or "").splitlines()[1:]:
        match = VGPU_LINE.match(line)
        if match:
            out.append({"id": int(match.group(1)), "name": match.group(2)})
    return out


def _mdev_types(host: Host, path: str) -> list[dict]:
    out = []
    for name in host.listdir(f"{path}/mdev_supported_types"):
        base = f"{path}/mdev_supported_types/{name}"
        out.append(
            {
                "type": name,
                "name": host.value(f"{base}/name") or "",
                "available_instances": _int(host.value(f"{base}/available_instances")) or 0,
                "device_api": host.value(f"{base}/device_api") or "vfio-pci",
                "description": host.value(f"{base}/description") or "",
            }
        )
    return out


def _routes(host: Host) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in (host.read("/proc/net/route") or "").splitlines()[1:]:
        parts = line.split()
        if len(parts) < 8:
            continue
        try:
            dest = socket.inet_ntoa(struct.pack("<I", int(parts[1], 16)))
            mask = socket.inet_ntoa(struct.pack("<I", int(parts[7], 16)))
            out.setdefault(parts[0], []).append(str(ipaddress.ip_network(f"{dest}/{mask}", strict=False)))
        except (ValueError, struct.error, OSError):
            continue
    return out


def _inet6(host: Host) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in (host.read("/proc/net/if_inet6") or "").splitlines():
        parts = line.split()
        if len(parts) != 6 or len(parts[0]) != 32:
            continue
        try:
            address = ipaddress.IPv6Address(int(parts[0], 16))
            out.setdefault(parts[5], []).append(f"{address}/{int(parts[2], 16)}")
        except ValueError:
            continue
    return out


def _net(host: Host, path: str, routes: dict, inet6: dict) -> dict | None:
    names = host.listdir(f"{path}/net")
    if not names:
        return None
    name = names[0]
    net = {
        "interface": name,
        "mac": host.value(f"{path}/net/{name}/address") or "02:00:00:00:00:01",
        "operstate": host.value(f"{path}/net/{name}/operstate") or "up",
        "addresses": inet6.get(name, []),
    }
    if routes.get(name):
        net["routes"] = routes[name]
    return net


def _block(host: Host, path: str, mounts: list[tuple[str, str]]) -> dict | None:
    for name in host.listdir("/sys/block"):
        target = host.resolve(f"/sys/block/{name}")
        if target.startswith(path + "/"):
            own = {dev: point for dev, point in mounts if os.path.basename(dev).startswith(name)}
            return {"name": name, "mounts": own} if own else {"name": name}
    return None


def devices(host: Host) -> list[dict]:
    routes, inet6 = _routes(host), _inet6(host)
    mounts = []
    for line in (host.read("/proc/mounts") or "").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith("/dev/"):
            mounts.append((parts[0], parts[1]))
    out = []
    for address in host.listdir("/sys/bus/pci/devices"):
        if not ADDRESS.match(address):
            continue
        link = f"/sys/bus/pci/devices/{address}"
        path = host.resolve(link)
        if os.path.islink(host.real(f"{link}/physfn")):
            continue  # a VF: the builder makes it again from its PF's sriov block
        device: dict = {"address": address}
        for key, name, digits in (
            ("vendor_id", "vendor", 4),
            ("product_id", "device", 4),
            ("class_code", "class", 6),
            ("subsystem_vendor_id", "subsystem_vendor", 4),
            ("subsystem_product_id", "subsystem_device", 4),
        ):
            value = _hex(host.value(f"{link}/{name}"), digits)
            if value is not None:
                device[key] = value
        if "vendor_id" not in device or "product_id" not in device or "class_code" not in device:
            continue
        parent = os.path.basename(os.path.dirname(path))
        if ADDRESS.match(parent):
            device["parent"] = parent
        numa = _int(host.value(f"{link}/numa_node"))
        device["numa_node"] = -1 if numa is None else numa
        group = host.link_name(f"{link}/iommu_group")
        if group is not None and group.isdigit():
            device["iommu_group"] = int(group)
        driver = host.link_name(f"{link}/driver")
        if driver:
            device["driver"] = driver
        if host.value(f"{link}/boot_vga") == "1":
            device["boot_vga"] = True
        mdev = _mdev_types(host, link)
        if mdev:
            device["mdev_types"] = mdev
        supported = _vgpu_types(host.read(f"{link}/nvidia/supported_vgpu_types"))
        if supported:
            device["nvidia_vgpu_types"] = supported
        totalvfs = _int(host.value(f"{link}/sriov_totalvfs"))
        if totalvfs is not None:
            device["sriov"] = _sriov(host, link, totalvfs)
        attributes = {a: host.value(f"{link}/{a}") for a in PARTITION_FILES if host.value(f"{link}/{a}") is not None}
        if attributes:
            device["attributes"] = attributes
        net = _net(host, path, routes, inet6)
        if net:
            device["net"] = net
        block = _block(host, path, mounts)
        if block:
            device["block"] = block
        out.append(device)
    return out


# amdgpu's partition files (MI300 series): the builder writes them back into the device's directory
PARTITION_FILES = (
    "current_compute_partition",
    "available_compute_partition",
    "current_memory_partition",
    "available_memory_partition",
)


def _sriov(host: Host, link: str, totalvfs: int) -> dict:
    sriov: dict = {
        "totalvfs": totalvfs,
        "numvfs": _int(host.value(f"{link}/sriov_numvfs")) or 0,
        "offset": _int(host.value(f"{link}/sriov_offset")) or 1,
        "stride": _int(host.value(f"{link}/sriov_stride")) or 1,
        "vf_product_id": (host.value(f"{link}/sriov_vf_device") or "").lower(),
    }
    vfs = [n for n in host.listdir(link) if re.match(r"^virtfn\d+$", n)]
    if vfs:
        vf = f"{link}/{sorted(vfs, key=lambda n: int(n[6:]))[0]}"
        vf_class = _hex(host.value(f"{vf}/class"), 6)
        if vf_class:
            sriov["vf_class_code"] = vf_class
        driver = host.link_name(f"{vf}/driver")
        if driver:
            sriov["vf_driver"] = driver
        mdev = _mdev_types(host, vf)
        if mdev:
            sriov["vf_mdev_types"] = mdev
        supported = _vgpu_types(host.read(f"{vf}/nvidia/supported_vgpu_types"))
        if supported:
            sriov["vf_nvidia_vgpu_types"] = supported
    return sriov


# -- NVIDIA's view -----------------------------------------------------------------------------------
def nvidia_outputs(host: Host, gpus: list[str]) -> dict[str, str]:
    """The nvidia-smi outputs discovery reads, as recorded files (host path -> text)."""
    if host.root != "/":
        out = {}
        base = host.real(RECORDED)
        for directory, _dirs, files in os.walk(base):
            for name in sorted(files):
                real = os.path.join(directory, name)
                if os.path.isfile(real) and not os.path.islink(real):
                    with open(real, encoding="utf-8", errors="replace") as handle:
                        out[RECORDED + "/" + os.path.relpath(real, base)] = handle.read()
        return out

    def smi(*argv: str) -> str | None:
        try:
            done = subprocess.run(["nvidia-smi", *argv], capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout if done.returncode == 0 else None

    xml = smi("-q", "-x")
    if xml is None:
        return {}
    out = {f"{RECORDED}/q-x.xml": xml}
    for address, mode in _mig_modes(xml).items():
        if address in gpus and mode == "Enabled":
            for kind in ("lgi", "lgip", "lgipp"):
                text = smi("mig", f"-{kind}", "-i", address)
                if text is not None:
                    out[f"{RECORDED}/mig-{kind}/{address}.txt"] = text
    return out


def _bus_address(bus_id: str) -> str | None:
    match = re.match(r"^([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$", bus_id.strip())
    if not match:
        return None
    return f"{int(match.group(1), 16):04x}:{match.group(2).lower()}:{match.group(3).lower()}.{match.group(4)}"


def _gpus_xml(xml: str) -> list:
    try:
        return ElementTree.fromstring(xml).findall("gpu")
    except ElementTree.ParseError:
        return []


def _mig_modes(xml: str) -> dict[str, str]:
    out = {}
    for gpu in _gpus_xml(xml):
        address = _bus_address(gpu.get("id") or "")
        if address:
            out[address] = (gpu.findtext("mig_mode/current_mig") or "N/A").strip()
    return out


def apply_nvidia(profile_devices: list[dict], outputs: dict[str, str]) -> None:
    """The GPU fields the nvidia-smi double starts from (name, serial, MIG mode and instances, processes)."""
    xml = outputs.get(f"{RECORDED}/q-x.xml")
    if not xml:
        return
    by_address = {d["address"]: d for d in profile_devices}
    for gpu in _gpus_xml(xml):
        device = by_address.get(_bus_address(gpu.get("id") or "") or "")
        if device is None:
            continue
        device["smi_name"] = (gpu.findtext("product_name") or "NVIDIA GPU").strip()
        serial = (gpu.findtext("serial") or "").strip()
        if serial and serial != "N/A":
            device["serial"] = serial
        current = (gpu.findtext("mig_mode/current_mig") or "N/A").strip()
        pending = (gpu.findtext("mig_mode/pending_mig") or "N/A").strip()
        if current != "N/A":
            with_compute = {
                (m.findtext("gpu_instance_id") or "").strip() for m in gpu.findall("mig_devices/mig_device")
            }
            instances = []
            for row in _lgi_rows(outputs.get(f"{RECORDED}/mig-lgi/{device['address']}.txt", "")):
                row["compute_instances"] = 1 if str(row["instance_id"]) in with_compute else 0
                if row["compute_instances"] == 1:
                    del row["compute_instances"]
                instances.append(row)
            device["mig"] = {"mode": {"current": current, "pending": pending}}
            if instances:
                device["mig"]["instances"] = instances
        processes = []
        for proc in gpu.findall("processes/process_info"):
            pid = _int((proc.findtext("pid") or "").strip())
            if pid is not None:
                processes.append({"pid": pid, "name": (proc.findtext("process_name") or "").strip()})
        if processes:
            device["processes"] = processes


def _lgi_rows(text: str) -> list[dict]:
    rows = []
    for line in text.splitlines():
        match = re.match(r"^\|\s+\d+\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+:\d+)\s+\|$", line)
        if match:
            rows.append(
                {
                    "profile": match.group(1),
                    "profile_id": int(match.group(2)),
                    "instance_id": int(match.group(3)),
                    "placement": match.group(4),
                }
            )
    return rows


# -- the profile ---------------------------------------------------------------------------------------
def capture(root: str, name: str) -> tuple[dict, dict[str, str]]:
    host = Host(root)
    profile: dict = {
        "name": name,
        "description": f"Captured from {'this host' if host.root == '/' else host.root} by capture_host.py.",
        "cpu": cpu(host),
        "kernel_cmdline": host.value("/proc/cmdline") or "",
        "iommu": iommu(host),
        "numa_nodes": numa_nodes(host),
        "devices": devices(host),
    }
    gpus = [d["address"] for d in profile["devices"] if d["vendor_id"] == "10de" and d.get("driver") == "nvidia"]
    outputs = nvidia_outputs(host, gpus)
    apply_nvidia(profile["devices"], outputs)
    if "nvidia_drm" in {line.split(" ", 1)[0] for line in (host.read("/proc/modules") or "").splitlines()}:
        profile["nvidia_drm_loaded"] = True
    if host.read("/etc/default/grub") is None:
        profile["boot"] = "none"
    if not any(host.read(p) is not None for p in ("/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids")):
        profile["pci_ids"] = False
    if outputs:
        profile["files"] = dict(sorted(outputs.items()))
    return profile, outputs


def dump(profile: dict) -> str:
    try:
        import yaml
    except ImportError:
        return json.dumps(profile, indent=2) + "\n"
    return "# A hardware profile of accel.openstack, written by capture_host.py.\n" + yaml.safe_dump(
        profile, sort_keys=False, width=120
    )


def refuse_out(root: str, out: str) -> str | None:
    root, out = os.path.realpath(root), os.path.realpath(out)
    if root == "/":
        for system in ("/sys", "/proc"):
            if os.path.commonpath([out, system]) == system:
                return f"--out {out} is under {system}; give a directory outside it"
        return None
    if os.path.commonpath([out, root]) == root:
        return (
            f"--out {out} is inside the captured root {root}; give a directory outside it (capture never writes there)"
        )
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True, help="the profile's name (letters, digits, dot, dash, underscore)")
    parser.add_argument("--out", required=True, help="the directory that receives NAME.yml and NAME-nvidia-smi/")
    parser.add_argument("--root", default="/", help="the host's root (default /: this host)")
    args = parser.parse_args(argv)
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", args.name):
        parser.error(f"--name {args.name!r}: use letters, digits, dot, dash and underscore, e.g. gpu-host-01")
    if not os.path.isdir(args.root):
        parser.error(f"--root {args.root} is not a directory")
    refusal = refuse_out(args.root, args.out)
    if refusal:
        parser.error(refusal)
    profile, outputs = capture(args.root, args.name)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{args.name}.yml"), "w") as handle:
        handle.write(dump(profile))
    for host_path, text in outputs.items():
        real = os.path.join(args.out, f"{args.name}-nvidia-smi", os.path.relpath(host_path, RECORDED))
        os.makedirs(os.path.dirname(real), exist_ok=True)
        with open(real, "w") as handle:
            handle.write(text)
    print(
        f"wrote {os.path.join(args.out, args.name + '.yml')}: {len(profile['devices'])} PCI devices"
        f" (VFs made again from their PFs), {len(outputs)} recorded nvidia-smi output(s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
