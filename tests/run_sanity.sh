#!/usr/bin/env bash
# ansible-test sanity needs the collection at ansible_collections/accel/openstack: copy the tracked
# (and untracked, not ignored) files there and run it with the project's venv.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$repo/.build"
work=$(mktemp -d "$repo/.build/sanity.XXXXXX")
trap 'rm -rf "$work"' EXIT
dest="$work/ansible_collections/accel/openstack"
mkdir -p "$dest"
cd "$repo"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [[ -e $f ]] || continue
  mkdir -p "$dest/$(dirname "$f")"
  cp -p "$f" "$dest/$f"
done
cd "$dest"
git init -q . && git add -A >/dev/null 2>&1 || true
export PATH="$repo/.venv/bin:$PATH"
# ansible-test bootstraps pip in its venvs from a download host; use the bundled pip instead.
pip_version=$(python - <<'PY'
import re, ansible_test._internal.python_requirements as r
print(re.search(r"pip='([0-9.]+)'", open(r.__file__).read()).group(1))
PY
)
cache="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
mkdir -p "$(dirname "$cache")"
python - "$repo/tests/sanity/get_pip_offline.py" "$cache" <<'PY'
import ast, subprocess, sys
# This machine's effective pip settings (files and PIP_* variables) as one [global] section.
listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
settings = {}
for line in listing.splitlines():
    key, _, value = line.partition("=")
    name = key.rsplit(".", 1)[-1]
    if name in ("cert", "index-url", "extra-index-url", "find-links", "trusted-host", "timeout", "default-timeout"):
        settings[name] = ast.literal_eval(value)
conf = "[global]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items()) if settings else ""
source = open(sys.argv[1]).read().replace('PIP_CONF = ""', "PIP_CONF = " + repr(conf), 1)
open(sys.argv[2], "w").write(source)
PY
ansible-test sanity --python 3.11 --color no "$@"
