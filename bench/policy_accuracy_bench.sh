#!/usr/bin/env bash
# Time to accuracy of the scheduling policies, where bytes cost time: the
# real binaries on emulated hosts (deploy/lab/lab.sh: host 1 the scheduler,
# host 2 the one PS, hosts 3.. one CPU worker each), every NIC shaped to the
# same rate both ways. The same Wide&Deep job (generated Criteo-shaped data
# with entity correlation, cache 10% of rows, held-out AUC evaluated during
# training) runs under vanilla (the baseline, same run), herald (the
# defaults a user gets), HET's bounded staleness (policy het) at staleness
# 10 and 100, and het at staleness 10 with Herald's allocation
# (scheduling.allocation), at a slow link rate and one 10x faster. For each it
# reports rows moved per iteration, samples/s, the final held-out AUC and
# log loss, the best held-out AUC of any evaluation, and the wall time
# (from submission) to reach the AUC vanilla reaches at its last evaluation
# of the first epoch ("never" when it does not).
#
# Evaluations pause training and flush every held write (docs/scheduler.md),
# so het is measured with them: a job that evaluates less often flushes less.
#
#   bench/policy_accuracy_bench.sh [--workers 4] [--dim 32] [--rows 240000] [--epochs 2]
#                                  [--slow-gbps 0.2] [--batch 1024] [--evals-per-epoch 2]
# Needs root (network namespaces). Removes the lab and every process on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

workers=4
dim=32
rows=240000
epochs=2
slow=0.2
batch=1024
evals=2
while [ $# -gt 0 ]; do
  case $1 in
    --workers) workers=$2; shift 2 ;;
    --dim) dim=$2; shift 2 ;;
    --rows) rows=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --slow-gbps) slow=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --evals-per-epoch) evals=$2; shift 2 ;;
    *) echo "policy_accuracy_bench: unknown flag $1" >&2; exit 2 ;;
  esac
done
fast=$(awk -v s="$slow" 'BEGIN { print s * 10 }')
# Training samples per epoch: 95% of the rows (eval_fraction 0.05).
epoch_iterations=$(awk -v r="$rows" -v b="$batch" 'BEGIN { print int(r * 0.95 / b) }')
eval_every=$(( epoch_iterations / evals > 0 ? epoch_iterations / evals : 1 ))
iterations=$(( epoch_iterations * epochs ))

bench=policy_accuracy_bench
name=hacc
link=$slow
dir=$(mktemp -d /tmp/herald-policy-accuracy.XXXXXX)
source bench/lab_cluster.sh

spec() {  # policy, extra scheduling fields
  lab_spec policy-accuracy "$1" "$2" "eval { every_iterations: $eval_every max_samples: 3000 }"
}

run_job() {  # link run-name policy extra
  local link=$1 run=$2 out=$dir/$1-$2
  spec "$3" "$4" > "$out.txt"
  local job
  job=$(on 1 "$ctl" submit "$out.txt" --scheduler "$sched")
  on 1 "$ctl" watch "$job" --scheduler "$sched" > "$out.watch" || {
    echo "policy_accuracy_bench: job $run at $link Gb/s failed: $(tail -1 "$out.watch")" >&2
    exit 1
  }
  on 1 "$ctl" status "$job" --json --scheduler "$sched" > "$out.json"
  on 1 "$ctl" status "$job" --history --json --scheduler "$sched" > "$out.history"
}

for link in "$slow" "$fast"; do
  "$lab" shape --name "$name" --link-gbps "$link" > /dev/null
  run_job "$link" vanilla POLICY_VANILLA ""
  run_job "$link" herald POLICY_HERALD ""
  run_job "$link" het10 POLICY_HET "staleness: 10"
  run_job "$link" het100 POLICY_HET "staleness: 100"
  run_job "$link" het10loc POLICY_HET "staleness: 10 allocation: ALLOCATION_LOCATION_AWARE"
done

python3 - "$dir" "$workers" "$slow" "$fast" "$dim" "$batch" "$epoch_iterations" "$eval_every" << 'PY'
import json, sys
d, workers, links = sys.argv[1], int(sys.argv[2]), sys.argv[3:5]
dim, batch, epoch, every = sys.argv[5], int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
runs = ["vanilla", "herald", "het10", "het100", "het10loc"]
heads = ["vanilla", "herald", "het s=10", "het s=100", "het10+loc"]
def load(link, r):
    job = json.load(open(f"{d}/{link}-{r}.json"))["jobs"][0]
    hist = json.load(open(f"{d}/{link}-{r}.history"))["jobs"][0].get("history", [])
    return job, hist
print(f"Wide&Deep, 26 tables dim {dim}, MLP 64-32, batch {batch}, {workers} CPU workers on "
      f"{workers} hosts, 1 PS host, cache 10%, entity-correlated data; an epoch is {epoch} "
      f"iterations, held-out AUC every {every}")
for link in links:
    jobs = [load(link, r) for r in runs]
    evals = lambda h: [(int(p["iteration"]), float(p["eval_auc"]), int(p["unix_ms"]))
                       for p in h if "eval_auc" in p]
    first_epoch = [e for e in evals(jobs[0][1]) if e[0] < epoch]
    target = first_epoch[-1][1] if first_epoch else float("nan")
    print()
    print(f"{'link ' + link + ' Gb/s':30s}" + "".join(f"{h:>12s}" for h in heads))
    def row(label, f, fmt):
        print(f"{label:30s}" + "".join(fmt.format(f(j, h)) for j, h in jobs))
    it = lambda j: max(1.0, float(j["progress"].get("iteration", 0)))
    row("rows moved/iteration", lambda j, h: float(j["progress"].get("rows_moved", 0)) / it(j), "{:12.0f}")
    row("samples/s", lambda j, h: float(j["progress"].get("samples_per_second", 0)), "{:12.0f}")
    row("final held-out AUC", lambda j, h: float(j["progress"].get("eval_auc", 0)), "{:12.4f}")
    row("best held-out AUC", lambda j, h: max([a for _, a, _ in evals(h)] or [0.0]), "{:12.4f}")
    row("final held-out log loss", lambda j, h: float(j["progress"].get("eval_logloss", 0)), "{:12.4f}")
    def reach(j, h):
        for i, auc, ms in evals(h):
            if auc >= target:
                return f"{(ms - int(j['submitted_unix_ms'])) / 1000:12.1f}"
        return f"{'never':>12s}"
    print(f"{'s to AUC ' + format(target, '.4f'):30s}" + "".join(reach(j, h) for j, h in jobs))
    print(f"{'model':30s}" + "".join(f"{'exact' if j.get('model_consistency', 'synchronous SGD') == 'synchronous SGD' else 'stale':>12s}" for j, h in jobs))
PY
