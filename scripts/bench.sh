#!/usr/bin/env bash
# Every benchmark that compares buildfleet against other tools or goals, in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "### pace-kv vs redis-server (FETCH/GET)"
scripts/bench-kv.sh
echo
echo "### Go micro-benchmarks (codecs, envelopes, store)"
go test -run='^$' -bench=. -benchmem -benchtime=1s \
  ./internal/pace/wire/ ./internal/pace/store/ ./internal/gradient/wire/ 2>&1 | grep -E '^(Benchmark|ok|FAIL)'
echo
echo "### gradient: 512 KiB NarPush frames through wsconn on loopback (goal >= 1 GB/s)"
go test -run='^$' -bench=Throughput -benchmem -benchtime=2s -count=3 ./internal/gradient/wsconn/ 2>&1 | grep -E '^(Benchmark|ok|FAIL)'
echo
echo "### pace-node dispatch: LEASE+RELEASE round trips and per-TU dispatch overhead"
go run ./bench/dispatch
echo
echo "### pace across machines (network namespaces): failover, LEASE throughput at three voters, per-TU overhead"
scripts/bench-fleet.sh
echo
echo "### pace-cc vs ccache vs plain gcc: Redis and LevelDB builds, hit latency"
scripts/bench-cc.sh
echo
echo "### gradient: job assignment, NAR upload and pull, cache queries"
scripts/bench-gradient.sh
