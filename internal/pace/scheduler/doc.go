// Package scheduler is the leader's worker registry and lease decisions
// (pace-node §6).
//
// Workers register once per toolchain, keyed (fingerprint, endpoint); all
// of a machine's registrations share one machine-wide in-flight count.
// LEASE is decided in the order of pace-node §6.2 — already-in-flight,
// no-worker, no-capacity / withdrawn, then the entry with the most free
// slots, ties on lowest utilization — from heartbeat facts only: the
// scheduler never queues and never dials a worker. A grant is recorded
// (key → entry, token, expiry) and its token signed through the Signer the
// node supplies; RELEASE must match token and key.
//
// The package is pure: time comes from an injected clock, identity from
// the caller (the node proves it), signing from an interface, and counters
// are plain atomics the node exports. It is safe for concurrent use; a
// decision costs one short critical section plus the signature, which is
// made outside the lock.
//
// In-flight accounting: a machine's in-flight is the figure its last
// heartbeat reported plus the grants made since that heartbeat that are
// still outstanding. A release of a grant the heartbeat already covered
// lowers the reported figure; one made since lowers the pending count; an
// expiry lowers only the pending count, since a heartbeat after the grant
// already told the truth about it. Every heartbeat re-bases the figure, so
// a client that died holds its key until expiry but not the capacity.
package scheduler
