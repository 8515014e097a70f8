#!/usr/bin/env bash
# ansible-test sanity needs the collection at ansible_collections/accel/openstack: stage a copy there
# (tests/stage_collection.sh) and run it with a venv of the project's: .venv (ansible-core
# 2.19 on Python 3.11) unless ACCEL_SANITY_VENV names another (the newest ansible-core on Python 3.12).
# ansible-test runs on that venv's Python version. ACCEL_SANITY_LEAVE_OUT names top-level folders the run
# leaves out: the newest ansible-core's run checks what the collection ships, and the test suite, the
# benchmarks and the molecule scenarios (which never ship) are checked once, by the 2.19 run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=$(cd "$repo" && cd "${ACCEL_SANITY_VENV:-.venv}" && pwd)
python_version=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# The shellcheck sanity test is skipped (with a warning) where shellcheck is missing: install it as root.
if ! command -v shellcheck >/dev/null 2>&1 && [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null
fi
source "$repo/tests/stage_collection.sh"
stage_collection "$repo" sanity "${ACCEL_SANITY_LEAVE_OUT:-}"
trap 'rm -rf "$staged_root"' EXIT
cd "$staged"
export PATH="$venv/bin:$PATH"
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
ansible-test sanity --python "$python_version" --color no "$@"
