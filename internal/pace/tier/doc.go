// Package tier is a pace-node's private cache tier (pace-node §4): FETCH, STORE
// and CACHE-DROP answered to this machine only, over a local store with memory and disk
// halves, reading through to an optional shared pace-kv (--upstream).
//
// Who is served: a caller whose address is loopback or one of this host's own interface
// addresses (the set is re-read every 30 s), whatever the bind and whatever admission the
// caller holds. A peer the cluster admitted may spend this machine's CPU; it is not thereby
// entitled to read everything this machine ever compiled. Every other caller is refused
// not-a-member.
//
// The rules between the local store and the upstream, complete:
//
//  1. A local hit answers and never consults the upstream: keys are content-addressed, so
//     there is nothing to revalidate.
//  2. A local miss reads through to the upstream; a hit there is inserted locally (a failed
//     insertion is counted and the value still served), so the second build of a tree does
//     not pay the network again.
//  3. A STORE writes locally first (a failure is the client's storage-write-failed), then is
//     offered upstream best-effort from a bounded queue, off the request path: a slow
//     upstream never slows a local STORE, and its answer never reaches the client.
//  4. An unreachable or refusing upstream is a miss, never an error. One that fails to
//     connect, stalls past its timeout or drops is remembered down for 10 s; meanwhile misses
//     answer at once and stores skip it. The first operation after the window retries, and
//     any answer ends the window.
//  5. AUTH with the upstream password is pipelined with the first command on each pooled
//     connection (kvclient), costing no round trip.
//
// The shape follows buildbarn's storage: small pieces composed by decoration. The upstream is
// an interface; kvUpstream speaks 0xFC over a small connection pool, downWindow decorates it
// with the 10 s memory of failure, and offers feeds it stores in the background. Clocks and
// the host's address list are injected, so tests step time instead of sleeping.
//
// STORE, FETCH and CACHE-DROP validation is package cacheverbs, shared with pace-kv: the tier
// canonicalizes text regions with the producer's roots exactly as pace-kv does, and offers the
// canonical bytes upstream with empty roots.
package tier
