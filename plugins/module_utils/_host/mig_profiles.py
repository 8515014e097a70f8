# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA's MIG profile tables and placement rules, per GPU model, and the layout planner.

The numbers come from NVIDIA's MIG User Guide ("Supported MIG Profiles") and from what
``nvidia-smi mig -lgip`` prints on each model. A GPU has ``memory_slices`` placement slots (8 on every
model here except the A30, which has 4) and ``compute_slices`` compute slices (7, or 4 on the A30).
A GPU instance of a profile occupies ``size`` consecutive slots starting at one of the profile's
``starts`` and takes ``compute`` compute slices. A layout fits when every instance gets a start that is
allowed for its profile, no two instances share a slot, at most one media-extension (``+me``) instance
exists, and the compute slices add up to no more than the GPU has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import kind_of, shown


class MigLayoutError(AccelError):
    """A MIG layout that names an unknown profile or does not fit the GPU; nothing was changed."""


@dataclass(frozen=True)
class MigProfile:
    name: str  # 1g.10gb
    profile_id: int  # the GPU instance profile ID nvidia-smi takes (-cgi 19)
    compute: int  # compute slices
    size: int  # placement slots taken
    starts: tuple[int, ...]  # allowed placement starts
    max_count: int  # instances of this profile the GPU can hold at most


@dataclass(frozen=True)
class MigModel:
    model: str  # short name: A100-40GB
    product_names: tuple[str, ...]  # substrings of nvidia-smi's product_name
    product_ids: tuple[str, ...]  # PCI device IDs (lowercase hex)
    compute_slices: int
    memory_slices: int
    profiles: tuple[MigProfile, ...]

    def profile(self, name: str) -> MigProfile | None:
        for profile in self.profiles:
            if profile.name == name:
                return profile
        return None

    def profile_by_id(self, profile_id: int) -> MigProfile | None:
        for profile in self.profiles:
            if profile.profile_id == profile_id:
                return profile
        return None


def _seven_slice(model, names, ids, gb1, gb2, gb3, gb7) -> MigModel:
    """The 7-compute / 8-memory-slice family (A100, H100, H200, B200, GH200): same IDs and placements."""
    return MigModel(
        model,
        names,
        ids,
        7,
        8,
        (
            MigProfile(f"1g.{gb1}gb", 19, 1, 1, (0, 1, 2, 3, 4, 5, 6), 7),
            MigProfile(f"1g.{gb1}gb+me", 20, 1, 1, (0, 1, 2, 3, 4, 5, 6), 1),
            MigProfile(f"1g.{gb2}gb", 15, 1, 2, (0, 2, 4, 6), 4),
            MigProfile(f"2g.{gb2}gb", 14, 2, 2, (0, 2, 4), 3),
            MigProfile(f"3g.{gb3}gb", 9, 3, 4, (0, 4), 2),
            MigProfile(f"4g.{gb3}gb", 5, 4, 4, (0,), 1),
            MigProfile(f"7g.{gb7}gb", 0, 7, 8, (0,), 1),
        ),
    )


MODELS: tuple[MigModel, ...] = (
    _seven_slice("A100-40GB", ("A100-PCIE-40GB", "A100-SXM4-40GB"), ("20f1", "20b0"), 5, 10, 20, 40),
    _seven_slice("A100-80GB", ("A100 80GB PCIe", "A100-SXM4-80GB"), ("20b5", "20b2"), 10, 20, 40, 80),
    MigModel(
        "A30",
        ("A30",),
        ("20b7",),
        4,
        4,
        (
            MigProfile("1g.6gb", 14, 1, 1, (0, 1, 2, 3), 4),
            MigProfile("1g.6gb+me", 21, 1, 1, (0, 1, 2, 3), 1),
            MigProfile("2g.12gb", 5, 2, 2, (0, 2), 2),
            MigProfile("2g.12gb+me", 6, 2, 2, (0, 2), 1),
            MigProfile("4g.24gb", 0, 4, 4, (0,), 1),
        ),
    ),
    _seven_slice("H100-80GB", ("H100 80GB HBM3", "H100 PCIe"), ("2330", "2331"), 10, 20, 40, 80),
    _seven_slice("H100-94GB", ("H100 NVL",), ("2321",), 12, 24, 47, 94),
    _seven_slice("H200-141GB", ("H200",), ("2335", "233b"), 18, 35, 71, 141),
    # Blackwell. GB200 before B200: nvidia-smi names it "NVIDIA GB200", which contains "B200".
    # GB200 (10de:2941) and B300 (10de:3182): profile names and device IDs from NVIDIA mig-parted's
    # deployments/systemd/config-default.yaml (the GB200 HGX and B300 entries); placements and IDs are
    # those of the 7-compute / 8-memory-slice family, as the MIG User Guide shows them for B200.
    _seven_slice("GB200-186GB", ("GB200",), ("2941",), 23, 47, 93, 186),
    _seven_slice("B200-180GB", ("B200",), ("2901",), 23, 45, 90, 180),
    _seven_slice("B300-269GB", ("NVIDIA B300",), ("3182",), 34, 67, 135, 269),
    _seven_slice("GH200-96GB", ("GH200 480GB", "GH200 96GB"), ("2342",), 12, 24, 48, 96),
    # RTX PRO 6000 Blackwell (10de:2bb5, Workstation, Max-Q and Server Edition, 96 GB): NVIDIA MIG User
    # Guide, "Supported MIG Profiles", table "GPU Instance Profiles on RTX PRO 6000", and the guide's
    # nvidia-smi mig -lgip sample for it (profile IDs); 4 compute and 4 memory slices, as on the A30.
    MigModel(
        "RTX-PRO-6000-96GB",
        ("RTX PRO 6000 Blackwell",),
        ("2bb5",),
        4,
        4,
        (
            MigProfile("1g.24gb", 14, 1, 1, (0, 1, 2, 3), 4),
            MigProfile("1g.24gb+me", 21, 1, 1, (0, 1, 2, 3), 1),
            MigProfile("1g.24gb+gfx", 47, 1, 1, (0, 1, 2, 3), 4),
            MigProfile("1g.24gb+me.all", 65, 1, 1, (0, 1, 2, 3), 1),
            MigProfile("1g.24gb-me", 67, 1, 1, (0, 1, 2, 3), 4),
            MigProfile("2g.48gb", 5, 2, 2, (0, 2), 2),
            MigProfile("2g.48gb+gfx", 35, 2, 2, (0, 2), 2),
            MigProfile("2g.48gb+me.all", 64, 2, 2, (0, 2), 1),
            MigProfile("2g.48gb-me", 66, 2, 2, (0, 2), 2),
            MigProfile("4g.96gb", 0, 4, 4, (0,), 1),
            MigProfile("4g.96gb+gfx", 32, 4, 4, (0,), 1),
        ),
    ),
)


def model_for(product_id: str | None, product_name: str | None) -> MigModel | None:
    """The table for a GPU, by PCI device ID first, else by nvidia-smi's product name."""
    pid = (product_id or "").lower()
    for model in MODELS:
        if pid and pid in model.product_ids:
            return model
    name = product_name or ""
    for model in MODELS:
        if any(fragment in name for fragment in model.product_names):
            return model
    return None


# -- the table as the GPU itself reports it ------------------------------------------------------
_LGIP_ROW = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+[\d.]+\s")
_LGIPP_ROW = re.compile(r"^\s*GPU\s+(\d+)\s+Profile\s+ID\s+(\d+)\s+Placements?\s*:\s*\{([\d,\s]*)\}\s*:\s*(\d+)")
_PROFILE_NAME = re.compile(r"([1-8])g\.\d+gb(?:[+-][a-z.]+)*")
MAX_PROFILES = 64  # more rows than any GPU lists: the text is not nvidia-smi's


def _start(pin, where: str) -> int:
    """One placement start slot (``3`` or ``{start: 3}``): a whole number, never a boolean, a float or inf."""
    start = pin.get("start") if isinstance(pin, dict) else pin
    if isinstance(start, str) and start.strip().isascii() and start.strip().isdigit() and len(start.strip()) <= 2:
        start = int(start)
    if isinstance(start, bool) or not isinstance(start, int):
        raise MigLayoutError(
            f"{where}: placement {shown(start)} is {kind_of(start)}, not a start slot; give a whole number "
            "(a start slot such as 0 or 4) or a list of them, one per instance"
        )
    return start


def parse_lgip(text: str) -> dict[int, dict]:
    """``nvidia-smi mig -lgip`` -> {profile_id: {name, compute, max_count}} (one GPU's rows)."""
    out: dict[int, dict] = {}
    gpus = set()
    for line in (text or "").splitlines():
        match = _LGIP_ROW.match(line)
        if not match:
            continue
        name = match.group(2)
        shape = _PROFILE_NAME.fullmatch(name)
        if shape is None:
            raise MigLayoutError(f"nvidia-smi mig -lgip: profile name {name[:40]!r} is not like 1g.10gb")
        gpus.add(int(match.group(1)))
        out[int(match.group(3))] = {"name": name, "compute": int(shape.group(1)), "max_count": int(match.group(5))}
        if len(out) > MAX_PROFILES or len(gpus) > 1:
            raise MigLayoutError("nvidia-smi mig -lgip: give the output of one GPU (-i <bus id>), at most 64 rows")
    return out


def parse_lgipp(text: str) -> dict[int, tuple[tuple[int, ...], int]]:
    """``nvidia-smi mig -lgipp`` -> {profile_id: (starts, size)}."""
    out: dict[int, tuple[tuple[int, ...], int]] = {}
    for line in (text or "").splitlines():
        match = _LGIPP_ROW.match(line)
        if not match:
            continue
        starts = tuple(sorted({int(s) for s in match.group(3).replace(" ", "").split(",") if s}))
        size = int(match.group(4))
        if not starts or size < 1 or size > 8 or any(s + size > 8 for s in starts):
            raise MigLayoutError(f"nvidia-smi mig -lgipp: placement {line.strip()[:80]!r} is outside 8 slots")
        out[int(match.group(2))] = (starts, size)
        if len(out) > MAX_PROFILES:
            raise MigLayoutError("nvidia-smi mig -lgipp: more than 64 rows; give the output of one GPU")
    return out


def model_from_gpu(lgip: str, lgipp: str, product_id: str | None, product_name: str | None) -> MigModel | None:
    """The profile table the GPU reports (``-lgip`` and ``-lgipp``), or None when either says nothing."""
    profiles_text, placements = parse_lgip(lgip), parse_lgipp(lgipp)
    if not profiles_text or not placements:
        return None
    profiles = []
    for profile_id, row in sorted(profiles_text.items()):
        if profile_id not in placements:
            raise MigLayoutError(
                f"nvidia-smi mig -lgipp lists no placement for profile {row['name']} (ID {profile_id}); record both "
                "outputs from the same GPU"
            )
        starts, size = placements[profile_id]
        profiles.append(MigProfile(row["name"], profile_id, row["compute"], size, starts, row["max_count"]))
    builtin = model_for(product_id, product_name)
    return MigModel(
        builtin.model if builtin else (product_name or f"10de:{product_id}"),
        builtin.product_names if builtin else (),
        (product_id,) if product_id else (),
        max(p.compute for p in profiles),
        max(s + p.size for p in profiles for s in p.starts),
        tuple(profiles),
    )


def supported_models() -> str:
    return ", ".join(m.model for m in MODELS)


@dataclass(frozen=True)
class Placement:
    profile: str
    profile_id: int
    start: int
    size: int

    def as_dict(self) -> dict:
        return {
            "profile": self.profile,
            "profile_id": self.profile_id,
            "placement": {"start": self.start, "size": self.size},
        }


def plan_layout(model: MigModel, layout: list[dict], label: str = "layout") -> list[Placement]:
    """Place every instance the layout asks for, or raise MigLayoutError naming the entry and the fix.

    ``layout`` is ``[{profile, count, placement?}]``; ``placement`` (a start slot, or a list of start
    slots, one per instance) pins instances; the others take the first free allowed start, largest
    profiles first, with backtracking, so any layout that can fit is found.
    """
    wanted: list[tuple[MigProfile, int | None, str]] = []
    names = ", ".join(p.name for p in model.profiles)
    per_profile: dict[str, int] = {}
    media = 0
    compute = 0
    for index, entry in enumerate(layout):
        where = f"{label} entry {index}"
        if not isinstance(entry, dict) or "profile" not in entry:
            raise MigLayoutError(f"{where}: give a dict with profile and count, e.g. {{profile: 1g.10gb, count: 2}}")
        profile = model.profile(str(entry["profile"]))
        if profile is None:
            raise MigLayoutError(
                f"{where}: profile {entry['profile']!r} does not exist on {model.model}; use one of {names}"
            )
        where = f"{label} entry {index} ({profile.name})"
        unknown = sorted(str(key) for key in entry if key not in ("profile", "count", "placement"))
        if unknown:
            raise MigLayoutError(f"{where}: unknown key {unknown[0]!r}; the keys are profile, count and placement")
        count = entry.get("count", 1)
        if isinstance(count, str) and count.strip().isascii() and count.strip().isdigit() and len(count) <= 6:
            count = int(count)
        if isinstance(count, bool) or not isinstance(count, int):
            raise MigLayoutError(
                f"{where}: count {shown(entry.get('count'))} ({kind_of(entry.get('count'))}) is not a whole number; "
                "give 0 or more"
            )
        if count < 0:
            raise MigLayoutError(f"{where}: count {count} is negative; give 0 or more")
        per_profile[profile.name] = per_profile.get(profile.name, 0) + count
        if per_profile[profile.name] > profile.max_count:  # before anything is built per instance
            raise MigLayoutError(
                f"{where}: {per_profile[profile.name]} instances of {profile.name}; {model.model} holds at most "
                f"{profile.max_count}"
            )
        placement = entry.get("placement")
        starts: list[int | None]
        if placement is None:
            starts = [None] * count
        else:
            raw = placement if isinstance(placement, list) else [placement]
            starts = [_start(pin, where) for pin in raw]
            if len(starts) != count:
                raise MigLayoutError(
                    f"{where}: {len(starts)} placement(s) for count {count}; give one start per instance or none"
                )
            for start in starts:
                if start not in profile.starts:
                    raise MigLayoutError(
                        f"{where}: placement {start} is not allowed for {profile.name} on {model.model}; "
                        f"allowed starts are {list(profile.starts)}"
                    )
        if profile.name.endswith("+me"):
            media += count
        compute += profile.compute * count
        wanted.extend((profile, start, where) for start in starts)
    if media > 1:
        raise MigLayoutError(f"{label}: {media} media-extension (+me) instances; a GPU has one media engine set")
    if compute > model.compute_slices:
        raise MigLayoutError(
            f"{label}: needs {compute} compute slices; {model.model} has {model.compute_slices}; "
            "remove or shrink instances"
        )
    used = [False] * model.memory_slices
    result: list[Placement] = []
    for profile, start, where in wanted:
        if start is None:
            continue
        if any(used[start : start + profile.size]):
            raise MigLayoutError(f"{where}: placement {start} overlaps another pinned instance; choose another start")
        for slot in range(start, start + profile.size):
            used[slot] = True
        result.append(Placement(profile.name, profile.profile_id, start, profile.size))
    free = sorted((p for p, s, _w in wanted if s is None), key=lambda p: (-p.size, -p.compute, p.profile_id))
    placed = _place(free, used)
    if placed is None:
        raise MigLayoutError(
            f"{label}: the instances do not fit {model.model}'s placement slots together "
            f"({', '.join(_count_text(layout))}); NVIDIA allows each profile only at fixed starts: "
            + "; ".join(f"{p.name} at {list(p.starts)}" for p in model.profiles if p.name in per_profile)
            + "; remove an instance or pick smaller profiles"
        )
    result.extend(Placement(p.name, p.profile_id, s, p.size) for p, s in placed)
    return sorted(result, key=lambda p: (p.start, p.profile_id))


def _count_text(layout: list[dict]) -> list[str]:
    return [f"{e.get('count', 1)} x {e.get('profile')}" for e in layout if isinstance(e, dict)]


def _place(free: list[MigProfile], used: list[bool]):
    if not free:
        return []
    profile, rest = free[0], free[1:]
    for start in profile.starts:
        if start + profile.size > len(used) or any(used[start : start + profile.size]):
            continue
        for slot in range(start, start + profile.size):
            used[slot] = True
        tail = _place(rest, used)
        for slot in range(start, start + profile.size):
            used[slot] = False
        if tail is not None:
            return [(profile, start)] + tail
    return None
