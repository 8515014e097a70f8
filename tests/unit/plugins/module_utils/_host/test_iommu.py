"""What an operator is told to do when a host runs without the IOMMU: it depends on the CPU vendor and on
what the running kernel's command line already asks for."""

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.iommu import IOMMU_KERNEL_ARGS, enable_advice

PLAIN = "BOOT_IMAGE=/boot/vmlinuz-5.10.0-32-amd64 root=/dev/sda1 ro quiet"


def test_an_intel_host_without_the_arguments_gets_firmware_and_the_prepare_stages_arguments():
    advice = enable_advice("intel", PLAIN)
    assert "enable VT-d in the firmware" in advice
    assert "playbooks/prepare_hosts.yml) set intel_iommu=on iommu=pt" in advice
    assert "reboot the host (accel_reboot: allowed" in advice


def test_only_the_missing_arguments_are_named():
    advice = enable_advice("intel", PLAIN + " intel_iommu=on")
    assert "set iommu=pt on the kernel command line" in advice and "intel_iommu=on" not in advice


def test_a_kernel_that_already_asks_for_the_iommu_points_at_the_firmware_only():
    advice = enable_advice("intel", PLAIN + " intel-iommu=on iommu=pt")  # the kernel reads - and _ alike
    assert "so the IOMMU is off in the firmware: enable VT-d in the firmware setup" in advice
    assert "prepare_hosts" not in advice and "accel_reboot" not in advice  # the stage has nothing to change


def test_an_amd_host_is_told_about_amd_vi_and_iommu_pt():
    advice = enable_advice("amd", PLAIN)
    assert "AMD-Vi" in advice and "set iommu=pt" in advice and "intel" not in advice
    assert IOMMU_KERNEL_ARGS["amd"] == ["iommu=pt"]  # AMD turns its IOMMU on by itself


@pytest.mark.parametrize("off", ["intel_iommu=off", "amd_iommu=off", "iommu=off"])
def test_an_argument_that_switches_the_iommu_off_is_named(off):
    advice = enable_advice("amd" if off.startswith("amd") else "intel", f"{PLAIN} {off}")
    assert f"the running kernel has {off}: remove it from the kernel command line" in advice


@pytest.mark.parametrize("vendor", ["other", None, 5, "ARM"])
def test_an_unknown_vendor_gets_the_generic_advice(vendor):
    advice = enable_advice(vendor, PLAIN)
    assert "VT-d or AMD-Vi" in advice and "host_passthrough_iommu_args" in advice


@pytest.mark.parametrize("cmdline", [None, 42, ["intel_iommu=on"], "x" * 70000, 'a="unclosed quote'])
def test_a_command_line_that_is_not_a_kernels_reads_as_empty(cmdline):
    assert "set intel_iommu=on iommu=pt" in enable_advice("intel", cmdline)
