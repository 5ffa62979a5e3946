#!/usr/bin/env bash
# pace-node dispatch against its performance goals, all on loopback in this one run:
#   1. LEASE+RELEASE round trips per second against one pace-node from CONNS (16) concurrent
#      clients (bench/leaseload), goal >= 20,000/s. Two modes: persistent connections (one for
#      LEASE, one for RELEASE per client: the scheduler's own rate) and a fresh TCP connection
#      per LEASE and per RELEASE (what pace-cc does). Best of ROUNDS runs of DURATION each. After
#      every run the node's lease counters are checked against the client's count, and the
#      node's own CPU time per round trip is read from /proc (the clients share the cores).
#      Each node run is followed at once by the same client against `leaseload -serve-canned`,
#      a server that answers with one real grant and neither schedules nor signs: the floor this
#      machine and client set, so node/floor says what the node itself costs. Then the Go
#      benchmarks of bench_rt_test.go and bench_test.go in internal/pace/scheduler: one lease
#      signature, one in-process decision, and round trips over loopback to a minimal frame loop.
#   2. Per-TU overhead of a dispatched compile over a local one, Redis 7.0.15, goal: overhead
#      <= 2x the local preprocess cost per TU. One make -j$(nproc) build (MALLOC=libc; deps
#      hiredis, linenoise, lua, hdr_histogram and src, every compile through CC) records each
#      compile's argv and directory through a small CC wrapper. Then every recorded compile is
#      replayed in build order, one at a time, four ways back to back: plain gcc; preprocess
#      only (-E -o /dev/null in place of -c/-o and the depfile flags); `pace-cc gcc` compiling
#      here (no PACE_SCHEDULER); `pace-cc gcc` with dispatch, leased and compiled by a node's
#      worker over loopback (--slots=2). Both pace-cc runs are misses against a fresh node tier
#      each (fresh state, cache and HOME). Back to back, whatever else loads the machine weighs
#      on all four alike. Two overheads are reported, each against the preprocess-only time:
#      dispatched minus compiled-here (what dispatch itself costs: preprocessing for dispatch,
#      LEASE, compression, COMPILE, RELEASE) and dispatched minus plain gcc (which also counts
#      the cache's key probe, FETCH and STORE), over the TUs dispatched in every round; a TU
#      whose remote compile printed diagnostics is compiled here again by design and is
#      reported apart. Redis compiles with -g, which pace-cc dispatches only with
#      -gno-column-info, so the build adds CFLAGS=-gno-column-info. TU_ROUNDS > 1 replays again
#      against fresh nodes and keeps each TU's fastest of each way.
# Knobs (environment): ROUNDS=3 DURATION=3s CONNS=16 TU_ROUNDS=1 PACE_CORPUS=<dir with Redis>,
# ONLY=lease or ONLY=tu to run one part.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-3s}
CONNS=${CONNS:-16}
TU_ROUNDS=${TU_ROUNDS:-1}
ONLY=${ONLY:-}
REPO=$PWD
export LC_ALL=C
. scripts/lib.sh
REDIS=$(corpus_file redis_7.0.15.orig.tar.gz)
if [ -z "$REDIS" ] && [ "$ONLY" != lease ]; then
  echo "bench-dispatch: skipping the per-TU part: it builds Redis; put redis_7.0.15.orig.tar.gz in a directory and name it in PACE_CORPUS (testdata/corpus/README.md)"
  [ "$ONLY" = tu ] && exit 0
  ONLY=lease
fi
failed=0 # a counter check that did not hold: reported where it happened, and the exit status

go build -o bin/ ./cmd/pace-node ./cmd/pace-cc
go build -o "$work/leaseload" ./bench/leaseload

# start_node NAME FLAGS...: a pace-node on loopback with its state in $work/NAME; sets node_pid,
# node_addr and node_admin, and returns once its worker has registered with its scheduler.
start_node() {
  local name=$1 ready=""; shift
  bin/pace-node --cluster-dir="$work/$name" --listen-node=127.0.0.1:0 --listen-raft=127.0.0.1:0 \
    --admin-listen=127.0.0.1:0 --toolchain=gcc "$@" 2>"$work/$name.log" &
  node_pid=$!
  pids+=("$node_pid")
  ready=$(wait_ready "$work/$name.log" "pace-node ready" "$node_pid")
  node_addr=$(echo "$ready" | field node-port)
  node_admin=$(echo "$ready" | field admin)
  for _ in $(seq 300); do
    [ "$(node_metric pace_dispatch_worker_registrations_total)" -ge 1 ] 2>/dev/null && return 0
    sleep 0.1
  done
  echo "pace-node $name: no worker registered" >&2; cat "$work/$name.log" >&2; return 1
}
stop_node() { stop_pid "$node_pid"; }
node_metric() { curl -fs "http://$node_admin/metrics" | awk -v s="$1" '$1 == s { printf "%d", $2 }'; }
# lease_counters: the node's granted and released totals, and every LEASE/RELEASE refusal it
# counts (unknown-lease is counted only when the token is not the cluster's: none here).
lease_counters() {
  curl -fs "http://$node_admin/metrics" | awk '
    $1 == "pace_dispatch_leases_granted_total" { g = $2 }
    $1 == "pace_dispatch_leases_released_total" { r = $2 }
    $1 ~ /^pace_dispatch_leases_(all_excluded|duplicate|field_too_long|malformed|no_capacity|no_worker|withdrawn|unauthorized|released_late)_total$/ { x += $2 }
    END { printf "%d %d %d\n", g, r, x }'
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# code_sum: the total of a code:n,code:n list ("-" is none).
code_sum() { tr ',' '\n' | awk -F: 'NF == 2 { s += $2 } END { printf "%d", s }'; }
load() { uptime | sed 's/.*load average/load average/'; }

echo "pace-node dispatch on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') ($(gcc --version | head -1))"

### 1. LEASE+RELEASE round trips.
# node_run FLAG: one leaseload run against the node; prints its line (with the node's CPU time
# per round trip) and sets run_rate; a counter mismatch is reported and fails the script.
node_run() {
  local line g0 r0 x0 g1 r1 x1 t0 t1 rts cg cr cx node_us
  read -r g0 r0 x0 < <(lease_counters); t0=$(cpu_ticks "$node_pid")
  line=$("$work/leaseload" -addr="$node_addr" -fingerprint="$fp" -conns="$CONNS" -duration="$DURATION" "$@")
  read -r g1 r1 x1 < <(lease_counters); t1=$(cpu_ticks "$node_pid")
  rts=$(echo "$line" | field roundtrips); cg=$(echo "$line" | field granted); cr=$(echo "$line" | field released)
  cx=$(( $(echo "$line" | field lease_refused | code_sum) + $(echo "$line" | field release_refused | code_sum) ))
  node_us=$(awk -v t=$((t1 - t0)) -v hz="$tck" -v n="$rts" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
  echo "    node:   $line node_cpu_us_per_rt=$node_us [$(load)]"
  if [ $((g1 - g0)) -ne "$cg" ] || [ $((r1 - r0)) -ne "$cr" ] || [ $((x1 - x0)) -ne "$cx" ]; then
    echo "    MISMATCH: node counted granted +$((g1 - g0)) released +$((r1 - r0)) refused +$((x1 - x0)); client granted $cg released $cr refused $cx"
    failed=1
  fi
  run_rate=$(echo "$line" | field 'roundtrips/s')
}

# floor_run FLAG: the same client against the canned server; sets run_rate.
floor_run() {
  local line t0 t1 server_us
  t0=$(cpu_ticks "$canned_pid")
  line=$("$work/leaseload" -addr="$canned_addr" -fingerprint="$fp" -conns="$CONNS" -duration="$DURATION" "$@")
  t1=$(cpu_ticks "$canned_pid")
  server_us=$(awk -v t=$((t1 - t0)) -v hz="$tck" -v n="$(echo "$line" | field roundtrips)" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
  echo "    canned: $(echo "$line" | cut -d' ' -f1-5) client_cpu_us_per_rt=$(echo "$line" | field client_cpu_us_per_rt) server_cpu_us_per_rt=$server_us [$(load)]"
  run_rate=$(echo "$line" | field 'roundtrips/s')
}

# lease_mode MODE: ROUNDS runs against the node, each followed at once by one against the
# canned server; sets best_rate (the node's best) and prints both bests and their ratio.
lease_mode() {
  local mode=$1 flags=() node_best=0 floor_best=0
  [ "$mode" = fresh-conns ] && flags=(-fresh-conns)
  for round in $(seq "$ROUNDS"); do
    echo "  run $round:"
    node_run "${flags[@]}"; [ "$run_rate" -gt "$node_best" ] && node_best=$run_rate
    floor_run "${flags[@]}"; [ "$run_rate" -gt "$floor_best" ] && floor_best=$run_rate
  done
  echo "  best: node $node_best/s, canned floor $floor_best/s, node/floor $(awk -v a="$node_best" -v b="$floor_best" 'BEGIN { printf "%.2f", a / b }')"
  best_rate=$node_best
}

# start_canned: leaseload -serve-canned on loopback with one grant taken from the node; sets
# canned_pid and canned_addr.
start_canned() {
  "$work/leaseload" -addr="$node_addr" -fingerprint="$fp" -serve-canned=127.0.0.1:0 >"$work/canned.out" 2>&1 &
  canned_pid=$!
  pids+=("$canned_pid")
  for _ in $(seq 100); do
    canned_addr=$(sed -n 's/^canned-listen=//p' "$work/canned.out")
    [ -n "$canned_addr" ] && return 0
    sleep 0.1
  done
  echo "leaseload -serve-canned did not start:" >&2; cat "$work/canned.out" >&2; return 1
}

lease_part() {
  local slots=64 # more than CONNS: no LEASE may be refused for capacity
  start_node lease --slots=$slots
  grep -q " slots=$slots " "$work/lease.log" ||
    { echo "pace-node did not take --slots=$slots:" >&2; grep -m1 "ready" "$work/lease.log" >&2; exit 1; }
  fp=$(HOME=$work bin/pace-cc --print-toolchain-fingerprint gcc | awk '{ print $1 }')
  tck=$(getconf CLK_TCK)
  start_canned
  printf '\nLEASE+RELEASE round trips: %d clients, --slots=%d, best of %d x %s (goal >= 20000/s)\n' "$CONNS" "$slots" "$ROUNDS" "$DURATION"
  echo "  each run against the node is followed by one against the canned floor (same client, a server that neither schedules nor signs)"
  echo "persistent connections:"
  lease_mode persistent
  persistent_best=$best_rate
  echo "a fresh connection per LEASE and per RELEASE (pace-cc's pattern):"
  lease_mode fresh-conns
  fresh_best=$best_rate
  if [ "$failed" = 0 ]; then
    echo "  check: after every node run its granted and released counters had moved by exactly the client's counts, its refusal counters by the client's refusals"
  fi
  stop_pid "$canned_pid"
  stop_node
  echo "in process (internal/pace/scheduler): one Ed25519 lease signature; one LEASE+RELEASE decided (trivial signer, 16"
  echo "goroutines); and 16 clients over loopback against a minimal frame loop in the same process (canned grant, the"
  echo "scheduler with a trivial signer, the scheduler signing with Ed25519):"
  go test -run='^$' -bench='^Benchmark(LeaseSign|LeaseRelease|LoopbackLeaseRelease)$' -benchtime=1s ./internal/pace/scheduler/ 2>&1 |
    grep -E '^(Benchmark|FAIL)' | sed 's/^/  /'
}

### 2. Per-TU dispatch overhead on Redis.
# record_build: unpacks Redis into $work/redis and builds it once through cc-log, which appends
# each compile's directory, source and argv to $work/build.tsv.
record_build() {
  cat > "$work/cc-log" <<'EOF'
#!/usr/bin/env bash
# cc-log LOG COMPILER ARGS...: runs the compiler; a compile (-c of a .c file) also appends to
# LOG its directory, source and quoted argv (one short write per line: parallel makes are safe).
log=$1; shift
src=""; compile=0
for a in "$@"; do case $a in -c) compile=1 ;; *.c) src=$a ;; esac; done
if [ "$compile" = 0 ] || [ -z "$src" ]; then exec "$@"; fi
"$@" || exit
printf '%s\t%s\t%s\n' "$PWD" "$src" "$(printf '%q ' "$@")" >> "$log"
EOF
  chmod +x "$work/cc-log"
  local tree=$work/redis s
  mkdir -p "$tree"; tar -xzf "$REDIS" -C "$tree" --strip-components=1
  s=$EPOCHREALTIME
  make -C "$tree" -j"$(nproc)" MALLOC=libc CFLAGS=-gno-column-info CC="$work/cc-log $work/build.tsv gcc" >"$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log" >&2; exit 1; }
  printf '  one make -j%d build (MALLOC=libc, deps + src, CFLAGS=-gno-column-info) through a recording CC wrapper: %.1f s, %d compiles\n' \
    "$(nproc)" "$(awk -v s="$s" -v e="$EPOCHREALTIME" 'BEGIN { print e - s }')" "$(wc -l < "$work/build.tsv")"
}

# usec CMD...: runs CMD (its status ignored: a compile that fails fails alike every way) and
# prints its wall time in microseconds.
usec() { local s e; s=$EPOCHREALTIME; "$@" >/dev/null || true; e=$EPOCHREALTIME; echo $(( ${e/./} - ${s/./} )); }

# replay ROUND: every compile of the build, in build order and in its own directory, four ways
# back to back: plain gcc; preprocess only; pace-cc compiling here (no PACE_SCHEDULER, its own
# HOME and node tier: a miss like the next); pace-cc with dispatch (PACE_VERBOSE names the
# outcome). One line per TU into replay-ROUND.tsv: the four times in microseconds, the dispatch
# outcome, whether the local pace-cc run was a miss, directory, source.
replay() (
  local out=$work/replay-$1.tsv # the positional parameters are reused for each compile's argv
  export HOME=$work/home-$1 PACE_ADDR=$node_addr PACE_SCHEDULER=$node_addr PACE_VERBOSE=1
  mkdir -p "$HOME" "$HOME-local"
  "$REPO/bin/pace-cc" --print-toolchain-fingerprint gcc >/dev/null # warm: not a per-TU cost
  HOME=$HOME-local "$REPO/bin/pace-cc" --print-toolchain-fingerprint gcc >/dev/null
  while IFS=$'\t' read -r dir src argv; do
    cd "$dir"
    [ -e "$src" ] || continue # the Makefile's probes delete their source straight away
    eval "set -- $argv"
    local cpp=() skip=0 a tp tc tl td outcome local_miss=miss
    for a in "$@"; do
      if [ "$skip" = 1 ]; then skip=0; continue; fi
      case $a in -c | -MMD | -MD | -MP) ;; -o | -MF | -MT | -MQ) skip=1 ;; *) cpp+=("$a") ;; esac
    done
    tp=$(usec "$@" 2>/dev/null)
    tc=$(usec "${cpp[@]}" -E -o /dev/null 2>/dev/null)
    tl=$(usec env -u PACE_SCHEDULER HOME="$HOME-local" PACE_ADDR="$local_addr" "$REPO/bin/pace-cc" "$@" 2>"$work/local.err")
    grep -q '^pace-cc: MISS' "$work/local.err" || local_miss=not-a-miss
    td=$(usec "$REPO/bin/pace-cc" "$@" 2>"$work/pace.err")
    outcome=$(sed -n 's/^pace-cc: not dispatched (\(.*\)): compiling here$/local: \1/p' "$work/pace.err" | head -1)
    grep -q '^pace-cc: DISPATCHED' "$work/pace.err" && outcome=dispatched
    [ -n "$outcome" ] || outcome="other: $(grep -m1 '^pace-cc: ' "$work/pace.err" | cut -c10-)"
    printf '%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n' "$tp" "$tc" "$tl" "$td" "$outcome" "$local_miss" "$dir" "$src" >> "$out"
  done < "$work/build.tsv"
)

# replay_round ROUND: two fresh nodes (one the dispatching pace-cc's tier, scheduler and worker;
# one only the local pace-cc's tier), one replay, and what pace-cc and the node counted.
replay_round() {
  local round=$1 s w before outcomes local_pid
  start_node "tu-$round-local" --slots=1 --cache-memory=1GiB
  local_addr=$node_addr local_pid=$node_pid
  start_node "tu-$round" --slots=2 --cache-memory=1GiB
  before=$(load)
  s=$EPOCHREALTIME
  replay "$round"
  w=$(awk -v s="$s" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f", e - s }')
  outcomes=$(HOME=$work/home-$round bin/pace-cc -s | awk '
    /^dispatch outcomes:/ { on = 1; next }
    on && /^  / { sub(/^ +/, ""); gsub(/  +/, " "); printf "%s%s", sep, $0; sep = "; "; next }
    { on = 0 }')
  echo "  round $round: $w s [before: $before; after: $(load)]"
  echo "    pace-cc -s dispatch outcomes: $outcomes"
  echo "    node: leases granted $(node_metric pace_dispatch_leases_granted_total), released $(node_metric pace_dispatch_leases_released_total), worker jobs completed $(node_metric pace_worker_jobs_completed_total)"
  stop_node
  stop_pid "$local_pid"
}

# summarize: per TU (directory + source; a key seen twice in one round is not one TU and is left
# out) the fastest of each way over the rounds; the overhead over the TUs dispatched, and missed
# by the local pace-cc run, in every round: as totals and as the spread of per-TU ratios.
summarize() {
  awk -F'\t' -v rounds="$TU_ROUNDS" -v ratios="$work/ratios" '
    {
      round = FILENAME; sub(/^.*replay-/, "", round); sub(/\.tsv$/, "", round)
      key = $7 "/" $8
      if (++seen[round, key] > 1) dup[key] = 1
      o = $5; sub(/worker [^ ]*: /, "the worker: ", o) # one line per reason, whatever the port
      if ($6 != "miss") o = o " (local pace-cc run: " $6 ")"
      keys[key] = 1; outcome[round, key] = o
      for (i = 1; i <= 4; i++) if (!((i, key) in best) || $i / 1e6 < best[i, key]) best[i, key] = $i / 1e6
      if (o == "dispatched") disp[key]++
    }
    END {
      for (key in keys) {
        if (key in dup) { ndup++; continue }
        n++; for (i = 1; i <= 4; i++) all[i] += best[i, key]
        if (disp[key] == rounds) {
          nd++; for (i = 1; i <= 4; i++) sum[i] += best[i, key]
          printf "%.4f %.4f\n", (best[4, key] - best[3, key]) / best[2, key], (best[4, key] - best[1, key]) / best[2, key] > ratios
          continue
        }
        for (r = 1; r <= rounds; r++) if (outcome[r, key] != "dispatched") other[outcome[r, key]]++
      }
      printf "  all %d TUs: plain gcc %.2f s, preprocess only %.2f s, pace-cc here %.2f s, pace-cc dispatched %.2f s%s\n",
        n, all[1], all[2], all[3], all[4], (ndup ? sprintf(" (%d repeated compile keys left out)", ndup) : "")
      printf "  dispatched (and a miss here) in every round: %d of %d TUs\n", nd, n
      for (o in other) printf "    left out (TU-rounds): %d x %s\n", other[o], o
      if (nd == 0) { print "  no TU was dispatched"; exit 1 }
      printf "  over those %d TUs: plain gcc %.2f s, preprocess only %.2f s, pace-cc here %.2f s, pace-cc dispatched %.2f s\n",
        nd, sum[1], sum[2], sum[3], sum[4]
      c = sum[2] / nd
      verdict("dispatched over compiled here, both pace-cc misses", (sum[4] - sum[3]) / nd, c)
      verdict("dispatched pace-cc over plain gcc (adds the cache key probe and STORE)", (sum[4] - sum[1]) / nd, c)
    }
    function verdict(what, o, c) {
      printf "  per-TU overhead, %s: %.1f ms over a %.1f ms preprocess, ratio %.2f (goal <= 2): %s\n",
        what, o * 1e3, c * 1e3, o / c, (o / c <= 2 ? "met" : "NOT met")
    }' "$work"/replay-*.tsv
  spread 1 "dispatched over compiled here"
  spread 2 "dispatched over plain gcc"
}

# spread COLUMN WHAT: median and deciles of the per-TU ratios in that column of $work/ratios.
spread() {
  cut -d' ' -f"$1" "$work/ratios" | sort -n | awk -v what="$2" '{ r[NR] = $1 } END {
    printf "  per-TU ratio overhead/preprocess, %s: median %.2f, p10 %.2f, p90 %.2f\n",
      what, r[int((NR + 1) / 2)], r[int(NR * 0.1) + 1], r[int(NR * 0.9)] }'
}

tu_part() {
  printf '\nRedis 7.0.15 per-TU dispatch overhead (goal: overhead <= 2x local preprocess per TU)\n'
  record_build
  printf '  then %d round(s) replaying every compile one at a time: plain gcc / -E / pace-cc here / pace-cc dispatched, back to back\n' "$TU_ROUNDS"
  for round in $(seq "$TU_ROUNDS"); do replay_round "$round"; done
  summarize
}

verdict() { if [ "$1" -ge 20000 ]; then echo "met ($1/s)"; else echo "NOT met ($1/s)"; fi; }

[ "$ONLY" = tu ] || lease_part
[ "$ONLY" = lease ] || tu_part
if [ "$ONLY" != tu ]; then
  printf '\nLEASE+RELEASE goal (>= 20000/s, %d clients): persistent connections %s; fresh connection per verb %s\n' \
    "$CONNS" "$(verdict "$persistent_best")" "$(verdict "$fresh_best")"
fi
exit "$failed"
