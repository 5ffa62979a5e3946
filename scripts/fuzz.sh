#!/usr/bin/env bash
# Runs every `func Fuzz…` target in the module for FUZZTIME each (default 30s).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-30s}"
grep -rl --include='*_test.go' '^func Fuzz' internal cmd 2>/dev/null | sort | while read -r f; do
  pkg="./$(dirname "$f")"
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //' | while read -r target; do
    echo "== $pkg $target ($fuzztime)"
    go test "$pkg" -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime"
  done
done
