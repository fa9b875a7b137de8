#!/usr/bin/env bash
# End-to-end benchmark where bytes cost time: the real binaries on emulated
# hosts (deploy/lab/lab.sh), every NIC shaped to the same rate both ways.
# Host 1 runs herald_scheduler, host 2 the one herald_ps, hosts 3.. one CPU
# herald_worker each. The same Wide&Deep job (small MLP, large embeddings,
# generated Criteo-shaped data with entity correlation, cache 10% of rows)
# runs under nocache, vanilla (the baseline, same run), herald with every
# exact option off, and herald with the defaults a user gets (every exact
# option on: hand-offs, served rows, worker initialisation, 2 allocation
# passes; common/scheduling_defaults.h), at a slow
# link rate and at one 10x faster. For each: samples/s and the ratio to
# vanilla, embedding bytes per iteration through the PS NIC and the busiest
# worker NIC (read from the namespaces' interface counters), rows moved,
# cache hit rate, the workers' time per phase, and the largest difference
# of every model from vanilla's (they must agree within float rounding).
#
#   bench/lab_e2e_bench.sh [--workers 4] [--dim 128] [--rows 120000] [--iterations 30]
#                          [--slow-gbps 0.2] [--batch 2048] [--transport auto|ucx|grpc]
#                          [--overlap true|false] [--baseline REV | --baseline-bin DIR]
# --transport: the embedding data path of the PS and the workers (auto, the
# default, is UCX over TCP between these hosts); --overlap: the workers'
# (default true: transfers overlapped, early fetches during the step before).
# --baseline REV: also runs vanilla and herald on the binaries of commit REV
# (built -c opt in a temporary git worktree), in the same lab after this
# build's runs, and prints each figure of this build's herald and vanilla
# against them; --baseline-bin DIR: the same with binaries already built (a
# directory laid out as bazel-bin: scheduler/herald_scheduler,
# ps_server/herald_ps, worker/herald_worker).
# Needs root (network namespaces). Removes the lab and every process on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

workers=4
dim=128
rows=120000
iterations=30
slow=0.2
batch=2048
transport=auto
overlap=true
baseline_rev=""
baseline_bin=""
while [ $# -gt 0 ]; do
  case $1 in
    --workers) workers=$2; shift 2 ;;
    --dim) dim=$2; shift 2 ;;
    --rows) rows=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --slow-gbps) slow=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --transport) transport=$2; shift 2 ;;
    --overlap) overlap=$2; shift 2 ;;
    --baseline) baseline_rev=$2; shift 2 ;;
    --baseline-bin) baseline_bin=$2; shift 2 ;;
    *) echo "lab_e2e_bench: unknown flag $1" >&2; exit 2 ;;
  esac
done
fast=$(awk -v s="$slow" 'BEGIN { print s * 10 }')


bench=lab_e2e_bench
name=hbench
link=$slow
dir=$(mktemp -d /tmp/herald-lab-e2e.XXXXXX)
ps_flags=(--transport "$transport")
worker_flags=(--transport "$transport" --overlap="$overlap")
if [ -n "$baseline_rev" ]; then  # built before the lab is up, kept in $dir
  baseline_bin=$dir/baseline-bin
  bench/build_baseline.sh "$baseline_rev" "$baseline_bin" //ps_server:herald_ps \
    //worker:herald_worker //scheduler:herald_scheduler
fi
source bench/lab_cluster.sh

spec() { lab_spec lab-e2e "$1" "$2"; }  # policy, extra scheduling fields

nic_bytes() {  # host -> "rx tx"
  echo "$(on "$1" cat /sys/class/net/eth0/statistics/rx_bytes) $(on "$1" cat /sys/class/net/eth0/statistics/tx_bytes)"
}
counters() {  # file: one line per host 2..hosts: host rx tx
  for h in $(seq 2 "$hosts"); do echo "$h $(nic_bytes "$h")"; done > "$1"
}

run_job() {  # link policy-name policy extra
  local link=$1 run=$2 out=$dir/$1-$2
  spec "$3" "$4" > "$out.txt"
  counters "$out.before"
  local job
  job=$(on 1 "$ctl" submit "$out.txt" --scheduler "$sched")
  on 1 "$ctl" watch "$job" --scheduler "$sched" > "$out.watch" || {
    echo "lab_e2e_bench: job $run at $link Gb/s failed: $(tail -1 "$out.watch")" >&2
    exit 1
  }
  counters "$out.after"
  on 1 "$ctl" status "$job" --json --scheduler "$sched" > "$out.json"
  on 1 "$ctl" export "$job" --out "$out.model" --scheduler "$sched" > /dev/null
}

runs=(nocache vanilla off herald)
for link in "$slow" "$fast"; do
  "$lab" shape --name "$name" --link-gbps "$link" > /dev/null
  "$lab" probe --name "$name" | tee "$dir/$link.probe"
  run_job "$link" nocache POLICY_NOCACHE ""
  run_job "$link" vanilla POLICY_VANILLA ""
  run_job "$link" off POLICY_HERALD "handoff: false serve: false init_on_worker: false allocation_passes: 1"
  run_job "$link" herald POLICY_HERALD ""
done
if [ -n "$baseline_bin" ]; then  # the same lab and data, the baseline's binaries
  runs+=(base-vanilla base-herald)
  cluster_up "$baseline_bin" base-
  for link in "$slow" "$fast"; do
    "$lab" shape --name "$name" --link-gbps "$link" > /dev/null
    run_job "$link" base-vanilla POLICY_VANILLA ""
    run_job "$link" base-herald POLICY_HERALD ""
  done
fi
for link in "$slow" "$fast"; do
  for r in "${runs[@]}"; do
    "$bin/tools/model_diff" "$dir/$link-vanilla.model" "$dir/$link-$r.model" > "$dir/$link-$r.diff"
  done
done

python3 - "$dir" "$workers" "$slow" "$fast" "$dim" "$batch" "${baseline_rev:-${baseline_bin}}" << 'PY'
import json, sys
d, workers, links, dim, batch = sys.argv[1], int(sys.argv[2]), sys.argv[3:5], sys.argv[5], int(sys.argv[6])
baseline = sys.argv[7]
runs = ["nocache", "vanilla", "off", "herald"] + (["base-vanilla", "base-herald"] if baseline else [])
heads = ["nocache", "vanilla", "herald-off", "herald"] + (["base-vanilla", "base-herald"] if baseline else [])
def load(link, r):
    p = json.load(open(f"{d}/{link}-{r}.json"))["jobs"][0]["progress"]
    before = {int(l.split()[0]): list(map(int, l.split()[1:])) for l in open(f"{d}/{link}-{r}.before")}
    after = {int(l.split()[0]): list(map(int, l.split()[1:])) for l in open(f"{d}/{link}-{r}.after")}
    nic = {h: [a - b for a, b in zip(after[h], before[h])] for h in after}
    return p, nic, open(f"{d}/{link}-{r}.diff").read().strip()
g = lambda p, k: float(p.get(k, 0))
print(f"Wide&Deep, 26 tables dim {dim}, MLP 64-32, batch {batch}, {workers} CPU workers on "
      f"{workers} hosts, 1 PS host, cache 10%; herald-off: every exact option off; herald: the "
      f"defaults (handoff + serve + init_on_worker + 2 allocation passes)")
for link in links:
    print()
    print(open(f"{d}/{link}.probe").read().strip())
    jobs = [load(link, r) for r in runs]
    iters = [g(p, "iteration") for p, _, _ in jobs]
    print(f"{'link ' + link + ' Gb/s':34s}" + "".join(f"{h:>13s}" for h in heads))
    def row(label, f, fmt="{:13.1f}", ratio=False):
        vals = [f(*j, it) for j, it in zip(jobs, iters)]
        line = f"{label:34s}" + "".join(fmt.format(v) for v in vals)
        if ratio and vals[1]:
            line += "   /vanilla: " + " ".join(f"{v / vals[1]:.2f}x" for v in vals)
        print(line)
    row("samples/s", lambda p, n, _, it: g(p, "samples_per_second"), ratio=True)
    row("PS NIC MB/iteration (rx+tx)", lambda p, n, _, it: sum(n[2]) / it / 1e6, "{:13.2f}", True)
    row("busiest worker NIC MB/iteration", lambda p, n, _, it: max(sum(n[h]) for h in n if h > 2) / it / 1e6, "{:13.2f}", True)
    row("rows moved/iteration", lambda p, n, _, it: g(p, "rows_moved") / it, "{:13.0f}", True)
    row("rows worker-to-worker/iteration", lambda p, n, _, it: g(p, "rows_handed_off") / it, "{:13.0f}")
    row("cache hit rate %", lambda p, n, _, it: 100 * g(p, "cache_hit_rate"))
    for phase in ["fetch", "compute", "allreduce", "push", "writeback", "commit"]:
        row(f"{phase} ms/iteration/worker", lambda p, n, _, it, k=f"worker_{phase}_ms": g(p, k) / it / workers)
    row("transfer share of iteration %", lambda p, n, _, it: 100 * sum(g(p, f"worker_{x}_ms") for x in ["fetch", "push", "writeback", "commit"]) /
        max(1e-9, sum(g(p, f"worker_{x}_ms") for x in ["fetch", "compute", "allreduce", "push", "writeback", "commit"])))
    for r, (_, _, diff) in zip(heads, jobs):
        print(f"  model vs vanilla, {r:12s}: {diff}")
    if baseline:  # this build's herald and vanilla against the baseline's, same lab
        print(f"  this build / baseline ({baseline}):")
        for name, i, b in [("herald", 3, 5), ("vanilla", 1, 4)]:
            this, base = jobs[i][0], jobs[b][0]
            def ratio(k):
                return f"{g(this, k) / g(base, k):.2f}x" if g(base, k) else "-"
            print(f"    {name:8s} samples/s {g(this, 'samples_per_second'):.0f} / "
                  f"{g(base, 'samples_per_second'):.0f} = {ratio('samples_per_second')}; "
                  f"all-reduce waited {g(this, 'worker_allreduce_ms') / iters[i] / workers:.1f} / "
                  f"{g(base, 'worker_allreduce_ms') / iters[b] / workers:.1f} ms per iteration and "
                  f"worker = {ratio('worker_allreduce_ms')}")
PY

# The simulator's cost model (heraldctl simulate --link-gbps) against these
# measurements: the same data, policy and options, each run's measured
# compute time per sample; then its prediction for the published setting.
python3 - "$dir" "$workers" "$slow" "$fast" "$dim" "$batch" "$iterations" "$ctl" << 'PY'
import json, subprocess, sys
d, workers, links, dim, batch, iterations, ctl = (sys.argv[1], int(sys.argv[2]), sys.argv[3:5],
                                                  int(sys.argv[5]), int(sys.argv[6]),
                                                  int(sys.argv[7]), sys.argv[8])
flags = {"nocache": ["--policy=nocache"], "vanilla": ["--policy=vanilla"],
         "off": ["--policy=herald", "--nohandoff", "--noserve", "--noinit-on-worker",
                 "--allocation-passes=1"],
         "herald": ["--policy=herald"]}
def dense_params(d):  # Wide&Deep with MLP 64-32 over 26 tables of dim d and 13 dense features
    inputs = 26 * d + 13
    return 65 * inputs + 2178
def predict(data, w, per_worker, dim_, gbps, compute, extra, latency=0):
    out = subprocess.run([ctl, "simulate", f"--data={data}", f"--workers={w}",
                          f"--batch-per-worker={per_worker}", "--cache-ratio=0.1",
                          f"--iterations={iterations}", f"--dim={dim_}", "--nocheck", "--json",
                          f"--link-gbps={gbps}", f"--latency-us={latency}",
                          f"--dense-params={dense_params(dim_)}",
                          f"--compute-ms-per-sample={compute}"] + extra,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)
print()
print("cost model (heraldctl simulate --link-gbps) vs measured, ms per iteration:")
print(f"{'link':>6s} {'policy':>11s} {'measured':>9s} {'predicted':>10s} {'pred/meas':>10s}")
per_worker = batch // workers
worst = 0
for link in links:
    for r in ["nocache", "vanilla", "off", "herald"]:
        p = json.load(open(f"{d}/{link}-{r}.json"))["jobs"][0]["progress"]
        it = float(p["iteration"])
        measured = 1000.0 * batch / float(p["samples_per_second"])
        compute = float(p.get("worker_compute_ms", 0)) / it / workers / per_worker
        pred = predict(f"{d}/data.bin", workers, per_worker, dim, link, compute, flags[r])
        ratio = pred["predicted_ms_per_iteration"] / measured
        worst = max(worst, abs(ratio - 1))
        name = "herald-off" if r == "off" else r
        print(f"{link:>6s} {name:>11s} {measured:9.1f} {pred['predicted_ms_per_iteration']:10.1f} {ratio:10.2f}")
print(f"largest error: {100 * worst:.0f}%")
# The published setting: 8 workers, 1 PS, 100 Gb/s, dim 512, 10 us one-way
# latency; compute per sample chosen so that vanilla spends 63% of its
# iteration in embedding transfers (the published upper figure).
w8, pw8, gbps = 8, 256, 100
base = predict(f"{d}/data.bin", w8, pw8, 512, gbps, 0, flags["vanilla"], latency=10)
transfer = base["predicted_transfer_share"] * base["predicted_ms_per_iteration"]
compute_ms = max(0.0, transfer / 0.63 - base["predicted_ms_per_iteration"])
per_sample = compute_ms / pw8
van = predict(f"{d}/data.bin", w8, pw8, 512, gbps, per_sample, flags["vanilla"], latency=10)
her = predict(f"{d}/data.bin", w8, pw8, 512, gbps, per_sample, flags["herald"], latency=10)
print()
print(f"predicted, published setting (8 workers x {pw8}, 1 PS, {gbps} Gb/s, dim 512, 10 us, "
      f"compute {compute_ms:.2f} ms/iteration so vanilla spends "
      f"{100 * van['predicted_transfer_share']:.0f}% in transfers): vanilla "
      f"{van['predicted_ms_per_iteration']:.2f} ms, herald {her['predicted_ms_per_iteration']:.2f} ms "
      f"per iteration: {van['predicted_ms_per_iteration'] / her['predicted_ms_per_iteration']:.2f}x "
      f"(published: 1.09-2.11x on TCP, 1.02-1.61x on RDMA)")
PY
