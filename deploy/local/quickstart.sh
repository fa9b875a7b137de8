#!/usr/bin/env bash
# README command 1: the main job on a local cluster, in one command.
#
#   deploy/local/quickstart.sh [CRITEO_TSV_FILE_OR_DIR...]
#
# Installs the Debian packages, builds the binaries (-c opt), generates a
# Criteo-shaped dataset (or converts the given Criteo TSV files), starts
# herald_scheduler, 2 herald_ps and 2 CPU herald_worker on 127.0.0.1 with a
# fresh cluster token, submits the Wide&Deep job (deploy/examples/
# wide_and_deep.txt, herald policy) on that data, shows live progress and
# the held-out evaluations the job ran, exports the trained model, evaluates
# it again from the export, and stops
# every process it started — also on Ctrl-C or an error.
#
# The scheduler serves its status page on 127.0.0.1 (the address is printed;
# HERALD_HTTP_PORT fixes the port; sign in with the token file's content).
# Environment: HERALD_WORK (default .herald/) for data, logs and the model;
# HERALD_ROWS (default 300000) and HERALD_CARDINALITY_SCALE (default 0.02)
# for the generated data; HERALD_EPOCHS (default 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

bash deploy/install_deps.sh
bazel build -c opt //ps_server:herald_ps //worker:herald_worker //scheduler:herald_scheduler \
  //cli:heraldctl 2>&1 | grep -v linux-sandbox
bin=$repo/bazel-out/k8-opt/bin
ctl=$bin/cli/heraldctl

work=$(mkdir -p "${HERALD_WORK:-.herald}" && cd "${HERALD_WORK:-.herald}" && pwd)
run=$work/run-$(date +%Y%m%d-%H%M%S)
mkdir -p "$run"
echo "quickstart: logs, token and model in $run"

# ---------------------------------------------------------------- data
if [ $# -gt 0 ]; then
  echo "quickstart: converting the given Criteo TSV data: $*"
  data=$run/criteo.bin
  "$ctl" data stats "$@"
  "$ctl" convert "$@" --out "$data" --skip_malformed
else
  rows=${HERALD_ROWS:-300000}
  scale=${HERALD_CARDINALITY_SCALE:-0.02}
  data=$work/generated-$rows-$scale.bin
  if [ ! -f "$data" ]; then
    "$ctl" gen-data --rows "$rows" --seed 1 --cardinality_scale "$scale" \
      --correlation entities --format bin --out "$data"
  fi
  "$ctl" data stats "$data"
fi

# ---------------------------------------------------------------- cluster
pids=()
stop_cluster() {
  local code=$?
  trap - EXIT INT TERM
  if [ ${#pids[@]} -gt 0 ]; then
    echo "quickstart: stopping ${#pids[@]} processes"
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for pid in "${pids[@]}"; do
      # Bounded: SIGKILL whatever has not exited after 20 s.
      for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    done
  fi
  exit "$code"
}
trap stop_cluster EXIT
trap 'echo; echo "quickstart: interrupted"; exit 130' INT TERM

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$run/token"
chmod 600 "$run/token"
auth=(--token-file "$run/token")

start() {  # name binary args...  (own session: Ctrl-C reaches this script only,
  local name=$1  # which then stops the servers in order)
  shift
  setsid "$@" > "$run/$name.log" 2>&1 < /dev/null &
  pids+=($!)
}

source deploy/local/cluster_wait.sh
wait_for_file() {  # path what
  herald_wait_for_file "$1" && return 0
  echo "quickstart: $2 did not start; its log:" >&2
  tail -20 "$run/$2.log" >&2
  return 1
}

start scheduler "$bin/scheduler/herald_scheduler" --listen 127.0.0.1:0 \
  --port-file "$run/scheduler.port" --http-listen "127.0.0.1:${HERALD_HTTP_PORT:-0}" \
  --http-port-file "$run/http.port" "${auth[@]}"
wait_for_file "$run/scheduler.port" scheduler
wait_for_file "$run/http.port" scheduler
scheduler=127.0.0.1:$(cat "$run/scheduler.port")
echo "quickstart: status page: http://127.0.0.1:$(cat "$run/http.port")/ (token: $run/token)"
for shard in 0 1; do
  start "ps$shard" "$bin/ps_server/herald_ps" --listen 127.0.0.1:0 --shard "$shard" \
    --scheduler "$scheduler" "${auth[@]}"
done
for w in 0 1; do
  start "worker$w" "$bin/worker/herald_worker" --scheduler "$scheduler" --device cpu \
    --listen 127.0.0.1:0 "${auth[@]}"
done
ctl_args=(--scheduler "$scheduler" "${auth[@]}")
herald_wait_for_nodes 4 "$ctl" "${ctl_args[@]}" || true  # the listing below shows who is missing
"$ctl" nodes "${ctl_args[@]}"

# ---------------------------------------------------------------- job
spec=$run/job.txt
sed -e "s|^  paths: .*|  paths: \"$data\"|" \
    -e "s|^epochs: .*|epochs: ${HERALD_EPOCHS:-1}|" \
    -e "s|^checkpoint .*||" \
    deploy/examples/wide_and_deep.txt > "$spec"
job=$("$ctl" submit "$spec" "${ctl_args[@]}")
echo "quickstart: submitted $job ($spec); progress:"
# One live line (iteration, samples/s, loss, cache hit rate, rows moved vs
# the vanilla estimate, ETA); the final state is checked below.
{ "$ctl" watch "$job" "${ctl_args[@]}" || true; } | while IFS= read -r line; do
  printf '\r%s\033[K' "$line"
done
echo
if ! "$ctl" status "$job" "${ctl_args[@]}" | grep -q JOB_SUCCEEDED; then
  "$ctl" status "$job" "${ctl_args[@]}" || true
  echo "quickstart: the job did not succeed; logs in $run/" >&2
  exit 1
fi

# The job's own evaluations (eval.every_iterations, and at the end).
"$ctl" status "$job" --history "${ctl_args[@]}" |
  awk 'NR == 1 || $10 != "-" { print $1, $10, $11 }' |
  sed '1s/.*/quickstart: held-out evaluations during the job (iteration, AUC, log loss):/'
"$ctl" export "$job" --out "$run/model" "${ctl_args[@]}"
# The same on one CPU from the export, with the generator's teacher for scale.
"$ctl" evaluate --model "$run/model"
"$ctl" status "$job" --history --csv "${ctl_args[@]}" > "$run/history.csv"
echo "quickstart: done. Model in $run/model (format: docs/export.md); history in" \
  "$run/history.csv; logs in $run/"
