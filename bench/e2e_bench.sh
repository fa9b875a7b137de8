#!/usr/bin/env bash
# End-to-end benchmark on this machine: the same Wide&Deep job (generated
# Criteo-shaped data, 2 PS shards, 2 CPU workers, real processes on
# 127.0.0.1) under vanilla (the baseline, same run) and herald; prints
# samples/s, embedding bytes the workers moved per sample, rows moved, and
# the workers' time per phase, with herald/vanilla ratios.
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

run_job() {  # policy -> status JSON in $dir/<policy>.json
  sed -e "s|^  paths: .*|  paths: \"$data\"|" -e "s|^checkpoint .*||" \
      -e "s|POLICY_HERALD|$1|" deploy/examples/wide_and_deep.txt > "$dir/$1.txt"
  local job
  job=$("$ctl" submit "$dir/$1.txt" --scheduler "$sched")
  "$ctl" watch "$job" --scheduler "$sched" > /dev/null
  "$ctl" status "$job" --json --scheduler "$sched" > "$dir/$1.json"
}
run_job POLICY_VANILLA
run_job POLICY_HERALD

python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
def load(p):
    j = json.load(open(f"{d}/{p}.json"))["jobs"][0]
    return j["progress"]
v, h = load("POLICY_VANILLA"), load("POLICY_HERALD")
def g(p, k): return float(p.get(k, 0))
samples = lambda p: g(p, "iteration") * 2048
print(f"{'':28s}{'vanilla':>14s}{'herald':>14s}{'herald/vanilla':>16s}")
def row(name, fv, fh):
    r = fh / fv if fv else float('nan')
    print(f"{name:28s}{fv:14.1f}{fh:14.1f}{r:16.3f}")
row("samples/s", g(v, "samples_per_second"), g(h, "samples_per_second"))
row("worker bytes/sample", g(v, "worker_bytes_moved") / samples(v), g(h, "worker_bytes_moved") / samples(h))
row("rows moved/sample", g(v, "rows_moved") / samples(v), g(h, "rows_moved") / samples(h))
row("cache hit rate %", 100 * g(v, "cache_hit_rate"), 100 * g(h, "cache_hit_rate"))
for phase in ["fetch", "compute", "allreduce", "push", "writeback"]:
    k = f"worker_{phase}_ms"
    row(f"{phase} ms/iteration/worker", g(v, k) / g(v, "iteration") / 2, g(h, k) / g(h, "iteration") / 2)
PY
