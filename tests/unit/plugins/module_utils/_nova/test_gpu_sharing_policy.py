"""Device policy keys for shared GPUs and VFs, and the Nova side following what the host modules applied."""

import json

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore, vgpu
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import render_host
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import PolicyError, parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import nova_providers
from tests.support.fake_kernel import FakeKernel
from tests.support.fake_sysfs import build_root

A100_MIG = {
    "name": "a100-mig",
    "vendor_id": "10de",
    "product_id": "20f1",
    "mode": "mig",
    "mig_layout": [{"profile": "3g.20gb", "count": 2}],
}
L40S = {"name": "l40s-12q", "vendor_id": "10de", "product_id": "26b9", "mode": "vgpu", "mdev_type": "1160"}


def test_the_new_keys_parse():
    entries = parse_policy(
        [
            dict(A100_MIG, mdev_type="nvidia-699"),
            dict(L40S, vfs=2, sriov_numvfs=4),
            {
                "name": "cx6",
                "vendor_id": "15b3",
                "product_id": "101e",
                "mode": "passthrough",
                "device_type": "type-VF",
                "physical_network": "physnet1",
                "trusted": "yes",
            },
        ]
    )
    assert entries[0].mig_layout == ({"profile": "3g.20gb", "count": 2},) and entries[0].is_vgpu
    assert entries[1].vfs == 2 and entries[1].sriov_numvfs == 4
    assert entries[2].physical_network == "physnet1" and entries[2].trusted is True
    assert not parse_policy([A100_MIG])[0].is_vgpu  # MIG for use outside Nova


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({k: v for k, v in A100_MIG.items() if k != "mig_layout"}, ["entry 1 (name: a100-mig)", "needs mig_layout"]),
        (dict(A100_MIG, mig_layout=[{"profile": "3g.20gb", "count": -1}]), ["mig_layout item 0 (3g.20gb)", "count"]),
        (dict(A100_MIG, mig_layout=[{"profile": "3g.20gb", "size": 2}]), ["unknown key 'size'"]),
        (dict(L40S, mig_layout=[{"profile": "1g.5gb"}]), ["mig_layout applies to mode mig only"]),
        (dict(L40S, vfs=0), ["vfs 0", "at least 1"]),
        ({**L40S, "mode": "passthrough", "mdev_type": None, "vfs": 2}, ["vfs", "applies to mode vgpu or mig"]),
        (dict(L40S, trusted="maybe"), ["trusted"]),
    ],
)
def test_bad_new_keys_name_the_entry_and_the_fix(entry, words):
    with pytest.raises(PolicyError) as caught:
        parse_policy([entry])
    for word in words:
        assert word in str(caught.value)


def test_nova_gets_exactly_the_vfs_that_hold_the_type(tmp_path, monkeypatch):
    root = build_root("vgpu-l40s", str(tmp_path / "root"))
    before, _warnings = discover(root)
    spec_before = render_host(before, [L40S], "cn1")["pci"]["device_spec"]
    assert len(spec_before) == 8  # every VF offers the type before any is set
    kernel = FakeKernel(root, "vgpu-l40s")
    kernel.answer_writes(monkeypatch)
    with kernel:
        vgpu.apply(HostRoot(root), vgpu.plan(HostRoot(root), ["0000:01:00.0"], "1160", 2), timeout=5)
    facts, _warnings = discover(root)
    spec = [json.loads(v) for v in render_host(facts, [L40S], "cn1")["pci"]["device_spec"]]
    held = gpu_restore.Sysfs(root).vfs("0000:01:00.0")[:2]
    assert sorted(s["address"] for s in spec if s["address"].startswith("0000:01")) == held
    providers = nova_providers(facts, [L40S], "cn1", report_in_placement=True)
    pf = next(p for p in providers if p["name"] == "cn1_0000:01:00.0".upper().replace("CN1", "cn1"))
    assert pf["inventories"]["VGPU"]["total"] == 2


@pytest.mark.parametrize(
    ("name", "profile"),
    [
        ("NVIDIA A100-3-20C", "3g.20gb"),
        ("GRID A100-1-5CME", "1g.5gb+me"),
        ("NVIDIA H200-7-141C", "7g.141gb"),
        ("NVIDIA H100-1-20C", "1g.20gb"),
        ("NVIDIA A100-40C", None),
        ("NVIDIA L40S-4Q", None),
        (None, None),
    ],
)
def test_a_mig_backed_type_name_gives_its_gpu_instance_profile(name, profile):
    from ansible_collections.accel.openstack.plugins.module_utils._nova.selection import mig_profile_of

    assert mig_profile_of(name) == profile


def _mig_a100_facts(tmp_path, instances: list[str]) -> dict:
    from tests.support.fake_nvidia_smi import FakeNvidiaSmi

    root = build_root("mig-vgpu-a100", str(tmp_path / "root"))
    if instances:
        FakeNvidiaSmi(root)(["nvidia-smi", "mig", "-i", "00000000:41:00.0", "-cgi", ",".join(instances), "-C"])
    FakeKernel(root, "mig-vgpu-a100").step()
    facts, _unused = discover(root)
    return facts


@pytest.mark.parametrize(
    ("instances", "mdev_type", "parents"),
    [
        ([], "nvidia-476", []),
        (["9:0"], "nvidia-476", ["0000:41:00.4"]),
        (["9:0", "9:4"], "nvidia-476", ["0000:41:00.4", "0000:41:00.5"]),
        (["19:0", "19:1", "19:2", "9:4"], "nvidia-474", ["0000:41:00.4", "0000:41:00.5", "0000:41:00.6"]),
        (["19:0", "19:1", "19:2", "9:4"], "nvidia-478", []),
    ],
)
def test_nova_gets_one_vf_per_gpu_instance_of_the_types_profile(tmp_path, instances, mdev_type, parents):
    facts = _mig_a100_facts(tmp_path, instances)
    from ansible_collections.accel.openstack.plugins.module_utils._nova.config import HostInput, Options, render_fleet

    policy = [
        {
            "name": "a100",
            "vendor_id": "10de",
            "product_id": "20b0",
            "mode": "mig",
            "mig_layout": [{"profile": "1g.5gb", "count": 1}],
            "mdev_type": mdev_type,
        }
    ]
    rendering = render_fleet([HostInput(name="cn1", facts=facts)], policy, Options())
    config, selection = rendering.compute["cn1"], rendering.selections["cn1"]
    got = [d["address"] for item in selection.vgpu for d in item.parents]
    assert got == parents
    if parents:
        assert config[f"mdev_{mdev_type}"]["device_addresses"] == [",".join(parents)]
    else:
        assert "devices" not in config
        assert any("no GPU instance" in w for w in selection.warnings)


def test_a_vf_entry_creates_its_vfs_on_the_pfs_that_make_them(tmp_path):
    """NIC VFs for Neutron: the entry names the VF's device ID; the PFs that make it get sriov_numvfs."""
    from ansible_collections.accel.openstack.plugins.module_utils._nova.sharing_plan import host_plan

    facts, _unused = discover(build_root("sriov-nic", str(tmp_path / "root")))
    pfs = {d["address"]: d for d in facts["accel_pci_devices"] if d["sriov_vf_product_id"]}
    assert {d["sriov_vf_product_id"] for d in pfs.values()} == {"101e"}
    vf_entry = {"name": "cx6-vf", "vendor_id": "15b3", "product_id": "101e", "mode": "passthrough",
                "device_type": "type-VF", "physical_network": "physnet1", "sriov_numvfs": 4}  # fmt: skip
    plan = host_plan(facts["accel_pci_devices"], [vf_entry])
    assert plan["sriov"] == [{"devices": sorted(pfs), "numvfs": 4, "entry": "cx6-vf"}]
    one = host_plan(facts["accel_pci_devices"], [dict(vf_entry, addresses=[sorted(pfs)[1]])])
    assert one["sriov"][0]["devices"] == [sorted(pfs)[1]]
    # a PF-type entry with the VF's ID selects nothing: only VF entries look through the PF
    assert host_plan(facts["accel_pci_devices"], [dict(vf_entry, device_type="type-PF")])["sriov"] == []
