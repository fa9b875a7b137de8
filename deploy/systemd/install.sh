#!/usr/bin/env bash
# Installs Herald as systemd services on this machine (root):
#   - builds the binaries with -c opt (and --config=cuda where
#     /usr/local/cuda/bin/nvcc exists) and copies them to /usr/local/bin,
#   - creates the system user `herald` and /var/lib/herald,
#   - places the units in /etc/systemd/system and, when absent, the env files
#     in /etc/herald/ and a fresh cluster token in /etc/herald/token (0640,
#     group herald); existing configuration is never overwritten,
#   - reloads systemd. It starts nothing: see docs/operations.md.
#
#   deploy/systemd/install.sh            # PREFIX=/usr/local by default
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root" >&2; exit 1; }

prefix=${PREFIX:-/usr/local}
bash deploy/install_deps.sh
# With the CUDA toolkit the worker can run on GPUs (--device cuda:N).
config=()
[ -x /usr/local/cuda/bin/nvcc ] && config=(--config=cuda)
bazel build -c opt "${config[@]}" //scheduler:herald_scheduler //ps_server:herald_ps \
  //worker:herald_worker //cli:heraldctl 2>&1 | grep -v linux-sandbox
bin=bazel-out/k8-opt/bin
install -m 0755 "$bin/scheduler/herald_scheduler" "$bin/ps_server/herald_ps" \
  "$bin/worker/herald_worker" "$bin/cli/heraldctl" "$prefix/bin/"

getent group herald >/dev/null || groupadd --system herald
getent passwd herald >/dev/null || useradd --system --gid herald --home-dir /var/lib/herald \
  --shell /usr/sbin/nologin herald
install -d -o herald -g herald -m 0750 /var/lib/herald
install -d -m 0755 /etc/herald

for unit in deploy/systemd/*.service; do
  sed "s|/usr/local/bin/|$prefix/bin/|" "$unit" > "/etc/systemd/system/$(basename "$unit")"
done
for env in deploy/systemd/env/*.env; do
  target=/etc/herald/$(basename "$env")
  [ -e "$target" ] || install -m 0644 "$env" "$target"
done
if [ ! -e /etc/herald/token ]; then
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > /etc/herald/token
  chown root:herald /etc/herald/token
  chmod 0640 /etc/herald/token
fi
systemctl daemon-reload
echo "install.sh: installed to $prefix/bin and /etc/systemd/system; configure /etc/herald/*.env,"
echo "then: systemctl enable --now herald-scheduler herald-ps@0 herald-worker@0 (docs/operations.md)"
