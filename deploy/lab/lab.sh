#!/usr/bin/env bash
# An emulated cluster on one machine: N hosts, each a network namespace with
# one NIC ("eth0", 198.18.0.<i>/24, the benchmarking range) on a bridge that
# lives in a namespace of its own. Nothing is connected to the machine's own
# interfaces. Each NIC can be shaped in both directions (tc tbf on the host's
# eth0 and on the bridge port facing it), so a host's link is a full-duplex
# bottleneck as on a real cluster. Needs root.
#
#   lab.sh up    [--name L] --hosts N [--link-gbps G] [--latency-us U] [--no-probe]
#   lab.sh shape [--name L] [--link-gbps G] [--latency-us U]   (re-shape every link; 0: unshaped)
#   lab.sh probe [--name L]              every host's link: measured TCP throughput both ways (iperf3)
#   lab.sh exec  [--name L] HOST CMD...  run CMD on host HOST (1..N); replaces this shell
#   lab.sh link  [--name L] HOST up|down take a host's NIC down (a failed link) or up again
#   lab.sh addr  HOST                    the address of host HOST
#   lab.sh stop  [--name L]              kill every process in the lab, keep the lab
#   lab.sh down  [--name L]              kill every process in the lab, remove it
#   lab.sh check                         exit 0 if namespaces can be made here, else say why
#
# L (default "hlab") prefixes every namespace: L-h1 .. L-hN and L-br.
# `up` removes a previous lab of the same name first and removes what it made
# if it fails. --latency-us needs the kernel's netem qdisc; where it is
# missing `up` and `shape` refuse a non-zero latency and say so.
set -euo pipefail

die() {
  echo "lab: $*" >&2
  exit 1
}

name=hlab
hosts=0
gbps=0
latency_us=0
probe=1
command=${1:-}
[ -n "$command" ] || die "no command (up, shape, probe, exec, link, addr, down, check)"
shift
while [ $# -gt 0 ]; do
  case $1 in
    --name) name=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --link-gbps) gbps=$2; shift 2 ;;
    --latency-us) latency_us=$2; shift 2 ;;
    --no-probe) probe=0; shift ;;
    *) break ;;
  esac
done

addr() { echo "198.18.0.$1"; }
host_ns() { echo "$name-h$1"; }
bridge_ns() { echo "$name-br"; }
lab_hosts() {  # the host numbers of the existing lab
  ip netns list | sed -n "s/^$name-h\([0-9]*\).*/\1/p" | sort -n
}

check() {
  [ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
  command -v ip > /dev/null || { echo "iproute2 (ip) is not installed"; return 1; }
  command -v tc > /dev/null || { echo "tc is not installed"; return 1; }
  local probe_ns="$name-check-$$"
  if ! err=$(ip netns add "$probe_ns" 2>&1); then
    echo "ip netns add failed: $err"
    return 1
  fi
  ip netns del "$probe_ns"
}

# Shapes one interface's egress: tbf at `gbps` (0: no rate limit) behind
# netem delay `latency_us` (0: none).
shape_dev() {  # ns dev
  local ns=$1 dev=$2
  tc -n "$ns" qdisc del dev "$dev" root 2> /dev/null || true
  local parent=root
  if [ "$latency_us" != 0 ]; then
    tc -n "$ns" qdisc add dev "$dev" root handle 1: netem delay "${latency_us}us" limit 100000 2> /dev/null ||
      die "--latency-us $latency_us: this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM); use --latency-us 0"
    parent="parent 1:1"
  fi
  if [ "$gbps" != 0 ]; then
    local mbit burst
    mbit=$(awk -v g="$gbps" 'BEGIN { printf "%d", g * 1000 }')
    [ "$mbit" -gt 0 ] || die "--link-gbps $gbps: below 1 Mb/s"
    # 2 ms of traffic, at least 256 KiB so 64 KiB GSO packets pass whole.
    burst=$(awk -v m="$mbit" 'BEGIN { b = m * 1e6 / 8 * 0.002; if (b < 262144) b = 262144; printf "%d", b }')
    # shellcheck disable=SC2086
    tc -n "$ns" qdisc add dev "$dev" $parent handle 10: tbf rate "${mbit}mbit" burst "$burst" latency 100ms
  fi
}

shape_all() {
  local h
  for h in $(lab_hosts); do
    shape_dev "$(host_ns "$h")" eth0
    shape_dev "$(bridge_ns)" "h$h"
  done
}

lab_namespaces() {
  ip netns list | awk '{print $1}' | grep -E "^$name-(h[0-9]+|br)$" || true
}

# Kills every process in the lab's namespaces and waits (bounded) until
# they are gone.
stop() {
  local ns pids _
  for _ in $(seq 1 50); do
    pids=""
    for ns in $(lab_namespaces); do
      pids="$pids $(ip netns pids "$ns" 2> /dev/null || true)"
    done
    [ -z "${pids// /}" ] && return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2> /dev/null || true
    sleep 0.1
  done
  die "stop: processes still running in the lab: $pids"
}

down() {
  local ns pids
  for ns in $(lab_namespaces); do
    pids=$(ip netns pids "$ns" 2> /dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -KILL $pids 2> /dev/null || true
    ip netns del "$ns" 2> /dev/null || true
  done
}

# One host's link, measured against host 1's (host 1's against host 2's):
# TCP both ways at once for `seconds`, next to the rate tc was given.
probe_link() {  # host seconds
  local h=$1 seconds=$2 peer=1 port=5201 result configured
  [ "$h" != 1 ] || peer=2
  local server client
  server=$(host_ns "$h")
  client=$(host_ns "$peer")
  ip netns exec "$server" iperf3 --server --one-off --bind "$(addr "$h")" --port "$port" > /dev/null 2>&1 &
  local server_pid=$!
  for _ in $(seq 1 100); do
    ip netns exec "$server" ss -ltn 2> /dev/null | grep -q ":$port " && break
    sleep 0.05
  done
  result=$(ip netns exec "$client" iperf3 --client "$(addr "$h")" --port "$port" --time "$seconds" --bidir --json) ||
    { kill "$server_pid" 2> /dev/null; die "probe: iperf3 to h$h failed"; }
  wait "$server_pid" 2> /dev/null || true
  configured=$(tc -n "$server" qdisc show dev eth0 | sed -n 's/.* rate \([^ ]*\).*/\1/p')
  python3 -c '
import json, sys
end = json.loads(sys.stdin.read())["end"]
h, peer, configured, seconds = sys.argv[1:5]
print("lab: link of h%s: configured %s; measured h%s->h%s %.3f Gb/s, h%s->h%s %.3f Gb/s"
      " (TCP both ways at once, iperf3, %s s)" % (
          h, configured or "unshaped", peer, h, end["sum_received"]["bits_per_second"] / 1e9,
          h, peer, end["sum_received_bidir_reverse"]["bits_per_second"] / 1e9, seconds))
' "$h" "$peer" "$configured" "$seconds" <<< "$result"
}

# Every host's link (1 s each).
probe() {
  command -v iperf3 > /dev/null || die "probe: iperf3 is not installed (deploy/install_deps.sh installs it)"
  local h
  for h in $(lab_hosts); do probe_link "$h" 1; done
}

case $command in
  check)
    if reason=$(check); then exit 0; fi
    echo "$reason"
    exit 1
    ;;
  addr)
    [ $# -eq 1 ] || die "addr HOST"
    addr "$1"
    ;;
  up)
    [ "$hosts" -ge 2 ] && [ "$hosts" -le 254 ] || die "--hosts: expected 2..254, got $hosts"
    reason=$(check) || die "cannot make network namespaces: $reason"
    down
    trap 'down' EXIT
    trap 'exit 130' INT TERM
    ip netns add "$(bridge_ns)"
    ip -n "$(bridge_ns)" link add br0 type bridge
    ip -n "$(bridge_ns)" link set br0 up
    for h in $(seq 1 "$hosts"); do
      ns=$(host_ns "$h")
      ip netns add "$ns"
      ip link add "h$h" netns "$(bridge_ns)" type veth peer name eth0 netns "$ns"
      ip -n "$(bridge_ns)" link set "h$h" master br0
      ip -n "$(bridge_ns)" link set "h$h" up
      ip -n "$ns" addr add "$(addr "$h")/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$ns" link set lo up
    done
    shape_all
    trap - EXIT INT TERM
    echo "lab: $hosts hosts up ($(addr 1) .. $(addr "$hosts")), namespaces $name-h1 .. $name-h$hosts"
    [ "$probe" = 0 ] || probe
    ;;
  shape)
    [ -n "$(lab_hosts)" ] || die "no lab named $name"
    shape_all
    echo "lab: links shaped to ${gbps} Gb/s, ${latency_us} us"
    ;;
  probe)
    probe
    ;;
  exec)
    [ $# -ge 2 ] || die "exec HOST CMD..."
    h=$1
    shift
    exec ip netns exec "$(host_ns "$h")" "$@"
    ;;
  link)
    [ $# -eq 2 ] || die "link HOST up|down"
    ip -n "$(host_ns "$1")" link set eth0 "$2"
    ;;
  stop)
    stop
    ;;
  down)
    down
    ;;
  *)
    die "unknown command '$command'"
    ;;
esac
