# Sourced by the scripts that start a local cluster (deploy/local/quickstart.sh,
# train_local.sh, bench/*.sh): the two waits every one of them needs, each
# bounded (30 s by default, HERALD_WAIT_TENTHS tenths of a second).
#
#   herald_wait_for_file FILE     until FILE is non-empty (a port file);
#                                 returns 1 if it never is
#   herald_wait_for_nodes N CMD…  until `CMD… nodes` lists N nodes alive
#                                 (CMD: heraldctl and its --scheduler and
#                                 token flags); returns 1 if they never do

herald_wait_for_file() {
  local _
  for _ in $(seq 1 "${HERALD_WAIT_TENTHS:-300}"); do
    [ -s "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

herald_wait_for_nodes() {
  local want=$1 _
  shift
  for _ in $(seq 1 "${HERALD_WAIT_TENTHS:-300}"); do
    [ "$("$@" nodes 2>/dev/null | grep -c ' alive$' || true)" -ge "$want" ] && return 0
    sleep 0.1
  done
  return 1
}
