# Sourced after lib.sh by the scripts that run pace across machines on this one host (the demo,
# scripts/bench-fleet.sh): every machine is a network namespace of a netlab lab, with its own
# address on one bridge (bench/netlab, over the same internal/pace/netlab the fleet tests use),
# and pace-node runs there on its default ports, as it would on a machine of its own. Needs root
# and B, the directory holding pace-node (and netlab, unless NETLAB names it). NODE_FLAGS are
# added to every node started.

# lab_up NAME HOSTS: makes the lab (HOSTS comma-separated); it is removed on exit, with what
# still runs in it.
lab_up() {
  lab=$1
  "${NETLAB:-$B/netlab}" up --name="$lab" --hosts="$2" >"$work/lab.txt"
  # The nodes are stopped first (SIGTERM, as lib.sh stops any daemon); down then kills whatever
  # is left in the namespaces and removes them; cleanup removes the work directory last.
  trap '[ -n "${KEEP_LOGS:-}" ] && tail -n 30 "$work"/*.log; for p in "${pids[@]}"; do stop_pid "$p"; done
    "${NETLAB:-$B/netlab}" down --name="$lab" >/dev/null 2>&1 || true; cleanup' EXIT
}
addr() { awk -v h="$1" '$1 == "host="h { sub("addr=", "", $3); print $3 }' "$work/lab.txt"; }
ns() { awk -v h="$1" '$1 == "host="h { sub("ns=", "", $2); print $2 }' "$work/lab.txt"; }
inns() { local h=$1; shift; ip netns exec "$(ns "$h")" "$@"; }

# start_machine NAME FLAGS...: pace-node on host NAME (state in $work/NAME, log in
# $work/NAME.log); waits for its ready line. Its PID is in pid_NAME; kill_machine NAME is kill -9.
start_machine() {
  local h=$1; shift
  # ip netns exec execs pace-node in its own process: $! is the node, which kill -9 must reach.
  ip netns exec "$(ns "$h")" "$B/pace-node" --cluster-dir="$work/$h" --node-id="$h" --advertise="$(addr "$h"):6674" \
    --raft-self="$(addr "$h")" --cache-memory=64MiB --admin-listen=127.0.0.1:9260 ${NODE_FLAGS[@]+"${NODE_FLAGS[@]}"} "$@" 2>>"$work/$h.log" &
  eval "pid_$h=$!"
  pids+=($!)
  wait_ready "$work/$h.log" "pace-node ready" $! >/dev/null
}
kill_machine() {
  local pid; pid=$(eval echo "\$pid_$1")
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true # reaped here, so the shell reports no "Killed" job later
}
# key NAME: the identity key of host NAME's node (minted on first use, as a first start would).
key() { inns "$1" "$B/pace-node" --cluster-dir="$work/$1" --node-id="$1" --print-identity | awk '/public-key/ {print $2}'; }
# operator NAME VERB...: a cluster verb sent to NAME's node port, typed on the first host.
operator() { inns "${OPERATOR_HOST:-v1}" "$B/pace-node" --scheduler="$(addr "$1"):6674" "${@:2}"; }
# leader: the voter the fleet says leads, asked of each of VOTERS in turn, once one knows.
leader() {
  local h l
  for _ in $(seq 150); do
    for h in ${VOTERS:-v1 v2 v3}; do
      l=$(inns "$h" "$B/pace-node" --scheduler="$(addr "$h"):6674" --cluster-status 2>/dev/null | awk 'NR == 1 { print $8 }') || true
      [ -n "$l" ] && { echo "$l"; return 0; }
    done
    sleep 0.2
  done
  echo "no leader among ${VOTERS:-v1 v2 v3}" >&2; return 1
}
# wait_voters N AT: waits until the fleet's status, asked at AT, lists N voters.
wait_voters() {
  for _ in $(seq 300); do
    [ "$(operator "$2" --cluster-status 2>/dev/null | grep -c ' voter ')" = "$1" ] && return 0
    sleep 0.2
  done
  echo "the fleet never listed $1 voters" >&2; operator "$2" --cluster-status >&2; return 1
}
# node_metric NAME SERIES: one series of host NAME's /metrics (admin port 9260), summed.
node_metric() {
  inns "$1" curl -fs http://127.0.0.1:9260/metrics 2>/dev/null | awk -v s="$2" '$1 == s || index($1, s "{") == 1 { t += $2 } END { print t + 0 }'
}
