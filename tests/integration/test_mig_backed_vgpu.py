"""MIG-backed vGPU: no type before the layout; after nvidia_mig, discovery, the Nova config and the providers.

Two hosts, each with MIG on and no GPU instances: an A100 40GB on the vGPU 16 host driver (types under
each VF's ``mdev_supported_types``; Nova creates the mdevs) and an H100 PCIe on vGPU 17 (types in each VF's
``nvidia/creatable_vgpu_types``; ``nvidia_vgpu`` writes ``current_vgpu_type``). The fake kernel offers a
MIG-backed type on a VF only while a GPU instance of its profile is free; Nova's own code (nova venv)
parses what we render and builds the providers we predict.
"""

import json
import os
import shutil

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host import gpu_restore, mig
from ansible_collections.accel.openstack.plugins.module_utils._host.discovery import discover
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import render_text
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova.config import HostInput, Options, render_fleet
from ansible_collections.accel.openstack.plugins.module_utils._nova.policy import parse_policy
from ansible_collections.accel.openstack.plugins.module_utils._nova.providers import predict_providers
from tests.support import nova_oracle
from tests.support.ansible_runner import run_module
from tests.support.fake_kernel import FakeKernel
from tests.support.fake_nvidia_smi import FakeNvidiaSmi
from tests.support.fake_sysfs import build_root

A100 = "0000:41:00.0"
A100_VFS = ["0000:41:00.4", "0000:41:00.5", "0000:41:00.6", "0000:41:00.7"]
H100 = "0000:4b:00.0"
H100_VFS = ["0000:4b:00.4", "0000:4b:00.5", "0000:4b:00.6", "0000:4b:00.7"]
LAYOUT_A100 = [{"profile": "3g.20gb", "count": 2}]
LAYOUT_H100 = [{"profile": "3g.40gb", "count": 2}]
PLACEMENT_DEFAULTS = {"reserved": 0, "min_unit": 1, "step_size": 1, "allocation_ratio": 1.0}


def _types(facts: dict, address: str) -> dict[str, dict]:
    device = next(d for d in facts["accel_pci_devices"] if d["address"] == address)
    return {t["type"]: t for t in device["mdev_types"]}


def _device(facts: dict, address: str) -> dict:
    return next(d for d in facts["accel_pci_devices"] if d["address"] == address)


def _render(name: str, facts: dict, policy: list, options: Options):
    rendering = render_fleet([HostInput(name=name, facts=facts)], policy, options)
    return rendering, rendering.compute[name]


def _nova(name: str, facts: dict, rendering) -> dict:
    doc = rendering.provider_configs.get(name)
    (answer,) = nova_oracle.ask(
        [
            {
                "id": name,
                "hostname": name,
                "compute": render_text(rendering.compute[name]),
                "scheduler": render_text(rendering.scheduler),
                "api": render_text(rendering.api),
                "provider_config": json.dumps(doc) if doc else None,
                "devices": facts["accel_pci_devices"],
            }
        ]
    )
    for service in ("compute", "scheduler", "api"):
        assert answer[service]["ok"], f"{service}: {answer[service].get('error')}"
    return answer


def _same_providers(nova: list[dict], predicted: list[dict]) -> None:
    theirs = sorted(
        (
            {
                "name": p["name"],
                "inventories": {rc: {**PLACEMENT_DEFAULTS, **inv} for rc, inv in p["inventories"].items()},
            }
            for p in nova[1:]
        ),
        key=lambda p: p["name"],
    )
    ours = sorted(({k: p[k] for k in ("name", "inventories")} for p in predicted[1:]), key=lambda p: p["name"])
    assert ours == theirs


# -- A100, vGPU 16: MIG-backed mdev types, Nova creates the mdevs -------------------------------------
A100_POLICY = [
    {
        "name": "a100-3g",
        "vendor_id": "10de",
        "product_id": "20b0",
        "mode": "mig",
        "mig_layout": LAYOUT_A100,
        "mdev_type": "nvidia-476",
    }
]


@pytest.fixture
def a100(tmp_path):
    root = build_root("mig-vgpu-a100", str(tmp_path / "root"))
    kernel = FakeKernel(root, "mig-vgpu-a100")
    kernel.step()
    return root, kernel


def test_a100_mig_backed_mdev_type_appears_after_the_layout(a100):
    root, kernel = a100
    before, _unused = discover(root)
    for vf in A100_VFS:
        assert {t: v["available_instances"] for t, v in _types(before, vf).items()} == dict.fromkeys(
            ["nvidia-468", "nvidia-473", "nvidia-474", "nvidia-475", "nvidia-476", "nvidia-477", "nvidia-478"]
            + ["nvidia-706"],
            0,
        )
    rendering, compute = _render("a100", before, A100_POLICY, Options())
    assert "devices" not in compute
    assert any("no GPU instance" in w for w in rendering.selections["a100"].warnings)

    # check -> apply -> check -> apply: on this root the module keeps the layout for the boot unit
    args = {"root": root, "address": A100, "layout": LAYOUT_A100}
    checked = run_module("nvidia_mig", args, check=True)
    assert checked["changed"] is True and checked["plan"] == ["nvidia-smi mig -i 00000000:41:00.0 -cgi 9:0,9:4 -C"]
    assert not os.path.exists(os.path.join(root, "etc/accel-openstack/mig", A100 + ".json"))
    applied = run_module("nvidia_mig", args)
    assert applied["changed"] is True and [c["status"] for c in applied["commands"]] == ["pending"]
    assert run_module("nvidia_mig", args, check=True)["changed"] is False
    assert run_module("nvidia_mig", args)["changed"] is False
    # the boot unit creates the GPU instances with (the double of) nvidia-smi; the vGPU manager follows
    assert gpu_restore.restore(root, run=FakeNvidiaSmi(root), timeout=2) == [
        f"{A100}: MIG mode on",
        f"{A100}: created 9:0,9:4",
    ]
    kernel.step()

    after, _unused = discover(root)
    assert [gi["profile"] for gi in _device(after, A100)["mig"]["gpu_instances"]] == ["3g.20gb", "3g.20gb"]
    for vf in A100_VFS:
        types = _types(after, vf)
        assert types["nvidia-476"]["name"] == "NVIDIA A100-3-20C"
        assert types["nvidia-476"]["mechanism"] == "mdev"
        offered = {t for t, v in types.items() if v["available_instances"]}
        assert offered == {"nvidia-476"}  # only the profile that has instances, no time-sliced type
    assert run_module("nvidia_mig", dict(args, state="assert"))["drift"] == []

    rendering, compute = _render("a100", after, A100_POLICY, Options())
    assert compute["devices"] == {"enabled_mdev_types": ["nvidia-476"]}
    # one vGPU per GPU instance: two VFs, not every VF that offers the type
    assert compute["mdev_nvidia-476"]["device_addresses"] == [",".join(A100_VFS[:2])]
    predicted = predict_providers(after, parse_policy(A100_POLICY), "a100", False)
    assert [(p["name"], p["inventories"]["VGPU"]["total"]) for p in predicted[1:]] == [
        ("a100_pci_0000_41_00_4", 1),
        ("a100_pci_0000_41_00_5", 1),
    ]
    nova = _nova("a100", after, rendering)["compute"]
    assert nova["enabled_mdev_types"] == ["nvidia-476"]
    assert nova["pgpu_types"] == dict.fromkeys(A100_VFS[:2], "nvidia-476")
    _same_providers(nova["providers"], predicted)


def test_a100_each_mdev_takes_one_gpu_instance(a100):
    root, kernel = a100
    host, smi = HostRoot(root), FakeNvidiaSmi(root)
    mig.apply(host, mig.plan(host, A100, LAYOUT_A100, smi), smi)
    kernel.step()
    base = "sys/bus/pci/devices/{}/mdev_supported_types/nvidia-476"

    def available() -> list[int]:
        out = []
        for vf in A100_VFS:
            with open(os.path.join(root, base.format(vf), "available_instances")) as handle:
                out.append(int(handle.read()))
        return out

    assert available() == [1, 1, 1, 1]
    for index, vf in enumerate(A100_VFS[:3]):
        with open(os.path.join(root, base.format(vf), "create"), "w") as handle:
            handle.write(f"5a1e0000-0000-4000-8000-00000000000{index}\n")
        kernel.step()
    # two mdevs made (VF .4 and .5); the third create found no free instance and was refused
    assert os.listdir(os.path.join(root, "sys/bus/mdev/devices")).__len__() == 2
    assert any("refused mdev" in e for e in kernel.events)
    assert available() == [0, 0, 0, 0]


# -- H100, vGPU 17: MIG-backed types in creatable_vgpu_types, nvidia_vgpu writes current_vgpu_type ------
H100_POLICY = [
    {
        "name": "h100-3g",
        "vendor_id": "10de",
        "product_id": "2331",
        "mode": "mig",
        "mig_layout": LAYOUT_H100,
        "mdev_type": "1065",
        "vfs": 2,
    }
]


@pytest.fixture
def h100(tmp_path, monkeypatch):
    root = build_root("mig-vgpu-h100", str(tmp_path / "root"))
    kernel = FakeKernel(root, "mig-vgpu-h100", delay=0.1)
    kernel.answer_writes(monkeypatch)
    with kernel:
        yield root, kernel


def test_h100_mig_backed_vf_type_appears_after_the_layout(h100, tmp_path, monkeypatch):
    root, kernel = h100
    before, _unused = discover(root)
    for vf in H100_VFS:
        assert _types(before, vf) == {}  # MIG on, no GPU instance: nothing creatable
    vgpu_args = {"root": root, "devices": [H100], "type": "NVIDIA H100-3-40C", "vfs": 2}
    refused = run_module("nvidia_vgpu", vgpu_args)
    assert refused["failed"] is True and "not in its VFs" in refused["msg"]

    # the live-system path: nvidia_mig's plan and apply run (the double of) nvidia-smi
    host, smi = HostRoot(root), FakeNvidiaSmi(root)
    plan = mig.plan(host, H100, LAYOUT_H100, smi)
    assert plan.commands == [["nvidia-smi", "mig", "-i", "00000000:4B:00.0", "-cgi", "9:0,9:4", "-C"]]
    assert [o["status"] for o in mig.apply(host, plan, smi)] == ["ran"]
    assert not mig.plan(host, H100, LAYOUT_H100, smi).changed
    kernel.step()

    listed, _unused = discover(root)
    for vf in H100_VFS:
        assert _types(listed, vf) == {
            "1065": {
                "type": "1065",
                "name": "NVIDIA H100-3-40C",
                "available_instances": 1,
                "device_api": "vfio-pci",
                "description": None,
                "mechanism": "nvidia_vgpu_vf",
            }
        }

    # check -> apply -> check -> apply of the VF type, now creatable
    checked = run_module("nvidia_vgpu", vgpu_args, check=True)
    assert checked["changed"] is True and len(checked["gpus"][0]["writes"]) == 2
    applied = run_module("nvidia_vgpu", vgpu_args)
    assert applied["changed"] is True, applied
    assert run_module("nvidia_vgpu", vgpu_args, check=True)["changed"] is False
    assert run_module("nvidia_vgpu", vgpu_args)["changed"] is False

    after, _unused = discover(root)
    assert [_device(after, vf)["current_vgpu_type"] for vf in H100_VFS] == ["1065", "1065", "0", "0"]
    # both GPU instances are taken: the other VFs offer nothing
    assert [sorted(_types(after, vf)) for vf in H100_VFS] == [["1065"], ["1065"], [], []]

    options = Options(report_in_placement=True)
    rendering, compute = _render("h100", after, H100_POLICY, options)
    specs = [json.loads(s) for s in compute["pci"]["device_spec"]]
    assert sorted(s["address"] for s in specs) == H100_VFS[:2]
    assert {s["resource_class"] for s in specs} == {"VGPU"}
    predicted = predict_providers(after, parse_policy(H100_POLICY), "h100", True)
    assert sum(p["inventories"].get("VGPU", {}).get("total", 0) for p in predicted[1:]) == 2
    answer = _nova("h100", after, rendering)
    assert sorted(answer["compute"]["matched"]) == H100_VFS[:2]
    _same_providers(answer["compute"]["providers"], predicted)

    # the boot: a fresh GPU (no GPU instances, no types); the unit makes the instances, then the types
    fresh = build_root("mig-vgpu-h100", str(tmp_path / "after"))
    shutil.copytree(os.path.join(root, "etc/accel-openstack"), os.path.join(fresh, "etc/accel-openstack"))
    rebooted = FakeKernel(fresh, "mig-vgpu-h100", delay=0.1)
    rebooted.answer_writes(monkeypatch)
    with rebooted:
        lines = gpu_restore.restore(fresh, run=FakeNvidiaSmi(fresh), timeout=5)
    assert lines == [
        f"{H100}: MIG mode on",
        f"{H100}: created 9:0,9:4",
        f"{H100_VFS[0]}: vGPU type 1065",
        f"{H100_VFS[1]}: vGPU type 1065",
    ]
    again, _unused = discover(fresh)
    assert [_device(again, vf)["current_vgpu_type"] for vf in H100_VFS] == ["1065", "1065", "0", "0"]
