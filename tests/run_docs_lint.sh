#!/usr/bin/env bash
# The collection tooling's own linters, as galaxy and the Ansible docsite run them: antsibull-docs checks
# every plugin's documentation (schema, semantic markup, references, the RST it renders), and
# antsibull-changelog checks the changelog fragments and changelog.yaml. They run from the venv that
# ACCEL_DOCS_LINT_VENV names (the newest ansible-core's, by default) on a staged copy of the collection.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=$(cd "$repo" && cd "${ACCEL_DOCS_LINT_VENV:-.venv-newest}" && pwd)
source "$repo/tests/stage_collection.sh"
stage_collection "$repo" docs-lint
trap 'rm -rf "$staged_root"' EXIT
export PATH="$venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$staged_root"
export ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
cd "$staged"
echo "antsibull-docs lint-collection-docs --plugin-docs"
antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs all \
  --disallow-unknown-collection-refs .
echo "antsibull-changelog lint"
antsibull-changelog lint
antsibull-changelog lint-changelog-yaml changelogs/changelog.yaml
echo "docs lint: clean"
