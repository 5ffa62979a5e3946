#!/usr/bin/env bash
# pace-cc against ccache and plain gcc on real projects, all in this one run:
#   Redis 7.0.15 and LevelDB 1.23 built plain, with ccache cold/warm, with pace-cc cold/warm
#   (direct mode on, against a pace-kv on loopback); LevelDB again in a second build directory
#   with roots set; and single-file hit latency of pace-cc vs ccache under hyperfine.
# Every build is run ROUNDS times (default 2), variants interleaved within a round, and the
# fastest of each is reported: on a shared machine the minimum is the least disturbed figure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-2}
REPO=$PWD
. scripts/lib.sh
LEVELDB=$(corpus_file leveldb_1.23.orig.tar.gz)
REDIS=$(corpus_file redis_7.0.15.orig.tar.gz)
projects=(leveldb)
if [ -n "$REDIS" ]; then projects=(redis leveldb); else
  echo "bench-cc: skipping Redis: put redis_7.0.15.orig.tar.gz in a directory and name it in PACE_CORPUS (testdata/corpus/README.md)"
fi
export LC_ALL=C
PACECC=$REPO/bin/pace-cc


# seconds CMD...: wall time of a command in seconds (3 decimals).
seconds() { local s e; s=$(date +%s.%N); "$@" >"$work/last.log" 2>&1 || { cat "$work/last.log"; return 1; }; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN{printf "%.2f", e-s}'; }
pace_hits() { HOME=$1 "$PACECC" -s | awk '/^cache hits/ {print $3}'; }
ccache_hits() { CCACHE_DIR=$1 ccache -s 2>/dev/null | awk -F: '/Hits:/ {gsub(/ /,"",$2); split($2,a,"/"); print a[1]; exit}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else print "-" }'; }

redis() { # redis VARIANT CC: prints cold, warm seconds
  local dir=$work/redis-$1; mkdir -p "$dir"; tar -xzf "$REDIS" -C "$dir" --strip-components=1
  local cold warm
  cold=$(seconds make -C "$dir" -j2 MALLOC=libc CC="$2")
  make -C "$dir" distclean >/dev/null 2>&1
  warm=$(seconds make -C "$dir" -j2 MALLOC=libc CC="$2")
  echo "$cold $warm"
}

leveldb_build() { # leveldb_build SRC BUILD LAUNCHER: configures and builds, prints seconds
  local launcher=()
  [ -n "$3" ] && launcher=(-DCMAKE_C_COMPILER_LAUNCHER="$3" -DCMAKE_CXX_COMPILER_LAUNCHER="$3")
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLEVELDB_BUILD_TESTS=OFF \
    -DLEVELDB_BUILD_BENCHMARKS=OFF "${launcher[@]}" >/dev/null
  seconds ninja -C "$2" -j2
}

leveldb() { # leveldb VARIANT LAUNCHER: prints cold, warm seconds
  local src=$work/leveldb-$1; mkdir -p "$src"; tar -xzf "$LEVELDB" -C "$src" --strip-components=1
  local cold warm
  cold=$(leveldb_build "$src" "$src/build" "$2")
  ninja -C "$src/build" clean >/dev/null
  warm=$(seconds ninja -C "$src/build" -j2)
  echo "$cold $warm"
}

echo "pace-cc vs ccache vs plain gcc ($(gcc --version | head -1); $(ccache --version | head -1)); best of $ROUNDS rounds"
printf '\n%-10s %-26s %10s %10s %8s\n' project variant cold_s warm_s hits
minof() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b == "" || a+0 < b+0) print a; else print b }'; }
for proj in "${projects[@]}"; do
  p_cold=""; c_cold=""; c_warm=""; x_cold=""; x_warm=""
  for round in $(seq "$ROUNDS"); do
    read -r a _ < <(if [ "$proj" = redis ]; then redis "plain$round" gcc; else leveldb "plain$round" ""; fi)
    p_cold=$(minof "$a" "$p_cold")
    export CCACHE_DIR=$work/ccache-$proj-$round
    read -r a b < <(if [ "$proj" = redis ]; then redis "ccache$round" "ccache gcc"; else leveldb "ccache$round" ccache; fi)
    c_cold=$(minof "$a" "$c_cold"); c_warm=$(minof "$b" "$c_warm")
    c_hits=$(ccache_hits "$CCACHE_DIR")
    export HOME=$work/home-$proj-$round
    start_kv "$work/kv-$proj-$round.log"
    export PACE_ADDR=$kv_addr
    read -r a b < <(if [ "$proj" = redis ]; then redis "pace$round" "$PACECC gcc"; else leveldb "pace$round" "$PACECC"; fi)
    x_cold=$(minof "$a" "$x_cold"); x_warm=$(minof "$b" "$x_warm")
    x_hits=$(pace_hits "$HOME")
  done
  printf '%-10s %-26s %10s %10s %8s\n' "$proj" "plain gcc" "$p_cold" "-" "-"
  printf '%-10s %-26s %10s %10s %8s\n' "$proj" "ccache" "$c_cold" "$c_warm" "$c_hits"
  printf '%-10s %-26s %10s %10s %8s\n' "$proj" "pace-cc (direct mode)" "$x_cold" "$x_warm" "$x_hits"
  printf '%-10s %-26s %10s %10s\n' "$proj" "ratio pace/ccache" "$(ratio "$x_cold" "$c_cold")" "$(ratio "$x_warm" "$c_warm")"
  printf '%-10s %-26s %10s %10s\n' "$proj" "cold overhead vs plain" "$(awk -v a="$x_cold" -v b="$p_cold" 'BEGIN{printf "%+.1f%%", (a/b-1)*100}')" \
    "ccache $(awk -v a="$c_cold" -v b="$p_cold" 'BEGIN{printf "%+.1f%%", (a/b-1)*100}')"
done

# LevelDB in a second build directory with roots set: every TU should hit.
export HOME=$work/home-roots
src=$work/leveldb-pace1
PACE_SOURCE_DIR=$src PACE_BINARY_DIR=$src/build1 leveldb_build "$src" "$src/build1" "$PACECC" >/dev/null
before=$(pace_hits "$HOME")
second=$(PACE_SOURCE_DIR=$src PACE_BINARY_DIR=$src/build2 leveldb_build "$src" "$src/build2" "$PACECC")
hits=$(( $(pace_hits "$HOME") - before ))
tus=$(find "$src/build2" -name '*.o' | wc -l)
printf '\nleveldb, second build directory with roots: %s s, %d hits of %d objects\n' "$second" "$hits" "$tus"

# Single-file hit latency (warm caches, direct mode on).
lat=$work/lat; mkdir -p "$lat"
printf '#include <stdio.h>\n#include <string.h>\nint main(void) { printf("%%zu\\n", strlen("x")); return 0; }\n' > "$lat/small.c"
cp "$work/leveldb-plain/db/db_impl.cc" "$lat/big.cc" 2>/dev/null || cp "$src/db/db_impl.cc" "$lat/big.cc"
inc="-I$src/include -I$src -I$src/build1/include -DLEVELDB_PLATFORM_POSIX=1 -std=c++11 -O2"
export HOME=$work/home-lat CCACHE_DIR=$work/ccache-lat
cd "$lat"
for f in small.c big.cc; do
  compiler=gcc; flags="-O2"; [ "$f" = big.cc ] && { compiler=g++; flags=$inc; }
  "$PACECC" $compiler $flags -c $f -o p.o; "$PACECC" $compiler $flags -c $f -o p.o
  ccache $compiler $flags -c $f -o c.o; ccache $compiler $flags -c $f -o c.o
  hyperfine -N -w 10 -r 100 --export-csv "$work/h.csv" \
    "$PACECC $compiler $flags -c $f -o p.o" "ccache $compiler $flags -c $f -o c.o" >/dev/null
  # CSV columns: command,mean,stddev,median,...; medians in seconds.
  read -r pm cm < <(awk -F, 'NR>1 {printf "%s ", $4*1000} END {print ""}' "$work/h.csv")
  printf 'hit latency %-8s pace-cc %6.2f ms   ccache %6.2f ms   ratio %s\n' "$f" "$pm" "$cm" "$(ratio "$pm" "$cm")"
done
