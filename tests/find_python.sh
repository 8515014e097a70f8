#!/usr/bin/env bash
# Print the path of a Python interpreter of the version given (e.g. 3.12), or fail saying how to get one.
# Looks at $PYTHON<major><minor> (e.g. PYTHON312), pythonX.Y on PATH, then pyenv's versions. Every
# candidate is run once: a pyenv shim answers `command -v` even where it cannot run that version.
set -uo pipefail
want=${1:?usage: tests/find_python.sh X.Y}
override_var="PYTHON${want/./}"
candidates=()
[[ -n ${!override_var:-} ]] && candidates+=("${!override_var}")
found=$(command -v "python$want" 2>/dev/null) && candidates+=("$found")
roots=()
command -v pyenv >/dev/null 2>&1 && roots+=("$(pyenv root)")
roots+=("${PYENV_ROOT:-$HOME/.pyenv}")
for root in "${roots[@]}"; do
  while IFS= read -r dir; do
    [[ -d $dir ]] && candidates+=("$dir/bin/python$want")
  done < <(printf '%s\n' "$root/versions/$want".* | sort -rV)
done
candidates+=("/usr/local/bin/python$want" "/usr/bin/python$want")
for python in "${candidates[@]}"; do
  [[ -x $python ]] || continue
  version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
  if [[ $version == "$want" ]] && "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    echo "$python"
    exit 0
  fi
done
echo "tests/find_python.sh: no Python $want with venv found (looked at \$$override_var, python$want on PATH," \
  "pyenv's versions, /usr/local/bin, /usr/bin). Install one (pyenv install $want) or set $override_var" \
  "to its path." >&2
exit 1
