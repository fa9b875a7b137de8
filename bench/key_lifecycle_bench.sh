#!/usr/bin/env bash
# Id admission and row expiry on a long-tailed stream: the same Wide&Deep
# job (generated Criteo-shaped data with many ids seen once, 2 PS shards, 2
# CPU workers, real processes on 127.0.0.1, herald) with every key getting a
# row (the baseline, same run), with tables[].admission { min_count: 2 },
# with tables[].expiry { after_iterations: T }, and with both; prints the
# final held-out AUC and log loss (docs/scheduler.md, "Evaluation"), the
# keys with rows at the end, the rows expired, the lookups dropped and
# samples/s, with ratios to the baseline.
#
#   bench/key_lifecycle_bench.sh [ROWS] [CARDINALITY_SCALE] [T]   (defaults 200000 0.5 20)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-200000}
scale=${2:-0.5}
expire=${3:-20}
bazel build //ps_server:herald_ps //worker:herald_worker //scheduler:herald_scheduler \
  //cli:heraldctl 2>&1 | grep -v linux-sandbox | grep -E "ERROR|error:" || true
bin=$PWD/bazel-bin
ctl=$bin/cli/heraldctl
source bench/local_processes.sh
herald_local_bench_begin herald-lifecycle

data=$dir/data.bin
"$ctl" gen-data --rows "$rows" --seed 1 --cardinality_scale "$scale" --format bin --out "$data" >/dev/null
herald_start_local "$bin" "$dir" 2 2 || exit 1

run_job() {  # name, what every table gets -> status JSON in $dir/<name>.json
  sed -e "s|^  paths: .*|  paths: \"$data\"|" -e "s|^checkpoint .*||" \
      -e "s|dim: 16 }|dim: 16 $2 }|" deploy/examples/wide_and_deep.txt > "$dir/$1.txt"
  local job
  job=$("$ctl" submit "$dir/$1.txt" --scheduler "$sched")
  "$ctl" watch "$job" --scheduler "$sched" > /dev/null
  "$ctl" status "$job" --json --scheduler "$sched" > "$dir/$1.json"
}
run_job all ""
run_job admission "admission { min_count: 2 }"
run_job expiry "expiry { after_iterations: $expire }"
run_job both "admission { min_count: 2 } expiry { after_iterations: $expire }"

python3 - "$dir" "$expire" <<'PY'
import json, sys
d, t = sys.argv[1], sys.argv[2]
names = ["all", "admission", "expiry", "both"]
heads = ["every key", "min_count 2", f"expiry {t}", "both"]
jobs = [json.load(open(f"{d}/{n}.json"))["jobs"][0]["progress"] for n in names]
g = lambda p, k: float(p.get(k, 0))
print(f"{'':24s}" + "".join(f"{h:>14s}" for h in heads) +
      "".join(f"{h + '/base':>18s}" for h in heads[1:]))
def row(name, f, fmt="{:14.4f}"):
    vals = [f(p) for p in jobs]
    r = lambda x: x / vals[0] if vals[0] else float("nan")
    print(f"{name:24s}" + "".join(fmt.format(x) for x in vals) +
          "".join(f"{r(x):18.3f}" for x in vals[1:]))
row("held-out AUC", lambda p: g(p, "eval_auc"))
row("held-out log loss", lambda p: g(p, "eval_logloss"))
row("keys with rows", lambda p: g(p, "keys_admitted"), "{:14.0f}")
row("rows expired", lambda p: g(p, "rows_expired"), "{:14.0f}")
row("lookups dropped", lambda p: g(p, "lookups_dropped"), "{:14.0f}")
row("rows moved", lambda p: g(p, "rows_moved"), "{:14.0f}")
row("samples/s", lambda p: g(p, "samples_per_second"), "{:14.0f}")
PY
