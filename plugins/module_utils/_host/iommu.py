# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turning the IOMMU on: the kernel arguments per CPU vendor, and what to tell an operator whose host
runs without it.

No device reaches a VM without the IOMMU: vfio-pci refuses a device without an IOMMU group, and SR-IOV
vGPU and mediated devices need it as well. :func:`enable_advice` reads only what discovery reports (the
CPU vendor and the running kernel's command line) and says what to change: the firmware setting when
the running kernel already asks for the IOMMU, else the firmware setting and the kernel arguments.
"""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._host.kernel_cmdline import KernelArg, parse_cmdline

# What the prepare stage (role host_passthrough, host_passthrough_iommu_args) puts on the command line.
# AMD turns its IOMMU on by itself; iommu=pt keeps the host's own devices fast.
IOMMU_KERNEL_ARGS = {"intel": ["intel_iommu=on", "iommu=pt"], "amd": ["iommu=pt"], "other": []}
FIRMWARE_SETTING = {"intel": "VT-d", "amd": "AMD-Vi (IOMMU)", "other": "the IOMMU (VT-d or AMD-Vi)"}
# Arguments that switch the IOMMU off whatever the firmware says.
OFF_ARGS = (KernelArg("intel_iommu", "off"), KernelArg("amd_iommu", "off"), KernelArg("iommu", "off"))
# /proc/cmdline holds at most a few KiB (COMMAND_LINE_SIZE); a longer fact is not a kernel's.
MAX_CMDLINE = 65536


def _vendor(cpu_vendor: object) -> str:
    return cpu_vendor if isinstance(cpu_vendor, str) and cpu_vendor in IOMMU_KERNEL_ARGS else "other"


def _running(kernel_cmdline: object) -> list[KernelArg]:
    if not isinstance(kernel_cmdline, str) or len(kernel_cmdline) > MAX_CMDLINE:
        return []
    return parse_cmdline(kernel_cmdline)


def _has(running: list[KernelArg], wanted: KernelArg) -> bool:
    return any(arg.same(wanted) for arg in running)


def enable_advice(cpu_vendor: object, kernel_cmdline: object) -> str:
    """One sentence: how to turn the IOMMU on for a host with this CPU vendor and running command line."""
    vendor = _vendor(cpu_vendor)
    firmware = FIRMWARE_SETTING[vendor]
    running = _running(kernel_cmdline)
    wanted = [KernelArg(*a.split("=", 1)) for a in IOMMU_KERNEL_ARGS[vendor]]
    missing = [str(a) for a in wanted if not _has(running, a)]
    blocking = [str(a) for a in running if any(a.same(off) for off in OFF_ARGS)]
    reboot = "reboot the host (accel_reboot: allowed lets the prepare stage do it)"
    if blocking:
        return (
            f"the running kernel has {' '.join(blocking)}: remove it from the kernel command line, enable "
            f"{firmware} in the firmware, let the prepare stage (playbooks/prepare_hosts.yml) set "
            f"{' '.join(IOMMU_KERNEL_ARGS[vendor]) or 'the IOMMU arguments'} and {reboot}"
        )
    if not wanted:
        return (
            f"enable {firmware} in the firmware, give the kernel the arguments that turn it on for this CPU "
            f"(host_passthrough_iommu_args) and {reboot}"
        )
    if not missing:
        return (
            f"the running kernel already has {' '.join(str(a) for a in wanted)}, so the IOMMU is off in the "
            f"firmware: enable {firmware} in the firmware setup (a reboot into it, by hand)"
        )
    return (
        f"enable {firmware} in the firmware, let the prepare stage (playbooks/prepare_hosts.yml) set "
        f"{' '.join(missing)} on the kernel command line and {reboot}"
    )
