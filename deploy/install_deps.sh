#!/usr/bin/env bash
# Installs every Debian 12 package Herald needs to build, test and run.
# Idempotent: packages already present are left alone. Needs root (or sudo).
set -euo pipefail

PACKAGES=(
  # Build system (offline): Debian's Bazel and the rules_java it would download.
  bazel-bootstrap bazel-rules-java
  build-essential g++ python3
  # RPC and serialization.
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  # Common libraries (SQLite: the scheduler's job store; RocksDB: the PS's
  # disk tier; xxHash, header only: string ids' keys; zstd: compressed data).
  libabsl-dev libspdlog-dev libfmt-dev libcpp-httplib-dev zlib1g-dev libsqlite3-dev librocksdb-dev
  libxxhash-dev libzstd-dev
  # Math and collectives.
  libopenblas-dev libgloo-dev
  # RDMA fast path (compiles without a device; tests skip) and UCX, the
  # embedding row transport (verbs on RDMA clusters; TCP and shared memory
  # here); ucx-utils for ucx_info / ucx_perftest.
  libibverbs-dev librdmacm-dev libucx-dev ucx-utils
  # Tests and benchmarks.
  libgtest-dev libgmock-dev libbenchmark-dev
  # Fuzzing with libFuzzer + ASan (--config=fuzz).
  clang-14 libclang-rt-14-dev
  # Format check (tools/check_format.sh, .clang-format).
  clang-format
  # Deployment checks (systemd-analyze verify).
  systemd
  # Release artefacts (deploy/package/: dpkg-shlibdeps derives the .deb's
  # Depends) and their test (tests/package_test.sh: a minimal Debian root).
  dpkg-dev debootstrap
  # Test certificates for the TLS tests (tests/harness/test_certs).
  openssl
  # The emulated multi-host lab (deploy/lab/lab.sh): namespaces, tc, link probe.
  iproute2 iperf3
  # The status page: Chart.js served by the scheduler, TLS for it, and the
  # browser that tests it (tests/status_page_test).
  libjs-chart.js libssl-dev chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install_deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
