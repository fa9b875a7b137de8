#!/usr/bin/env bash
# End-to-end benchmark on this machine: the same Wide&Deep job (generated
# Criteo-shaped data, 2 PS shards, 2 CPU workers, real processes on
# 127.0.0.1) under vanilla (the baseline, same run), herald, and herald with
# worker-to-worker hand-offs; prints samples/s, embedding bytes the workers
# moved per sample, rows moved, and the workers' time per phase, with ratios
# to vanilla.
#
#   bench/e2e_bench.sh [ROWS] [CARDINALITY_SCALE]     (defaults 300000 0.02)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-300000}
scale=${2:-0.02}
bazel build -c opt //ps_server:herald_ps //worker:herald_worker //scheduler:herald_scheduler \
  //cli:heraldctl 2>&1 | grep -v linux-sandbox | grep -E "ERROR|error:" || true
bin=$PWD/bazel-out/k8-opt/bin
ctl=$bin/cli/heraldctl
dir=$(mktemp -d /tmp/herald-e2e.XXXXXX)
pids=()
trap 'kill -TERM "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT

data=$dir/data.bin
"$ctl" gen-data --rows "$rows" --seed 1 --cardinality_scale "$scale" --format bin --out "$data" >/dev/null
setsid "$bin/scheduler/herald_scheduler" --port-file "$dir/s.port" > "$dir/scheduler.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do [ -s "$dir/s.port" ] && break; sleep 0.1; done
sched=127.0.0.1:$(cat "$dir/s.port")
for s in 0 1; do
  setsid "$bin/ps_server/herald_ps" --shard "$s" --scheduler "$sched" > "$dir/ps$s.log" 2>&1 &
  pids+=($!)
done
for w in 0 1; do
  setsid "$bin/worker/herald_worker" --scheduler "$sched" > "$dir/worker$w.log" 2>&1 &
  pids+=($!)
done
for _ in $(seq 1 300); do
  [ "$("$ctl" nodes --scheduler "$sched" 2>/dev/null | grep -c ' alive$' || true)" -ge 4 ] && break
  sleep 0.1
done

run_job() {  # name, policy, extra scheduling fields -> status JSON in $dir/<name>.json
  sed -e "s|^  paths: .*|  paths: \"$data\"|" -e "s|^checkpoint .*||" \
      -e "s|policy: POLICY_HERALD|policy: $2 $3|" deploy/examples/wide_and_deep.txt > "$dir/$1.txt"
  local job
  job=$("$ctl" submit "$dir/$1.txt" --scheduler "$sched")
  "$ctl" watch "$job" --scheduler "$sched" > /dev/null
  "$ctl" status "$job" --json --scheduler "$sched" > "$dir/$1.json"
}
run_job vanilla POLICY_VANILLA ""
run_job herald POLICY_HERALD ""
run_job handoff POLICY_HERALD "handoff: true"

python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
def load(p):
    j = json.load(open(f"{d}/{p}.json"))["jobs"][0]
    return j["progress"]
v, h, o = load("vanilla"), load("herald"), load("handoff")
def g(p, k): return float(p.get(k, 0))
samples = lambda p: g(p, "iteration") * 2048
print(f"{'':28s}{'vanilla':>12s}{'herald':>12s}{'+hand-offs':>12s}{'herald/van.':>13s}{'+h-o/van.':>11s}")
def row(name, fv, fh, fo):
    r = lambda x: x / fv if fv else float('nan')
    print(f"{name:28s}{fv:12.1f}{fh:12.1f}{fo:12.1f}{r(fh):13.3f}{r(fo):11.3f}")
row("samples/s", *(g(p, "samples_per_second") for p in (v, h, o)))
row("worker bytes/sample", *(g(p, "worker_bytes_moved") / samples(p) for p in (v, h, o)))
row("rows moved/sample", *(g(p, "rows_moved") / samples(p) for p in (v, h, o)))
row("rows handed off/sample", *(g(p, "rows_handed_off") / samples(p) for p in (v, h, o)))
row("cache hit rate %", *(100 * g(p, "cache_hit_rate") for p in (v, h, o)))
for phase in ["fetch", "compute", "allreduce", "push", "writeback"]:
    k = f"worker_{phase}_ms"
    row(f"{phase} ms/iteration/worker", *(g(p, k) / g(p, "iteration") / 2 for p in (v, h, o)))
PY
