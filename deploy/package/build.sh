#!/usr/bin/env bash
# Builds Herald's release artefacts from this checkout, with one command:
#   - herald_<version>_amd64.deb: for Debian 12 hosts (CPU workers), its
#     Depends derived from the binaries by dpkg-shlibdeps;
#   - herald-<version>-linux-x86_64.tar.gz: a relocatable bundle for hosts
#     that are not Debian 12 (binaries, their libraries beyond glibc, UCX's
#     modules, bin/ wrappers, deploy/ files, VERSION);
#   - herald-<version>-linux-x86_64-cuda13.tar.gz, where nvcc exists
#     (/usr/local/cuda/bin/nvcc): the same bundle built with --config=cuda,
#     for GPU nodes, with the GPU tests, worker_bench and bin/herald-verify-gpu.
#
#   deploy/package/build.sh [--out DIR] [--no-cuda | --cuda-only]   (default DIR: dist/)
#
# Each variant is one `bazel build -c opt`, its --version stamped with the
# commit (git, "-dirty" when tracked files have changes); the version is the
# VERSION file. Needs root or
# sudo the first time (deploy/install_deps.sh). Prints the artefacts' paths.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

out=$root/dist
cuda=auto
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    --no-cuda) cuda=no; shift ;;
    --cuda-only) cuda=only; shift ;;
    *) echo "usage: deploy/package/build.sh [--out DIR] [--no-cuda | --cuda-only]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"

bash deploy/install_deps.sh >/dev/null

version=$(tr -d ' \n' < VERSION)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit=$commit-dirty
fi
stamp=(--define="herald_commit=$commit")

# What every variant ships (Bazel labels), and what the CUDA bundle adds.
BINARIES=(//ps_server:herald_ps //worker:herald_worker //scheduler:herald_scheduler
          //cli:heraldctl //tools:model_reader //tools:model_diff)

build() {  # extra bazel flags and targets...
  local log
  log=$(mktemp)
  if ! bazel build -c opt "${stamp[@]}" "$@" >"$log" 2>&1; then
    grep -v linux-sandbox "$log" | tail -30 >&2
    rm -f "$log"
    return 1
  fi
  grep -v linux-sandbox "$log" | tail -1
  rm -f "$log"
}

if [ "$cuda" != only ]; then
  echo "build.sh: herald $version ($commit), CPU variant"
  build "${BINARIES[@]}" //python:herald
  bash deploy/package/make_deb.sh bazel-bin "$out" "$version" "$commit"
  bash deploy/package/make_bundle.sh --bin bazel-bin --out "$out" --version "$version" \
    --commit "$commit" "${BINARIES[@]}"
fi

if [ "$cuda" = only ] && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "build.sh: --cuda-only, but /usr/local/cuda/bin/nvcc does not exist" >&2
  exit 1
fi
if [ "$cuda" != no ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_version=$(/usr/local/cuda/bin/nvcc --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
  echo "build.sh: herald $version ($commit), CUDA $cuda_version variant"
  gpu_tests=$(bazel query 'attr(tags, "\bgpu\b", tests(//...))' 2>/dev/null)
  # The GPU tests' runfiles: the servers, and the PS twin whose test hooks
  # the exactness test's checkpoint-stall case drives.
  # pipeline_bench's GPU run needs the worker with test hooks (its cluster's worker binary).
  gpu_extra=(//bench:worker_bench //bench:embedding_bag_bench //bench:pipeline_bench
             //ps_server:herald_ps_with_test_hooks //worker:herald_worker_with_test_hooks)
  # shellcheck disable=SC2086
  build --config=cuda "${BINARIES[@]}" "${gpu_extra[@]}" $gpu_tests //python:herald
  # shellcheck disable=SC2086
  bash deploy/package/make_bundle.sh --bin bazel-bin --out "$out" --version "$version" \
    --commit "$commit" --cuda "$cuda_version" --gpu-tests "$(echo $gpu_tests)" \
    "${BINARIES[@]}" "${gpu_extra[@]}" $gpu_tests
fi
echo "build.sh: artefacts in $out:"
ls -1 "$out"/herald*"$version"* | sed 's/^/  /'
