#!/usr/bin/env bash
# Make the virtual environment LINK (e.g. .venv) for REQUIREMENTS with PYTHON, through a cache keyed by
# what decides its content: the requirements file, the base interpreter (its path and version) and this
# script's format. A fresh checkout whose requirements are unchanged links the venv built before (in CI:
# the same machine's earlier run) instead of building it again; a changed pin builds a new one beside it.
#
# Usage: tests/venv.sh LINK PYTHON REQUIREMENTS
# The cache is $ACCEL_VENV_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/accel-openstack/venvs. A venv is built
# in place (venvs hold absolute paths, they cannot be moved) under a lock, and counts only once its
# .complete marker is written; a half-built one is removed and built again. LINK, an old directory venv
# of the checkout, is replaced by a link to the cached one.
#
# PYTHON may be a venv's interpreter or a shim (pyenv's): the venv is made from, and keyed by, the base
# interpreter behind it, so `python3` names the same venv before and after .venv/bin comes first on PATH.
# The packages are installed by uv (requirements/uv.txt, itself installed once by pip into the cache),
# which takes about a tenth of pip's time and installs the same pinned set; ACCEL_VENV_INSTALLER=pip
# installs with pip instead, as does a machine where uv cannot be installed or cannot install the set.
set -euo pipefail
link=${1:?usage: tests/venv.sh LINK PYTHON REQUIREMENTS}
python=${2:?usage: tests/venv.sh LINK PYTHON REQUIREMENTS}
requirements=${3:?usage: tests/venv.sh LINK PYTHON REQUIREMENTS}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${ACCEL_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accel-openstack/venvs}
interpreter=$(command -v "$python") || { echo "tests/venv.sh: no interpreter $python" >&2; exit 1; }
base=$("$interpreter" -c 'import sys; print(getattr(sys, "_base_executable", "") or sys.executable)')
base=$(readlink -f "$base")
version=$("$base" -c 'import sys; print(sys.version)')
# The cache key of a venv for requirements file $1: the file, the base interpreter and this script's format.
key_of() {
  { cat "$1"; echo "$version"; echo "$base"; echo "format 2"; } | sha256sum | cut -c1-16
}

# ensure DIR REQUIREMENTS INSTALLER LABEL: the venv DIR for REQUIREMENTS (LABEL names it in the progress
# line), built once under DIR.lock; it counts only once DIR/.complete is written, and a half-built one is
# built again. INSTALLER uv installs the packages with uv where uv can be had and can install them, with
# pip otherwise; INSTALLER pip uses pip. A failed step returns 1 (also where the caller tests the status,
# which turns set -e off).
ensure() {
  local dir=$1 reqs=$2 installer=$3 label=$4 lock uv=""
  exec {lock}>"$dir.lock"
  flock "$lock"
  if [[ ! -f $dir/.complete ]]; then
    rm -rf "$dir"
    echo "building $label from $reqs (cached as $dir)"
    "$base" -m venv "$dir" || return 1
    [[ $installer != uv ]] || uv=$(uv_binary)
    if [[ -z $uv ]] || ! "$uv" pip install --quiet --compile-bytecode --python "$dir/bin/python" -r "$reqs"; then
      [[ -z $uv ]] || echo "tests/venv.sh: uv could not install $reqs; pip installs it instead" >&2
      "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$reqs" || return 1
    fi
    touch "$dir/.complete" || return 1
  fi
  exec {lock}>&-
}

# uv, in a venv of its own beside the others (installed by pip); prints its path, or nothing where it
# cannot be had.
uv_binary() {
  local tool
  tool="$cache/uv-$(key_of "$root/requirements/uv.txt")"
  if ( ensure "$tool" "$root/requirements/uv.txt" pip uv ) >&2; then
    echo "$tool/bin/uv"
  else
    echo "tests/venv.sh: uv could not be installed; pip installs instead" >&2
  fi
}

name=$(basename "$link")
target="$cache/${name#.}-$(key_of "$requirements")"
mkdir -p "$cache"
installer=${ACCEL_VENV_INSTALLER:-uv}
[[ $installer == pip ]] || installer=uv
ensure "$target" "$requirements" "$installer" "$link"
if [[ -L $link || ! -e $link ]]; then
  ln -sfn "$target" "$link"
else
  rm -rf "$link"
  ln -s "$target" "$link"
fi
