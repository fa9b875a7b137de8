# Sourced by the benchmarks that write into a mktemp directory:
# bench_dir_done RC DIR, from their EXIT trap, removes DIR after a
# successful run (RC 0) and keeps it, saying where, after a failed one or
# when HERALD_BENCH_KEEP is set (its logs and data for a closer look).
bench_dir_done() {
  local rc=$1 dir=$2
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  if [ "$rc" = 0 ] && [ -z "${HERALD_BENCH_KEEP:-}" ]; then
    rm -rf "$dir"
  else
    echo "files kept in $dir (exit $rc)" >&2
  fi
}
