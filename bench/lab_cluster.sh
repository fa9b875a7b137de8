# Sourced by the lab benchmarks (lab_e2e_bench.sh, policy_accuracy_bench.sh):
# builds the binaries, brings up an emulated lab (deploy/lab/lab.sh) of
# `hosts` hosts (host 1 the scheduler, host 2 the one PS, hosts 3.. one
# CPU worker each), generates the entity-correlated data and starts the
# cluster. The lab and its processes are removed when the caller exits, and
# `dir` too after a success (bench_dir.sh).
#
# The caller sets: bench (its name, for messages), name (the lab's),
# workers, rows, link (the first link rate in Gb/s), dir (a fresh
# directory for logs and data) and, optionally, ps_flags and worker_flags
# (arrays of extra flags). Defines: bin, ctl, lab, hosts, data, sched, and
# the functions on HOST CMD..., start HOST LOG CMD..., cluster_up BIN [TAG]
# (stops the lab's processes, then starts the scheduler, PS and workers of
# BIN, a directory laid out as bazel-bin: scheduler/herald_scheduler,
# ps_server/herald_ps, worker/herald_worker; sets sched) and lab_spec (the
# benches' Wide&Deep job). The cluster of this build is up on return.

bazel build -c opt //ps_server:herald_ps //worker:herald_worker //scheduler:herald_scheduler \
  //cli:heraldctl //tools:model_diff 2>&1 | grep -E "ERROR|error:" || true
bin=$PWD/bazel-out/k8-opt/bin
ctl=$bin/cli/heraldctl
lab=$PWD/deploy/lab/lab.sh
hosts=$((workers + 2))
source bench/bench_dir.sh
source deploy/local/cluster_wait.sh
trap 'rc=$?; "$lab" down --name "$name"; bench_dir_done "$rc" "$dir"' EXIT
trap 'exit 130' INT TERM

echo "$bench: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)," \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); files in $dir"
"$lab" up --name "$name" --hosts "$hosts" --link-gbps "$link" --no-probe
on() { local h=$1; shift; "$lab" exec --name "$name" "$h" "$@"; }
start() {  # host log binary args...
  local h=$1 log=$2
  shift 2
  # In a subshell, so this shell does not report the kill at exit.
  (setsid "$lab" exec --name "$name" "$h" "$@" > "$dir/$log.log" 2>&1 < /dev/null &)
}

data=$dir/data.bin
"$ctl" gen-data --rows "$rows" --seed 1 --cardinality_scale 0.02 --correlation entities \
  --format bin --out "$data" > /dev/null
cluster_up() {  # bin dir, log name prefix (optional)
  local b=$1 tag=${2:-} h w
  "$lab" stop --name "$name"
  rm -f "$dir/scheduler.port"
  start 1 "${tag}scheduler" "$b/scheduler/herald_scheduler" --listen 198.18.0.1:0 \
    --port_file "$dir/scheduler.port" --planner_threads 2
  herald_wait_for_file "$dir/scheduler.port" ||
    { echo "$bench: the scheduler did not start" >&2; exit 1; }
  sched=198.18.0.1:$(cat "$dir/scheduler.port")
  start 2 "${tag}ps" "$b/ps_server/herald_ps" --listen 198.18.0.2:0 --scheduler "$sched" --shard 0 \
    ${ps_flags[@]+"${ps_flags[@]}"}
  for w in $(seq 1 "$workers"); do
    h=$((w + 2))
    start "$h" "${tag}worker$w" "$b/worker/herald_worker" --listen "198.18.0.$h:0" --scheduler "$sched" \
      ${worker_flags[@]+"${worker_flags[@]}"}
  done
  herald_wait_for_nodes $((workers + 1)) on 1 "$ctl" --scheduler "$sched" ||
    { echo "$bench: not every node registered" >&2; exit 1; }
}
cluster_up "$bin"

# The benches' job spec (text proto): Wide&Deep over `data` with the
# caller's dim, batch, iterations and workers. Args: job name, policy,
# extra scheduling fields, extra spec lines (optional).
lab_spec() {
  cat << EOF
name: "$1"
model { kind: MODEL_WIDE_AND_DEEP top_mlp: [64, 32] }
num_dense: 13
$(for t in $(seq 1 26); do echo "tables { name: \"C$t\" dim: $dim }"; done)
dense_optimizer { kind: OPTIMIZER_ADAM learning_rate: 0.001 }
sparse_optimizer { kind: OPTIMIZER_ADAGRAD learning_rate: 0.05 }
data { format: DATA_FORMAT_HERALD_BINARY paths: "$data" eval_fraction: 0.05 shuffle_buffer: 65536 }
scheduling { policy: $2 cache_fraction: 0.1 $3 }
${4:+$4
}global_batch_size: $batch
iterations: $iterations
seed: 1
num_workers: $workers
EOF
}
