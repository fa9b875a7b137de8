# Sourced by tests/slurm/slurm_cluster_test.sh: a real one-node Slurm on
# this machine, private to the caller. Debian's munged, slurmctld and slurmd
# run as root from configuration under a directory of the caller's, so
# nothing in /etc is touched.
#
#   local_slurm_up DIR [N]  start munged, slurmctld and N slurmd (default 2)
#                        with state, logs and sockets in DIR; exports
#                        SLURM_CONF; returns 1 (their logs printed) if a
#                        node never comes up
#   local_slurm_down     stop them (bounded); safe to call twice
#
# The nodes: herald-node1..N, each a slurmd of its own on its own port, all
# NodeAddr=127.0.0.1 (one machine), 8 CPUs declared each
# (config_overrides: more than this machine has, so shards, workers and the
# batch step fit), proctrack/linuxproc and task/none (no cgroups). Every
# daemon binds 127.0.0.1 only (CommunicationParameters=NoInAddrAny); the
# ports are picked free. Partition "herald" holds every node.

_local_slurm_dir=""

_local_slurm_free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

local_slurm_up() {
  local dir=$1 nodes=${2:-2} n
  _local_slurm_dir=$dir
  mkdir -p "$dir"/{state,spool,log,munge}
  chmod 711 "$dir/munge"
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  local socket=$dir/munge/munge.socket
  munged --force --key-file="$dir/munge/munge.key" --socket="$socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" || return 1

  local ctld_port
  ctld_port=$(_local_slurm_free_port)
  cat > "$dir/slurm.conf" <<CONF
ClusterName=herald-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
CommunicationParameters=NoInAddrAny
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
JobRequeue=1
KillWait=15
# A node whose slurmd stops answering is DOWN after 60 s (a lost node;
# Slurm's default is 300 s). A node declared DOWN cancels a hetjob despite
# --no-kill (Slurm 22.05, seen here): the lost-node case must end first.
SlurmdTimeout=60
MinJobAge=300
SchedulerType=sched/backfill
# Heterogeneous jobs start only from the backfill pass: run it every 2 s.
SchedulerParameters=bf_interval=2
CONF
  for ((n = 1; n <= nodes; n++)); do
    echo "NodeName=herald-node$n NodeHostname=$(hostname -s) NodeAddr=127.0.0.1" \
      "Port=$(_local_slurm_free_port) CPUs=8 RealMemory=4096 State=UNKNOWN" >> "$dir/slurm.conf"
  done
  echo "PartitionName=herald Nodes=herald-node[1-$nodes] Default=YES MaxTime=INFINITE" \
    "State=UP OverSubscribe=NO" >> "$dir/slurm.conf"
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" || { cat "$dir/log/slurmctld.log" >&2; return 1; }
  for ((n = 1; n <= nodes; n++)); do
    slurmd -f "$SLURM_CONF" -N "herald-node$n" ||
      { cat "$dir/log/slurmd-herald-node$n.log" >&2; return 1; }
  done
  local deadline=$((SECONDS + 30))
  while [ $SECONDS -lt $deadline ]; do
    [ "$(timeout 5 sinfo -h -N -o %t 2>/dev/null | grep -cE '^(idle|mix|alloc)$')" -eq "$nodes" ] &&
      return 0
    sleep 0.1
  done
  echo "local Slurm: not every node came up; the logs:" >&2
  tail -20 "$dir"/log/slurm*.log >&2
  sinfo -N -l >&2 || true
  return 1
}

local_slurm_down() {  # every daemon that wrote a pid file under DIR
  [ -n "$_local_slurm_dir" ] || return 0
  local pids=() file pid _
  for file in "$_local_slurm_dir"/*.pid "$_local_slurm_dir"/munge/munged.pid; do
    [ -s "$file" ] && pids+=("$(cat "$file")")
  done
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  _local_slurm_dir=""
}
