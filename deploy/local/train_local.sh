#!/usr/bin/env bash
# Trains the quickstart job (deploy/examples/wide_and_deep.txt on generated
# data, a token) on a local cluster of one installation's binaries only,
# then exports and evaluates the model. Used by tests/package_test.sh (the
# unpacked bundle; the root the .deb was installed into) and by the bundle's
# herald-verify-gpu (one shard, one worker on cuda:0); it needs bash and
# coreutils, nothing built.
#
#   train_local.sh BIN_DIR EXAMPLES_DIR WORK_DIR [ROWS [SHARDS [WORKERS [DEVICE]]]]
#
# Defaults: 20000 rows, 2 PS shards, 2 workers on the CPU. BIN_DIR holds
# herald_scheduler, herald_ps, herald_worker, heraldctl and model_reader.
# Exit 0 when the job succeeded and its export reads back; the processes'
# logs stay in WORK_DIR.
set -euo pipefail
bin=$1 examples=$2 work=$3 rows=${4:-20000} shards=${5:-2} workers=${6:-2} device=${7:-cpu}
mkdir -p "$work"
pids=()
stop() {
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
}
trap stop EXIT
fail() {
  echo "train_local: $*" >&2
  for log in "$work"/*.log; do echo "--- $log" >&2; tail -15 "$log" >&2; done
  exit 1
}
source "$(dirname "$0")/cluster_wait.sh"
wait_for() {  # file what
  herald_wait_for_file "$1" || fail "$2 did not start"
}

"$bin/heraldctl" --version
"$bin/heraldctl" gen-data --rows "$rows" --seed 1 --cardinality_scale 0.01 \
  --correlation entities --format bin --out "$work/data.bin" >/dev/null
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/token"
auth=(--token-file "$work/token")
setsid "$bin/herald_scheduler" --listen 127.0.0.1:0 --port-file "$work/scheduler.port" \
  "${auth[@]}" > "$work/scheduler.log" 2>&1 < /dev/null &
pids+=($!)
wait_for "$work/scheduler.port" scheduler
scheduler=127.0.0.1:$(cat "$work/scheduler.port")
for ((shard = 0; shard < shards; shard++)); do
  setsid "$bin/herald_ps" --listen 127.0.0.1:0 --shard "$shard" --scheduler "$scheduler" \
    "${auth[@]}" > "$work/ps$shard.log" 2>&1 < /dev/null &
  pids+=($!)
done
for ((w = 0; w < workers; w++)); do
  setsid "$bin/herald_worker" --scheduler "$scheduler" --device "$device" --listen 127.0.0.1:0 \
    "${auth[@]}" > "$work/worker$w.log" 2>&1 < /dev/null &
  pids+=($!)
done
ctl=("$bin/heraldctl" --scheduler "$scheduler" "${auth[@]}")
herald_wait_for_nodes $((shards + workers)) "${ctl[@]}" || fail "not every node registered"
sed -e "s|^  paths: .*|  paths: \"$work/data.bin\"|" -e "s|^checkpoint .*||" \
  -e "s|^num_workers: .*|num_workers: $workers|" "$examples/wide_and_deep.txt" > "$work/job.txt"
job=$("${ctl[@]}" submit "$work/job.txt") || fail "submit"
"${ctl[@]}" watch "$job" > "$work/watch.txt" 2>&1 || fail "the job did not succeed: $(tail -1 "$work/watch.txt")"
tail -1 "$work/watch.txt"
"${ctl[@]}" export "$job" --out "$work/model" > /dev/null || fail "export"
"$bin/model_reader" "$work/model" | head -1
"${ctl[@]}" evaluate --model "$work/model" || fail "evaluate"
echo "train_local: the quickstart job trained, exported and evaluated"
