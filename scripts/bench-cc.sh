#!/usr/bin/env bash
# pace-cc against the other compiler caches and plain gcc, all in this one run:
#   Lua 5.4.4 and LevelDB 1.23 (the committed corpus) and Redis 7.0.15 (when PACE_CORPUS has it),
#   each built by plain gcc, ccache (default), ccache in depend mode (CCACHE_DEPEND=1), sccache
#   (local disk), pace-cc against a pace-kv and pace-cc against a pace-node, cold (every cache
#   empty) and warm (the same tree cleaned and built again from the warm cache); then a
#   small-file direct hit of each cache under hyperfine -N; then LevelDB in a second build
#   directory with roots set.
# Every build runs ROUNDS times (default 2) with the variants interleaved within a round, each
# round starting one variant later, and the fastest of each is reported: on a shared machine the
# minimum is the least disturbed figure. Within a round, once every variant's cold build is done
# and its server still up, the warm builds run WARM_RUNS times (default 5), the variants
# interleaved, and each variant's median stands for the round: a warm build takes a second or
# less, and the machine's speed drifts more between minutes than that. The hits run HIT_ROUNDS rounds (default 6) of HIT_RUNS
# runs (default 10) per cache, interleaved the same way; a ratio is taken within each round and
# the median of the rounds' ratios reported. Nothing outside this script's work directory is
# read or written: every cache, state directory and server is made here and stopped at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-2}
WARM_RUNS=${WARM_RUNS:-5}
HIT_ROUNDS=${HIT_ROUNDS:-6}
HIT_RUNS=${HIT_RUNS:-10}
REPO=$PWD
. scripts/lib.sh
B=$REPO/bin
LUA=$(corpus_file lua5.4_5.4.4.orig.tar.gz)
LEVELDB=$(corpus_file leveldb_1.23.orig.tar.gz)
REDIS=$(corpus_file redis_7.0.15.orig.tar.gz)
read -r -a corpora <<<"${CORPORA:-lua leveldb redis}" # CORPORA picks some, for a quicker look
if [ -z "$REDIS" ] && [[ " ${corpora[*]} " == *" redis "* ]]; then
  kept=()
  for c in "${corpora[@]}"; do if [ "$c" != redis ]; then kept+=("$c"); fi; done
  corpora=("${kept[@]}")
  echo "bench-cc: skipping Redis: put redis_7.0.15.orig.tar.gz in a directory and name it in PACE_CORPUS (testdata/corpus/README.md)"
fi
# Nothing of the caller's cache configuration applies.
for v in $(compgen -e); do case $v in PACE_* | CCACHE_* | SCCACHE_* | RUSTC_WRAPPER) unset "$v" ;; esac; done
export LC_ALL=C CCACHE_CONFIGPATH=$work/ccache.conf SCCACHE_CONF=$work/sccache.conf SCCACHE_IDLE_TIMEOUT=0
: >"$CCACHE_CONFIGPATH"
: >"$SCCACHE_CONF"

# floor is not a cache: bench/floorcc copies back what each compile (and each dependency
# listing) wrote the first time, from one small C process, checking nothing. Its warm build is
# what a build costs beyond any cache's work: make, archives, links.
gcc -O2 -o "$work/floorcc" bench/floorcc/floorcc.c
variants=(plain ccache ccache-depend sccache pace-kv pace-node floor)
declare -A label=([plain]="plain gcc" [ccache]="ccache" [ccache-depend]="ccache depend mode"
  [sccache]="sccache (local disk)" [pace-kv]="pace-cc + pace-kv" [pace-node]="pace-cc + pace-node"
  [floor]="floor (copy back only)")
declare -A launch=([plain]="" [ccache]="ccache" [ccache-depend]="ccache" [sccache]="sccache"
  [pace-kv]="$B/pace-cc" [pace-node]="$B/pace-cc" [floor]="$work/floorcc")

# seconds CMD...: wall time of a command in seconds; its output goes to the log.
seconds() {
  local s e
  s=$(date +%s.%N)
  "$@" >"$work/last.log" 2>&1 || { tail -30 "$work/last.log" >&2; return 1; }
  e=$(date +%s.%N)
  awk -v s="$s" -v e="$e" 'BEGIN{printf "%.3f", e-s}'
}
minof() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b == "" || a+0 < b+0) print a; else print b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a != "" && b+0 > 0) printf "%.2f", a/b; else print "-" }'; }
overhead() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a != "" && b+0 > 0) printf "%+.1f%%", (a/b-1)*100; else print "-" }'; }
# verdict VALUE LIMIT: "met" when VALUE <= LIMIT.
verdict() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "-" || a == "") print "-"; else if (a+0 <= b+0) print "met"; else print "MISSED" }'; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# start_kv_at LOG: a pace-kv with an empty memory store; sets addr and server_pid.
start_kv_at() {
  "$B/pace-kv" --listen=127.0.0.1:0 --metrics= --max-memory=2GiB 2>"$1" &
  server_pid=$!
  pids+=("$server_pid")
  addr=$(wait_ready "$1" "pace-kv ready" "$server_pid" | field listen)
}

# start_node_at DIR: a pace-node of its own, cache tier in memory only, no worker, nothing heard
# from the LAN; sets addr and server_pid.
start_node_at() {
  mkdir -p "$1"
  "$B/pace-node" --cluster-dir="$1/state" --listen-node=127.0.0.1:0 --listen-raft=127.0.0.1:0 \
    --slots=0 --cache-memory=2GiB --discovery=off 2>"$1/node.log" &
  server_pid=$!
  pids+=("$server_pid")
  addr=$(wait_ready "$1/node.log" "pace-node ready" "$server_pid" | field node-port)
}

# start_sccache DIR: an sccache server of this run's own, on a free port, caching in DIR; every
# one started is stopped at exit.
sccache_ports=()
start_sccache() {
  export SCCACHE_DIR=$1
  for _ in $(seq 20); do
    export SCCACHE_SERVER_PORT=$((20000 + RANDOM % 20000))
    if sccache --start-server >"$work/sccache-start.log" 2>&1; then
      sccache_ports+=("$SCCACHE_SERVER_PORT")
      return 0
    fi
  done
  cat "$work/sccache-start.log" >&2
  return 1
}

# setup VARIANT TAG: an empty cache for VARIANT, and the environment that points at it.
setup() {
  export HOME=$work/home-$2
  mkdir -p "$HOME"
  unset CCACHE_DIR CCACHE_DEPEND PACE_ADDR FLOORCC_DIR FLOORCC_MODE
  server_pid=""
  case $1 in
    ccache) export CCACHE_DIR=$work/ccache-$2 ;;
    ccache-depend) export CCACHE_DIR=$work/ccache-$2 CCACHE_DEPEND=1 ;;
    sccache) start_sccache "$work/sccache-$2" ;;
    pace-kv) start_kv_at "$work/kv-$2.log" && export PACE_ADDR=$addr ;;
    pace-node) start_node_at "$work/node-$2" && export PACE_ADDR=$addr ;;
    floor) export FLOORCC_DIR=$work/floor-$2 FLOORCC_MODE=record && mkdir -p "$FLOORCC_DIR" ;;
  esac
}

# teardown VARIANT: stops what setup started for it.
teardown() {
  if [ "$1" = sccache ]; then sccache --stop-server >/dev/null 2>&1 || true; fi
  if [ -n "$server_pid" ]; then stop_pid "$server_pid"; fi
}
stop_sccaches() {
  for p in "${sccache_ports[@]}"; do SCCACHE_SERVER_PORT=$p sccache --stop-server >/dev/null 2>&1 || true; done
}
trap 'stop_sccaches; cleanup' EXIT

# hits VARIANT: the cache's hit count so far.
hits() {
  case $1 in
    ccache | ccache-depend) ccache --print-stats | awk -F'\t' '$1 ~ /^(direct|preprocessed)_cache_hit$/ {n += $2} END {print n+0}' ;;
    sccache) sccache --show-stats | awk '/^Cache hits  / && !/rate/ {print $3; exit}' ;;
    pace-*) cat "$HOME/.local/state/pace-cc/invocations.log" 2>/dev/null | grep -c '"outcome":"hit"' || true ;;
    *) echo 0 ;;
  esac
}

# unpack CORPUS DIR; cold CORPUS DIR LAUNCHER (configure, then the timed build); clean CORPUS
# DIR; warm CORPUS DIR LAUNCHER (the timed build of a cleaned tree).
unpack() {
  mkdir -p "$2"
  case $1 in lua) tar -xzf "$LUA" -C "$2" --strip-components=1 ;; leveldb) tar -xzf "$LEVELDB" -C "$2" --strip-components=1 ;;
    redis) tar -xzf "$REDIS" -C "$2" --strip-components=1 ;; esac
}
build() {
  case $1 in
    lua) seconds make -C "$2" -j2 posix CC="${3:+$3 }gcc -std=gnu99" ;;
    redis) seconds make -C "$2" -j2 MALLOC=libc CC="${3:+$3 }gcc" ;;
    leveldb) seconds ninja -C "$2/build" -j2 ;;
  esac
}
cold() {
  if [ "$1" = leveldb ]; then
    local launcher=()
    [ -n "$3" ] && launcher=(-DCMAKE_C_COMPILER_LAUNCHER="$3" -DCMAKE_CXX_COMPILER_LAUNCHER="$3")
    cmake -S "$2" -B "$2/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLEVELDB_BUILD_TESTS=OFF \
      -DLEVELDB_BUILD_BENCHMARKS=OFF "${launcher[@]}" >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; return 1; }
  fi
  build "$@"
}
clean() {
  case $1 in lua) make -C "$2" clean >/dev/null ;; redis) make -C "$2" distclean >/dev/null 2>&1 ;;
    leveldb) ninja -C "$2/build" clean >/dev/null ;; esac
}

declare -A best_cold best_warm warm_hits round_cold round_warm venv vpid vsrc
# keep_env VARIANT: remember the environment setup made for VARIANT, and its server.
keep_env() {
  venv[$1]="HOME=$HOME"
  # FLOORCC_MODE is left out: the floor records its cold build and replays every warm one.
  for name in CCACHE_DIR CCACHE_DEPEND PACE_ADDR SCCACHE_DIR SCCACHE_SERVER_PORT FLOORCC_DIR; do
    if [ -n "${!name:-}" ]; then venv[$1]+=" ${name}=${!name}"; fi
  done
  vpid[$1]=$server_pid
}
# use VARIANT: the environment keep_env remembered, and nothing of another variant's.
use() {
  unset CCACHE_DIR CCACHE_DEPEND PACE_ADDR SCCACHE_DIR SCCACHE_SERVER_PORT FLOORCC_DIR FLOORCC_MODE
  # shellcheck disable=SC2086 # the words are NAME=value assignments without spaces
  export ${venv[$1]}
  server_pid=${vpid[$1]}
}
# cold_phase CORPUS ROUND VARIANT...: each variant's tree unpacked and built with its cache empty,
# then cleaned; every server stays up for the warm phase.
cold_phase() {
  local corpus=$1 round=$2 v c
  shift 2
  for v in "$@"; do
    vsrc[$v]=$work/src-$corpus-$v-$round
    unpack "$corpus" "${vsrc[$v]}"
    setup "$v" "$corpus-$v-$round"
    keep_env "$v"
    c=$(cold "$corpus" "${vsrc[$v]}" "${launch[$v]}")
    best_cold[$corpus,$v]=$(minof "$c" "${best_cold[$corpus,$v]:-}")
    round_cold[$corpus,$v,$round]=$c
    echo "  round $round $corpus: ${label[$v]}: cold $c s" >&2
    if [ "$v" != plain ]; then clean "$corpus" "${vsrc[$v]}"; fi
  done
}
# warm_phase CORPUS ROUND VARIANT...: WARM_RUNS passes over the variants, each building its
# cleaned tree from its warm cache; a variant's figure for the round is the median of its runs.
warm_phase() {
  local corpus=$1 round=$2 v k w before
  shift 2
  declare -A runs=() hitsum=()
  for k in $(seq "$WARM_RUNS"); do
    for v in "$@"; do
      [ "$v" = plain ] && continue
      use "$v"
      before=$(hits "$v")
      w=$(build "$corpus" "${vsrc[$v]}" "${launch[$v]}")
      hitsum[$v]=$((${hitsum[$v]:-0} + $(hits "$v") - before))
      runs[$v]+="$w "
      clean "$corpus" "${vsrc[$v]}"
    done
  done
  for v in "$@"; do
    [ "$v" = plain ] && continue
    # shellcheck disable=SC2086 # one number a word
    w=$(printf '%s\n' ${runs[$v]} | median)
    round_warm[$corpus,$v,$round]=$w
    best_warm[$corpus,$v]=$(minof "$w" "${best_warm[$corpus,$v]:-}")
    warm_hits[$corpus,$v]=$((hitsum[$v] / WARM_RUNS))
    echo "  round $round $corpus: ${label[$v]}: warm $w s (median of: ${runs[$v]% })" >&2
  done
}
echo "pace-cc vs ccache, ccache depend mode, sccache and plain gcc; $(gcc --version | head -1)"
echo "$(ccache --version | head -1); $(sccache --version); $(hyperfine --version); best of $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  for corpus in "${corpora[@]}"; do
    n=${#variants[@]}
    order=()
    for i in $(seq 0 $((n - 1))); do order+=("${variants[$(((i + round - 1) % n))]}"); done
    cold_phase "$corpus" "$round" "${order[@]}"
    warm_phase "$corpus" "$round" "${order[@]}"
    for v in "${order[@]}"; do
      use "$v"
      teardown "$v"
      if [ "$round" = "$ROUNDS" ] && [ "$v" = pace-kv ]; then
        cp "$HOME/.local/state/pace-cc/invocations.log" "$work/stats-$corpus.log" || true
        if [ "$corpus" = leveldb ]; then keep_leveldb=${vsrc[$v]} && continue; fi
      fi
      rm -rf "${vsrc[$v]}"
    done
  done
done

printf '\nBuilds (seconds, best of %s rounds; cold: every cache empty; warm: the cleaned tree built again from the warm cache, the median of %s runs interleaved across the variants within a round; paired_c, paired_w: the median over the rounds of the ratio to plain gcc, to ccache, in the same round; abv_floor: the warm time above the floor over ccache'"'"'s, median over the rounds)\n' "$ROUNDS" "$WARM_RUNS"
# paired CORPUS VARIANT BASE ROUNDS_ARRAY: the median over the rounds of VARIANT's time over
# BASE's in the same round. Variants of a round run minutes apart at most, so a machine whose
# speed drifts between minutes disturbs a within-round ratio less than it does a best-of.
paired() {
  local -n times=$4
  for r in $(seq "$ROUNDS"); do
    awk -v a="${times[$1,$2,$r]:-}" -v b="${times[$1,$3,$r]:-}" 'BEGIN{ if (a != "" && b+0 > 0) print a/b }'
  done | median
}
# above_floor CORPUS VARIANT: the variant's warm time above the floor's, over ccache's, median
# over the rounds: the part of a warm build a cache's own work decides.
above_floor() {
  for r in $(seq "$ROUNDS"); do
    awk -v a="${round_warm[$1,$2,$r]:-}" -v c="${round_warm[$1,ccache,$r]:-}" -v f="${round_warm[$1,floor,$r]:-}" \
      'BEGIN{ if (a != "" && f != "" && c-f > 0) print (a-f)/(c-f) }'
  done | median
}
printf '%-8s %-22s %8s %9s %8s %9s %6s %9s %9s %9s  %s\n' corpus variant cold_s vs_plain warm_s vs_ccache hits paired_c paired_w abv_floor "goals: cold <= +3% over plain gcc, warm <= 0.90x ccache"
for corpus in "${corpora[@]}"; do
  plain=${best_cold[$corpus,plain]}
  for v in "${variants[@]}"; do
    c=${best_cold[$corpus,$v]}
    w=${best_warm[$corpus,$v]:-}
    over=$(overhead "$c" "$plain")
    wr=$(ratio "$w" "${best_warm[$corpus,ccache]}")
    goals=""
    case $v in pace-*)
      goals="cold $(verdict "$(awk -v a="$c" -v b="$plain" 'BEGIN{print (a/b-1)*100}')" 3), warm $(verdict "$wr" 0.90)" ;;
    esac
    [ "$v" = plain ] && over="-"
    pc=$(paired "$corpus" "$v" plain round_cold)
    pw=$(paired "$corpus" "$v" ccache round_warm)
    pw=$(awk -v a="$pw" 'BEGIN{ if (a == "") print "-"; else printf "%.2f", a }')
    pc=$(awk -v a="$pc" 'BEGIN{ if (a == "") print "-"; else printf "%+.1f%%", (a-1)*100 }')
    af=$(above_floor "$corpus" "$v")
    af=$(awk -v a="$af" 'BEGIN{ if (a == "") print "-"; else printf "%.2f", a }')
    case $v in plain | floor) pc="-" af="-" ;; esac
    [ "$v" = plain ] && over="-"
    printf '%-8s %-22s %8s %9s %8s %9s %6s %9s %9s %9s  %s\n' "$corpus" "${label[$v]}" "$c" "$over" "${w:--}" "${wr}" \
      "${warm_hits[$corpus,$v]:--}" "$pc" "${pw:--}" "$af" "$goals"
  done
done

# The small-file direct hit: every cache warmed with one miss and one hit, then HIT_ROUNDS
# rounds of HIT_RUNS runs each under hyperfine -N, the caches interleaved round by round.
lat=$work/lat
mkdir -p "$lat"
printf '#include <stdio.h>\n#include <string.h>\nint main(void) { printf("%%zu\\n", strlen("x")); return 0; }\n' >"$lat/small.c"
hitvariants=(ccache ccache-depend sccache pace-kv pace-node)
declare -A hitenv hitpid
for v in "${hitvariants[@]}"; do
  setup "$v" "hit-$v"
  hitpid[$v]=$server_pid
  hitenv[$v]="HOME=$HOME"
  for name in CCACHE_DIR CCACHE_DEPEND PACE_ADDR SCCACHE_DIR SCCACHE_SERVER_PORT; do
    if [ -n "${!name:-}" ]; then hitenv[$v]+=" $name=${!name}"; fi
  done
  for _ in 1 2 3; do (cd "$lat" && ${launch[$v]} gcc -O2 -c small.c -o "$v.o"); done
  cmp "$lat/$v.o" "$lat/${hitvariants[0]}.o" || { echo "bench-cc: $v produced a different object" >&2; exit 1; }
done
declare -A hitmed
for round in $(seq "$HIT_ROUNDS"); do
  n=${#hitvariants[@]}
  for i in $(seq 0 $((n - 1))); do
    v=${hitvariants[$(((i + round - 1) % n))]}
    # shellcheck disable=SC2086 # the words are NAME=value assignments
    (cd "$lat" && env ${hitenv[$v]} hyperfine -N --style none -w 3 -r "$HIT_RUNS" --export-csv "$work/h.csv" \
      "${launch[$v]} gcc -O2 -c small.c -o $v.o" >/dev/null 2>>"$work/hyperfine.log")
    # CSV: command,mean,stddev,median,user,system,min,max (seconds)
    hitmed[$v,$round]=$(awk -F, 'NR == 2 {printf "%.3f", $4 * 1000}' "$work/h.csv")
  done
done
printf '\nSmall-file direct hit (whole process, hyperfine -N, %s rounds x %s runs per cache, interleaved; ms)\n' "$HIT_ROUNDS" "$HIT_RUNS"
printf '%-22s %10s %10s  %s\n' cache median_ms vs_ccache "goal: <= 0.90x ccache (median of the rounds' ratios)"
for v in "${hitvariants[@]}"; do
  med=$(for r in $(seq "$HIT_ROUNDS"); do echo "${hitmed[$v,$r]}"; done | median)
  rat=$(for r in $(seq "$HIT_ROUNDS"); do ratio "${hitmed[$v,$r]}" "${hitmed[ccache,$r]}"; echo; done | median)
  rat=$(printf '%.2f' "${rat:-0}")
  goal=""
  case $v in pace-*) goal=$(verdict "$rat" 0.90) ;; esac
  printf '%-22s %10s %10s  %s\n' "${label[$v]}" "$med" "$rat" "$goal"
done
for v in "${hitvariants[@]}"; do
  if [ -n "${hitpid[$v]}" ]; then stop_pid "${hitpid[$v]}"; fi
done
stop_sccaches

# Where pace-cc's time went in the last round against pace-kv: the statistics of each corpus.
for corpus in "${corpora[@]}"; do
  [ -f "$work/stats-$corpus.log" ] || continue
  mkdir -p "$work/statsview-$corpus/.local/state/pace-cc"
  cp "$work/stats-$corpus.log" "$work/statsview-$corpus/.local/state/pace-cc/invocations.log"
  printf '\npace-cc on %s against pace-kv, last round (cold and warm builds):\n' "$corpus"
  HOME=$work/statsview-$corpus "$B/pace-cc" --show-stats | grep -E 'invocations|hits|misses|latency' | sed 's/^/  /'
done

# LevelDB in a second build directory with roots set: every TU should hit.
if [ -n "${keep_leveldb:-}" ]; then
  src=$keep_leveldb
  setup pace-kv roots
  export PACE_SOURCE_DIR=$src PACE_BINARY_DIR=$src/build1
  cmake -S "$src" -B "$src/build1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLEVELDB_BUILD_TESTS=OFF \
    -DLEVELDB_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_COMPILER_LAUNCHER="$B/pace-cc" >/dev/null
  seconds ninja -C "$src/build1" -j2 >/dev/null
  before=$(hits pace-kv)
  export PACE_BINARY_DIR=$src/build2
  cmake -S "$src" -B "$src/build2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLEVELDB_BUILD_TESTS=OFF \
    -DLEVELDB_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_COMPILER_LAUNCHER="$B/pace-cc" >/dev/null
  second=$(seconds ninja -C "$src/build2" -j2)
  tus=$(find "$src/build2" -name '*.o' | wc -l)
  printf '\nleveldb, second build directory with roots: %s s, %d hits of %d objects\n' "$second" "$(($(hits pace-kv) - before))" "$tus"
  unset PACE_SOURCE_DIR PACE_BINARY_DIR
  teardown pace-kv
fi
