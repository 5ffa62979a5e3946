#!/usr/bin/env bash
# Runs every test of the module. It starts no service itself: a test that needs one starts its
# own and stops it (pgtest a throwaway PostgreSQL server, the end-to-end tests the daemons they
# drive); scripts/deps.sh test installs the programs they run (PostgreSQL, nix, zstd, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -count=1 "$@" ./...
