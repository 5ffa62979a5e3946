#!/usr/bin/env bash
# Runs the module's tests with the services they need (started here, stopped on exit).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -count=1 "$@" ./...
