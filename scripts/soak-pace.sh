#!/usr/bin/env bash
# The pace half of `make soak`: a pace-kv, then a pace-node's node port, each serving a polite
# client alone for SOAK_DURATION (60s by default) and then as long again beside bench/hostile's
# bounded attack mix (slow and idle connections, half-sent and 200 MiB STOREs, wrong AUTHs) from
# other loopback addresses. Each target ends with a summary line: the polite client's p99 alone
# and under attack.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${SOAK_DURATION:-60s}
go build -o bin/ ./cmd/pace-kv ./cmd/pace-node
for target in kv node; do
  echo "### pace $target under hostile load ($duration alone, then $duration attacked)"
  go run ./bench/hostile -target="$target" -bin="bin/pace-$target" -duration="$duration"
  echo
done
