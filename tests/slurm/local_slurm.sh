# Sourced by tests/slurm/slurm_cluster_test.sh: a real one-node Slurm on
# this machine, private to the caller. Debian's munged, slurmctld and slurmd
# run as root from configuration under a directory of the caller's, so
# nothing in /etc is touched.
#
#   local_slurm_up DIR   start munged, slurmctld and slurmd with state, logs
#                        and sockets in DIR; exports SLURM_CONF; returns 1
#                        (their logs printed) if the node never comes up
#   local_slurm_down     stop them (bounded); safe to call twice
#
# The node: NodeName=herald-node1, NodeAddr=127.0.0.1, 8 CPUs declared
# (config_overrides: more than this machine has, so 2 PS shards, 2 workers
# and the batch step fit), proctrack/linuxproc and task/none (no cgroups).
# Every daemon binds 127.0.0.1 only (CommunicationParameters=NoInAddrAny);
# the ports are picked free.

_local_slurm_pids=()

_local_slurm_free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

local_slurm_up() {
  local dir=$1
  mkdir -p "$dir"/{state,spool,log,munge}
  chmod 711 "$dir/munge"
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  local socket=$dir/munge/munge.socket
  munged --force --key-file="$dir/munge/munge.key" --socket="$socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" || return 1
  _local_slurm_pids+=("$(cat "$dir/munge/munged.pid")")

  local ctld_port slurmd_port
  ctld_port=$(_local_slurm_free_port)
  slurmd_port=$(_local_slurm_free_port)
  cat > "$dir/slurm.conf" <<CONF
ClusterName=herald-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
CommunicationParameters=NoInAddrAny
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
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
MinJobAge=300
SchedulerType=sched/backfill
NodeName=herald-node1 NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=8 RealMemory=4096 State=UNKNOWN
PartitionName=herald Nodes=herald-node1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" || { cat "$dir/log/slurmctld.log" >&2; return 1; }
  slurmd -f "$SLURM_CONF" -N herald-node1 || { cat "$dir/log/slurmd.log" >&2; return 1; }
  local deadline=$((SECONDS + 30))
  while [ $SECONDS -lt $deadline ]; do
    [ -s "$dir/slurmctld.pid" ] && [ -s "$dir/slurmd.pid" ] &&
      timeout 5 sinfo -h -n herald-node1 -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)$' && {
        _local_slurm_pids+=("$(cat "$dir/slurmd.pid")" "$(cat "$dir/slurmctld.pid")")
        return 0
      }
    sleep 0.1
  done
  echo "local Slurm: the node never came up; its logs:" >&2
  tail -20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2
  sinfo -N -l >&2 || true
  return 1
}

local_slurm_down() {
  local pid _
  for pid in "${_local_slurm_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${_local_slurm_pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  _local_slurm_pids=()
}
