#!/usr/bin/env bash
# Make the virtual environment LINK (e.g. .venv) for REQUIREMENTS with PYTHON, through a cache keyed by
# what decides its content: the requirements file, the interpreter (its path and version) and this
# script's format. A fresh checkout whose requirements are unchanged links the venv built before (in CI:
# the same machine's earlier run) instead of building it again; a changed pin builds a new one beside it.
#
# Usage: tests/venv.sh LINK PYTHON REQUIREMENTS
# The cache is $ACCEL_VENV_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/accel-openstack/venvs. A venv is built
# in place (venvs hold absolute paths, they cannot be moved) under a lock, and counts only once its
# .complete marker is written; a half-built one is removed and built again. LINK, an old directory venv
# of the checkout, is replaced by a link to the cached one.
set -euo pipefail
link=${1:?usage: tests/venv.sh LINK PYTHON REQUIREMENTS}
python=${2:?usage: tests/venv.sh LINK PYTHON REQUIREMENTS}
requirements=${3:?usage: tests/venv.sh LINK PYTHON REQUIREMENTS}
cache=${ACCEL_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accel-openstack/venvs}
interpreter=$(command -v "$python") || { echo "tests/venv.sh: no interpreter $python" >&2; exit 1; }
version=$("$interpreter" -c 'import sys; print(sys.version)')
key=$({ cat "$requirements"; echo "$version"; readlink -f "$interpreter"; echo "format 1"; } | sha256sum | cut -c1-16)
name=$(basename "$link")
target="$cache/${name#.}-$key"
mkdir -p "$cache"
exec 9>"$target.lock"
flock 9
if [[ ! -f $target/.complete ]]; then
  rm -rf "$target"
  echo "building $link from $requirements (cached as $target)"
  "$interpreter" -m venv "$target"
  "$target/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
  touch "$target/.complete"
fi
if [[ -L $link || ! -e $link ]]; then
  ln -sfn "$target" "$link"
else
  rm -rf "$link"
  ln -s "$target" "$link"
fi
