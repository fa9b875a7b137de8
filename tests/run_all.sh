#!/usr/bin/env bash
# README command 2: the full test suite. Installs dependencies, builds every
# target and runs every test. Where nvcc exists (/usr/local/cuda) the CUDA
# targets are compiled too (--config=cuda); GPU tests skip visibly without a
# device. The format check (tools/check_format.sh) and the check of the
# paths docs/architecture.md names (tools/check_doc_paths.sh) run first and
# count as one test each; the thread-safety build (--config=tsa, clang-14) and the release
# artefacts' test (tests/package_test.sh) run last and count as one each. Ends with a line "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install_deps.sh
bash tools/prune_disk_cache.sh

format_failed=0
bash tools/check_format.sh || format_failed=1
# Every path docs/architecture.md names exists (one test).
doc_paths_failed=0
bash tools/check_doc_paths.sh || doc_paths_failed=1

config=()
if [ -x /usr/local/cuda/bin/nvcc ]; then
  config=(--config=cuda)
  echo "run_all: nvcc found: CUDA targets are compiled (--config=cuda)"
else
  echo "run_all: SKIPPED CUDA compilation: /usr/local/cuda/bin/nvcc not found"
fi

log=$(mktemp)
# Every test runs every time (--nocache_test_results): compiled actions may
# come from the disk cache another checkout filled (.bazelrc), test results
# may not.
set +e
bazel test "${config[@]}" --nocache_test_results --test_summary=short //... 2>&1 | grep --line-buffered -v 'linux-sandbox' | tee "$log"
status=${PIPESTATUS[0]}
set -e

# Test targets that skipped themselves for missing hardware say so in their
# logs; they are reported here and counted as skipped, not passed. Logs of
# an earlier `bazel test --runs_per_test` (run_N_of_M/) are not this run's.
testlogs=$(bazel info "${config[@]}" bazel-testlogs 2>/dev/null)
skipped=0
if [ -d "$testlogs" ]; then
  while IFS= read -r file; do
    target=${file#"$testlogs"/}
    target=//${target%/test.log}
    reason=$(grep -hoE "SKIPPED \((no GPU|no RDMA device|no network namespaces|no mount namespaces|no browser|no PyTorch|no Slurm)\): .*" "$file" | head -1)
    echo "run_all: ${target%/*}:${target##*/} ${reason}"
    skipped=$((skipped + 1))
  done < <(grep -rlE "SKIPPED \((no GPU|no RDMA device|no network namespaces|no mount namespaces|no browser|no PyTorch|no Slurm)\)" "$testlogs" --include=test.log |
             grep -vE '/run_[0-9]+_of_[0-9]+/test\.log$' | sort)
fi

# Clang's thread-safety analysis over every target (--config=tsa: the
# ABSL_GUARDED_BY annotations checked, findings are errors): one test.
tsa_status=0
tsa_log=$(mktemp)
bazel build --config=tsa //... >"$tsa_log" 2>&1 || tsa_status=$?
if [ "$tsa_status" -eq 0 ]; then
  echo "run_all: bazel build --config=tsa //... PASSED"
else
  echo "run_all: bazel build --config=tsa //... FAILED (thread-safety analysis):"
  grep -E 'error:' "$tsa_log" | sort -u | head -40 | sed 's/^/  /'
fi
rm -f "$tsa_log"

# The release artefacts (tests/package_test.sh): built with -c opt by
# deploy/package/build.sh, so outside `bazel test`; one test, skipped
# (exit 77) where no minimal Debian root can be made.
package_status=0
package_log=$(mktemp)
bash tests/package_test.sh >"$package_log" 2>&1 || package_status=$?
case $package_status in
  0) echo "run_all: tests/package_test.sh PASSED" ;;
  77) echo "run_all: tests/package_test.sh $(grep -h 'SKIPPED (no debootstrap)' "$package_log" | head -1)" ;;
  *) echo "run_all: tests/package_test.sh FAILED (exit $package_status):"
     tail -40 "$package_log" | sed 's/^/  /' ;;
esac
rm -f "$package_log"

passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
passed=$((passed - skipped))
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|INCOMPLETE)' "$log" || true)
rm -f "$log"
if [ "$tsa_status" -eq 0 ]; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  [ "$status" -ne 0 ] || status=1
fi
case $package_status in
  0) passed=$((passed + 1)) ;;
  77) skipped=$((skipped + 1)) ;;
  *) failed=$((failed + 1)); [ "$status" -ne 0 ] || status=1 ;;
esac
for check_failed in "$format_failed" "$doc_paths_failed"; do
  if [ "$check_failed" -eq 1 ]; then
    failed=$((failed + 1))
    [ "$status" -ne 0 ] || status=1
  else
    passed=$((passed + 1))
  fi
done
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
exit "$status"
