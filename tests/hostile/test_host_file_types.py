"""Host files read with the type they have: a string where a list belongs, huge numbers, names that are
not UTF-8, damaged tool output, impossible netmasks, deep JSON, infinite counts. Each ends in a warning
or an error naming the file, never a rewrite, never Python's own words."""

from __future__ import annotations

import glob
import json
import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import iommu_safety
from ansible_collections.accel.openstack.plugins.module_utils._host.commands import PENDING_FILE, HostCommands
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._names.text import load_json
from tests.hostile.conftest import no_traceback, warnings_of
from tests.support.ansible_runner import run_module
from tests.support.fake_sysfs import build_root

MIG = "0000:3b:00.0"
PYTHON_WORDS = ("Exceeds the limit", "Traceback", "invalid literal", "RecursionError", "OverflowError")


def _devices(root: str) -> list[str]:
    """The real sysfs directories of the root's PCI devices (the links under /sys/bus/pci/devices resolved)."""
    found = []
    for link in sorted(glob.glob(root + "/sys/bus/pci/devices/*")):
        target = os.readlink(link)
        found.append(
            root + target
            if target.startswith("/")
            else os.path.normpath(os.path.join(root + "/sys/bus/pci/devices", target))
        )
    return found


def _json_clean(result: dict) -> None:
    """The result travels as UTF-8 JSON: Ansible refuses a string that is not valid UTF-8."""
    json.dumps(result, default=str).encode("utf-8")


# -- kernelstub: a string where kernelstub keeps a list -----------------------------------------------------
@pytest.mark.parametrize(
    "options",
    ['"quiet splash"', '{"quiet": true}', "[1, 2]", '["quiet", ["splash"]]'],
    ids=["string", "mapping", "numbers", "nested"],
)
def test_kernelstub_options_of_another_type_are_refused_untouched(tmp_path, options):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    path = os.path.join(root, "etc/kernelstub/configuration")
    os.makedirs(os.path.dirname(path))
    text = '{"user": {"kernel_options": ' + options + ', "esp_path": "/boot/efi"}}\n'
    with open(path, "w") as handle:
        handle.write(text)
    result = run_module("kernel_cmdline", {"root": root, "present": ["iommu=pt"], "bootloader": "kernelstub"})
    assert result.get("failed") and "user.kernel_options is" in result["msg"], result
    assert "/etc/kernelstub/configuration" in result["msg"]
    no_traceback(result)
    with open(path) as handle:
        assert handle.read() == text, "the file must not be rewritten"


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"user": {"kernel_options": ["quiet"], "n": NaN}}',
        '{"user": {"kernel_options": [], "n": ' + "9" * 5000 + "}}",
    ],
    ids=["100000-deep", "NaN", "5000-digit-number"],
)
def test_kernelstub_configuration_that_json_cannot_hold_is_refused_by_name(tmp_path, text):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    path = os.path.join(root, "etc/kernelstub/configuration")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write(text)
    result = run_module("kernel_cmdline", {"root": root, "present": ["iommu=pt"], "bootloader": "kernelstub"})
    assert result.get("failed") and "/etc/kernelstub/configuration" in result["msg"], result
    no_traceback(result)
    assert not any(words in result["msg"] for words in PYTHON_WORDS), result["msg"]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels"),
        ('[{"key": "initramfs", "n": ' + "9" * 5000 + "}]", "5,000 digits"),
        ('[{"key": "initramfs", "n": 1e999}]', "too large to be finite"),
    ],
    ids=["100000-deep", "5000-digit-number", "1e999"],
)
def test_a_pending_commands_file_json_cannot_hold_is_a_warning(tmp_path, text, named):
    root = tmp_path / "root"
    (root / PENDING_FILE.lstrip("/")).parent.mkdir(parents=True)
    (root / PENDING_FILE.lstrip("/")).write_text(text)
    host = HostRoot(str(root))
    assert HostCommands(host, lambda argv: (0, "", ""), True).pending() == []
    assert any(PENDING_FILE in w and named in w for w in host.warnings), host.warnings


def test_json_the_collection_reads_back_is_bounded_and_finite():
    assert load_json('{"a": [1, 2.5, "x\\\\\\"["]}') == {"a": [1, 2.5, 'x\\"[']}
    for text in ("[" * 65 + "]" * 65, "[Infinity]", "[-Infinity]", "[NaN]", "[1e400]", "[" + "1" * 19 + "]"):
        with pytest.raises(ValueError):
            load_json(text)


# -- sysfs: huge numbers and names that are not UTF-8 --------------------------------------------------------
def _damage(root: str, kind: str) -> str:
    """Damage one thing in the root; returns the text the warning must name."""
    device = _devices(root)[0]
    node = sorted(glob.glob(root + "/sys/devices/system/node/node*"))[0]
    if kind == "numa_node of 5,000 digits":
        with open(device + "/numa_node", "w") as handle:
            handle.write("9" * 5000 + "\n")
        return "numa_node: a number of 5,000 characters"
    if kind == "numa_node of 30 digits":
        with open(device + "/numa_node", "w") as handle:
            handle.write("9" * 30 + "\n")
        return "numa_node: a number of 30 characters"
    if kind == "MemTotal of 5,000 digits":
        with open(node + "/meminfo", "w") as handle:
            handle.write("Node 0 MemTotal: " + "9" * 5000 + " kB\n")
        return "MemTotal is a number of 5,000 digits"
    if kind == "cpulist to 10^40":
        with open(node + "/cpulist", "w") as handle:
            handle.write("0-" + "9" * 40 + "\n")
        return "cpulist: cannot parse"
    if kind == "a driver link that is not UTF-8":
        if os.path.lexists(device + "/driver"):
            os.remove(device + "/driver")
        os.makedirs(os.fsencode(root + "/sys/bus/pci/drivers/") + b"nv\xff", exist_ok=True)
        os.symlink(b"../../../bus/pci/drivers/nv\xff", os.fsencode(device + "/driver"))
        return "nv\\\\xff' is not a UTF-8 name"
    if kind == "an IOMMU group that is not UTF-8":
        os.makedirs(os.fsencode(root + "/sys/kernel/iommu_groups/") + b"1\xfe", exist_ok=True)
        return "entry '1\\\\xfe' is not a UTF-8 name"
    if kind == "a device name that is not UTF-8":
        os.makedirs(os.fsencode(root + "/sys/bus/pci/devices/") + b"0000:\xff:00.0", exist_ok=True)
        return "entry '0000:\\\\xff:00.0' is not a UTF-8 name"
    raise AssertionError(kind)


SYSFS_DAMAGE = [
    "numa_node of 5,000 digits",
    "numa_node of 30 digits",
    "MemTotal of 5,000 digits",
    "cpulist to 10^40",
    "a driver link that is not UTF-8",
    "an IOMMU group that is not UTF-8",
    "a device name that is not UTF-8",
]


@pytest.mark.parametrize("kind", SYSFS_DAMAGE)
def test_discovery_warns_by_name_and_reports_the_rest(tmp_path, kind):
    root = build_root("gpu-shared-group", str(tmp_path / "root"))
    named = _damage(root, kind)
    result = run_module("pci_facts", {"root": root})
    assert not result.get("failed"), result
    assert named in warnings_of(result), warnings_of(result)
    _json_clean(result)
    facts = result["ansible_facts"]
    assert facts["accel_pci_devices"], "the other devices are still reported"
    for device in facts["accel_pci_devices"]:
        assert device["numa_node"] is None or 0 <= device["numa_node"] < 1024
    assert all(node["memory_mb"] is None or node["memory_mb"] < 2**40 for node in facts["accel_numa_nodes"])


# -- nvidia-smi output recorded in the root ------------------------------------------------------------------
def _recorded(root: str) -> str:
    return os.path.join(root, "var/lib/accel-openstack/nvidia-smi/q-x.xml")


@pytest.mark.parametrize(
    "xml",
    ["<nvidia_smi_log><gpu id=", "not xml at all", "<?xml version='1.0'?><a><b></a>"],
    ids=["truncated", "text", "mismatched"],
)
def test_recorded_nvidia_smi_output_that_is_not_xml_is_named(tmp_path, xml):
    root = build_root("mig-a100", str(tmp_path / "root"))
    with open(_recorded(root), "w") as handle:
        handle.write(xml)
    result = run_module("nvidia_mig", {"root": root, "address": MIG, "layout": []}, check=True)
    assert result.get("failed") and "q-x.xml is not valid XML" in result["msg"], result
    no_traceback(result)


@pytest.mark.parametrize("pid", ["abc", "-1", "9" * 5000, ""])
def test_a_recorded_process_id_that_is_not_a_number_is_shown_as_unreadable(tmp_path, pid):
    root = build_root("mig-a100", str(tmp_path / "root"))
    with open(_recorded(root)) as handle:
        xml = handle.read()
    process = (
        f"<processes><process_info><pid>{pid}</pid><process_name>trainer</process_name></process_info></processes>"
    )
    xml = xml.replace("<processes></processes>", process, 1)
    with open(_recorded(root), "w") as handle:
        handle.write(xml)
    result = run_module(
        "nvidia_mig", {"root": root, "address": MIG, "layout": [{"profile": "7g.40gb", "count": 1}]}, check=True
    )
    assert result.get("failed") and "trainer (pid unreadable)" in result["msg"], result
    no_traceback(result)


@pytest.mark.parametrize("count", [float("inf"), float("nan"), 2.5, True])
def test_a_layout_count_that_is_not_a_whole_number_fails_before_anything_changes(tmp_path, count):
    root = build_root("mig-a100", str(tmp_path / "root"))
    result = run_module("nvidia_mig", {"root": root, "address": MIG, "layout": [{"profile": "1g.5gb", "count": count}]})
    assert result.get("failed") and "count" in result["msg"], result
    no_traceback(result)
    assert not os.path.exists(os.path.join(root, f"etc/accel-openstack/mig/{MIG}.json"))


# -- /proc/net/route: a netmask the kernel never writes ---------------------------------------------------------
@pytest.mark.parametrize("mask", ["00FF00FF", "FF00FF00", "0000FF0F"])
def test_a_non_contiguous_netmask_counts_the_interface_as_in_use(tmp_path, mask):
    root = build_root("gpu-nic-shared-group", str(tmp_path / "root"))
    route = os.path.join(root, "proc/net/route")
    interfaces = [name for name in os.listdir(os.path.join(root, "sys/class/net"))]
    assert interfaces
    with open(route) as handle:
        lines = handle.read().splitlines()
    name = sorted(interfaces)[-1]
    lines = [line for line in lines if not line.startswith(name + "\t")]
    lines.append(f"{name}\t0000000A\t00000000\t0001\t0\t0\t0\t{mask}\t0\t0\t0")
    with open(route, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    host = HostRoot(root)
    usage = iommu_safety.network_in_use(host)
    assert any("not contiguous" in w and name in w for w in host.warnings), host.warnings
    if os.path.exists(os.path.join(root, f"sys/class/net/{name}/device")):
        assert any(name in " ".join(reasons) for reasons in usage.values()), usage
