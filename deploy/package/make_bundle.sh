#!/usr/bin/env bash
# Lays out and packs the relocatable bundle herald-<version>-linux-x86_64
# [-cuda<major>].tar.gz from built binaries (called by build.sh; tests call
# it on their own build). Layout of the unpacked herald/ directory:
#   bin/          wrappers, one per binary (and herald-verify-gpu in a CUDA
#                 bundle): they source lib/herald-env.sh and exec the binary,
#                 so bin/herald_worker runs from any directory
#   libexec/herald/<package>/<binary>   the binaries, as a Bazel runfiles
#                 tree (the GPU tests find the servers there)
#   lib/          every shared library the binaries and UCX's modules need,
#                 beyond glibc, libstdc++/libgcc_s and the CUDA driver,
#                 runtime, cuBLAS and NCCL (the host's)
#   lib/ucx/      UCX's transport modules; lib/compat/ libstdc++ and
#                 libgcc_s, used only where the host's are older
#   share/herald/deploy/  systemd units, env files, example specs (and
#                         examples/python/train_and_serve.py), Grafana, the
#                         Slurm launcher (slurm/herald-slurm, *.sbatch), the
#                         Kubernetes manifests and image recipe (k8s/)
#   share/herald/train_local.sh  the quickstart job on a local cluster (it sources
#                                cluster_wait.sh beside it)
#   share/herald/python/herald/  the Python package (PYTHONPATH=share/herald/python)
#   share/javascript/chart.js/  Chart.js for the status page
#   VERSION       version, commit, CUDA version, build host
#
#   make_bundle.sh --bin BAZEL_BIN_DIR --out DIR --version V --commit C
#                  [--cuda X.Y] [--gpu-tests "LABEL..."] LABEL...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cuda=""
gpu_tests=""
labels=()
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --commit) commit=$2; shift 2 ;;
    --cuda) cuda=$2; shift 2 ;;
    --gpu-tests) gpu_tests=$2; shift 2 ;;
    //*) labels+=("$1"); shift ;;
    *) echo "make_bundle.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
: "${bin:?--bin}" "${out:?--out}" "${version:?--version}" "${commit:?--commit}"

name=herald-$version-linux-x86_64${cuda:+-cuda${cuda%%.*}}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
b=$stage/herald
install -d "$b/bin" "$b/libexec/herald" "$b/lib/compat" "$b/share/herald"

# The binaries, at their runfiles paths.
paths=()
for label in "${labels[@]}"; do
  p=${label#//}
  p=${p/://}
  [ -x "$bin/$p" ] || { echo "make_bundle.sh: $bin/$p not built" >&2; exit 1; }
  install -D -m 0755 "$bin/$p" "$b/libexec/herald/$p"
  strip --strip-debug "$b/libexec/herald/$p"
  paths+=("$p")
done
printf '%s\n' $gpu_tests > "$b/libexec/herald/GPU_TESTS"

# Libraries: what the binaries and UCX's modules resolve to here, except the
# base every Linux host has (glibc) and what the host must provide (the
# CUDA driver, runtime, cuBLAS, NCCL: they match its driver).
is_base() {
  case $(basename "$1") in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*|libutil.so*) return 0 ;;
    libcuda.so*|libcudart.so*|libcublas.so*|libcublasLt.so*|libnccl.so*|libnvidia*) return 0 ;;
  esac
  return 1
}
ucx_modules=/usr/lib/x86_64-linux-gnu/ucx
[ -d "$ucx_modules" ] && cp -rL "$ucx_modules" "$b/lib/ucx"
# ldd reads the built binaries where they are: a test links Bazel's own
# shared libraries through an $ORIGIN-relative rpath that only resolves there.
{
  for p in "${paths[@]}"; do ldd "$bin/$p"; done
  if [ -d "$b/lib/ucx" ]; then
    for m in "$b"/lib/ucx/*.so*; do ldd "$m"; done
  fi
} | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  is_base "$lib" && continue
  case $(basename "$lib") in
    libstdc++.so*|libgcc_s.so*) cp -L "$lib" "$b/lib/compat/" ;;
    *) cp -L "$lib" "$b/lib/" ;;
  esac
done
strip --strip-debug "$b"/lib/*.so* "$b"/lib/ucx/*.so* "$b"/lib/compat/*.so* 2>/dev/null || true
# The newest libstdc++ symbol version the binaries need: the wrappers use
# lib/compat only where the host's libstdc++ lacks it.
glibcxx=$(for p in "${paths[@]}"; do objdump -T "$b/libexec/herald/$p"; done |
          grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1)

sed -e "s|@GLIBCXX@|$glibcxx|" -e "s|@CUDA@|$cuda|" -e "s|@CUDA_MAJOR@|${cuda%%.*}|" \
  "$here/bundle/herald-env.sh" > "$b/lib/herald-env.sh"
for p in "${paths[@]}"; do
  # Tests (and the PS twin with test hooks) run through herald-verify-gpu.
  case $p in tests/*|*_test|*_with_test_hooks) continue ;; esac
  sed "s|@BINARY@|$p|" "$here/bundle/wrapper.sh" > "$b/bin/$(basename "$p")"
  chmod 0755 "$b/bin/$(basename "$p")"
done
if [ -n "$cuda" ]; then
  install -m 0755 "$here/bundle/herald-verify-gpu" "$b/bin/herald-verify-gpu"
  # worker_bench's PyTorch peer (run where python3 has torch).
  install -D -m 0644 "$root/bench/pytorch_wide_deep.py" "$b/share/herald/bench/pytorch_wide_deep.py"
fi

install -d "$b/share/herald/deploy"
cp -r "$root/deploy/systemd" "$root/deploy/examples" "$root/deploy/grafana" "$root/deploy/slurm" \
  "$root/deploy/k8s" "$b/share/herald/deploy/"
install -D -m 0755 "$root/examples/python/train_and_serve.py" \
  "$b/share/herald/deploy/examples/python/train_and_serve.py"
find "$b/share/herald/deploy" -name BUILD.bazel -delete
rm -f "$b/share/herald/deploy/systemd/install.sh"  # builds from source: not for a bundle
install -m 0755 "$root/deploy/local/train_local.sh" "$b/share/herald/train_local.sh"
install -m 0644 "$root/deploy/local/cluster_wait.sh" "$b/share/herald/cluster_wait.sh"
bash "$here/install_python.sh" "$root" "$bin" "$b/share/herald/python"
chart=/usr/share/javascript/chart.js/chart.min.js
[ -f "$chart" ] && install -D -m 0644 "$(readlink -f "$chart")" "$b/share/javascript/chart.js/chart.min.js"
{
  echo "herald $version"
  echo "commit $commit"
  echo "cuda ${cuda:-none}"
  echo "built $(date -u +%Y-%m-%dT%H:%MZ) on $(. /etc/os-release && echo "$PRETTY_NAME") ($(uname -m))"
  echo "needs glibc >= $(for p in "${paths[@]}"; do objdump -T "$b/libexec/herald/$p"; done |
        grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 | sed 's/GLIBC_//')"
} > "$b/VERSION"

mkdir -p "$out"
tar -C "$stage" --owner=0 --group=0 -czf "$out/$name.tar.gz" herald
echo "make_bundle.sh: $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)," \
  "${#paths[@]} binaries, $(ls "$b/lib" | grep -c '\.so') libraries)"
