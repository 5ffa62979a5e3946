#!/usr/bin/env bash
# pace-kv against redis-server, same load generator, same sizes, same concurrency, same run.
# Prints ops/s and p99 for both and the ratio pace/redis; each cell is the median of ROUNDS
# interleaved runs (pace, redis, pace, redis, ...) so both see the same machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-3s}
SIZES=${SIZES:-"4096 65536 1048576"}
CONNS=${CONNS:-"1 16 64"}
. scripts/lib.sh

go build -o "$work/kvload" ./bench/kvload
start_kv "$work/kv.log"
pace_addr=$kv_addr
redis_port=$((20000 + RANDOM % 20000))
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --maxmemory 2gb >"$work/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-8s %-6s %14s %12s %14s %12s %8s\n' size conns "pace ops/s" "pace p99us" "redis ops/s" "redis p99us" ratio
for size in $SIZES; do
  for conns in $CONNS; do
    : > "$work/pace.txt"; : > "$work/redis.txt"
    for _ in $(seq "$ROUNDS"); do
      "$work/kvload" -proto=pace -addr="$pace_addr" -size="$size" -conns="$conns" -duration="$DURATION" >> "$work/pace.txt"
      "$work/kvload" -proto=redis -addr="127.0.0.1:$redis_port" -size="$size" -conns="$conns" -duration="$DURATION" >> "$work/redis.txt"
    done
    p_ops=$(field ops_per_s < "$work/pace.txt" | median); p_p99=$(field p99_us < "$work/pace.txt" | median)
    r_ops=$(field ops_per_s < "$work/redis.txt" | median); r_p99=$(field p99_us < "$work/redis.txt" | median)
    ratio=$(awk -v p="$p_ops" -v r="$r_ops" 'BEGIN {printf "%.2f", p/r}')
    printf '%-8s %-6s %14s %12s %14s %12s %8s\n' "$size" "$conns" "$p_ops" "$p_p99" "$r_ops" "$r_p99" "$ratio"
  done
done
