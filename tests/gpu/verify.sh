#!/usr/bin/env bash
# Checks Herald's GPU side on a machine with an NVIDIA GPU, end to end, in
# one command: builds the CUDA bundle (deploy/package/build.sh --cuda-only),
# unpacks it and runs its bin/herald-verify-gpu: every GPU test, worker_bench
# --device cuda:0 and a one-GPU local cluster, with a one-screen SUMMARY.
# A GPU node without Bazel runs herald-verify-gpu from the unpacked bundle
# directly (docs/operations.md, "GPU nodes").
#
#   tests/gpu/verify.sh [OUT_DIR]     (default: gpu-verify-<date>)
#
# Exit status: herald-verify-gpu's (0 every step passed, 1 a step failed, 77
# no GPU here: nothing that needs one was counted as passed); 1 when the
# build fails (its log: OUT_DIR/build.log).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-gpu-verify-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
dist=$(mktemp -d)
trap 'rm -rf "$dist"' EXIT
if ! bash deploy/package/build.sh --cuda-only --out "$dist" >"$out/build.log" 2>&1; then
  echo "FAIL  build: $out/build.log" | tee "$out/SUMMARY"
  tail -5 "$out/build.log"
  exit 1
fi
bundle=$(ls "$dist"/herald-*-cuda*.tar.gz)
tar -C "$dist" -xzf "$bundle"
"$dist/herald/bin/herald-verify-gpu" "$out"
