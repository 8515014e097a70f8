"""Kernel argument arithmetic and the GRUB drop-in, checked against the real /bin/sh."""

import os
import subprocess

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import bootloader
from ansible_collections.accel.openstack.plugins.module_utils._host.commands import HostCommands
from ansible_collections.accel.openstack.plugins.module_utils._host.kernel_cmdline import (
    KernelArg,
    KernelArgError,
    apply,
    parse_cmdline,
    parse_user_args,
)
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot


def args(text):
    return parse_cmdline(text)


def test_present_replaces_other_values_and_never_duplicates():
    result = apply(args("ro iommu=soft quiet iommu=pt"), *parse_user_args(["iommu=pt"], []))
    assert [str(a) for a in result] == ["ro", "quiet", "iommu=pt"]


def test_dash_and_underscore_in_keys_are_the_same_key():
    result = apply(args("vfio_pci.ids=10de:1111 ro"), *parse_user_args(["vfio-pci.ids=10de:2330"], []))
    assert [str(a) for a in result] == ["ro", "vfio-pci.ids=10de:2330"]


def test_absent_by_key_removes_every_value_and_by_value_only_that_one():
    assert [str(a) for a in apply(args("a=1 b a=2"), [], [KernelArg("a")])] == ["b"]
    assert [str(a) for a in apply(args("a=1 b a=2"), [], [KernelArg("a", "2")])] == ["a=1", "b"]


def test_unrelated_arguments_keep_their_order():
    before = args('root=UUID=x ro console=ttyS0,115200 dyndbg="file a.c +p" quiet')
    after = apply(before, *parse_user_args(["intel_iommu=on"], ["quiet"]))
    assert [str(a) for a in after] == [
        "root=UUID=x",
        "ro",
        "console=ttyS0,115200",
        'dyndbg="file a.c +p"',
        "intel_iommu=on",
    ]


@pytest.mark.parametrize(
    ("present", "absent", "fragment"),
    [
        (["iommu =pt"], [], "whitespace"),
        (['iommu="pt"'], [], "quote"),
        (["a=$(reboot)"], [], "'$'"),
        (["intel_iommu=on"], ["intel_iommu"], "both present and absent"),
        (["iommu=pt", "iommu=soft"], [], "same key twice"),
        ([""], [], "empty"),
        (["bad key!=1"], [], "whitespace"),
        (["k!y=1"], [], "a key is letters"),
    ],
)
def test_bad_arguments_are_refused_with_the_fix(present, absent, fragment):
    with pytest.raises(KernelArgError, match=fragment.replace("$", r"\$").replace("(", r"\(")):
        parse_user_args(present, absent)


def _grub_root(tmp_path, default='GRUB_CMDLINE_LINUX_DEFAULT="quiet splash"\nGRUB_CMDLINE_LINUX="console=tty0"\n'):
    root = tmp_path / "root"
    (root / "etc/default/grub.d").mkdir(parents=True)
    (root / "etc/default/grub").write_text(default)
    (root / "proc").mkdir()
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/vmlinuz ro console=tty0 quiet splash\n")
    return root


def _sh_eval(root):
    """What grub-mkconfig would see, computed by the real POSIX shell sourcing the files."""
    script = (
        f'. "{root}/etc/default/grub"; for f in "{root}"/etc/default/grub.d/*.cfg; do [ -e "$f" ] && . "$f"; done; '
        'echo "$GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT"'
    )
    return subprocess.run(["sh", "-c", script], check=True, capture_output=True, text=True).stdout.split()


def _configure(root, check_mode=False, **params):
    host = HostRoot(str(root))
    commands = HostCommands(host, lambda argv: (0, "", ""), check_mode)
    return bootloader.configure(host, commands, dict({"bootloader": "auto"}, **params))


def test_grub_drop_in_matches_what_sh_evaluates_and_is_idempotent(tmp_path):
    root = _grub_root(tmp_path)
    (root / "etc/default/grub.d/50-cloud.cfg").write_text(
        'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT iommu=soft"\n'
    )
    checked = _configure(root, check_mode=True, present=["intel_iommu=on", "iommu=pt"], absent=["splash"])
    assert checked["changed"] and not (root / "etc/default/grub.d/99-accel-openstack.cfg").exists()
    first = _configure(root, present=["intel_iommu=on", "iommu=pt"], absent=["splash"])
    assert first["changed"] and first["bootloader"] == "grub"
    assert _sh_eval(root) == first["configured"] == ["console=tty0", "intel_iommu=on", "iommu=pt", "quiet"]
    assert first["reboot_required"]
    assert first["commands"][0]["status"] == "pending"  # a tmp dir is not the running system
    second = _configure(root, present=["intel_iommu=on", "iommu=pt"], absent=["splash"])
    assert not second["changed"] and second["configured"] == first["configured"]
    assert (root / "etc/default/grub").read_text().startswith('GRUB_CMDLINE_LINUX_DEFAULT="quiet splash"')


def test_later_calls_add_to_earlier_ones(tmp_path):
    root = _grub_root(tmp_path)
    _configure(root, present=["intel_iommu=on"])
    result = _configure(root, present=["vfio-pci.ids=10de:2330"])
    assert result["managed"]["present"] == ["intel_iommu=on", "vfio-pci.ids=10de:2330"]
    assert _sh_eval(root) == result["configured"]
    removed = _configure(root, absent=["intel_iommu"])
    assert "intel_iommu=on" not in _sh_eval(root) and "intel_iommu=on" not in removed["configured"]


def test_reboot_not_required_when_running_kernel_has_the_arguments(tmp_path):
    root = _grub_root(tmp_path)
    (root / "proc/cmdline").write_text("ro console=tty0 intel_iommu=on iommu=pt quiet\n")
    result = _configure(root, present=["intel_iommu=on", "iommu=pt"])
    assert result["reboot_required"] is False and result["reboot_reasons"] == []


def test_host_whose_own_files_already_have_the_arguments_gets_no_drop_in(tmp_path):
    root = _grub_root(tmp_path, 'GRUB_CMDLINE_LINUX_DEFAULT="quiet intel_iommu=on iommu=pt"\n')
    result = _configure(root, present=["intel_iommu=on", "iommu=pt"])
    assert not result["changed"] and not (root / "etc/default/grub.d/99-accel-openstack.cfg").exists()
    assert result["configured"] == _sh_eval(root) == ["quiet", "intel_iommu=on", "iommu=pt"]
    duplicated = _grub_root(tmp_path / "dup", 'GRUB_CMDLINE_LINUX_DEFAULT="iommu=pt quiet iommu=pt"\n')
    fixed = _configure(duplicated, present=["iommu=pt"])
    assert fixed["changed"] and _sh_eval(duplicated).count("iommu=pt") == 1


def test_bad_input_writes_nothing(tmp_path):
    root = _grub_root(tmp_path)
    before = sorted(os.listdir(root / "etc/default/grub.d"))
    with pytest.raises(KernelArgError):
        _configure(root, present=["iommu=pt"], absent=["iommu=pt"])
    assert sorted(os.listdir(root / "etc/default/grub.d")) == before


def test_no_bootloader_is_an_error_that_lists_what_was_looked_for(tmp_path):
    (tmp_path / "etc").mkdir()
    with pytest.raises(bootloader.BootloaderError, match="grubby"):
        _configure(tmp_path, present=["iommu=pt"])


def test_systemd_boot_edits_kernel_cmdline_and_entries(tmp_path):
    (tmp_path / "etc/kernel").mkdir(parents=True)
    (tmp_path / "etc/kernel/cmdline").write_text("root=/dev/sda1 ro quiet\n")
    entries = tmp_path / "efi/loader/entries"
    entries.mkdir(parents=True)
    (tmp_path / "efi/loader/loader.conf").write_text("timeout 3\n")
    (entries / "debian-6.1.conf").write_text("title Debian\nlinux /vmlinuz\noptions root=/dev/sda1 ro quiet\n")
    result = _configure(tmp_path, present=["iommu=pt"])
    assert result["bootloader"] == "systemd-boot"
    assert (tmp_path / "etc/kernel/cmdline").read_text() == "root=/dev/sda1 ro quiet iommu=pt\n"
    assert "options root=/dev/sda1 ro quiet iommu=pt\n" in (entries / "debian-6.1.conf").read_text()
    assert not _configure(tmp_path, present=["iommu=pt"])["changed"]
