#!/usr/bin/env bash
# Runs bench/pipeline_bench (-c opt) on this build and, as the baseline in
# the same run, on the binaries of another commit (default: HEAD~1), built
# -c opt in a temporary git worktree. A commit without
# herald_worker_with_test_hooks (no null device) gives no baseline.
#
#   bench/pipeline_bench.sh [--baseline REV|none] [pipeline_bench flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
rev=HEAD~1
if [ "${1:-}" = "--baseline" ]; then
  rev=$2
  shift 2
fi
targets=(//ps_server:herald_ps //scheduler:herald_scheduler //worker:herald_worker_with_test_hooks)
bazel build -c opt //bench:pipeline_bench "${targets[@]}" 2>&1 | grep -E "ERROR|error:" || true
baseline_flag=()
if [ "$rev" != none ]; then
  if git show "$rev:worker/BUILD.bazel" 2> /dev/null | grep -q herald_worker_with_test_hooks; then
    bin=$(mktemp -d /tmp/herald-baseline-bin.XXXXXX)
    trap 'rm -rf "$bin"' EXIT
    bench/build_baseline.sh "$rev" "$bin" "${targets[@]}"
    mkdir -p "$bin/flat"  # pipeline_bench --baseline_dir: the three binaries side by side
    for t in ps_server/herald_ps scheduler/herald_scheduler worker/herald_worker_with_test_hooks; do
      cp "$bin/$t" "$bin/flat/"
    done
    baseline_flag=(--baseline_dir="$bin/flat")
  else
    echo "pipeline_bench.sh: $rev has no herald_worker_with_test_hooks: no baseline"
  fi
fi
export TEST_SRCDIR=$PWD/bazel-bin/bench/pipeline_bench.runfiles TEST_WORKSPACE=herald
bazel-bin/bench/pipeline_bench "${baseline_flag[@]}" "$@"
