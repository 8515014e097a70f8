#!/usr/bin/env bash
# Molecule scenarios on real Debian bookworm roots. Needs root (debootstrap, chroot). The base root is
# built once with debootstrap and cached (tests/support/debian_root.py); each run copies it per host.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
if [[ $(id -u) -ne 0 ]]; then
  echo "tests/run_molecule.sh: the scenarios build chroots and need root" >&2
  exit 1
fi
export PATH="$repo/.venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="${ANSIBLE_COLLECTIONS_PATH:-$repo/.build/collections}"
mkdir -p "$repo/.build/collections/ansible_collections/accel"
ln -sfn "$repo" "$repo/.build/collections/ansible_collections/accel/openstack"
if ! command -v debootstrap >/dev/null 2>&1 && [[ ! -x /usr/sbin/debootstrap ]]; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
start=$SECONDS
python -m tests.support.debian_root base
echo "base root ready in $((SECONDS - start)) s"
for scenario in ${MOLECULE_SCENARIOS:-passthrough gpu_sharing}; do
  molecule test -s "$scenario"
done
echo "molecule: done in $((SECONDS - start)) s"
