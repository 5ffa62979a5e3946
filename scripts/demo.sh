#!/usr/bin/env bash
# The main job, end to end on this machine: starts the servers, runs real work through them and
# prints what happened. Everything runs on loopback and is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
work=$(mktemp -d /tmp/buildfleet-demo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
say() { printf '\n== %s\n' "$*"; }

# wait_ready LOG PATTERN: waits for a daemon's ready line and prints it.
wait_ready() {
  for _ in $(seq 100); do
    if line=$(grep -m1 "$2" "$1" 2>/dev/null); then echo "$line"; return 0; fi
    sleep 0.1
  done
  echo "no ready line in $1:" >&2; cat "$1" >&2; return 1
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

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
