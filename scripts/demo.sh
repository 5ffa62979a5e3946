#!/usr/bin/env bash
# The main job, end to end on this machine: starts the servers, runs real work through them and
# prints what happened. Everything runs on loopback and is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
. scripts/lib.sh
say() { printf '\n== %s\n' "$*"; }

say "pace-kv: the shared cache, with a temporary store"
"$BIN/pace-kv" --listen=127.0.0.1:0 --storage="$work/kv" --max-disk=1GiB --max-memory=64MiB \
  --metrics=127.0.0.1:0 2>"$work/kv.log" &
pids+=($!)
ready=$(wait_ready "$work/kv.log" "pace-kv ready")
kv=$(echo "$ready" | field listen); metrics=$(echo "$ready" | field metrics)
echo "pace-kv listening on $kv (metrics on $metrics)"

ctl() { "$BIN/pacectl" --addr="$kv" "$@"; }
printf 'int answer(void) { return 42; }\n' > "$work/a.c"
gcc -c "$work/a.c" -o "$work/a.o"
head -c 65536 /dev/urandom > "$work/blob"
ctl cache-store demo-object "$work/a.o"
ctl cache-store demo-blob "$work/blob"
ctl cache-fetch demo-object > "$work/a.fetched.o"
cmp "$work/a.o" "$work/a.fetched.o" && echo "fetched demo-object: byte-identical to what was stored"
ctl cache-fetch demo-blob | cmp - "$work/blob" && echo "fetched demo-blob: 64 KiB, byte-identical"
ctl cache-drop demo-blob
ctl cache-fetch demo-blob 2>&1 || true
echo "pace-kv counters:"
curl -fs "http://$metrics/metrics" | grep -E '^pace_(kv_hits|kv_misses|items|bytes_used|connections)_total|^pace_(items|bytes_used) '

say "pace-node: this machine's whole fleet (cache tier reading through to pace-kv, scheduler, worker)"
"$BIN/pace-node" --cluster-dir="$work/node" --listen-node=127.0.0.1:0 --listen-raft=127.0.0.1:0 \
  --admin-listen=127.0.0.1:0 --slots=2 --cache-memory=256MiB --cache-dir="$work/tier" \
  --upstream="$kv" --discovery=off 2>"$work/node.log" &
pids+=($!)
ready=$(wait_ready "$work/node.log" "pace-node ready")
node=$(echo "$ready" | field node-port); admin=$(echo "$ready" | field admin)
echo "$ready" | sed 's/^.*msg="//; s/"$//' | fold -s -w 100
nodemetric() { curl -fs "http://$admin/metrics" | awk -v s="$1" '$1 == s { print $2 }'; }
for _ in $(seq 300); do
  [ "$(nodemetric pace_dispatch_worker_registrations_total)" != "0" ] && break
  sleep 0.1
done
grep -m3 'serving toolchain' "$work/node.log" | sed 's/^.*msg="//; s/" / /' || true

lua_tarball=$(corpus_file lua5.4_5.4.4.orig.tar.gz)
[ -n "$lua_tarball" ] || { echo "testdata/corpus has no Lua tarball" >&2; exit 1; }
mkdir -p "$work/lua" "$work/home"
tar -xzf "$lua_tarball" -C "$work/lua" --strip-components=1
export HOME=$work/home PACE_ADDR=$node
build_lua() { # build_lua LABEL [VAR=value...]: a clean Lua build through pace-cc, timed
  local label=$1; shift
  make -s -C "$work/lua" clean >/dev/null
  local t0=$(date +%s.%N)
  env "$@" make -s -C "$work/lua" -j2 posix CC="$BIN/pace-cc gcc" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log" >&2; exit 1; }
  awk -v a="$t0" -v b="$(date +%s.%N)" -v l="$label" 'BEGIN { printf "%s: %.1f s\n", l, b - a }'
}

say "Lua 5.4, first build: every miss leased from the node's scheduler and compiled by its worker"
"$BIN/pace-cc" --zero-stats >/dev/null
build_lua "build 1 (cold cache, dispatched)" PACE_SCHEDULER="$node"
"$BIN/pace-cc" --show-stats

say "Lua 5.4, second build from clean: every compile a hit from the node's tier"
"$BIN/pace-cc" --zero-stats >/dev/null
build_lua "build 2 (warm cache)"
"$BIN/pace-cc" --show-stats
"$work/lua/src/lua" -e 'print("the Lua built through pace says: " .. _VERSION)'

say "pace-node counters"
curl -fs "http://$admin/metrics" | grep -E '^pace_(dispatch_leases_(granted|released)|dispatch_lease_refusals|worker_jobs_(completed|failed)|node_cache_(hits|misses|stores)|tier_upstream_(hits|misses|stores))[a-z_]*(_total)? ' || true
echo "pace-kv counters (the shared tier behind the node):"
curl -fs "http://$metrics/metrics" | grep -E '^pace_(kv_hits|kv_misses)_total|^pace_items ' || true

say "pace across machines: four machines on one segment, each a network namespace of this host"
go build -o "$work/fleetbin/" ./bench/netlab 2>"$work/netlab-build.log" || { cat "$work/netlab-build.log" >&2; exit 1; }
B=$BIN NETLAB=$work/fleetbin/netlab
. scripts/fleetlib.sh
export PACE_NODE_SHARED_CPU=1 # the "machines" share this host's CPU: its busy share is not theirs
NODE_FLAGS=(--dashboard)      # each node's admin surface (loopback, in its namespace) serves /fleet
lab_up "demo$$" v1,v2,v3,client
start_machine v1 --slots=2
sleep 1.1 # the others' clusters of one are younger: they yield to v1's
echo "v1 founded a fleet of one at $(addr v1); v2, v3 and client start with nothing configured:"
echo "discovery (UDP beacons on every interface's broadcast, a challenge and a signed proof) finds the fleet"
for h in v2 v3; do start_machine "$h" --slots=2; done
start_machine client --slots=0
for _ in $(seq 450); do # beacons go every 15 s: a few rounds at most
  list=$(operator v1 --enroll-list 2>/dev/null || true)
  grep -q -- "--enroll-approve=v2@" <<<"$list" && grep -q -- "--enroll-approve=v3@" <<<"$list" &&
    grep -q -- "--enroll-approve=client@" <<<"$list" && break
  sleep 0.2
done
echo "\$ pace-node --scheduler=$(addr v1):6674 --enroll-list"
operator v1 --enroll-list | sed 's/^/  /'
for h in v2 v3 client; do
  echo "\$ pace-node --scheduler=$(addr v1):6674 --enroll-approve=$h@$(key "$h")"
  operator v1 --enroll-approve="$h@$(key "$h")" >/dev/null
done
echo "approved machines join as learners; voting is an operator's --cluster-admit:"
for h in v2 v3; do
  # A learner is promoted once the leader hears it over its consensus link; until then the
  # promotion is refused (it would count a silent voter toward the quorum), so it is retried.
  echo "\$ pace-node --scheduler=$(addr v1):6674 --cluster-admit=$h=$(addr "$h"):6680@$(key "$h")"
  for i in $(seq 150); do
    out=$(operator v1 --cluster-admit="$h=$(addr "$h"):6680@$(key "$h")" 2>&1) && break
    [ "$i" = 150 ] && { echo "$out" >&2; exit 1; }
    sleep 0.2
  done
  echo "$out" | sed 's/^/  /'
done
wait_voters 3 v1
echo "\$ pace-node --scheduler=$(addr v1):6674 --cluster-status"
operator v1 --cluster-status | sed 's/^/  /'

say "Lua 5.4 built on the client, whose node runs no worker: every compile leased and sent to the voters; the leader is killed with -9 mid-build"
mkdir -p "$work/lua-plain" "$work/lua-fleet" "$work/home-fleet"
tar -xzf "$lua_tarball" -C "$work/lua-plain" --strip-components=1
tar -xzf "$lua_tarball" -C "$work/lua-fleet" --strip-components=1
make -s -C "$work/lua-plain" -j2 posix >/dev/null 2>&1
lead=$(leader)
inns client env HOME="$work/home-fleet" PACE_ADDR=127.0.0.1:6674 PACE_SCHEDULER=127.0.0.1:6674 \
  make -s -C "$work/lua-fleet" -j2 posix CC="$BIN/pace-cc gcc" >"$work/fleet-build.log" 2>&1 &
build=$!
for _ in $(seq 600); do
  [ "$(node_metric "$lead" pace_dispatch_leases_granted_total)" -ge 4 ] && break
  sleep 0.1
done
echo "the leader, $lead, has granted $(node_metric "$lead" pace_dispatch_leases_granted_total) leases: kill -9 $lead"
kill_machine "$lead"
wait "$build" || { cat "$work/fleet-build.log" >&2; exit 1; }
VOTERS=$(for h in v1 v2 v3; do [ "$h" != "$lead" ] && printf '%s ' "$h"; done)
echo "the build finished; the new leader is $(leader)"
for h in v1 v2 v3; do
  [ "$h" = "$lead" ] && { echo "  $h: killed mid-build"; continue; }
  echo "  $h: $(node_metric "$h" pace_worker_jobs_completed_total) compiles done, $(node_metric "$h" pace_dispatch_leases_granted_total) leases granted as leader"
done
same=0 total=0
for o in "$work/lua-plain/src/"*.o; do
  total=$((total + 1)); cmp -s "$o" "$work/lua-fleet/src/${o##*/}" && same=$((same + 1))
done
echo "$same of $total objects byte-identical to plain gcc's"
[ "$same" = "$total" ] || exit 1
"$work/lua-fleet/src/lua" -e 'print("the Lua built across machines says: " .. _VERSION)'
start_machine "$lead" --slots=2
echo "$lead restarted: a voter of the fleet again"
wait_voters 3 "$(leader)"

# Every nix below (the worker's, and the demo's own) runs with the repository's configuration:
# Debian's nix-bin ships none that builds (no build users, no sandbox shell).
export NIX_CONF_DIR=$PWD/scripts/nix NIX_USER_CONF_FILES=

say "gradient-server: the Nix CI's server, its state in SQLite under a temporary data directory"
"$BIN/gradient-server" --listen=127.0.0.1:0 --metrics=127.0.0.1:0 --ui-listen=127.0.0.1:0 --data-dir="$work/gradient" \
  --poll-interval=1s 2>"$work/gradient.log" &
pids+=($!)
ready=$(wait_ready "$work/gradient.log" "gradient-server ready")
export GRADIENT_SERVER="http://$(echo "$ready" | field listen)"
gmetrics=$(echo "$ready" | field metrics)
export GRADIENT_API_KEY=$("$BIN/gradient-server" admin bootstrap --data-dir="$work/gradient" --owner=demo --json | jq -r .key)
echo "listening on $GRADIENT_SERVER; first API key created (admin bootstrap)"
admin() { "$BIN/gradient-server" admin "$@"; }

say "the bundled example flake (examples/gradient-flake) in a fresh git repository"
repo=$work/flake
cp -r examples/gradient-flake "$repo"
head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$repo/nonce" # every run really builds
git -C "$repo" init -q && git -C "$repo" add -A
git -C "$repo" -c user.name=demo -c user.email=demo@localhost commit -qm "demo flake"
commit=$(git -C "$repo" rev-parse HEAD)
system=$(nix-instantiate --eval --expr builtins.currentSystem | tr -d '"')
admin project create demo --repo-url="file://$repo" --wildcard="packages.$system.*"
admin cache create demo-cache --public
admin cache subscribe demo demo-cache

say "the forge: commit statuses go to a stand-in for GitHub's API on loopback (bench/fakeforge)"
go build -o "$work/fleetbin/" ./bench/fakeforge 2>"$work/fakeforge-build.log" || { cat "$work/fakeforge-build.log" >&2; exit 1; }
echo demo-forge-token >"$work/forge-token"
"$work/fleetbin/fakeforge" --token-file="$work/forge-token" --fail-first=1 >"$work/forge.out" 2>&1 &
pids+=($!)
forge=$(wait_ready "$work/forge.out" "fakeforge ready" $! | field url)
admin project status demo --forge=github --api-url="$forge" --repo=demo/flake --token-file="$work/forge-token"
admin project set demo --poll on
echo "project demo follows its default branch, polled every second; statuses go to $forge"
worker_id=$(cat /proc/sys/kernel/random/uuid)
admin worker register "$worker_id" --project=demo --name=demo-worker --json | jq -r .peers_file_line > "$work/peers"
chmod 600 "$work/peers"
echo "registered worker $worker_id for project demo (its token is in a 0600 peers file)"

say "gradient-worker: fetches, evaluates and builds with this machine's Nix"
GRADIENT_WORKER_ID=$worker_id "$BIN/gradient-worker" --server="ws://${GRADIENT_SERVER#http://}/proto" \
  --base-dir="$work/worker" --peers-file="$work/peers" 2>"$work/worker.log" &
pids+=($!)
# eval_of COMMIT: the id of the evaluation a trigger started for COMMIT, waiting up to 30 s.
eval_of() {
  local id=""
  for _ in $(seq 300); do
    id=$(admin eval list demo --json | jq -r --arg c "$1" 'first(.evaluations[] | select(.commit == $c) | .id) // empty')
    [ -n "$id" ] && break
    sleep 0.1
  done
  [ -n "$id" ] || { echo "no evaluation of $1 started; server log:" >&2; tail -20 "$work/gradient.log" >&2; exit 1; }
  echo "$id"
}
# settle ID: waits for the evaluation to end; it must complete.
settle() {
  local status=""
  for _ in $(seq 600); do
    status=$(admin eval show "$1" --json | jq -r .evaluation.status)
    case $status in Completed|Failed|Aborted) break ;; esac
    sleep 0.5
  done
  [ "$status" = Completed ] || { echo "evaluation ended $status; worker log:" >&2; tail -20 "$work/worker.log" >&2; exit 1; }
}
eval_id=$(eval_of "$commit")
echo "evaluation $eval_id of $commit started by the server's poll of the repository (no eval start)"
settle "$eval_id"
admin eval show "$eval_id"
report=$(admin eval show "$eval_id" --json | jq -r '.builds[] | select(.drv_path | endswith("-report.drv")) | .id')
echo; echo "log of the report build:"
admin build log "$report"

say "what the server's cache holds now (each NAR verified against its hash when it arrived)"
admin cache paths demo-cache
admin worker list

say "plain Nix substitutes from the same cache: nix copy into a fresh store, signature checked"
key=$(admin cache key demo-cache)
out=$(admin cache paths demo-cache --json | jq -r '.paths[].store_path | select(endswith("-report"))')
echo "trusted-public-keys = $key"
HOME=$work/nixhome XDG_CACHE_HOME=$work/nixhome/cache nix --extra-experimental-features nix-command copy \
  --from "$GRADIENT_SERVER/cache/demo-cache" --store "$work/nixstore" --option substituters '' \
  --option trusted-public-keys "$key" "$out"
echo "copied $out into $work/nixstore, which now holds:"
cat "$work/nixstore$out"

say "a push starts an evaluation by itself"
git -C "$repo" -c user.name=demo -c user.email=demo@localhost commit -q --allow-empty -m "second commit"
second=$(git -C "$repo" rev-parse HEAD)
t0=$(date +%s.%N)
eval2=$(eval_of "$second")
awk -v a="$t0" -v b="$(date +%s.%N)" -v c="$second" -v e="$eval2" 'BEGIN { printf "pushed %s; evaluation %s started %.1f s later\n", c, e, b - a }'
settle "$eval2"
admin eval list demo
echo; echo "what the forge received (GitHub's POST /repos/demo/flake/statuses/{sha}; it answered the first 500, and the retry carried the state by then current):"
for _ in $(seq 100); do [ "$(grep -c 'state=success' "$work/forge.out")" -ge 2 ] && break; sleep 0.1; done
grep -v '^fakeforge ready' "$work/forge.out" | sed 's/^/  /'

say "gradient-server counters"
curl -fs "http://$gmetrics/metrics" | grep -E '^gradient_(sessions_started|jobs_(assigned|completed|failed)|cache_(queries|uploads_committed|committed_bytes|sessions_started))_total ' || true

say "gradient's web UI (its own listener; the link signs in once, as the demo's key)"
gui=$(grep -m1 "web UI ready" "$work/gradient.log" | field ui)
link=$(curl -fsS -X POST -H "Authorization: $GRADIENT_API_KEY" "$gui/signin/link")
echo "web UI: $gui  (evaluation: $gui/evaluations/$eval_id)"
echo "sign in once: $gui$link"

say "pace's fleet dashboard, served by the fleet's leader"
lead=$(leader)
"$NETLAB" forward --name="demo$$" "$lead" 127.0.0.1:9260 >"$work/forward.txt" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q '^listen=' "$work/forward.txt" 2>/dev/null && break; sleep 0.1; done
dash=$(sed -n 's/^listen=//p' "$work/forward.txt")
echo "dashboard: http://$dash/fleet  (the leader $lead's --admin-listen=127.0.0.1:9260, carried out of its namespace)"
echo "the fleet as text, http://$dash/fleet.txt:"
curl -fsS "http://$dash/fleet.txt" | sed 's/^/  /'
if [ -n "${KEEP:-}" ]; then
  echo; echo "KEEP is set: serving until interrupted (Ctrl-C stops everything)"
  while :; do sleep 3600; done
fi
