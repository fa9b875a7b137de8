#!/usr/bin/env bash
# Lays out and builds herald_<version>_amd64.deb from built binaries (called
# by build.sh; tests call it on their own build):
#   /usr/bin/{herald_ps,herald_worker,herald_scheduler,heraldctl,model_reader,model_diff}
#   /lib/systemd/system/herald-*.service (ExecStart in /usr/bin)
#   /etc/herald/{scheduler,ps,worker}.env (conffiles: dpkg keeps local edits)
#   /usr/share/herald/{examples,grafana}/, /usr/share/herald/train_local.sh (+ cluster_wait.sh)
#   (a smoke test: the quickstart job on a local cluster), /usr/share/doc/herald/
# postinst creates the `herald` system user, /var/lib/herald/{scheduler,
# checkpoints,data} owned by it, and a cluster token in /etc/herald/token
# when there is none. Depends: what dpkg-shlibdeps derives from the
# binaries (runtime libraries, never -dev), plus passwd for useradd.
#
#   make_deb.sh BAZEL_BIN_DIR OUT_DIR VERSION COMMIT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 4 ] || { echo "usage: make_deb.sh BAZEL_BIN_DIR OUT_DIR VERSION COMMIT" >&2; exit 2; }
bin=$1 out=$2 version=$3 commit=$4

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/herald
install -d "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/lib/systemd/system" "$pkg/etc/herald" \
  "$pkg/usr/share/herald" "$pkg/usr/share/doc/herald"

binaries=(ps_server/herald_ps worker/herald_worker scheduler/herald_scheduler cli/heraldctl
          tools/model_reader tools/model_diff)
for b in "${binaries[@]}"; do
  [ -x "$bin/$b" ] || { echo "make_deb.sh: $bin/$b not built" >&2; exit 1; }
  if ldd "$bin/$b" | grep -q 'libcudart'; then
    echo "make_deb.sh: $b links CUDA, which Debian 12 does not package: build the .deb" \
      "without --config=cuda (GPU nodes take the -cuda bundle)" >&2
    exit 1
  fi
  install -m 0755 "$bin/$b" "$pkg/usr/bin/"
  strip --strip-debug "$pkg/usr/bin/$(basename "$b")"
done

for unit in "$root"/deploy/systemd/*.service; do
  sed 's|/usr/local/bin/|/usr/bin/|g' "$unit" > "$pkg/lib/systemd/system/$(basename "$unit")"
done
install -m 0644 "$root"/deploy/systemd/env/*.env "$pkg/etc/herald/"
cp -r "$root/deploy/examples" "$pkg/usr/share/herald/examples"
rm -f "$pkg/usr/share/herald/examples/BUILD.bazel"
install -D -m 0755 "$root/examples/python/train_and_serve.py" \
  "$pkg/usr/share/herald/examples/python/train_and_serve.py"
install -d "$pkg/usr/share/herald/grafana"
install -m 0644 "$root/deploy/grafana/herald.json" "$pkg/usr/share/herald/grafana/"
install -m 0755 "$root/deploy/local/train_local.sh" "$pkg/usr/share/herald/"
# The Slurm launcher: HERALD=/usr in its batch scripts.
install -d "$pkg/usr/share/herald/deploy/slurm"
install -m 0755 "$root/deploy/slurm/herald-slurm" "$pkg/usr/share/herald/deploy/slurm/"
install -m 0644 "$root"/deploy/slurm/*.sbatch "$pkg/usr/share/herald/deploy/slurm/"
cp -r "$root/deploy/k8s" "$pkg/usr/share/herald/deploy/k8s"
rm -f "$pkg/usr/share/herald/deploy/k8s/BUILD.bazel"
install -m 0644 "$root/deploy/local/cluster_wait.sh" "$pkg/usr/share/herald/"
# The Python package, for Debian's python3 (its modules: Recommends).
bash "$here/install_python.sh" "$root" "$bin" "$pkg/usr/lib/python3/dist-packages"
printf 'herald %s\ncommit %s\n' "$version" "$commit" > "$pkg/usr/share/doc/herald/VERSION"
install -m 0644 "$root/README.md" "$pkg/usr/share/doc/herald/README.md"
(cd "$pkg" && find etc -type f | sed 's|^|/|' | sort) > "$pkg/DEBIAN/conffiles"
install -m 0755 "$here/debian/postinst" "$here/debian/postrm" "$pkg/DEBIAN/"

# Depends from the binaries: dpkg-shlibdeps reads their NEEDED entries and
# maps each library to the installed package that ships it.
mkdir -p "$stage/src/debian"
printf 'Source: herald\n\nPackage: herald\nArchitecture: amd64\n' > "$stage/src/debian/control"
shlibs=$(cd "$stage/src" && for b in "${binaries[@]}"; do echo "-e$pkg/usr/bin/$(basename "$b")"; done |
         xargs dpkg-shlibdeps -O 2>"$stage/shlibdeps.err" | sed -n 's/^shlibs:Depends=//p') || {
  cat "$stage/shlibdeps.err" >&2
  exit 1
}
[ -n "$shlibs" ] || { echo "make_deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: herald
Version: $version
Architecture: amd64
Maintainer: Herald maintainers <herald@example.invalid>
Section: science
Priority: optional
Installed-Size: $size
Depends: $shlibs, passwd
Recommends: libjs-chart.js, systemd, python3, python3-grpcio, python3-protobuf, python3-numpy
Suggests: python3-torch
Description: distributed training for deep learning recommendation models
 Herald trains recommendation models (Wide&Deep, DeepFM, DCN, NCF, DLRM)
 whose embedding tables are larger than a GPU: parameter-server shards
 (herald_ps), workers (herald_worker, CPU in this package), a scheduler that
 plans every embedding transfer while the model stays the synchronous-SGD
 model (herald_scheduler), the heraldctl command-line tool, and the Python
 package herald (a job client and an export reader).
 Built from commit $commit.
CONTROL
mkdir -p "$out"
deb=$out/herald_${version}_amd64.deb
dpkg-deb --root-owner-group --build "$pkg" "$deb" >/dev/null
echo "make_deb.sh: $deb ($(du -h "$deb" | cut -f1)); Depends: $shlibs, passwd"
