"""Names that become paths and text that becomes file content: validated at the boundary.

nova_config never writes outside its directory; nothing written to an INI, modprobe.d or GRUB file carries
a control character or shell syntax; a sysfs driver name reaches modprobe.d only as a module name; the
operator's bytes (line endings, foreign lines, a damaged block of ours) are kept or the file is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import kernel_cmdline
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import IniError, update_text
from ansible_collections.accel.openstack.plugins.module_utils._host.vfio import (
    BLOCK_BEGIN,
    BLOCK_END,
    INITRAMFS_TOOLS_MODULES,
    MODPROBE_FILE,
)
from ansible_collections.accel.openstack.plugins.module_utils._names import kernel, text
from ansible_collections.accel.openstack.plugins.module_utils._names.custom import is_custom_name
from ansible_collections.accel.openstack.plugins.module_utils._names.pci import is_address
from tests.hostile.conftest import no_traceback, nova_conf_d_args, warnings_of
from tests.support.ansible_runner import run_module
from tests.support.fake_sysfs import build_root


def _tree(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _ds, fs in os.walk(root) for f in fs)


BAD_NAMES = ["..", "../x", "../../etc/passwd", "a/b", "/abs", ".hidden", "a\nb", "a\rb", "a\x00b", "a b", ""]


@pytest.mark.parametrize("name", BAD_NAMES)
@pytest.mark.parametrize("option", ["host", "file_name", "hosts"])
def test_nova_config_refuses_names_that_leave_its_directory(tmp_path, option, name):
    root = tmp_path / "root"
    root.mkdir()
    if option == "hosts":
        args = nova_conf_d_args(root, layout="kolla", host=None, hosts=[{"name": name, "facts": {}}], config_dir="/k")
    elif option == "host":
        args = nova_conf_d_args(root, host=name, hosts=[{"name": name, "facts": {}}])
    else:
        args = nova_conf_d_args(root, file_name=name)
    result = run_module("nova_config", args)
    assert result.get("failed"), result
    no_traceback(result)
    assert _tree(root) == []


@pytest.mark.parametrize("config_dir", ["/etc/nova/../../tmp", "relative/dir", "/etc/nova\n", "/etc/\x1bnova"])
@pytest.mark.parametrize("option", ["config_dir", "provider_config_dir"])
def test_nova_config_refuses_directories_with_dotdot_or_control_characters(tmp_path, option, config_dir):
    root = tmp_path / "root"
    root.mkdir()
    result = run_module("nova_config", nova_conf_d_args(root, **{option: config_dir}))
    assert result.get("failed") and option in result["msg"], result
    assert _tree(root) == []


@pytest.mark.parametrize(
    "value",
    ["X\r[DEFAULT]\rdebug = true", "X\n[DEFAULT]", "X\x0bdebug=true", "X\x85[DEFAULT]", "X\u2028y", "X\x00"],
)
def test_no_control_character_reaches_an_ini_file(tmp_path, value):
    root = tmp_path / "root"
    root.mkdir()
    result = run_module("nova_config", nova_conf_d_args(root, enabled_filters=[value]))
    # The filter name is refused as a name first; the INI layer below refuses the same text on its own.
    assert result.get("failed") and "enabled_filters[1]" in result["msg"], result
    assert _tree(root) == []
    with pytest.raises(IniError):
        update_text("", {"pci": {"alias": [value]}})
    with pytest.raises(IniError):
        update_text("", {"pci": {value: ["x"]}})
    with pytest.raises(IniError):
        update_text("", {value: {"k": ["x"]}})


def test_an_ini_file_with_crlf_keeps_its_line_endings_and_foreign_lines(tmp_path):
    root = tmp_path / "root"
    conf = root / "etc/nova/nova.conf.d/50-accel-openstack.conf"
    conf.parent.mkdir(parents=True)
    foreign = b"[DEFAULT]\r\n# the operator's comment\r\ndebug = true\r\n\r\n[filter_scheduler]\r\nfoo = bar\r\n"
    conf.write_bytes(foreign)
    result = run_module("nova_config", nova_conf_d_args(root))
    assert not result.get("failed"), result
    after = conf.read_bytes()
    assert after.count(b"\n") == after.count(b"\r\n"), after
    assert b"[DEFAULT]\r\n# the operator's comment\r\ndebug = true\r\n" in after
    assert b"foo = bar\r\n" in after and b"PciPassthroughFilter" in after
    again = run_module("nova_config", nova_conf_d_args(root))
    assert not again["changed"] and conf.read_bytes() == after


@pytest.mark.parametrize(
    "content",
    [b"[DEFAULT]\r\ndebug = true\n", b"[DEFAULT]\rdebug = true\r\n", b"[DEFAULT]\ndebug = tr\rue\n"],
    ids=["mixed", "lone-cr", "cr-inside"],
)
def test_an_ini_file_with_mixed_line_endings_is_refused_untouched(tmp_path, content):
    root = tmp_path / "root"
    conf = root / "etc/nova/nova.conf.d/50-accel-openstack.conf"
    conf.parent.mkdir(parents=True)
    conf.write_bytes(content)
    result = run_module("nova_config", nova_conf_d_args(root))
    assert result.get("failed") and "line endings" in result["msg"], result
    assert conf.read_bytes() == content


def test_a_non_utf8_ini_file_is_refused_untouched(tmp_path):
    root = tmp_path / "root"
    conf = root / "etc/nova/nova.conf.d/50-accel-openstack.conf"
    conf.parent.mkdir(parents=True)
    conf.write_bytes(b"[DEFAULT]\n# caf\xe9\n")
    result = run_module("nova_config", nova_conf_d_args(root))
    assert result.get("failed"), result
    assert conf.read_bytes() == b"[DEFAULT]\n# caf\xe9\n"


def _grub_root(tmp_path):
    root = tmp_path / "root"
    (root / "etc/default/grub.d").mkdir(parents=True)
    (root / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX=""\n')
    (root / "proc").mkdir()
    (root / "proc/cmdline").write_text("ro\n")
    return root


SHELL_ARGS = [
    "a=1;reboot",
    "a=1|tee",
    "a=1&&x",
    "a=<x",
    "a=>x",
    "a=$(x)",
    "a=`x`",
    "a='x'",
    'a="x"',
    "a=(x)",
    "a=x\\y",
    "a=x*",
    "a=x#y",
    "a=x\r",
    "a=x\n",
    "a\n",
    "a=x y",
    "a=\x1b[31m",
    "a;b",
    "-a",
    "a=x\x00",
]


@pytest.mark.parametrize("arg", SHELL_ARGS)
@pytest.mark.parametrize("option", ["present", "absent"])
def test_kernel_arguments_are_what_the_kernel_parses(tmp_path, option, arg):
    root = _grub_root(tmp_path)
    result = run_module("kernel_cmdline", {"root": str(root), option: [arg]})
    assert result.get("failed") and repr(arg) in result["msg"], result
    assert os.listdir(root / "etc/default/grub.d") == []
    with pytest.raises(kernel_cmdline.KernelArgError):
        kernel_cmdline.parse_user_arg(arg, option)


@pytest.mark.parametrize(
    "arg",
    ["console=ttyS0,115200n8", "crashkernel=512M-2G:64M,2G-:256M", "root=UUID=0a1b-2c3d", "acpi_osi=!Linux",
     "vfio-pci.ids=10de:2330,10de:22a3", "video=HDMI-A-1:1920x1080@60", "rd.lvm.lv=vg/root", "iommu=pt"],
)  # fmt: skip
def test_ordinary_kernel_arguments_are_written_quoted_in_grubs_file(tmp_path, arg):
    root = _grub_root(tmp_path)
    result = run_module("kernel_cmdline", {"root": str(root), "present": [arg]})
    assert not result.get("failed"), result
    drop_in = (root / "etc/default/grub.d/99-accel-openstack.cfg").read_text()
    assert f'GRUB_CMDLINE_LINUX="${{GRUB_CMDLINE_LINUX:+$GRUB_CMDLINE_LINUX }}{arg}"' in drop_in


@pytest.mark.parametrize("driver", ["evil\ninstall vfio-pci /bin/sh -c id", "evil;id", "a" * 80, "..", "x y"])
def test_a_driver_name_from_sysfs_reaches_modprobe_d_only_as_a_module_name(tmp_path, driver):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    device = os.path.realpath(os.path.join(root, "sys/bus/pci/devices/0000:18:00.0"))
    drivers = os.path.join(root, "sys/bus/pci/drivers")
    if driver != "..":
        os.makedirs(os.path.join(drivers, driver), exist_ok=True)
    if os.path.lexists(os.path.join(device, "driver")):
        os.unlink(os.path.join(device, "driver"))
    os.symlink(os.path.join(drivers, driver), os.path.join(device, "driver"))
    # force: an unknown driver in the group is refused by the group check otherwise; the file is the point.
    result = run_module("vfio_pci", {"root": root, "devices": ["18:00.0"], "initramfs": False, "force": True})
    assert not result.get("failed"), result
    written = Path(root + MODPROBE_FILE).read_text()
    assert "evil" not in written and "/bin/sh" not in written and "a" * 80 not in written
    assert all(line.split()[0] in ("#", "options", "softdep", "blacklist") for line in written.splitlines())
    assert "not a kernel module name" in warnings_of(result)


def test_a_module_link_with_a_hostile_name_is_not_written(tmp_path):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    device = os.path.realpath(os.path.join(root, "sys/bus/pci/devices/0000:18:00.0"))
    driver = os.path.basename(os.readlink(os.path.join(device, "driver")))
    module = os.path.join(root, "sys/bus/pci/drivers", driver, "module")
    os.makedirs(os.path.dirname(module), exist_ok=True)
    if os.path.lexists(module):
        os.unlink(module)
    os.symlink("../../../../module/x\ninstall nouveau /bin/sh", module)
    result = run_module("vfio_pci", {"root": root, "devices": ["18:00.0"], "initramfs": False})
    assert not result.get("failed"), result
    assert "/bin/sh" not in Path(root + MODPROBE_FILE).read_text()


DAMAGED = {
    "begin-twice": f"my_module\n{BLOCK_BEGIN}\nmine_too\n{BLOCK_BEGIN}\nvfio\n{BLOCK_END}\n",
    "end-missing": f"my_module\n{BLOCK_BEGIN}\nvfio\nmine_too\n",
    "end-first": f"{BLOCK_END}\nmy_module\n{BLOCK_BEGIN}\nvfio\n",
    "foreign-inside": f"{BLOCK_BEGIN}\nvfio\nmy_module\n{BLOCK_END}\n",
}


@pytest.mark.parametrize("devices", [["18:00.0"], []], ids=["configure", "remove"])
@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_initramfs_block_is_refused_and_the_operators_lines_kept(tmp_path, case, devices):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    path = root + INITRAMFS_TOOLS_MODULES
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(DAMAGED[case])
    result = run_module("vfio_pci", {"root": root, "devices": devices})
    assert result.get("failed") and "damaged" in result["msg"], result
    assert Path(path).read_text() == DAMAGED[case]


def test_the_initramfs_block_keeps_crlf(tmp_path):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    path = root + INITRAMFS_TOOLS_MODULES
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(b"# mine\r\nmy_module\r\n")
    result = run_module("vfio_pci", {"root": root, "devices": ["18:00.0"]})
    assert not result.get("failed"), result
    data = Path(path).read_bytes()
    assert data.startswith(b"# mine\r\nmy_module\r\n") and data.count(b"\n") == data.count(b"\r\n")


@pytest.mark.parametrize(
    ("check", "value"),
    [
        (is_address, "0000:41:00.0\n"),
        (is_address, " 0000:41:00.0"),
        (is_custom_name, "CUSTOM_X\n"),
        (kernel.is_module_name, "vfio_pci\n"),
        (kernel.is_arg_key, "iommu\n"),
        (kernel.is_arg_value, "pt\n"),
        (text.is_decimal, "12\n"),
        (text.is_decimal, "²"),
    ],
)
def test_grammars_match_the_whole_text(check, value):
    assert not check(value)
    assert check(value.strip().replace("²", "2"))


def test_no_validation_regex_accepts_a_trailing_newline():
    """Every regex in the collection that anchors with ``$`` must not be used to accept whole values."""
    import re

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    offenders = []
    for directory, _dirs, files in os.walk(os.path.join(repo, "plugins")):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
                if re.search(r"re\.(compile|match|search|fullmatch)\(r?[\"'].*\$[\"']", line) and "re.M" not in line:
                    offenders.append(f"{os.path.relpath(path, repo)}:{number}")
    assert offenders == [], "use \\Z or re.fullmatch: " + ", ".join(offenders)
