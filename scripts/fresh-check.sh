#!/usr/bin/env bash
# The fresh-machine check: `make demo` and `make test` on a new Debian 12 machine that has only
# what such a machine starts with, run against a clone of HEAD with nothing beside it.
#
# The machine is a root file system of its own, not this host's: a debootstrap'd bookworm (minbase, plus gcc, make, git
# and ca-certificates, which a new machine of our kind has), with this host's Go copied in as
# /usr/local/go, its Go settings (GOENV) and the host's extra TLS roots. So nothing this host has — packages someone installed,
# /etc/nix, a nixbld group, a Nix store, Go's module and build caches, files beside the clone — can hide a
# missing step: every package the targets need comes from scripts/deps.sh, and the Nix store starts
# empty. It runs in its own mount and PID namespaces (`unshare`, the new machine as the namespace's
# root), so its mounts and processes end with it, and it talks to the network only for Debian's packages and Go's module proxy.
#
# Usage: scripts/fresh-check.sh [TARGET...]   (default: demo test; needs root, or sudo)
# FRESH_CACHE (default /var/cache/buildfleet-fresh) keeps the pristine base system as a tarball,
# so later runs skip debootstrap; FRESH_KEEP=1 keeps the chroot for a look afterwards.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || exec sudo -E "$0" "$@"
repo=$(cd "$(dirname "$0")/.." && pwd)
targets=("$@")
((${#targets[@]})) || targets=(demo test)
cache=${FRESH_CACHE:-/var/cache/buildfleet-fresh}
base=$cache/bookworm-minbase.tar
mirror=http://deb.debian.org/debian

say() { printf '\n== fresh-check: %s\n' "$*"; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f s", b - a }'; }

if [ ! -s "$base" ]; then
  say "making the pristine base system (once; cached in $base)"
  command -v debootstrap >/dev/null ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/debootstrap.XXXXXX")
  debootstrap --variant=minbase --include=ca-certificates,git,make,gcc,libc6-dev bookworm "$tmp/root" "$mirror" >"$tmp/log" 2>&1 ||
    { tail -20 "$tmp/log" >&2; rm -rf "$tmp"; exit 1; }
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
    "$mirror" "$mirror" >"$tmp/root/etc/apt/sources.list"
  tar -C "$tmp/root" -cf "$base.part" . && mv "$base.part" "$base"
  rm -rf "$tmp"
fi

work=$(mktemp -d /var/tmp/fresh-check.XXXXXX)
root=$work/root
cleanup() {
  if [ "${FRESH_KEEP:-}" = 1 ]; then echo "fresh-check: the machine is kept in $root" >&2; return; fi
  rm -rf "$work"
}
trap cleanup EXIT

say "a new machine in $root: base system, Go $(/usr/local/go/bin/go env GOVERSION), a clone of $(git -C "$repo" rev-parse --short HEAD)"
mkdir -p "$root"
tar -C "$root" -xf "$base"
cp -a /usr/local/go "$root/usr/local/go"
mkdir -p "$root/root/.config/go"
[ -f "$(go env GOENV)" ] && cp "$(go env GOENV)" "$root/root/.config/go/env"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The machine's own trust: a workplace whose egress passes through a TLS proxy gives every
# machine its CA, and so does this copy (nothing of the project's goes with it).
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null 2>&1
fi
git clone --quiet --no-hardlinks "$repo" "$root/root/buildfleet"

# inside runs in the new machine: fresh mounts of /proc, /sys, /dev and /tmp, the machine made
# the root of the mount namespace (pivot_root, not chroot: Nix re-enters its mount namespace to
# run git for a flake, which would take a chroot's processes back to this host's root), then the
# targets, each timed. PATH is what a login shell on such a machine has, with Go added.
inside() {
  mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs -o size=8g tmpfs "$root/tmp"
  mkdir -p "$root/.old-root"
  cd "$root"
  pivot_root . .old-root
  cd /
  umount -l /.old-root
  exec /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c 'cd /root/buildfleet && for t in "$@"; do
      printf "\n== fresh-check: make %s\n" "$t"; s=$(date +%s)
      make "$t" || { echo "fresh-check: make $t FAILED after $(( $(date +%s) - s )) s"; exit 1; }
      echo "fresh-check: make $t passed in $(( $(date +%s) - s )) s"
    done' fresh-check "$@"
}
export -f inside
export root
start=$(date +%s.%N)
status=0
unshare --mount --propagation private --pid --fork --mount-proc bash -c 'inside "$@"' inside "${targets[@]}" || status=$?
say "$( ((status == 0)) && echo passed || echo FAILED ): make ${targets[*]} on a fresh machine, $(elapsed "$start") in all"
exit "$status"
