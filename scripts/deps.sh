#!/usr/bin/env bash
# Installs what a make target needs on a fresh Debian machine with Go, and nothing already present.
# Nix itself is left as Debian installs it: every nix the tests, the demo and the benchmarks run
# uses scripts/nix/nix.conf (single-user, sandboxed, with busybox-static as the sandbox's /bin/sh).
# Usage: scripts/deps.sh test|bench|demo
set -euo pipefail
want=(gcc g++ make git curl)
case "${1:-test}" in
  test)  want+=(nix-bin busybox-static postgresql iproute2 nftables zstd chromium openssh-server) ;;
  demo)  want+=(nix-bin busybox-static jq iproute2) ;;
  bench) want+=(nix-bin busybox-static redis-server ccache sccache hyperfine cmake ninja-build) ;;
esac
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "deps: installing ${missing[*]}" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
go mod download
