"""Real Debian bookworm root filesystems for the molecule scenarios and integration tests.

A base root is made once with debootstrap (minbase plus Python, GRUB's configuration tools,
initramfs-tools and kmod; no kernel) and cached as a tarball keyed by the package list, so later runs
on the same machine only unpack it. Each test host gets its own copy with a hardware profile's fake
sysfs at its ``/sys`` and ``/proc``.

The mirror is read from this machine's apt sources at run time; nothing here names a registry host.

Command line::

    python -m tests.support.debian_root base                      # build or reuse the cached tarball
    python -m tests.support.debian_root host DIR PROFILE [--configured]
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

SUITE = "bookworm"
PACKAGES = ("python3", "python3-netaddr", "grub2-common", "grub-common", "initramfs-tools", "kmod", "zstd")
LAYOUT_VERSION = "1"  # bump when what is done to the base root after debootstrap changes
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class DebianRootError(RuntimeError):
    pass


def cache_dir() -> str:
    """Where the base tarball is kept: ACCEL_ROOT_CACHE, /var/cache/accel-openstack, or .cache/."""
    explicit = os.environ.get("ACCEL_ROOT_CACHE")
    if explicit:
        return explicit
    system = "/var/cache/accel-openstack"
    try:
        os.makedirs(system, exist_ok=True)
        if os.access(system, os.W_OK):
            return system
    except OSError:
        pass
    return os.path.join(REPO, ".cache", "debian-roots")


def cache_key() -> str:
    digest = hashlib.sha256(f"{SUITE}|{','.join(sorted(PACKAGES))}|{LAYOUT_VERSION}".encode()).hexdigest()
    return f"debian-{SUITE}-{digest[:12]}.tar"


def apt_mirror(etc: str = "/etc/apt") -> str:
    """The Debian mirror this machine's apt uses for the suite (deb822 .sources or one-line .list)."""
    candidates: list[str] = []
    for path in sorted(glob.glob(os.path.join(etc, "sources.list.d", "*.sources"))):
        with open(path) as handle:
            for stanza in re.split(r"\n\s*\n", handle.read()):
                fields = dict(
                    (m.group(1).lower(), m.group(2).strip())
                    for m in re.finditer(r"^([A-Za-z-]+):[ \t]*(.*)$", stanza, re.M)
                )
                suites = fields.get("suites", "").split()
                enabled = fields.get("enabled", "yes").lower() != "no"
                if "deb" in fields.get("types", "").split() and SUITE in suites and enabled:
                    candidates.extend(fields.get("uris", "").split())
    list_files = [os.path.join(etc, "sources.list")] + sorted(glob.glob(os.path.join(etc, "sources.list.d", "*.list")))
    for path in list_files:
        if not os.path.exists(path):
            continue
        with open(path) as handle:
            for line in handle:
                words = re.sub(r"\[[^]]*\]", "", line.split("#", 1)[0]).split()
                if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE:
                    candidates.append(words[1])
    for uri in candidates:
        if "security" not in uri:
            return uri
    raise DebianRootError(f"no apt source for Debian {SUITE} found under {etc}; configure apt first")


def ensure_debootstrap() -> str:
    path = shutil.which("debootstrap") or ("/usr/sbin/debootstrap" if os.path.exists("/usr/sbin/debootstrap") else None)
    if path:
        return path
    if os.geteuid() != 0:
        raise DebianRootError("debootstrap is missing; install it (apt-get install debootstrap) or run as root")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "debootstrap"], check=True, env=env)
    return shutil.which("debootstrap") or "/usr/sbin/debootstrap"


def base_tarball(log=sys.stderr) -> str:
    """Return the cached base tarball, building it with debootstrap when it is missing."""
    directory = cache_dir()
    os.makedirs(directory, exist_ok=True)
    tarball = os.path.join(directory, cache_key())
    if os.path.exists(tarball):
        return tarball
    debootstrap = ensure_debootstrap()
    work = tempfile.mkdtemp(prefix="debian-root-", dir=directory)
    try:
        rootfs = os.path.join(work, "rootfs")
        cmd = [debootstrap, "--variant=minbase", "--include=" + ",".join(PACKAGES), SUITE, rootfs, apt_mirror()]
        print("building the Debian base root: " + " ".join(cmd), file=log, flush=True)
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            tail = (result.stdout + result.stderr)[-3000:]
            raise DebianRootError(f"debootstrap failed ({result.returncode}):\n{tail}")
        _finish_base(rootfs)
        partial = tarball + ".partial"
        subprocess.run(["tar", "-C", rootfs, "--numeric-owner", "-cf", partial, "."], check=True)
        os.replace(partial, tarball)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tarball


def _finish_base(rootfs: str) -> None:
    """What a GRUB package's maintainer scripts would do on an installed system, without touching disks."""
    template = os.path.join(rootfs, "usr/share/grub/default/grub")
    target = os.path.join(rootfs, "etc/default/grub")
    if not os.path.exists(target):
        if not os.path.exists(template):
            raise DebianRootError("the base root has no /usr/share/grub/default/grub; is grub2-common installed?")
        shutil.copyfile(template, target)
    os.makedirs(os.path.join(rootfs, "etc/default/grub.d"), exist_ok=True)
    for cache in glob.glob(os.path.join(rootfs, "var/cache/apt/archives/*.deb")):
        os.unlink(cache)
    for mountpoint in ("sys", "proc"):
        path = os.path.join(rootfs, mountpoint)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)


def make_host(dest: str, profile: str | dict, configured: bool = False) -> str:
    """A fresh copy of the base root at ``dest`` with the profile's fake sysfs at /sys and /proc."""
    from tests.support.fake_sysfs import build_root

    tarball = base_tarball()
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    subprocess.run(["tar", "-C", dest, "--numeric-owner", "-xf", tarball], check=True)
    build_root(profile, dest)
    if configured:
        _preconfigure(dest, profile)
    return dest


def reboot(dest: str, profile: str, vfs_gone: bool = False, mig_lost: bool = False, no_reset: bool = False) -> str:
    """A simulated reboot of the root at ``dest``: fresh ``/sys``, ``/proc`` and GPU state from the profile
    (VFs, vGPU types and MIG instances as firmware leaves them); everything else, /etc included, stays.

    MIG mode survives, as on real GPUs (a pending mode becomes current), unless ``mig_lost``; with
    ``vfs_gone`` no PF has VFs (no sriov-manage ran); ``no_reset`` makes the GPUs refuse a GPU reset.
    """
    import json
    import tempfile

    import yaml

    from tests.support import fake_nvidia_smi
    from tests.support.fake_sysfs import PROFILE_DIR, build_root

    with open(os.path.join(PROFILE_DIR, profile + ".yml")) as handle:
        raw = yaml.safe_load(handle)
    if vfs_gone:
        for device in raw.get("devices", []):
            if device.get("sriov"):
                device["sriov"]["numvfs"] = 0
    state_path = os.path.join(dest, fake_nvidia_smi.STATE.lstrip("/"))
    before = {}
    if os.path.exists(state_path):
        with open(state_path) as handle:
            before = json.load(handle)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(dest))) as fresh:
        build_root(raw, fresh)
        fresh_state = os.path.join(fresh, fake_nvidia_smi.STATE.lstrip("/"))
        if os.path.exists(fresh_state):
            with open(fresh_state) as handle:
                state = fake_nvidia_smi.after_reboot(before, json.load(handle), mig_lost, no_reset)
            with open(fresh_state, "w") as handle:
                json.dump(state, handle, indent=2, sort_keys=True)
            fake_nvidia_smi.render_recorded(fresh, state)
        for part in ("sys", "proc", "var/lib/fake-nvidia-smi/state.json", "var/lib/accel-openstack/nvidia-smi"):
            source, target = os.path.join(fresh, part), os.path.join(dest, part)
            if not os.path.lexists(source):
                continue
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            elif os.path.lexists(target):
                os.unlink(target)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.move(source, target)
    return dest


def _preconfigure(dest: str, profile: str | dict) -> None:
    """Lay down what a finished run leaves on a host whose profile says it is already configured.

    The profile's ``files`` already carry the configuration files (it is declarative); nothing to do
    beyond checking that they landed.
    """
    if not os.path.exists(os.path.join(dest, "etc/default/grub.d")):
        raise DebianRootError(f"{dest}: /etc/default/grub.d missing after build")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("base", help="build or reuse the cached base tarball; print its path")
    host = sub.add_parser("host", help="make one host root from the base and a hardware profile")
    host.add_argument("dest")
    host.add_argument("profile")
    rebooted = sub.add_parser("reboot", help="give a host root a fresh /sys, /proc and GPU state (a reboot)")
    rebooted.add_argument("dest")
    rebooted.add_argument("profile")
    rebooted.add_argument("--vfs-gone", action="store_true", help="no PF has VFs after the boot")
    rebooted.add_argument("--mig-lost", action="store_true", help="MIG mode is off after the boot")
    rebooted.add_argument("--no-reset", action="store_true", help="the GPUs refuse a GPU reset")
    args = parser.parse_args(argv)
    try:
        if args.command == "base":
            print(base_tarball())
        elif args.command == "reboot":
            print(reboot(args.dest, args.profile, args.vfs_gone, args.mig_lost, args.no_reset))
        else:
            print(make_host(args.dest, args.profile))
    except DebianRootError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    sys.exit(main())
