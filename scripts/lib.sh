# Sourced by the demo and benchmark scripts: a work directory under /tmp named after the
# script, the daemons started from it (stopped on exit: SIGTERM, then SIGKILL after 10 s), and
# reading a daemon's ready line. Scripts add each daemon's PID to pids.
name=${0##*/}
work=$(mktemp -d "/tmp/${name%.sh}.XXXXXX")
pids=()

# stop_pid PID: SIGTERM, then SIGKILL if it is still there after 10 s.
stop_pid() {
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  for p in "${pids[@]}"; do stop_pid "$p"; done
  chmod -R u+w "$work" 2>/dev/null || true # a Nix store copy is read-only
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_ready LOG PATTERN [PID]: waits up to 15 s for a daemon's ready line and prints it; gives
# up early when PID has exited.
wait_ready() {
  local line
  for _ in $(seq 150); do
    if line=$(grep -m1 "$2" "$1" 2>/dev/null); then echo "$line"; return 0; fi
    [ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  echo "no \"$2\" line in $1:" >&2; cat "$1" >&2; return 1
}

# field NAME: the value of a NAME=value word on stdin (a ready line, a benchmark summary).
field() { tr ' ' '\n' | sed -n "s|^$1=||p"; }

# start_kv LOG: a pace-kv on loopback for a benchmark (no metrics, 2 GiB of memory); sets
# kv_addr once it is ready.
start_kv() {
  bin/pace-kv --listen=127.0.0.1:0 --metrics= --max-memory=2GiB 2>"$1" &
  pids+=($!)
  kv_addr=$(wait_ready "$1" "pace-kv ready" $! | field listen)
}

# corpus_file NAME: the absolute path of a corpus tarball, from the committed corpus
# (testdata/corpus) or else from the directory PACE_CORPUS names, checked against its line in
# testdata/corpus/SHA256SUMS (committed ones) or EXTERNAL-SHA256SUMS (larger ones kept outside).
# Prints nothing when neither directory holds it; a tarball that fails its check is an error.
corpus_file() {
  local dir
  for dir in testdata/corpus ${PACE_CORPUS:+"$PACE_CORPUS"}; do
    [ -f "$dir/$1" ] || continue
    if ! grep " $1\$" testdata/corpus/SHA256SUMS testdata/corpus/EXTERNAL-SHA256SUMS 2>/dev/null |
        sed 's/^[^:]*://' | (cd "$dir" && sha256sum -c --quiet -) >/dev/null 2>&1; then
      echo "corpus: $dir/$1 does not match its SHA256SUMS line" >&2; return 1
    fi
    realpath "$dir/$1"; return 0
  done
}
