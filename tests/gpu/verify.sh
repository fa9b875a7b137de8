#!/usr/bin/env bash
# Checks Herald's GPU side on a machine with an NVIDIA GPU, end to end, in
# one command: builds with --config=cuda, runs every test tagged "gpu" (the
# CUDA device's kernels and GEMMs, NCCL all-reduce, GPU workers against the
# CPU reference and beside a CPU worker, the exactness cluster test with
# GPU workers), then `worker_bench --device cuda:0` (GPU worker against the
# CPU worker, same run). Operators run it to check an installation.
#
#   tests/gpu/verify.sh [OUT_DIR]     (default: gpu-verify-<date>)
#
# Writes under OUT_DIR: SUMMARY (one screen: each step PASS / FAIL / SKIP
# and its time), build.log, tests/<target>.log (every GPU test's log),
# worker_bench.txt, nvidia-smi.txt. Exit status: 0 every step passed, 1 a
# step failed, 77 no GPU here (the build ran; nothing that needs a GPU was
# counted as passed). Each step is bounded: the build by BUILD_LIMIT_S
# (default 600 s), the tests and the benchmark by STEP_LIMIT_S (240 s).
# NVIDIA_SMI names the nvidia-smi to ask (default: the one on PATH).
set -uo pipefail
cd "$(dirname "$0")/../.."

out=${1:-gpu-verify-$(date +%Y%m%d-%H%M%S)}
limit=${STEP_LIMIT_S:-240}
build_limit=${BUILD_LIMIT_S:-600}
nvidia_smi=${NVIDIA_SMI:-nvidia-smi}
mkdir -p "$out/tests"
summary=$out/SUMMARY
: >"$summary"
failed=0
say() { echo "$*" | tee -a "$summary"; }
# step NAME LIMIT COMMAND...: runs COMMAND for at most LIMIT seconds, its
# output into $out/NAME.log, and writes one summary line.
step() {
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local took=$((SECONDS - start))
  if [ $rc -eq 0 ]; then
    say "PASS  $name (${took}s)"
  else
    [ $rc -eq 124 ] && say "FAIL  $name: over ${limit}s" || say "FAIL  $name (exit $rc, ${took}s): $out/$name.log"
    failed=1
  fi
  return $rc
}

say "Herald GPU verification, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n)"
gpu=no
if command -v "$nvidia_smi" >/dev/null && "$nvidia_smi" -L >"$out/nvidia-smi.txt" 2>&1 &&
  grep -q '^GPU ' "$out/nvidia-smi.txt"; then
  gpu=yes
  "$nvidia_smi" >>"$out/nvidia-smi.txt" 2>&1
  say "GPU:  $(head -1 "$out/nvidia-smi.txt")"
else
  say "GPU:  none (nvidia-smi lists no device): the GPU steps are SKIPPED, not passed"
fi

step build "$build_limit" bazel build --config=cuda -c opt //... || {
  say "the build failed: nothing else runs"
  exit 1
}

if [ "$gpu" = no ]; then
  say "SKIP  gpu tests, worker_bench --device cuda:0 (no GPU)"
  exit 77
fi

# Every test tagged "gpu", run even where a test would skip itself (a test
# that prints "SKIPPED (no GPU)" on a machine with a GPU is a failure).
targets=$(bazel query 'attr(tags, "\bgpu\b", tests(//...))' 2>/dev/null)
say "GPU tests: $(echo $targets | wc -w)"
step gpu-tests "$limit" bazel test --config=cuda -c opt --test_output=errors --cache_test_results=no $targets
for t in $targets; do
  dir=$(echo "${t#//}" | tr ':' '/')
  name=$(echo "${t#//}" | tr '/:' '__')
  cp "bazel-testlogs/$dir/test.log" "$out/tests/$name.log" 2>/dev/null || continue
  if grep -q 'SKIPPED (no GPU)' "$out/tests/$name.log"; then
    say "FAIL  $t skipped itself although nvidia-smi lists a GPU"
    failed=1
  fi
done
grep -h '^\[  FAILED  \]' "$out"/tests/*.log 2>/dev/null | sort -u | sed 's/^/      /' | tee -a "$summary"

step worker_bench "$limit" bazel-out/k8-opt/bin/bench/worker_bench --device cuda:0
cp "$out/worker_bench.log" "$out/worker_bench.txt"
grep -iE 'samples/s|ratio|GB/s' "$out/worker_bench.txt" | head -12 | sed 's/^/      /' | tee -a "$summary"

[ $failed -eq 0 ] && say "RESULT: PASS" || say "RESULT: FAIL (logs under $out)"
exit $failed
