# Sourced by the benchmarks that run real processes on 127.0.0.1
# (bench/e2e_bench.sh, bench/key_lifecycle_bench.sh); sources
# bench/bench_dir.sh and deploy/local/cluster_wait.sh itself.
#
#   herald_local_bench_begin PREFIX
#
# makes `dir` (a mktemp directory /tmp/PREFIX.XXXXXX) and an empty `pids`
# array, and traps EXIT: the processes in `pids` are stopped and `dir` is
# removed after a successful run (bench_dir_done).
#
#   herald_start_local BIN DIR PS WORKERS
#
# starts a scheduler, PS shards 0..PS-1 and WORKERS CPU workers from the
# binaries under BIN (a bazel-bin), logs in DIR, appends their process ids
# to the caller's `pids` array and sets `sched` to the scheduler's address;
# waits (bounded) until every node registered. Returns 1 if they never do.
source bench/bench_dir.sh
source deploy/local/cluster_wait.sh

herald_local_bench_begin() {
  dir=$(mktemp -d "/tmp/$1.XXXXXX")
  pids=()
  trap 'rc=$?; kill -TERM "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true
    bench_dir_done "$rc" "$dir"' EXIT
}

herald_start_local() {
  local bin=$1 dir=$2 shards=$3 workers=$4 s w
  setsid "$bin/scheduler/herald_scheduler" --port-file "$dir/s.port" > "$dir/scheduler.log" 2>&1 &
  pids+=($!)
  herald_wait_for_file "$dir/s.port" || { echo "the scheduler did not start" >&2; return 1; }
  sched=127.0.0.1:$(cat "$dir/s.port")
  for s in $(seq 0 $((shards - 1))); do
    setsid "$bin/ps_server/herald_ps" --shard "$s" --scheduler "$sched" > "$dir/ps$s.log" 2>&1 &
    pids+=($!)
  done
  for w in $(seq 0 $((workers - 1))); do
    setsid "$bin/worker/herald_worker" --scheduler "$sched" > "$dir/worker$w.log" 2>&1 &
    pids+=($!)
  done
  herald_wait_for_nodes $((shards + workers)) "$bin/cli/heraldctl" --scheduler "$sched" ||
    { echo "not every node registered" >&2; return 1; }
}
