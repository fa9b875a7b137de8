#!/usr/bin/env bash
# README command 1: the main job. Today: install dependencies, build every
# binary, generate a Criteo-shaped sample dataset (or take real Criteo TSV
# files) and print its statistics. Training on a local cluster arrives with the
# parameter-server, worker and scheduler issues (see README "Status").
#
#   deploy/local/quickstart.sh [CRITEO_TSV_FILE_OR_DIR...]
#
# Environment: HERALD_WORK (default .herald/) for outputs, HERALD_ROWS
# (default 200000) and HERALD_CARDINALITY_SCALE (default 0.05) for the
# generated data.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash deploy/install_deps.sh
bazel build //ps_server:herald_ps //worker:herald_worker //scheduler:herald_scheduler \
  //cli:heraldctl 2>&1 | grep -v linux-sandbox
ctl=bazel-bin/cli/heraldctl

work=${HERALD_WORK:-.herald}
mkdir -p "$work"
if [ $# -gt 0 ]; then
  inputs=("$@")
  echo "quickstart: using the given data: ${inputs[*]}"
else
  rows=${HERALD_ROWS:-200000}
  scale=${HERALD_CARDINALITY_SCALE:-0.05}
  inputs=("$work/sample.tsv")
  "$ctl" gen-data --rows "$rows" --seed 1 --cardinality_scale "$scale" \
    --correlation entities --out "$work/sample.tsv"
fi

"$ctl" data stats "${inputs[@]}"
"$ctl" convert "${inputs[@]}" --out "$work/sample.bin" --skip_malformed
echo "quickstart: binaries in bazel-bin/{ps_server,worker,scheduler,cli}; data in $work/"
