#!/usr/bin/env bash
# gradient against its performance goals, on loopback, against the real server
# (internal/gradient/server: SQLite store, NAR storage on disk, workers passing the real
# handshake over a real websocket):
#   1. Job assignment: RequestJob -> AssignJob p50/p99 with >= 1,000 builds queued throughout,
#      one worker and eight competing workers. Goal: p99 < 50 ms. The store alone
#      (Candidates + Claim, no session) is printed beside it.
#   2. NAR upload worker -> server cache, 256 MiB output. Goal: >= 500 MB/s.
#      a. BenchmarkWorkerPush: the worker's own upload code (nix path-info, CacheQuery Push,
#         nix-store --dump | zstd level 6 with both hashes, 512 KiB chunks) to a real server,
#         until UploadCommitted. Compression INCLUDED.
#      b. BenchmarkSessionUpload: bytes compressed before the timer, sent on a real /proto
#         session and verified, fsynced and recorded by the server. Transfer + verify ONLY.
#   3. NAR pull worker <- server, 256 MiB output: NarRequest -> NarStreamHeader + 512 KiB
#      NarPush. Goal: >= 500 MB/s. BenchmarkWorkerPull runs the worker's own receiver (file +
#      SHA-256 check); BenchmarkSessionPull a bare client that only hashes.
#   4. Cache queries: CacheQuery Pull of 1,000 cached paths per query on a worker session,
#      queries per second, one and four in flight. (No goal is set in the issue.)
# MB/s is NAR bytes per second (the output's size); wire-MB/s the compressed bytes that
# crossed the socket; ratio compressed/NAR. "text" compresses about 4:1, "random" not at all.
# cpu-ms/op is the CPU both ends used per operation (they share this process): on a busy
# machine it says how much work a transfer is when wall-clock throughput cannot.
# Two calibration figures come first: zstd level 6 and a 512 KiB memcpy on this machine now.
# Knobs (environment): COUNT=3 (runs of each benchmark), ONLY=assign|upload|pull|query.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
ONLY=${ONLY:-}
export LC_ALL=C

run() { # run PACKAGE REGEX BENCHTIME: go test's benchmark lines only
  go test -run='^$' -bench="$2" -benchtime="$3" -count="$COUNT" -timeout=60m "$1" 2>&1 |
    grep -E '^(Benchmark|ok|FAIL|panic|---)' || true
}
want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

echo "machine: $(nproc) cores, $(uptime | sed 's/.*load average/load average/')"
echo "calibration (zstd level 6 on NAR-like data; 512 KiB memcpy):"
COUNT=1 run ./internal/gradient/nixexec/ '^BenchmarkNAREncoder$' 1s
COUNT=1 run ./internal/gradient/wire/ '^BenchmarkMemcpy512KiB$' 1s

if want assign; then
  echo
  echo "### 1. job assignment, RequestJob -> AssignJob, >= 1,000 queued builds (goal: p99 < 50 ms)"
  run ./internal/gradient/server/ '^BenchmarkJobAssignment$' 1000x
  echo "store only (Candidates + Claim on SQLite, no session), for comparison:"
  run ./internal/gradient/store/sqlite/ '^BenchmarkClaimWith1000Queued$' 1000x
fi
if want upload; then
  echo
  echo "### 2a. NAR upload worker -> server, 256 MiB, worker's code, zstd level 6 INCLUDED (goal: >= 500 MB/s)"
  run ./internal/gradient/worker/ '^BenchmarkWorkerPush$' 2x
  echo "### 2b. NAR upload on a /proto session, 256 MiB precompressed: transfer + verify ONLY (goal: >= 500 MB/s)"
  run ./internal/gradient/server/ '^BenchmarkSessionUpload$' 4x
fi
if want pull; then
  echo
  echo "### 3. NAR pull worker <- server, 256 MiB (goal: >= 500 MB/s)"
  run ./internal/gradient/worker/ '^BenchmarkWorkerPull$' 4x
  echo "bare client (hash only, no file):"
  run ./internal/gradient/server/ '^BenchmarkSessionPull$' 4x
fi
if want query; then
  echo
  echo "### 4. CacheQuery Pull, 1,000 cached paths per query, on a worker session (queries/s)"
  run ./internal/gradient/server/ '^BenchmarkCacheQueryPull$' 3s
  echo "the same on a read-only /cache/{cache}/proto session (anonymous, public cache):"
  run ./internal/gradient/server/ '^BenchmarkCacheSessionPullQuery1000$' 3s
fi
