// Package discovery finds pace nodes on the local segment (pace-node §9.1): every node
// beacons its fleet summary, challenges the beacons it hears with a stateless cookie, and
// checks the signed proofs that answer. It reports which members of its own cluster proved
// the key the roster holds for them, and hands another cluster's verified summary to
// formation. It admits nobody.
//
// Two UDP sockets, both on the wildcard: the beacon listener on the shared beacon port
// (SO_REUSEADDR and SO_REUSEPORT, so every node on a host hears every broadcast), which
// hears beacons and never sends; and a private reply socket, which sends beacons,
// challenges and proofs and receives challenges and proofs. The reply socket is separate
// because only one of the sockets sharing a port receives a given unicast datagram.
//
// The datagrams are package discoverywire's. The cookie (pace-node §13.5) is a serial and
// HMAC-SHA256 under a secret drawn afresh every few minutes, over the beacon's source
// address, its claimed node id and endpoints, the challenger's cluster, the serial and the
// epoch; the current and the previous secret are accepted, so no challenge is remembered. A proof is checked in
// this order: its cookie (else unsolicited), not yet spent, fewer than two failed checks
// for that cookie, the host's and the global signature budgets, the signature, and only
// then the roster. Every table is bounded and every answer rate-limited, each refusal with
// its counter.
package discovery
