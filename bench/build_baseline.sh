#!/usr/bin/env bash
# Builds binaries of another commit for a benchmark's same-run baseline:
# REV checked out in a temporary git worktree, the targets built -c opt
# there, each copied to DIR/<package>/<name> (bazel-bin's layout), the
# worktree and its Bazel server removed. Run from the repository root.
#
#   bench/build_baseline.sh REV DIR //package:name...
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: build_baseline.sh REV DIR //package:name..." >&2; exit 2; }
rev=$1 out=$2
shift 2
tree=$(mktemp -d /tmp/herald-baseline.XXXXXX)
trap 'git worktree remove --force "$tree" > /dev/null 2>&1 || true; rm -rf "$tree"' EXIT
git worktree add --detach "$tree" "$rev" > /dev/null 2>&1
echo "build_baseline: building $(git rev-parse --short "$rev") -c opt"
(cd "$tree" && bazel build -c opt "$@" 2>&1 | grep -E "ERROR|error:" || true)
for target in "$@"; do
  path=${target#//}
  path=${path/://}
  mkdir -p "$out/$(dirname "$path")"
  cp "$tree/bazel-bin/$path" "$out/$path"
done
(cd "$tree" && bazel shutdown > /dev/null 2>&1 || true)
