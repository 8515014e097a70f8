# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command accel-openstack-gpu-restore.service runs at boot: re-apply MIG mode, SR-IOV VFs, GPU
instances and vGPU types from the state files under /etc/accel-openstack/, recreate the mediated devices
instances hold, compare the host with the record and write the result to
/var/lib/accel-openstack/boot-state.json. With --record-mdevs (the unit's ExecStop, at shutdown) it only
records the parent and type of every mediated device present, so the next boot can recreate them.

The accel.openstack.gpu_boot_unit module installs this file as /usr/local/libexec/accel-openstack/gpu-restore
and the collection's gpu_restore.py beside it; Python puts the script's own directory first on the import
path, so the host needs nothing of the collection. Prints one line per action; on a failure prints the
reason on stderr and exits 1. nvidia-smi is run only for the live host (--root /): for any other root
this machine's GPUs are not the root's.
"""

import argparse
import os
import subprocess
import sys

import gpu_restore


def runner(timeout):
    """Run nvidia-smi: (exit status, stdout, stderr); 127 when it is not installed, 124 when it hangs."""

    def run(argv):
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                errors="replace",
                check=False,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            return 127, "", f"{argv[0]}: not found"
        except subprocess.TimeoutExpired:
            return 124, "", f"{argv[0]}: no answer within {timeout:g}s"
        return proc.returncode, proc.stdout, proc.stderr

    return run


def seconds(high):
    def parse(text):
        try:
            return gpu_restore.check_seconds(float(text), high=high)
        except (ValueError, gpu_restore.RestoreError) as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0, at most {high:g}") from exc

    return parse


def main(argv=None):
    parser = argparse.ArgumentParser(description="Re-apply shared-GPU state and held mdevs at boot.")
    parser.add_argument("--root", default="/", help="the host's filesystem root (default /)")
    parser.add_argument(
        "--timeout", type=seconds(gpu_restore.MAX_TIMEOUT), default=120.0, help="seconds each readiness wait lasts"
    )
    parser.add_argument(
        "--deadline", type=seconds(gpu_restore.MAX_DEADLINE), default=900.0, help="seconds the whole run may last"
    )
    parser.add_argument("--record-mdevs", action="store_true", help="only record the mdevs present (at shutdown)")
    args = parser.parse_args(argv)
    live = os.path.realpath(args.root) == "/"
    run = runner(min(args.timeout, 300.0)) if live else None
    try:
        if args.record_mdevs:
            count = gpu_restore.record_mdevs(gpu_restore.Sysfs(args.root))
            print(f"recorded {count} mediated devices")
            return 0
        for line in gpu_restore.restore(args.root, run=run, timeout=args.timeout, deadline=args.deadline):
            print(line)
    except gpu_restore.RestoreError as exc:
        print(f"accel-openstack gpu restore: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
