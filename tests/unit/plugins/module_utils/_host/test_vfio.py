"""vfio_pci's plan and apply on fake roots: selection, group expansion, files, refusals, bad input."""

import os

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import vfio
from ansible_collections.accel.openstack.plugins.module_utils._host.commands import HostCommands
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._host.sysfs import read_host
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy
from tests.support.fake_sysfs import build_root

PARAMS = {"bind": "boot", "force": False, "allow_drivers": [], "blacklist": [], "initramfs": True}


def _root(profile, tmp_path, initramfs_tools=True):
    root = build_root(profile, str(tmp_path / "root"))
    if initramfs_tools:
        os.makedirs(os.path.join(root, "etc/initramfs-tools"))
        with open(os.path.join(root, "etc/initramfs-tools/modules"), "w") as handle:
            handle.write("# site modules\nraid1\n")
    return root


def _run(root, check_mode=False, calls=None, policy=None, **params):
    host = HostRoot(root)
    commands = HostCommands(
        host, lambda argv: (calls.append(argv) if calls is not None else None) or (0, "", ""), check_mode
    )
    return vfio.configure(host, commands, read_host(host), dict(PARAMS, **params), policy)


def _read(path):
    with open(path) as handle:
        return handle.read()


def _tree(root):
    out = {}
    for directory, _dirs, files in os.walk(os.path.join(root, "etc")):
        for name in files:
            with open(os.path.join(directory, name)) as handle:
                out[os.path.join(directory, name)] = handle.read()
    return out


def test_check_mode_then_apply_then_idempotent(tmp_path):
    root = _root("gpu-shared-group", tmp_path)
    before = _tree(root)
    checked = _run(root, check_mode=True, devices=["18:00.0"])
    assert checked["changed"] and _tree(root) == before
    applied = _run(root, devices=["18:00.0"])
    assert applied["changed"] and applied["ids"] == ["10de:10f7", "10de:1ad6", "10de:1ad7", "10de:1e30"]
    assert {d["address"]: d["reason"] for d in applied["devices"]} == {
        "0000:18:00.0": "requested",
        "0000:18:00.1": "shares the IOMMU group",
        "0000:18:00.2": "shares the IOMMU group",
        "0000:18:00.3": "shares the IOMMU group",
    }
    modules = _read(os.path.join(root, "etc/initramfs-tools/modules"))
    assert modules.startswith("# site modules\nraid1\n") and "vfio_pci\n# END accel.openstack" in modules
    assert applied["reboot_required"] and applied["waiting_for_reboot"][0] == "0000:18:00.0"
    assert [c["status"] for c in applied["commands"]] == ["pending"]  # not a complete system
    again = _run(root, devices=["18:00.0"])
    assert not again["changed"] and again["files"] == []


def test_policy_selects_passthrough_models_and_skips_others(tmp_path):
    root = _root("amd-epyc", tmp_path)
    policy = parse_policy(
        [
            {"name": "mi210", "vendor_id": "1002", "product_id": "740f", "mode": "passthrough"},
            {"name": "t4", "vendor_id": "10de", "product_id": "1eb8", "mode": "passthrough"},
            {"name": "a16", "vendor_id": "10de", "product_id": "25b6", "mode": "vgpu", "mdev_type": "nvidia-735"},
        ]
    )
    result = _run(root, policy=policy)
    assert [d["address"] for d in result["devices"]] == ["0001:41:00.0", "0001:c1:00.0"]
    conf = _read(os.path.join(root, "etc/modprobe.d/accel-openstack-vfio.conf"))
    assert "options vfio-pci ids=1002:740f\n" in conf and "softdep amdgpu pre: vfio-pci" in conf
    assert any("t4" in w for w in result["warnings_list"])


def test_refusal_writes_nothing_and_force_turns_it_into_a_warning(tmp_path):
    root = _root("gpu-nic-shared-group", tmp_path)
    before = _tree(root)
    with pytest.raises(vfio.VfioRefused, match="0000:05:00.1"):
        _run(root, devices=["10de:1eb8"])
    assert _tree(root) == before
    forced = _run(root, devices=["10de:1eb8"], force=True)
    assert forced["changed"] and any("force: true" in w for w in forced["warnings_list"])


@pytest.mark.parametrize(
    ("devices", "message"),
    [
        (["0000:99:00.0"], "not a PCI device on this host"),
        (["10de:zz30"], "neither a PCI address"),
        (["10de-1e30"], "neither a PCI address"),
        (["10de:9999"], "no PCI device with the ID 10de:9999"),
        (["0000:41:00.0\n"], "neither a PCI address"),
        (["10000:00:05.0"], "not a PCI device on this host"),  # a VMD domain is an address, absent here
    ],
)
def test_bad_devices_are_errors_that_write_nothing(devices, message, tmp_path):
    root = _root("gpu-shared-group", tmp_path)
    before = _tree(root)
    with pytest.raises(vfio.VfioInputError, match=message):
        _run(root, devices=devices)
    assert _tree(root) == before


def test_bad_blacklist_entry_is_an_error(tmp_path):
    with pytest.raises(vfio.VfioInputError, match="blacklist"):
        _run(_root("gpu-shared-group", tmp_path), devices=["18:00.0"], blacklist=["nouveau; rm"])


def test_bind_now_on_a_root_that_is_not_running_is_pending_and_sysfs_is_untouched(tmp_path):
    root = _root("gpu-shared-group", tmp_path)
    override = os.path.join(root, "sys/bus/pci/devices/0000:18:00.0/driver_override")
    calls = []
    result = _run(root, devices=["18:00.0"], bind="now", calls=calls)
    assert calls == [] and _read(override) == "(null)\n"
    statuses = {c["command"]: c["status"] for c in result["commands"]}
    assert statuses["modprobe vfio-pci"] == "pending"
    assert statuses["bind 0000:18:00.0 to vfio-pci (driver_override, unbind, drivers_probe)"] == "pending"
    assert result["bound_now"] == []


def test_no_device_removes_our_files_only(tmp_path):
    root = _root("gpu-shared-group", tmp_path)
    _run(root, devices=["18:00.0"])
    result = _run(root, devices=[])
    assert not os.path.exists(os.path.join(root, "etc/modprobe.d/accel-openstack-vfio.conf"))
    assert _read(os.path.join(root, "etc/initramfs-tools/modules")) == "# site modules\nraid1\n"
    assert result["changed"]


# -- one vendor:product split between passthrough and vGPU ----------------------------------------------
SPLIT = [
    {
        "name": "l40s-pt",
        "vendor_id": "10de",
        "product_id": "26b9",
        "mode": "passthrough",
        "addresses": ["0000:81:00.0"],
    },
    {
        "name": "l40s-vgpu",
        "vendor_id": "10de",
        "product_id": "26b9",
        "mode": "vgpu",
        "mdev_type": "1160",
        "addresses": ["0000:01:00.0"],
    },
]


def test_a_split_id_is_bound_by_address_never_by_id(tmp_path):
    root = _root("vgpu-l40s", tmp_path)
    result = _run(root, policy=parse_policy(SPLIT))
    assert result["ids"] == [] and result["by_address"] == ["0000:81:00.0"]
    conf = _read(os.path.join(root, vfio.MODPROBE_FILE.lstrip("/")))
    assert "ids=" not in conf and "softdep nvidia pre: vfio-pci" in conf
    rules = _read(os.path.join(root, vfio.UDEV_RULES_FILE.lstrip("/")))
    assert 'KERNEL=="0000:81:00.0", ATTR{driver_override}="vfio-pci"' in rules
    assert "0000:01:00.0" not in rules
    assert not _run(root, policy=parse_policy(SPLIT))["changed"]


def test_a_whole_model_still_binds_by_id(tmp_path):
    root = _root("gpu-shared-group", tmp_path)
    result = _run(root, devices=["18:00.0"])
    assert result["by_address"] == [] and not os.path.exists(os.path.join(root, vfio.UDEV_RULES_FILE.lstrip("/")))


def test_handing_a_vgpu_card_to_vfio_is_refused_naming_both(tmp_path):
    root = _root("vgpu-l40s", tmp_path)
    before = _tree(root)
    with pytest.raises(vfio.VfioRefused) as caught:
        _run(root, policy=parse_policy(SPLIT[1:]), devices=["0000:01:00.0"])
    message = str(caught.value)
    assert "0000:01:00.0" in message and "(name: l40s-vgpu)" in message and "devices item 0000:01:00.0" in message
    assert _tree(root) == before


def test_vgpu_only_hosts_still_need_the_iommu(tmp_path):
    root = _root("vgpu-l40s", tmp_path)
    result = _run(root, policy=parse_policy(SPLIT[1:]))
    assert result["devices"] == [] and result["iommu_needed"] is True
    assert _run(root, policy=[])["iommu_needed"] is False
