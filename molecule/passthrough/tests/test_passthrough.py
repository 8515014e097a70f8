"""What the passthrough stage leaves on each Debian root, read from inside it through the chroot."""

import json
import os

import testinfra.utils.ansible_runner

testinfra_hosts = testinfra.utils.ansible_runner.AnsibleRunner(os.environ["MOLECULE_INVENTORY_FILE"]).get_hosts("all")

GRUB_EVAL = (
    'sh -c \'. /etc/default/grub; for f in /etc/default/grub.d/*.cfg; do . "$f"; done; '
    'echo "$GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT"\''
)


def _name(host):
    return host.backend.get_hostname()


def _grub_args(host):
    """The kernel arguments grub-mkconfig would write, evaluated by the root's own /bin/sh."""
    return host.check_output(GRUB_EVAL).split()


def test_gpu_and_every_function_of_its_group_are_bound_by_id(host):
    if _name(host) != "gpu-shared-group":
        return
    conf = host.file("/etc/modprobe.d/accel-openstack-vfio.conf").content_string
    assert "options vfio-pci ids=10de:10f7,10de:1ad6,10de:1ad7,10de:1e30\n" in conf
    for module in ("nouveau", "snd_hda_intel", "xhci_pci", "i2c_nvidia_gpu"):
        assert f"softdep {module} pre: vfio-pci" in conf
    # modprobe inside the root parses the file as the booted host will.
    shown = host.check_output("modprobe --showconfig")
    assert "options vfio_pci ids=10de:10f7,10de:1ad6,10de:1ad7,10de:1e30" in shown
    assert "softdep snd_hda_intel pre: vfio-pci" in shown


def test_intel_host_gets_intel_iommu_and_ids_once_and_other_arguments_stay(host):
    if _name(host) != "gpu-shared-group":
        return
    args = _grub_args(host)
    assert args.count("intel_iommu=on") == 1 and args.count("iommu=pt") == 1
    assert "vfio-pci.ids=10de:10f7,10de:1ad6,10de:1ad7,10de:1e30" in args
    assert "quiet" in args  # the host's own arguments stay
    # /etc/default/grub is never edited: it still says what the host booted with (intel_iommu=on already),
    # and the drop-in makes sure that argument ends up on the kernel line once, not twice.
    assert 'GRUB_CMDLINE_LINUX_DEFAULT="quiet intel_iommu=on"' in host.file("/etc/default/grub").content_string


def test_initramfs_was_rebuilt_inside_the_root_and_update_grub_is_left_for_the_host(host):
    if _name(host) != "gpu-shared-group":
        return
    assert "vfio_pci" in host.file("/etc/initramfs-tools/modules").content_string
    pending = json.loads(host.file("/var/lib/accel-openstack/pending-commands.json").content_string)
    # update-initramfs only writes inside the root, so it ran in the chroot; update-grub probes the
    # machine's disks, which a chroot cannot offer: it stays pending for the host's first boot.
    assert [p["argv"] for p in pending] == [["update-grub"]]
    result = json.loads(host.file("/root/molecule-result.json").content_string)
    # accel_reboot is "allowed" here, yet no reboot: a chroot is not a machine to reboot, and the
    # bootloader update has not run yet.
    assert result == {"reboot_needed": True, "pending": ["update-grub"], "rebooted": False}


def test_group_with_an_addressed_nic_is_refused_and_nothing_is_written(host):
    if _name(host) != "gpu-nic-shared-group":
        return
    message = host.file("/root/molecule-refusal.txt").content_string
    assert "IOMMU group 40" in message and "0000:05:00.1" in message and "the default route" in message
    assert not host.file("/etc/modprobe.d/accel-openstack-vfio.conf").exists
    assert not host.file("/etc/default/grub.d/99-accel-openstack.cfg").exists
    assert "vfio" not in host.file("/etc/initramfs-tools/modules").content_string


def test_amd_host_gets_iommu_pt_and_nothing_amd_does_not_need(host):
    if _name(host) != "amd-epyc":
        return
    args = _grub_args(host)
    assert "iommu=pt" in args and "vfio-pci.ids=1002:740f" in args
    assert not [a for a in args if a.startswith(("intel_iommu", "amd_iommu"))]
    conf = host.file("/etc/modprobe.d/accel-openstack-vfio.conf").content_string
    assert "options vfio-pci ids=1002:740f" in conf and "softdep amdgpu pre: vfio-pci" in conf


def test_configured_host_is_left_as_it_was(host):
    if _name(host) != "configured-t4":
        return
    assert not host.file("/var/lib/accel-openstack/pending-commands.json").exists
    result = json.loads(host.file("/root/molecule-result.json").content_string)
    assert result == {"reboot_needed": False, "pending": [], "rebooted": False}
