#!/usr/bin/env bash
# Checkpoint and recovery costs on a local cluster (127.0.0.1: scheduler, 2 PS
# shards, 3 CPU workers, the job on 2 of them), Wide&Deep on generated data:
#   - the write rate of a periodic checkpoint (its shard files' bytes over the time
#     the slowest shard took to write its file, fsync included) against a
#     plain sequential write of the same bytes to the same disk with fsync
#     (dd conv=fsync), in the same run; and the same bytes over the whole
#     time the job waited for the checkpoint (flush and reports included);
#   - the checkpoint overhead as a share of training time: what the job
#     waited for its checkpoints, and the wall time of the same job with and
#     without checkpoints (two runs each, alternating);
#   - the time from a SIGKILL of a job's worker during training to training
#     again (the scheduler resumes on the survivor and the spare worker from
#     the newest checkpoint once the survivor has heartbeated twice; the
#     scheduler's default heartbeat and liveness timeout);
#   - the time from a SIGKILL of the scheduler during training to training
#     again, the scheduler restarted at once on the same address with its
#     state directory (the nodes register again; the job resumes from its
#     newest checkpoint with the planner's state loaded from it).
#
#   bench/checkpoint_bench.sh [ROWS] [EVERY]     (defaults 300000 100)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-300000}
every=${2:-100}
bazel build -c opt //ps_server:herald_ps //worker:herald_worker //scheduler:herald_scheduler \
  //cli:heraldctl 2>&1 | grep -E "ERROR|error:" || true
bin=$PWD/bazel-out/k8-opt/bin
ctl=$bin/cli/heraldctl
dir=$(mktemp -d /tmp/herald-ckpt-bench.XXXXXX)
pids=()
source bench/bench_dir.sh
source deploy/local/cluster_wait.sh
trap 'rc=$?; kill -KILL "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true
  bench_dir_done "$rc" "$dir"' EXIT
echo "checkpoint_bench: $(nproc) cores, files in $dir ($(df -h "$dir" | awk 'NR==2 {print $1}'))"

"$ctl" gen-data --rows "$rows" --seed 1 --cardinality_scale 0.02 --correlation entities \
  --format bin --out "$dir/data.bin" > /dev/null
liveness_ms=10000  # the default
setsid "$bin/scheduler/herald_scheduler" --port-file "$dir/s.port" --state_dir "$dir/state" \
  > "$dir/scheduler.log" 2>&1 &
scheduler_pid=$!
pids+=($!)
herald_wait_for_file "$dir/s.port" || { echo "checkpoint_bench: the scheduler did not start" >&2; exit 1; }
sched=127.0.0.1:$(cat "$dir/s.port")
for s in 0 1; do
  setsid "$bin/ps_server/herald_ps" --shard "$s" --scheduler "$sched" > "$dir/ps$s.log" 2>&1 &
  pids+=($!)
done
declare -A worker_pid
for w in 0 1 2; do
  setsid "$bin/worker/herald_worker" --scheduler "$sched" --listen 127.0.0.1:0 \
    --port-file "$dir/w$w.port" > "$dir/worker$w.log" 2>&1 &
  worker_pid[$w]=$!
  pids+=($!)
done
herald_wait_for_nodes 5 "$ctl" --scheduler "$sched" ||
  { echo "checkpoint_bench: not every node registered" >&2; exit 1; }

spec() {  # name every
  sed -e "s|^  paths: .*|  paths: \"$dir/data.bin\"|" -e "s|^name: .*|name: \"$1\"|" \
      -e "s|^checkpoint .*|checkpoint { dir: \"$dir/ckpt\" every_iterations: $2 keep_last: 0 }|" \
      -e "s|^num_workers: .*|num_workers: 2|" deploy/examples/wide_and_deep.txt > "$dir/$1.txt"
  echo "$dir/$1.txt"
}
field() { python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['jobs'][0]['progress']; print(p.get(sys.argv[2], 0))" "$1" "$2"; }

# 1. Overhead and write rate.
job=$("$ctl" submit "$(spec overhead "$every")" --scheduler "$sched")
"$ctl" watch "$job" --scheduler "$sched" > /dev/null
"$ctl" status "$job" --json --scheduler "$sched" > "$dir/overhead.json"
iterations=$(field "$dir/overhead.json" iteration)
sps=$(field "$dir/overhead.json" samples_per_second)
ckpt_ms=$(field "$dir/overhead.json" checkpoint_ms)
written=$(field "$dir/overhead.json" checkpoints_written)
periodic=$((written - 1))  # the last one is the final checkpoint, not waited for
write_ms=$(field "$dir/overhead.json" checkpoint_write_ms)
# The shards' bytes of one periodic checkpoint (the write rate is timed on
# the shards), and the scheduler's planner state beside them.
read -r bytes planner_bytes < <(python3 - "$dir/ckpt/$job" << 'PY'
import glob, re, sys
for path in sorted(glob.glob(sys.argv[1] + "/iter-*/MANIFEST")):
    text = open(path).read()
    if "planner_file" not in text:
        continue  # the final checkpoint
    shards = sum(int(b) for b in re.findall(r"^\s+bytes: (\d+)", text, re.M))
    print(shards, re.search(r"planner_bytes: (\d+)", text).group(1))
    break
PY
)
save_ms=$(grep -o "planner state after iteration [0-9]*: [0-9]* bytes in [0-9]* ms" \
  "$dir/scheduler.log" | head -1 | awk '{print $(NF-1)}')
echo "planner state in the checkpoint: $(python3 -c "print(f'{$planner_bytes / 1e6:.1f}')") MB, \
saved in ${save_ms} ms while the workers trained the queued steps"
# The baseline three times (this disk's speed varies): the fastest counts.
dd_s=()
for _ in 1 2 3; do
  start=$(date +%s.%N)
  dd if=/dev/zero of="$dir/sequential.bin" bs=1M count=$(( (bytes + 1048575) / 1048576 )) \
    conv=fsync status=none
  end=$(date +%s.%N)
  dd_s+=("$(python3 -c "print($end - $start)")")
  rm -f "$dir/sequential.bin"
done
python3 - "$iterations" "$sps" "$ckpt_ms" "$write_ms" "$periodic" "$bytes" "${dd_s[@]}" << 'PY'
import sys
it, sps, ckpt_ms, write_ms, periodic, nbytes = map(float, sys.argv[1:7])
dd = sorted(map(float, sys.argv[7:]))
train_s = it * 2048 / sps
seq_s = dd[0]
print(f"dd conv=fsync of the shards' bytes, three times: "
      + ", ".join(f"{nbytes / 1e6 / s:.0f}" for s in dd) + " MB/s (the fastest is the baseline)")
waited = ckpt_ms / max(periodic, 1) / 1000
wrote = write_ms / max(periodic, 1) / 1000
mb = nbytes / 1e6
print(f"job: {it:.0f} iterations in {train_s:.1f} s; {periodic:.0f} periodic checkpoint(s), "
      f"{ckpt_ms / 1000:.2f} s waited: {100 * ckpt_ms / 1000 / train_s:.1f}% of training time")
print(f"shard files of {mb:.1f} MB: written by the slowest shard at {mb / wrote:.0f} MB/s "
      f"({wrote * 1000:.0f} ms); dd conv=fsync of the same bytes: {mb / seq_s:.0f} MB/s "
      f"({seq_s * 1000:.0f} ms); ratio {seq_s / wrote:.2f}")
print(f"the same bytes over the job's whole wait ({waited * 1000:.0f} ms, flush and reports "
      f"included): {mb / waited:.0f} MB/s, ratio {seq_s / waited:.2f}")
PY

# 1b. Wall time with and without checkpoints (submission to end), A B A B.
wall_s() {  # status json
  python3 -c "import json,sys; j=json.load(open(sys.argv[1]))['jobs'][0]; print((int(j['finished_unix_ms']) - int(j['submitted_unix_ms'])) / 1000)" "$1"
}
with=() without=()
for round in 1 2; do
  for kind in without with; do
    if [ "$kind" = with ]; then s=$(spec "wall-$kind-$round" "$every"); else
      s=$(spec "wall-$kind-$round" "$every"); sed -i '/^checkpoint /d' "$s"; fi
    j=$("$ctl" submit "$s" --scheduler "$sched")
    "$ctl" watch "$j" --scheduler "$sched" > /dev/null
    "$ctl" status "$j" --json --scheduler "$sched" > "$dir/wall.json"
    if [ "$kind" = with ]; then with+=("$(wall_s "$dir/wall.json")"); else
      without+=("$(wall_s "$dir/wall.json")"); fi
  done
done
python3 - "$every" "${without[@]}" "${with[@]}" << 'PY'
import sys
every = sys.argv[1]
a = list(map(float, sys.argv[2:4]))
b = list(map(float, sys.argv[4:6]))
print(f"job wall time without checkpoints {a[0]:.2f} / {a[1]:.2f} s, with one every {every} "
      f"iterations {b[0]:.2f} / {b[1]:.2f} s: "
      f"{100 * (b[0] - a[0]) / a[0]:+.1f}% / {100 * (b[1] - a[1]) / a[1]:+.1f}%")
PY

# 2. SIGKILL to training again: a checkpoint every 20 iterations, so that most
# of the job is left when it is killed just after the first one.
recovery_every=20
# Polls job $1 (bounded) until it trains again after its first checkpoint,
# so that a kill lands during training; its last status is in $dir/r.json.
training_after_first_checkpoint() {
  for _ in $(seq 1 3000); do
    "$ctl" status "$1" --json --scheduler "$sched" > "$dir/r.json"
    [ "$(field "$dir/r.json" checkpoints_written)" -ge 1 ] &&
      [ "$(field "$dir/r.json" iteration)" -gt $((recovery_every + 2)) ] && return
    sleep 0.01
  done
}
job=$("$ctl" submit "$(spec recovery "$recovery_every")" --scheduler "$sched")
training_after_first_checkpoint "$job"
[ "$(field "$dir/r.json" iteration)" -lt "$(field "$dir/overhead.json" iteration)" ] ||
  { echo "checkpoint_bench: the job ended before it could be killed" >&2; exit 1; }
at=$(field "$dir/r.json" iteration)
# Kill the process of the job's rank 0 (its log says it joined as rank 0).
victim=
for w in 0 1 2; do
  grep -q "joined $job as rank 0 " "$dir/worker$w.log" && victim=${worker_pid[$w]}
done
[ -n "$victim" ] || { echo "checkpoint_bench: no worker joined $job as rank 0" >&2; exit 1; }
python3 - "$ctl" "$sched" "$job" "$victim" "$liveness_ms" "$at" << 'PY'
import json, os, signal, subprocess, sys, time
ctl, sched, job, victim, liveness_ms, at = sys.argv[1:]
def progress():
    out = subprocess.run([ctl, "status", job, "--json", "--scheduler", sched],
                         capture_output=True, text=True).stdout
    return json.loads(out)["jobs"][0]["progress"]
killed = time.time()
os.kill(int(victim), signal.SIGKILL)
for _ in range(6000):  # bounded: 60 s
    p = progress()
    resumed_from = p.get("resumed_from", "")
    if "iter-" in resumed_from:
        k = int(resumed_from.split("iter-")[1].split("/")[0])
        if int(p.get("iteration", 0)) > k + 1:  # an iteration trained after the resume
            # The status polled before the kill lags the workers: the
            # checkpoint resumed from shows they had passed iteration k.
            print(f"SIGKILL of a worker after the checkpoint of iteration {k} (the status "
                  f"polled just before said iteration {at}) to the first iteration trained "
                  f"after the resume from it: {time.time() - killed:.1f} s (the liveness "
                  f"timeout, not waited for: {int(liveness_ms) / 1000:.1f} s)")
            break
    time.sleep(0.01)
else:
    print("recovery: training did not resume within 60 s")
PY

# 3. SIGKILL of the scheduler to training again (restarted at once on the
# same address and state directory, as systemd would).
job=$("$ctl" submit "$(spec restart "$recovery_every")" --scheduler "$sched")
training_after_first_checkpoint "$job"
killed=$(date +%s.%N)
kill -KILL "$scheduler_pid"
wait "$scheduler_pid" 2>/dev/null || true
setsid "$bin/scheduler/herald_scheduler" --listen "$sched" --state_dir "$dir/state" \
  > "$dir/scheduler-restarted.log" 2>&1 &
scheduler_pid=$!
pids+=($!)
python3 - "$ctl" "$sched" "$job" "$killed" << 'PY'
import json, subprocess, sys, time
ctl, sched, job, killed = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
for _ in range(6000):  # bounded: 60 s
    out = subprocess.run([ctl, "status", job, "--json", "--scheduler", sched],
                         capture_output=True, text=True).stdout
    try:
        p = json.loads(out)["jobs"][0]["progress"]
    except (ValueError, KeyError, IndexError):
        time.sleep(0.01)
        continue
    resumed_from = p.get("resumed_from", "")
    if "iter-" in resumed_from:
        k = int(resumed_from.split("iter-")[1].split("/")[0])
        if int(p.get("iteration", 0)) > k + 1:
            print(f"SIGKILL of the scheduler to the first iteration trained after the resume from "
                  f"iteration {k}: {time.time() - killed:.1f} s (planner "
                  f"{p.get('planner_resume', '?')}, {p.get('replayed_iterations', 0)} iterations "
                  f"replayed, {p.get('refilled_rows', 0)} cached rows refilled)")
            break
    time.sleep(0.01)
else:
    print("scheduler restart: training did not resume within 60 s")
PY

