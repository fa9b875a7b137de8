#!/usr/bin/env bash
# deploy/slurm/herald-slurm against a real Slurm: Debian's munged,
# slurmctld and slurmd started on this machine (tests/slurm/local_slurm.sh),
# three nodes, 2 PS tasks and 2 CPU worker tasks per allocation (4 workers,
# 2 of them spares, in 5).
#   1. sbatch --wait on both nodes: the quickstart's Wide&Deep job trains to
#      success, the batch exits 0 and the model is exported;
#   2. a second job scancel'ed mid-training (after its first periodic
#      checkpoint) leaves no process behind and keeps its checkpoints;
#   3. a third job requeued mid-training (scontrol requeue) resumes from its
#      newest checkpoint and ends with job 1's model, bit for bit;
#   4. a heterogeneous job (hetjob) puts the shards on one node and the
#      workers on the other, and trains job 1's model, bit for bit;
#   5. a node that dies mid-training (its slurmd and its worker processes
#      SIGKILLed) does not end the allocation (--no-kill): Herald recovers
#      on the spare workers of the other node, and the job ends with job 1's
#      model, bit for bit.
# Skips loudly without root or the Slurm packages (deploy/install_deps.sh
# installs them).
set -euo pipefail

skip() { echo "SKIPPED (no Slurm): $*"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "not root (slurmd runs jobs as root here)"
for tool in munged slurmctld slurmd sbatch scontrol scancel squeue; do
  command -v "$tool" > /dev/null || skip "$tool not installed (deploy/install_deps.sh)"
done

runfiles=${TEST_SRCDIR}/${TEST_WORKSPACE}
launcher=$runfiles/deploy/slurm/herald-slurm
# Short paths: munge's socket path must fit a sockaddr_un.
work=$(mktemp -d /tmp/herald-slurm-test.XXXXXX)
source "$runfiles/tests/slurm/local_slurm.sh"
cleanup() {
  local code=$?
  scancel --full --signal=KILL --state=RUNNING -u root 2> /dev/null || true
  local_slurm_down
  pkill -KILL -f -- "$work/" 2> /dev/null || true
  rm -rf "$work"
  exit "$code"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$work/bin"
ln -s "$runfiles/scheduler/herald_scheduler" "$runfiles/ps_server/herald_ps" \
  "$runfiles/worker/herald_worker" "$runfiles/cli/heraldctl" "$work/bin/"
"$work/bin/heraldctl" gen-data --rows 160000 --seed 1 --cardinality_scale 0.02 \
  --correlation entities --format bin --out "$work/data.bin" > /dev/null
sed -e "s|^  paths: .*|  paths: \"$work/data.bin\"|" \
    -e 's|^checkpoint .*|checkpoint { every_iterations: 5 }|' \
    "$runfiles/deploy/examples/wide_and_deep.txt" > "$work/job.txt"
cat > "$work/herald.sbatch" << EOF
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=2 --cpus-per-task=1
#SBATCH --output=$work/slurm-%j.out
exec "$launcher" --bin "$work/bin" --ps 2 --device cpu "\$@"
EOF
cat > "$work/herald-het.sbatch" << EOF
#!/bin/bash
#SBATCH --output=$work/slurm-%j.out
#SBATCH --nodes=1 --ntasks=2 --cpus-per-task=1
#SBATCH hetjob
#SBATCH --nodes=1 --ntasks=2 --cpus-per-task=1
exec "$launcher" --bin "$work/bin" --ps "\$SLURM_NTASKS_HET_GROUP_0" --device cpu "\$@"
EOF
cat > "$work/herald-spares.sbatch" << EOF
#!/bin/bash
#SBATCH --output=$work/slurm-%j.out
#SBATCH --no-kill
#SBATCH --nodes=1 --ntasks=2 --cpus-per-task=1 --nodelist=herald-node1
#SBATCH hetjob
#SBATCH --nodes=2 --ntasks-per-node=2 --cpus-per-task=1 --nodelist=herald-node[2-3]
exec "$launcher" --bin "$work/bin" --ps 2 --device cpu "\$@"
EOF

local_slurm_up "$work/slurm" 3 || fail "the local Slurm did not come up"
echo "local Slurm up: $(sinfo -h -o '%P %D %c %t')"

# Until `test` succeeds, at most 120 s.
wait_until() {  # what test...
  local what=$1 deadline=$((SECONDS + 120))
  shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "timed out waiting for $what"
    sleep 0.2
  done
}
job_state() { scontrol show job -o "$1" 2> /dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
is_state() { [ "$(job_state "$1")" = "$2" ]; }
has_checkpoint() { compgen -G "$work/herald-$1/checkpoints/run-$2/job-*/iter-*/MANIFEST" > /dev/null; }
no_processes() { ! pgrep -f -- "$work/herald-$1/" > /dev/null; }

# ------------------------------------------------------------ 1. trains
cd "$work"
sbatch --wait --parsable "$work/herald.sbatch" --export "$work/model-1" "$work/job.txt" \
  > "$work/job-1.id" || { cat "$work"/slurm-*.out; fail "job 1's batch did not exit 0"; }
job1=$(cat "$work/job-1.id")
out1=$work/slurm-$job1.out
grep -q "job job-1 succeeded" "$out1" || { cat "$out1"; fail "job 1 did not succeed"; }
[ -s "$work/model-1/MODEL" ] && [ -s "$work/model-1/dense.f32" ] || fail "job 1 exported no model"
grep -q "2 PS shard(s), 2 cpu worker(s)" "$out1" || fail "job 1 did not start 2 shards and 2 workers"
# srun spread the tasks over both nodes.
[ "$(cat "$work/herald-$job1"/run-0/{ps,worker}-*.log | grep -o 'on herald-node[0-9] ' | sort -u | wc -l)" -eq 2 ] ||
  fail "job 1's tasks did not run on both nodes"
no_processes "$job1" || fail "processes of job 1 left: $(pgrep -af -- "$work/herald-$job1/")"
echo "1. job $job1 trained and exported: $(grep -c . "$work/herald-$job1/run-0/progress.log") progress lines"

# ------------------------------------------------------------ 2. scancel
job2=$(sbatch --parsable "$work/herald.sbatch" "$work/job.txt")
wait_until "job 2's first checkpoint" has_checkpoint "$job2" 0
scancel "$job2"
wait_until "job 2 to end" eval '! squeue -h -j '"$job2"' 2>/dev/null | grep -q .'
wait_until "job 2's processes to exit" no_processes "$job2"
grep -q "stopped by Slurm (SIGTERM)" "$work/slurm-$job2.out" ||
  { cat "$work/slurm-$job2.out"; fail "job 2's launcher did not stop on SIGTERM"; }
grep -q "received signal 15" "$work/herald-$job2/run-0/scheduler.log" ||
  fail "job 2's scheduler did not get SIGTERM first"
has_checkpoint "$job2" 0 || fail "job 2's checkpoints were removed"
echo "2. job $job2 scancel'ed after a checkpoint: no process left, checkpoints kept"

# ------------------------------------------------------------ 3. requeue
job3=$(sbatch --parsable --requeue "$work/herald.sbatch" --export "$work/model-3" "$work/job.txt")
wait_until "job 3's first checkpoint" has_checkpoint "$job3" 0
scontrol requeue "$job3"
# A requeued job waits for its begin time; release it as soon as Slurm
# shows it pending again.
wait_until "job 3 to be pending again" is_state "$job3" PENDING
scontrol update JobId="$job3" StartTime=now 2> /dev/null || true
wait_until "job 3 to complete" is_state "$job3" COMPLETED
out3=$work/slurm-$job3.out
grep -q "job $job3 run 1:" "$out3" || { cat "$out3"; fail "job 3 did not run a second time"; }
grep -q "resuming from the newest checkpoint in $work/herald-$job3/checkpoints/run-0/job-1" "$out3" ||
  { cat "$out3"; fail "job 3's second run did not resume from its first run's checkpoint"; }
grep -q "succeeded" "$out3" || { cat "$out3"; fail "job 3 did not succeed"; }
no_processes "$job3" || fail "processes of job 3 left"
cmp "$work/model-1/dense.f32" "$work/model-3/dense.f32" ||
  fail "job 3's dense parameters differ from job 1's"
diff=$("$runfiles/tools/model_diff" "$work/model-1" "$work/model-3")
echo "model_diff job 1 / job 3: $diff"
[[ $diff == *"embeddings "*" rows max_abs_diff 0; keys only in a: 0, only in b: 0"* ]] ||
  fail "job 3's embedding rows differ from job 1's"
echo "3. job $job3 requeued after a checkpoint: resumed, and ends with job 1's bits"

# ------------------------------------------------------------ 4. hetjob
sbatch --wait --parsable "$work/herald-het.sbatch" --export "$work/model-4" "$work/job.txt" \
  > "$work/job-4.id" || { cat "$work"/slurm-*.out; fail "job 4's batch did not exit 0"; }
job4=$(cat "$work/job-4.id")
grep -q "job job-1 succeeded" "$work/slurm-$job4.out" || fail "job 4 did not succeed"
ps_nodes=$(cat "$work/herald-$job4"/run-0/ps-*.log | grep -o 'on herald-node[0-9] ' | sort -u | sed 's/^on //; s/ $//')
worker_nodes=$(cat "$work/herald-$job4"/run-0/worker-*.log | grep -o 'on herald-node[0-9] ' | sort -u | sed 's/^on //; s/ $//')
[ "$(echo "$ps_nodes" | wc -l)" -eq 1 ] && [ "$(echo "$worker_nodes" | wc -l)" -eq 1 ] &&
  [ "$ps_nodes" != "$worker_nodes" ] ||
  fail "job 4's shards ($ps_nodes) and workers ($worker_nodes) are not each on a node of their own"
cmp "$work/model-1/dense.f32" "$work/model-4/dense.f32" || fail "job 4's dense parameters differ"
[[ $("$runfiles/tools/model_diff" "$work/model-1" "$work/model-4") == \
   *"rows max_abs_diff 0; keys only in a: 0, only in b: 0"* ]] || fail "job 4's rows differ"
echo "4. hetjob $job4: shards on $ps_nodes, workers on $worker_nodes, job 1's bits"

# ------------------------------------------------------------ 5. a lost node
# Flaky in CI (2 of 5 runs on 2026-11-28): Slurm 22.05 cancelled the hetjob
# "DUE TO NODE FAILURE" despite --no-kill, which forcing the node DOWN
# reproduces every time (docs/operations.md, "A lost node"). Run it with
# HERALD_SLURM_LOST_NODE=1 until a one-component job replaces the hetjob.
if [ "${HERALD_SLURM_LOST_NODE:-0}" != 1 ]; then
  echo "5. SKIPPED (lost node: a hetjob does not reliably outlive a node Slurm declares" \
    "DOWN; bazel test --test_env=HERALD_SLURM_LOST_NODE=1 runs it)"
else
  job5=$(sbatch --parsable "$work/herald-spares.sbatch" --export "$work/model-5" "$work/job.txt")
  wait_until "job 5's first checkpoint" has_checkpoint "$job5" 0
  # The node of a worker that joined the job (not a spare) dies: its slurmd
  # and its worker processes.
  run5=$work/herald-$job5/run-0
  victim=$(grep -l "joined job-1" "$run5"/worker-*.log | head -1)
  [ -n "$victim" ] || fail "job 5: no worker joined the job"
  lost=$(grep -o 'on herald-node[0-9]' "$victim" | head -1 | cut -d' ' -f2)
  [ "$lost" != herald-node1 ] || fail "job 5: a worker ran on the batch node"
  kill -KILL "$(cat "$work/slurm/slurmd-$lost.pid")"
  for log in "$run5"/worker-*.log; do
    grep -q "on $lost " "$log" && kill -KILL "$(grep -o 'pid [0-9]*' "$log" | head -1 | cut -d' ' -f2)"
  done
  echo "5. job $job5: $lost lost after a checkpoint"
  ended() { grep -qE "job job-1 succeeded|did not succeed|stopped by Slurm" "$work/slurm-$job5.out" 2>/dev/null; }
  wait_until "job 5 to end" ended
  grep -q "job job-1 succeeded" "$work/slurm-$job5.out" ||
    { cat "$work/slurm-$job5.out"; fail "job 5 did not survive the lost node"; }
  grep -q "job job-1: recovering (1 of" "$run5/scheduler.log" || fail "job 5 finished without a recovery"
  wait_until "job 5's processes to exit" no_processes "$job5"
  cmp "$work/model-1/dense.f32" "$work/model-5/dense.f32" || fail "job 5's dense parameters differ"
  [[ $("$runfiles/tools/model_diff" "$work/model-1" "$work/model-5") == \
     *"rows max_abs_diff 0; keys only in a: 0, only in b: 0"* ]] || fail "job 5's rows differ"
  echo "5. job $job5 recovered on the other node's spares and ends with job 1's bits"
fi
echo "slurm_cluster_test: PASSED"
