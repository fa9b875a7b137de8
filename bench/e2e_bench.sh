#!/usr/bin/env bash
# End-to-end benchmark on this machine: the same Wide&Deep job (generated
# Criteo-shaped data, 2 PS shards, 2 CPU workers, real processes on
# 127.0.0.1) under vanilla (the baseline, same run), herald with every
# exact option off, herald with worker-to-worker hand-offs, and herald with
# hand-offs and rows served by their owner, with those and rows never
# trained initialised by the workers, and with all of those and two
# allocation passes (herald's defaults); prints samples/s, embedding bytes the workers moved per
# sample, rows moved, and the workers' time per phase, with ratios to
# vanilla.
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
source bench/local_processes.sh
herald_local_bench_begin herald-e2e

data=$dir/data.bin
"$ctl" gen-data --rows "$rows" --seed 1 --cardinality_scale "$scale" --format bin --out "$data" >/dev/null
herald_start_local "$bin" "$dir" 2 2 || exit 1

run_job() {  # name, policy, extra scheduling fields -> status JSON in $dir/<name>.json
  sed -e "s|^  paths: .*|  paths: \"$data\"|" -e "s|^checkpoint .*||" \
      -e "s|policy: POLICY_HERALD|policy: $2 $3|" deploy/examples/wide_and_deep.txt > "$dir/$1.txt"
  local job
  job=$("$ctl" submit "$dir/$1.txt" --scheduler "$sched")
  "$ctl" watch "$job" --scheduler "$sched" > /dev/null
  "$ctl" status "$job" --json --scheduler "$sched" > "$dir/$1.json"
}
run_job vanilla POLICY_VANILLA ""
# herald with every exact option off, then turned on one by one; the last
# column is herald's defaults (every option on, common/scheduling_defaults.h).
run_job herald POLICY_HERALD "handoff: false serve: false init_on_worker: false allocation_passes: 1"
run_job handoff POLICY_HERALD "handoff: true serve: false init_on_worker: false allocation_passes: 1"
run_job serve POLICY_HERALD "handoff: true serve: true init_on_worker: false allocation_passes: 1"
run_job init POLICY_HERALD "handoff: true serve: true init_on_worker: true allocation_passes: 1"
run_job passes POLICY_HERALD ""

python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
names = ["vanilla", "herald", "handoff", "serve", "init", "passes"]
heads = ["vanilla", "herald-off", "+hand-offs", "+serving", "+init", "+2=default"]
jobs = [json.load(open(f"{d}/{n}.json"))["jobs"][0]["progress"] for n in names]
def g(p, k): return float(p.get(k, 0))
samples = lambda p: g(p, "iteration") * 2048
print(f"{'':28s}" + "".join(f"{h:>12s}" for h in heads) +
      "".join(f"{h + '/van.':>15s}" for h in heads[1:]))
def row(name, f):
    vals = [f(p) for p in jobs]
    r = lambda x: x / vals[0] if vals[0] else float('nan')
    print(f"{name:28s}" + "".join(f"{x:12.1f}" for x in vals) +
          "".join(f"{r(x):15.3f}" for x in vals[1:]))
row("samples/s", lambda p: g(p, "samples_per_second"))
row("worker bytes/sample", lambda p: g(p, "worker_bytes_moved") / samples(p))
row("rows moved/sample", lambda p: g(p, "rows_moved") / samples(p))
row("rows worker-to-worker/sample", lambda p: g(p, "rows_handed_off") / samples(p))
row("rows initialised/sample", lambda p: g(p, "rows_initialized") / samples(p))
row("cache hit rate %", lambda p: 100 * g(p, "cache_hit_rate"))
for phase in ["fetch", "compute", "allreduce", "push", "writeback"]:
    k = f"worker_{phase}_ms"
    row(f"{phase} ms/iteration/worker", lambda p: g(p, k) / g(p, "iteration") / 2)
PY
