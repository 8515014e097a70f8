#!/usr/bin/env bash
# ansible-test sanity needs the collection at ansible_collections/accel/openstack: copy the tracked
# (and untracked, not ignored) files there and run it with the project's venv.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dest="$repo/.build/sanity/ansible_collections/accel/openstack"
rm -rf "$repo/.build/sanity"
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
ansible-test sanity --python 3.11 --color no "$@"
