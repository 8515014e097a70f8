# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command accel-openstack-gpu-restore.service runs at boot: re-apply SR-IOV VFs, vGPU types and MIG
layouts from the state files under /etc/accel-openstack/.

The host_gpu_sharing role installs this file as /usr/local/libexec/accel-openstack/gpu-restore and the
collection's gpu_restore.py beside it; Python puts the script's own directory first on the import path,
so the host needs nothing of the collection. Prints one line per action; on a failure prints the reason
on stderr and exits 1.
"""

import argparse
import subprocess
import sys

import gpu_restore


def run(argv):
    """Run a command (nvidia-smi): (exit status, stdout, stderr); 127 when it is not installed."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return 127, "", f"{argv[0]}: not found"
    return proc.returncode, proc.stdout, proc.stderr


def main(argv=None):
    parser = argparse.ArgumentParser(description="Re-apply SR-IOV VFs, vGPU types and MIG layouts at boot.")
    parser.add_argument("--root", default="/", help="the host's filesystem root (default /)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for each readiness step")
    args = parser.parse_args(argv)
    try:
        for line in gpu_restore.restore(args.root, run=run, timeout=args.timeout):
            print(line)
    except gpu_restore.RestoreError as exc:
        print(f"accel-openstack gpu restore: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
