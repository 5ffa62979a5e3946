// Package nixexec runs the Nix command line for gradient's worker, as gradient-server §8.2
// describes for Debian's nix 2.8 in single-user mode: clone a repository at a commit and
// archive its flake, expand attribute wildcards to entry points and their .drv files, walk a
// derivation closure, read path metadata and validity, stream a path's NAR out (zstd level 6,
// hashed on the way) and pulled NARs back in (Nix's export format, topological order), build
// with nix-store --realise under wall and silence timeouts, and read the local Nix
// configuration.
//
// It knows nothing of the wire protocol: inputs and results are plain Go values, and the
// worker package turns them into messages.
//
// Every Nix process runs in its own process group. When its context ends the group gets
// SIGINT first, which makes nix kill its builder (the builder runs in a session of its own
// under a build user, so signalling nix's group alone would leave it running), then SIGKILL
// for the group and for every process the nix process had spawned, after a grace period.
// Every command carries `--extra-experimental-features 'nix-command flakes'` where it
// applies and `--option substituters ”`: the worker is offline and gradient is its only cache.
package nixexec
