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
key=$({ cat "$requirements"; echo "$version"; echo "$base"; echo "format 2"; } | sha256sum | cut -c1-16)
name=$(basename "$link")
target="$cache/${name#.}-$key"
mkdir -p "$cache"

# uv, in a venv of its own beside the others (built once per pin and interpreter); prints its path, or
# nothing where it cannot be had.
installer() {
  [[ ${ACCEL_VENV_INSTALLER:-uv} == pip ]] && return 0
  local uv_key tool
  uv_key=$({ cat "$root/requirements/uv.txt"; echo "$version"; echo "$base"; } | sha256sum | cut -c1-16)
  tool="$cache/uv-$uv_key"
  (
    exec 8>"$tool.lock"
    flock 8
    if [[ ! -f $tool/.complete ]]; then
      rm -rf "$tool"
      "$base" -m venv "$tool" && "$tool/bin/python" -m pip install -q --disable-pip-version-check \
        -r "$root/requirements/uv.txt" && touch "$tool/.complete"
    fi
  ) >&2 || { rm -rf "$tool"; echo "tests/venv.sh: uv could not be installed; pip installs instead" >&2; return 0; }
  echo "$tool/bin/uv"
}

exec 9>"$target.lock"
flock 9
if [[ ! -f $target/.complete ]]; then
  rm -rf "$target"
  echo "building $link from $requirements (cached as $target)"
  "$base" -m venv "$target"
  uv=$(installer)
  if [[ -z $uv ]] || ! "$uv" pip install --quiet --compile-bytecode --python "$target/bin/python" -r "$requirements"; then
    [[ -z $uv ]] || echo "tests/venv.sh: uv could not install $requirements; pip installs it instead" >&2
    "$target/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
  fi
  touch "$target/.complete"
fi
if [[ -L $link || ! -e $link ]]; then
  ln -sfn "$target" "$link"
else
  rm -rf "$link"
  ln -s "$target" "$link"
fi
