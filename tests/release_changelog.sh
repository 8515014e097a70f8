#!/usr/bin/env bash
# Write the release of galaxy.yml's version (changelogs/changelog.yaml and CHANGELOG.rst) from every
# fragment in changelogs/fragments. The fragments are kept (keep_fragments: true), so the release is
# rebuilt whole each time: a fragment added or edited later is part of it after the next run. Runs
# antsibull-changelog from the venv ACCEL_DOCS_LINT_VENV names on a staged copy (it lists the plugins
# with ansible-doc), then copies the two files back.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=$(cd "$repo" && cd "${ACCEL_DOCS_LINT_VENV:-.venv-newest}" && pwd)
source "$repo/tests/stage_collection.sh"
stage_collection "$repo" changelog
trap 'rm -rf "$staged_root"' EXIT
export PATH="$venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$staged_root"
export ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
version=$(sed -n 's/^version: *//p' "$repo/galaxy.yml")
cd "$staged"
printf -- '---\nancestor: null\nreleases: {}\n' > changelogs/changelog.yaml
antsibull-changelog release --version "$version" --date "${ACCEL_RELEASE_DATE:-$(date -u +%F)}"
cp changelogs/changelog.yaml "$repo/changelogs/changelog.yaml"
cp CHANGELOG.rst "$repo/CHANGELOG.rst"
echo "changelog: release $version written"
