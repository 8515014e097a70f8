# shellcheck shell=bash
# Sourced by the scripts that need the collection where ansible looks for it. stage_collection copies the
# tracked (and untracked, not ignored) files of the repository into a new folder under .build, at
# ansible_collections/accel/openstack, and sets $staged to that path and $staged_root to the folder to
# remove afterwards; the copy is a git repository of its own. A third argument names top-level folders
# to leave out of the copy (space-separated). A copy, not the .build/collections link, so the tools see exactly what a build ships
# and never walk into the venvs or .build itself.
stage_collection() {
  local repo=$1 kind=$2 leave_out=" ${3:-} " f
  mkdir -p "$repo/.build"
  staged_root=$(mktemp -d "$repo/.build/$kind.XXXXXX")
  staged="$staged_root/ansible_collections/accel/openstack"
  mkdir -p "$staged"
  (
    cd "$repo" || exit 1
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
      [[ -e $f && ! -d $f ]] || continue  # a linked-in venv shows as an untracked entry
      [[ $f == */* && $leave_out == *" ${f%%/*} "* ]] && continue
      mkdir -p "$staged/$(dirname "$f")"
      cp -p "$f" "$staged/$f"
    done
  )
  # The copy is its own git repository: tools that list a collection's files with git (ansible-test,
  # antsibull-docs) would otherwise ask the enclosing repository, which ignores .build.
  (cd "$staged" && git init -q . && git add -A >/dev/null 2>&1) || true
}
