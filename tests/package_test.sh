#!/usr/bin/env bash
# The release artefacts, built and used as an operator would
# (deploy/package/build.sh, docs/operations.md "Installing"):
#   1. build.sh makes the .deb and the bundle(s) from this checkout;
#   2. the bundle, unpacked into a temporary directory: under its wrappers'
#      environment every library of every binary and UCX module resolves
#      inside the bundle or to the allowed host base (glibc, libstdc++,
#      libgcc_s, and in the CUDA bundle the CUDA driver/runtime/cuBLAS/NCCL);
#      the quickstart job trains from the bundle's binaries alone, started
#      from another directory; a CUDA bundle's herald-verify-gpu says SKIP
#      and exits 77 without a GPU;
#   3. the .deb: Depends derived (no -dev package); installed with
#      `apt-get install ./herald_*.deb` into a minimal Debian 12 root
#      (debootstrap --variant=minbase, chroot), so apt resolves Depends from
#      the package archive; the postinst's user, directories and token; the
#      units' ExecStart binaries exist; Debian's python3 imports herald
#      (its modules come as Recommends); the quickstart job trains with the
#      installed binaries inside that root; a purge removes the token.
# Where no root can be made (not root, no debootstrap, no archive) part 3
# prints "SKIPPED (no debootstrap): reason" and the script exits 77 after
# parts 1-2 passed. Exit 0: everything passed; 1: a check failed.
#
#   tests/package_test.sh          (run_all.sh runs it after the Bazel tests)
# HERALD_PACKAGE_CUDA=no skips the CUDA bundle's build.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d /tmp/herald-package-test.XXXXXX)
root=$work/debian-root
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "package_test: FAILED: $*" >&2; exit 1; }
step() { echo; echo "=== package_test: $*"; }

step "1. build.sh"
cuda_flag=()
[ "${HERALD_PACKAGE_CUDA:-auto}" = no ] && cuda_flag=(--no-cuda)
bash deploy/package/build.sh --out "$work/dist" "${cuda_flag[@]}"
version=$(tr -d ' \n' < VERSION)
deb=$work/dist/herald_${version}_amd64.deb
[ -f "$deb" ] || fail "no $deb"
bundles=("$work"/dist/herald-"$version"-linux-x86_64*.tar.gz)
[ -f "$work/dist/herald-$version-linux-x86_64.tar.gz" ] || fail "no CPU bundle"

step "2. bundles"
# Every library an ELF file resolves to, under the bundle's environment, is
# inside the bundle or on the allowed base list; nothing else is missing.
check_libraries() {  # unpacked herald/ dir, cuda (yes/no)
  local b=$1 cuda=$2 bad=0 file line lib path
  while IFS= read -r file; do
    while IFS= read -r line; do
      lib=$(awk '{print $1}' <<<"$line")
      path=$(awk '/=>/{print $3}' <<<"$line")
      case $lib in
        linux-vdso.so*|/lib64/ld-linux*|libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|libutil.so.*) continue ;;
        libstdc++.so.*|libgcc_s.so.*) continue ;;  # the host's, or lib/compat
        libcuda.so*|libcudart.so*|libcublas.so*|libcublasLt.so*|libnccl.so*|libnvidia*)
          [ "$cuda" = yes ] && continue ;;
      esac
      if [[ $line == *"not found"* ]]; then
        echo "  $file: $lib not found"; bad=1
      elif [[ $path != "$b"/* ]]; then
        echo "  $file: $lib resolves outside the bundle: $path"; bad=1
      fi
    done < <(HERALD_ROOT=$b bash -c '. "$HERALD_ROOT/lib/herald-env.sh"; ldd "$0"' "$file" | sed 's/^\s*//')
  done < <(find "$b/libexec" "$b/lib/ucx" -type f \( -perm -u+x -o -name '*.so*' \) -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)
  return $bad
}
for tarball in "${bundles[@]}"; do
  name=$(basename "$tarball" .tar.gz)
  cuda=no
  [[ $name == *-cuda* ]] && cuda=yes
  unpacked=$work/unpacked-$name
  mkdir -p "$unpacked"
  tar -C "$unpacked" -xzf "$tarball"
  b=$unpacked/herald
  echo "$name: $(du -sh "$tarball" | cut -f1); VERSION:"
  sed 's/^/  /' "$b/VERSION"
  grep -q "^commit $(git rev-parse --short=12 HEAD)" "$b/VERSION" || fail "$name: VERSION names another commit"
  check_libraries "$b" "$cuda" || fail "$name: libraries outside the bundle or missing"
  echo "$name: every library resolves inside the bundle or to the allowed host base"
  for tool in herald_ps herald_worker herald_scheduler heraldctl model_reader model_diff; do
    [ -x "$b/bin/$tool" ] || fail "$name: no bin/$tool"
  done
  # A wrapper reached through a symlink from anywhere finds its bundle.
  ln -s "$b/bin/herald_worker" "$work/herald_worker-link"
  (cd / && "$work/herald_worker-link" --version) | grep -q "herald_worker $version (commit " ||
    fail "$name: bin/herald_worker --version through a symlink"
  rm "$work/herald_worker-link"
  # The launchers: herald-slurm finds bin/ and cluster_wait.sh from where it is.
  "$b/share/herald/deploy/slurm/herald-slurm" --help | grep -q "one Herald job on one Slurm" &&
    [ -f "$b/share/herald/cluster_wait.sh" ] &&
    [ -f "$b/share/herald/deploy/k8s/base/kustomization.yaml" ] &&
    [ -f "$b/share/herald/deploy/k8s/Containerfile" ] ||
    fail "$name: the Slurm launcher or the Kubernetes manifests"
  # The image (deploy/k8s/Containerfile) unpacks the bundle at /opt: every
  # binary the manifests run is one of its wrappers.
  for exe in $(grep -oh '/opt/herald/bin/[a-z_]*' "$b"/share/herald/deploy/k8s/base/*.yaml | sort -u); do
    [ -x "$b/${exe#/opt/herald/}" ] || fail "$name: the Kubernetes manifests run $exe, not in the bundle"
  done
  if [ "$cuda" = yes ]; then
    [ -x "$b/bin/herald-verify-gpu" ] || fail "$name: no bin/herald-verify-gpu"
    [ -s "$b/libexec/herald/GPU_TESTS" ] || fail "$name: no GPU tests listed"
    # Every GPU test's runfiles: the servers and the PS twin with test hooks
    # (no wrapper: it is not a product binary).
    for runfile in ps_server/herald_ps ps_server/herald_ps_with_test_hooks worker/herald_worker \
                   scheduler/herald_scheduler; do
      [ -x "$b/libexec/herald/$runfile" ] || fail "$name: no runfile $runfile for the GPU tests"
    done
    [ ! -e "$b/bin/herald_ps_with_test_hooks" ] || fail "$name: a wrapper for the test twin"
    if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
      set +e
      (cd "$work" && "$b/bin/herald-verify-gpu" "$work/verify") > "$work/verify.txt" 2>&1
      rc=$?
      set -e
      [ $rc -eq 77 ] && grep -q '^SKIP ' "$work/verify.txt" ||
        { cat "$work/verify.txt"; fail "$name: herald-verify-gpu without a GPU: exit $rc, not 77"; }
      echo "$name: herald-verify-gpu without a GPU: SKIP, exit 77"
    fi
  else
    # The Python package, with the host's Debian modules.
    (cd / && PYTHONPATH="$b/share/herald/python" /usr/bin/python3 -c \
      "import herald; assert herald.__version__ == '$version', herald.__version__") ||
      fail "$name: import herald from share/herald/python"
    echo "$name: import herald (PYTHONPATH=share/herald/python)"
    /usr/bin/python3 -c "import ast, sys; ast.parse(open(sys.argv[1]).read())" \
      "$b/share/herald/deploy/examples/python/train_and_serve.py" ||
      fail "$name: examples/python/train_and_serve.py"
    if /usr/bin/python3 -c "import torch" 2>/dev/null; then
      (cd / && PYTHONPATH="$b/share/herald/python" /usr/bin/python3 -c "import herald.torch") ||
        fail "$name: import herald.torch from share/herald/python"
      echo "$name: import herald.torch (PYTHONPATH=share/herald/python)"
    fi
    (cd / && bash "$b/share/herald/train_local.sh" "$b/bin" \
      "$b/share/herald/deploy/examples" "$work/bundle-run") || fail "$name: the quickstart job"
  fi
done

step "3. the .deb"
depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends: $depends"
grep -q -- '-dev' <<<"$depends" && fail "Depends names a -dev package"
grep -q 'libgrpc++' <<<"$depends" || fail "Depends lacks gRPC's runtime library"
contents=$(dpkg-deb --contents "$deb")
grep -q './usr/bin/herald_worker$' <<<"$contents" || fail "no /usr/bin/herald_worker"
skip() { echo "SKIPPED (no debootstrap): $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root: chroot and apt in a root need root"
command -v debootstrap >/dev/null || skip "debootstrap is not installed (deploy/install_deps.sh)"
mirror=$(sed -n 's|^URIs: \(http[^ ]*debian\)$|\1|p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}
# A minimal root is kept between runs (only apt's view of the archive ages).
cache=/var/cache/herald-test/bookworm-minbase.tar
if [ ! -f "$cache" ]; then
  mkdir -p "$(dirname "$cache")" "$work/fresh"
  debootstrap --variant=minbase bookworm "$work/fresh" "$mirror" > "$work/debootstrap.log" 2>&1 ||
    skip "debootstrap --variant=minbase bookworm $mirror failed: $(tail -1 "$work/debootstrap.log")"
  tar -C "$work/fresh" -cf "$cache.tmp" . && mv "$cache.tmp" "$cache"
  rm -rf "$work/fresh"
fi
mkdir -p "$root"
tar -C "$root" -xf "$cache"
for m in proc dev; do
  if [ $m = proc ]; then mount -t proc proc "$root/proc"; else mount --rbind /dev "$root/dev"; fi
  mounted+=("$root/$m")
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
in_root apt-get update -q > "$work/apt.log" 2>&1 || { tail "$work/apt.log"; skip "apt-get update in the root failed"; }
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "/tmp/$(basename "$deb")" \
  > "$work/apt-install.log" 2>&1 || { tail -20 "$work/apt-install.log"; fail "apt-get install ./$(basename "$deb")"; }
echo "apt-get install: $(grep -c '^Setting up' "$work/apt-install.log") packages set up"
in_root getent passwd herald | grep -q ':/var/lib/herald:/usr/sbin/nologin$' || fail "no herald system user"
for d in /var/lib/herald /var/lib/herald/scheduler /var/lib/herald/checkpoints /var/lib/herald/data; do
  [ "$(in_root stat -c %U:%G "$d")" = herald:herald ] || fail "$d is not owned by herald"
done
[ "$(in_root stat -c %a:%G /etc/herald/token)" = 640:herald ] || fail "/etc/herald/token mode"
in_root dpkg-query -W -f='${Conffiles}\n' herald | grep -q /etc/herald/worker.env || fail "worker.env is no conffile"
for unit in "$root"/lib/systemd/system/herald-*.service; do
  exe=$(sed -n 's|^ExecStart=\([^ ]*\).*|\1|p' "$unit")
  [ -x "$root$exe" ] || fail "$(basename "$unit"): ExecStart $exe is not installed"
done
in_root /usr/bin/herald_scheduler --version | grep -q "herald_scheduler $version" || fail "--version"
in_root /usr/bin/python3 -c "import herald; assert herald.__version__ == '$version'" ||
  fail "import herald with the installed package and its recommended modules"
[ -x "$root/usr/share/herald/examples/python/train_and_serve.py" ] ||
  fail "examples/python/train_and_serve.py is not installed"
[ -x "$root/usr/share/herald/deploy/slurm/herald-slurm" ] &&
  [ -f "$root/usr/share/herald/deploy/slurm/herald.sbatch" ] &&
  [ -f "$root/usr/share/herald/deploy/k8s/base/kustomization.yaml" ] ||
  fail "the Slurm launcher or the Kubernetes manifests are not installed"
in_root /bin/bash /usr/share/herald/train_local.sh /usr/bin /usr/share/herald/examples \
  /tmp/quickstart ||
  fail "the quickstart job with the installed binaries"
in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q herald > "$work/purge.log" 2>&1 || fail "purge"
[ ! -e "$root/etc/herald/token" ] || fail "the token survived a purge"
echo
echo "package_test: PASSED (.deb installed in a minimal Debian 12 root, bundle(s) checked)"
